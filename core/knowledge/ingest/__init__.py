"""Putting documents into collections: the stored jobs, the queue whose workers take
them, and the indexer that swaps a document's chunks in without showing half of one."""
