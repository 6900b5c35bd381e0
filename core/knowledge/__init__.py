"""Knowledge collections: documents in, chunks stored in Chroma and SQLite, hybrid search out."""
