"""Which messages a chat message needs to be understood (pure): the one it replies to,
the question it answers, where the exchange started, the earlier message an update
picks up again, and the answers a question got."""

from __future__ import annotations

from collections.abc import Sequence

from core.summaries.cues import ANSWER_OPENER, OPEN_ANSWER, ROLL_CALL
from core.summaries.draft import SummaryLine
from core.summaries.wording import (
    decide_asks,
    decide_chatter,
    decide_depends,
    decide_said,
    decide_topic_words,
)
from core.summaries.words import count_words

# The subject words an update shares with the line it picks up again, at least.
TOPIC_OVERLAP = 2
# How far back a line may answer: a few messages, and not across a pause.
ANSWER_WINDOW = 4
ANSWER_SECONDS = 2 * 3600
# Words of a line that, said right after a question, is taken as its answer.
SHORT_ANSWER = 12
# Lines a point holds at most: a line and the lines back to where its subject is said.
POINT_LINES = 5
# Lines walked back at most to find where an exchange started.
MAX_CHAIN = 8


def decide_context(lines: Sequence[SummaryLine], index: int) -> int | None:
    """The line a line answers: the one it replies to, the one before it in its thread,
    a question just before it by someone else, or, when it does not stand alone, the
    last line just before it by someone else."""
    line = lines[index]
    replied = _find_event(lines, index, line.reply_to) if line.reply_to else None
    if replied is not None:
        return replied
    root = _find_event(lines, index, line.thread_root) if line.thread_root else None
    if root is not None:
        thread = line.thread_root
        return next((i for i in range(index - 1, root, -1) if lines[i].thread_root == thread), root)
    depends = decide_depends(line.text)
    # A question after a question asks something new, unless its words point back.
    answers = not decide_asks(line.text)
    skipped = False
    for i in range(index - 1, max(-1, index - 1 - ANSWER_WINDOW), -1):
        other = lines[i]
        if line.ts - other.ts > ANSWER_SECONDS:
            return None
        asks = decide_asks(other.text)
        if count_words(other.text) < 3 and not asks:
            skipped = True  # "+1", "ok": an acknowledgement is not what a line answers
            continue
        if other.sender != line.sender and other.thread_root == line.thread_root:
            if depends:
                return i
            # A question answered by the line just after it (not one already answered).
            asked = asks and answers and not skipped
            return i if asked and _answers(other.text, line.text) else None
        if not depends:
            return None
    return None


def _find_event(lines: Sequence[SummaryLine], index: int, event_id: str) -> int | None:
    """The line before `index` with this event id, searched from `index` back: what a
    line replies to is most often a few lines before it (no map of the room per line)."""
    return next((i for i in range(index - 1, -1, -1) if lines[i].event_id == event_id), None)


def decide_earlier_subject(lines: Sequence[SummaryLine], index: int) -> int | None:
    """The earlier line an update picks up again ("load tests started" after "the
    payment API is done, load tests are left"): the one sharing most of its subject
    words, at least TOPIC_OVERLAP in weight; None when no line does."""
    own = decide_topic_words(lines[index].text)
    best, best_weight = None, TOPIC_OVERLAP - 1
    for i in range(index - 1, -1, -1):
        if lines[i].thread_root != lines[index].thread_root:
            continue
        weight = sum(w for word, w in decide_topic_words(lines[i].text).items() if word in own)
        if weight > best_weight:
            best, best_weight = i, weight
    return best


def decide_chain(lines: Sequence[SummaryLine], index: int) -> tuple[int, ...]:
    """The line with what it needs to stand alone: the line it answers, and so on back
    while each of those does not stand alone either. A long exchange keeps where it
    started (its subject) and its last POINT_LINES - 1 lines."""
    chain = [index]
    while len(chain) < MAX_CHAIN:
        context = decide_context(lines, chain[0])
        if context is None or context in chain or decide_chatter(lines[context].text):
            break
        chain.insert(0, context)
        if not decide_leans_back(lines, context):
            break
    if len(chain) > POINT_LINES:
        chain = [chain[0], *chain[-(POINT_LINES - 1) :]]
    return tuple(chain)


def decide_leans_back(lines: Sequence[SummaryLine], index: int) -> bool:
    """Whether a line needs one before it: a reply, a thread message, an answer to a
    question, or words that point back."""
    line = lines[index]
    if line.reply_to or line.thread_root:
        return True
    if decide_depends(line.text):
        return True
    before = decide_context(lines, index)
    return before is not None and decide_asks(lines[before].text)


def decide_answers(lines: Sequence[SummaryLine], index: int) -> list[int]:
    """The lines that answer a question: its replies and its thread (the first
    POINT_LINES - 1 of them), else the next line by someone else soon after (not
    another question, and not a reply to something else)."""
    question = lines[index]
    if question.event_id:
        replies = [
            i
            for i in range(index + 1, len(lines))
            if question.event_id in (lines[i].reply_to, lines[i].thread_root)
            and lines[i].sender != question.sender
        ]
        if replies:
            return [_conclusion(lines, replies)]
    answers: list[int] = []
    skipped = False
    for i in range(index + 1, min(len(lines), index + 1 + ANSWER_WINDOW)):
        other = lines[i]
        if other.ts - question.ts > ANSWER_SECONDS or other.sender == question.sender:
            break
        if other.reply_to and other.reply_to != question.event_id:
            continue
        if other.thread_root != question.thread_root or decide_asks(other.text):
            break
        context = decide_context(lines, i)
        if context != index and (context is not None or skipped):
            break
        if count_words(other.text) < 3 and not ANSWER_OPENER.search(other.text.strip()):
            skipped = True  # "hmm", "lol": said after it, not an answer to it
            continue
        if context is None and not _answers(question.text, other.text):
            break
        if answers and decide_said(other.text):
            break  # a roll call's second answer is a plain reply, not a new decision
        answers.append(i)
        if len(answers) >= (2 if ROLL_CALL.search(question.text) else 1):
            break
    return answers


def _answers(question: str, text: str) -> bool:
    """Whether a line said just after a question reads as its answer: it opens as one
    ("yes", "not yet"), leans back, is short, or speaks of the same subject."""
    if ANSWER_OPENER.search(text.strip()) or OPEN_ANSWER.search(text) or decide_depends(text):
        return True
    if count_words(text) <= SHORT_ANSWER:
        return True  # "about 180 € a month": a short line right after a question answers it
    asked = decide_topic_words(question)
    return any(word in asked for word in decide_topic_words(text))


def _conclusion(lines: Sequence[SummaryLine], replies: Sequence[int]) -> int:
    """Of the replies to a question, the last that says something (a decision, an
    open answer, …): where the thread ended up; else the first reply."""
    telling = [
        i for i in replies if decide_said(lines[i].text) or OPEN_ANSWER.search(lines[i].text)
    ]
    return telling[-1] if telling else replies[0]
