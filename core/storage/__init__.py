"""Where state lives: one small async database interface, over SQLite or PostgreSQL."""
