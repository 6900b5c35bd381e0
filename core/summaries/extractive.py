"""A summary without a model, as the room reads it (pure): the points in the
messages' own words, each line linked, under the summary's headings."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from core import strings
from core.summaries.draft import SummaryLine, build_one_line
from core.summaries.salience import Kind, Pick, decide_carried_actions
from core.summaries.sidetracks import build_subject_words

# Characters of a recalled message a point quotes (its first words: which message it was).
RECALL_CHARACTERS = 40
MARKDOWN_LINK = re.compile(r"\[([^\]]*)\]\([^)\s]*\)")
# Where a recalled message's sentences end.
SENTENCE = re.compile(r"(?<=[.!?;])\s+|(?<=[。！？；])(?!$)")


def build_quote(line: SummaryLine) -> str:
    """A message on one line (a pasted log keeps its words, not its line breaks)."""
    return f"{line.sender}: {build_one_line(line.text)} ([{strings.MESSAGE_LINK}]({line.link}))"


def build_recall(line: SummaryLine, said_after: Sequence[str] = ()) -> str:
    """A message another point quotes whole, recalled in a few words with its link:
    from the sentence that shares most subject words (sidetracks.build_subject_words:
    stop words left out, Chinese and Japanese by character pairs) with what the point's
    own lines say (`said_after`; the first one on a tie), RECALL_CHARACTERS, cut after a whole word
    where the language has spaces and not inside an emoji; a markdown link keeps its
    text, and a cut URL or code span is left out (a lone backtick would take the next
    quote for code)."""
    text = build_one_line(MARKDOWN_LINK.sub(r"\1", line.text))
    starts = [0, *(found.end() for found in SENTENCE.finditer(text))]
    later = {word for said in said_after for word in _words(said)}
    shares = [
        len(_words(text[start:end]) & later)
        for start, end in zip(starts, [*starts[1:], len(text)], strict=True)
    ]
    best = shares.index(max(shares))
    text = text[starts[best] :]
    if len(text) > RECALL_CHARACTERS:
        text = f"{_cut(text)} …".lstrip()
    if best:
        text = f"… {text}"
    return f"{line.sender}: {text} ([{strings.MESSAGE_LINK}]({line.link}))"


def _words(text: str) -> frozenset[str]:
    # Not the remembered build_subject_words: the summary has forgotten its messages'
    # words when its markdown is built (a redacted message's text is not kept).
    return build_subject_words.__wrapped__(text)


def _cut(text: str) -> str:
    head = text[:RECALL_CHARACTERS]
    if text[len(head)] != " " and " " in head[RECALL_CHARACTERS // 2 :]:
        head = head.rsplit(" ", 1)[0]  # a word cut in two goes
    # An emoji of several code points ("👩‍👩‍👧", "👍🏽") stays whole or goes.
    while head and (_joins(head[-1]) or _joins(text[len(head)])):
        head = head[:-1]
    if head.count("`") % 2:
        head = head[: head.rindex("`")]
    words = head.split(" ")
    if "://" in words[-1]:
        words.pop()
    return " ".join(words).rstrip()


def _joins(char: str) -> bool:
    """Whether a character belongs with the one before it: a zero-width joiner, a
    variation selector, a skin tone, a combining mark."""
    return (
        char in ("\u200d", "\ufe0f", "\ufe0e")
        or "\U0001f3fb" <= char <= "\U0001f3ff"
        or unicodedata.combining(char) > 0
    )


def build_point_text(pick: Pick, lines: Sequence[SummaryLine]) -> str:
    """A point on one line: each message quoted with its link, a later one marked as
    the answer to the one before; a message quoted whole in another point recalled in a
    few words."""
    own = [lines[i].text for i in pick.lines if i not in pick.recalled]
    return " ↳ ".join(
        build_recall(lines[i], own) if i in pick.recalled else build_quote(lines[i])
        for i in pick.lines
    )


def build_listed(picks: Sequence[Pick], lines: Sequence[SummaryLine]) -> list[Pick]:
    """The points as listed: an action item a decision's point carries is listed under
    the action items too, after the decision it carries out, and recalled in a few words
    in the decision's point (a reader looks for who does what under its heading; the
    decision's point still shows the whole exchange)."""
    out = []
    for pick, carried in zip(picks, decide_carried_actions(picks, lines), strict=True):
        if not carried:
            out.append(pick)
            continue
        out.append(Pick(pick.said, pick.lines, pick.main, pick.recalled | set(carried)))
        out += [Pick("action", (pick.main, i), i, frozenset({pick.main})) for i in carried]
    return out


def build_extractive_markdown(
    picks: Sequence[Pick],
    lines: Sequence[SummaryLine],
    heading: str,
    intro: str | None = None,
) -> str:
    """Decisions, action items and open questions under their headings, then the other
    points, each part in time order, after the heading and `intro` (by default, that
    these are the discussion's own messages, in the reader's language)."""
    picks = build_listed(picks, lines)
    titles: dict[Kind, str] = {
        "decision": strings.SUMMARY_DECISIONS,
        "action": strings.SUMMARY_ACTIONS,
        "question": strings.SUMMARY_QUESTIONS,
    }
    out = [heading, "", intro or strings.SUMMARY_EXTRACTIVE]
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
