"""Everything that does not know Matrix: config, requests and answers, and (later) retrieval."""
