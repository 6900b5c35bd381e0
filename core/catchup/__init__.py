"""Personal catch-ups: what one person missed in their rooms, on `!catchup` or as a
digest on their schedule."""
