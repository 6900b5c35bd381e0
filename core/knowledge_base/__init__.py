"""The knowledge base of a process (`KnowledgeBase`: its collections, parts of
core/knowledge, opened together with the rights checker of core/rights), and what works
on it as a whole: the ingestion REST API, the crawls of documentation sites and the
`knowledge-ingest` command."""
