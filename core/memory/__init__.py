"""The memory of conversations: turns, explicit memories, and the rooms' history embedded
as windows and searched (its lines and their spans: core/history)."""
