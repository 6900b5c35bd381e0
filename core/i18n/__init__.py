"""The languages people speak: the bot's sentences in theirs (gettext catalogs), and the
language of what they write."""
