"""Summaries of rooms and threads: on demand, and written back as knowledge."""
