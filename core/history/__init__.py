"""The rooms' history: each room's lines as the memory store keeps them (read by
summaries, catch-ups and the history windows), the span of each room it holds, and which
windows of a room's dialog are ready to embed. The history index that embeds and searches
them works on the memory store, and is the memory's (core/memory/history.py)."""
