"""The rooms' ledgers of decisions and action items: the entries summaries find
(core/summaries/ledger_entries.py) kept per room, listed by `!decisions` and `!actions`,
followed through edits and redactions, and recalled for questions."""
