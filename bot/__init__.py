"""Everything that knows Matrix: events in, notices out. The work itself is done by core."""
