"""The knowledge base of a process (`KnowledgeBase`: the collections of core/knowledge and
the rights checker of core/rights, opened together), and what works on it as a whole: the
ingestion REST API, the crawls of documentation sites and the `knowledge-ingest` command."""
