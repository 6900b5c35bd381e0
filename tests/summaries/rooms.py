"""A room of chat lines for the summaries' table tests: one line a minute."""

from __future__ import annotations

from core.summaries.draft import SummaryLine


def room(*said: tuple[str, str]) -> list[SummaryLine]:
    """The lines (sender, text) as a room says them, a minute apart, each with its link."""
    return [
        SummaryLine(n, sender, text, 1e9 + 60 * n, f"https://l/{n}", f"$e{n}")
        for n, (sender, text) in enumerate(said, start=1)
    ]
