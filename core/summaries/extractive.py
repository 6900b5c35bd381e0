"""A summary without a model, as the room reads it (pure): the points in the
messages' own words, each line linked, under the summary's headings."""

from __future__ import annotations

from collections.abc import Sequence

from core import strings
from core.summaries.draft import SummaryLine, build_one_line
from core.summaries.salience import Kind, Pick

# Characters of a recalled message a point quotes (its first words: which message it was).
RECALL_CHARACTERS = 40


def build_quote(line: SummaryLine) -> str:
    """A message on one line (a pasted log keeps its words, not its line breaks)."""
    return f"{line.sender}: {build_one_line(line.text)} ([{strings.MESSAGE_LINK}]({line.link}))"


def build_recall(line: SummaryLine) -> str:
    """A message another point quotes whole, recalled in a few words with its link
    (RECALL_CHARACTERS, cut at a word where the language has spaces)."""
    text = build_one_line(line.text)
    if len(text) > RECALL_CHARACTERS:
        cut = text[:RECALL_CHARACTERS]
        head = cut.rsplit(" ", 1)[0] if " " in cut else cut
        text = f"{head} …"
    return f"{line.sender}: {text} ([{strings.MESSAGE_LINK}]({line.link}))"


def build_point_text(pick: Pick, lines: Sequence[SummaryLine]) -> str:
    """A point on one line: each message quoted with its link, a later one marked as
    the answer to the one before; a message quoted whole in another point recalled in a
    few words."""
    return " ↳ ".join(
        build_recall(lines[i]) if i in pick.recalled else build_quote(lines[i]) for i in pick.lines
    )


def build_extractive_markdown(
    picks: Sequence[Pick],
    lines: Sequence[SummaryLine],
    heading: str,
) -> str:
    """Decisions, action items and open questions under their headings, then the other
    points, each part in time order."""
    titles: dict[Kind, str] = {
        "decision": strings.SUMMARY_DECISIONS,
        "action": strings.SUMMARY_ACTIONS,
        "question": strings.SUMMARY_QUESTIONS,
    }
    out = [heading, "", strings.SUMMARY_EXTRACTIVE]
    for kind, title in titles.items():
        listed = sorted((p for p in picks if p.listed == kind), key=lambda p: _starts(p, lines))
        if listed:
            out += ["", f"**{title}**"]
            out += [f"- {build_point_text(pick, lines)}" for pick in listed]
    # A point goes by its own first line, not by a line it recalls from hours before.
    rest = [(_starts(p, lines), build_point_text(p, lines)) for p in picks if p.listed is None]
    if rest:
        out += ["", f"**{strings.SUMMARY_ALSO_DISCUSSED}**"]
        out += [f"- {text}" for _, text in sorted(rest, key=lambda item: item[0])]
    return "\n".join(out)


def _starts(pick: Pick, lines: Sequence[SummaryLine]) -> float:
    own = [i for i in pick.lines if i not in pick.recalled] or list(pick.lines)
    return lines[own[0]].ts
