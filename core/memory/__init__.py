"""The memory of conversations: turns, explicit memories and the rooms' history."""
