"""Summarising lines of a chat: in parts that fit the model's budget, then merged; or,
without a model, the threads of the talk in its own messages (core/summaries/points.py)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from core.config.llm import LlmTask
from core.i18n.language import decided_language, language_name
from core.knowledge.search.embedding import Embedders
from core.llm.client import LlmClient, LlmError
from core.llm.fencing import fence
from core.llm.prompts import Prompts
from core.llm.tokens import estimate_tokens
from core.summaries.draft import (
    SummaryDraft,
    SummaryLine,
    build_messages_block,
    build_summary_markdown,
)
from core.summaries.extractive import build_extractive_markdown
from core.summaries.ledger_entries import (
    LedgerEntry,
    build_entries_from_draft,
    build_entries_from_picks,
)
from core.summaries.points import decide_thread_points
from core.summaries.replies import decide_reply_points
from core.summaries.salience import Pick, decide_points
from core.summaries.settling import decide_settling_points
from core.summaries.sidetracks import forget_room_words
from core.summaries.smalltalk import SmallTalk, fetch_smalltalk
from core.summaries.support import (
    CheckedDraft,
    SummaryVerdicts,
    build_points_block,
    decide_cited,
    decide_supported,
    points_of,
)
from core.summaries.threads import Terms, build_terms, decide_links, decide_recalls
from core.summaries.wording import forget_wording

log = logging.getLogger(__name__)
MESSAGES_LANGUAGE = "the language most of the messages are written in"
# Points (decisions, action items, open questions, …) an extractive summary keeps at most.
MAX_SALIENT = 16
T = TypeVar("T")
# Called with (messages, parts) before a summary that needs several model calls.
PartsNotice = Callable[[int, int], Awaitable[None]]


@dataclass(frozen=True)
class SummaryResult:
    markdown: str
    calls: int = 0
    prompt_tokens: int = 0
    parts: int = 1
    tldr: str = ""  # the model's one-line summary; none without a model
    entries: tuple[LedgerEntry, ...] = ()  # the decisions and action items, for the ledger


def split_parts(items: Sequence[T], cost: Callable[[T], int], budget: int) -> list[list[T]]:
    """Consecutive groups of items whose costs add up to at most `budget` (an item that
    alone is over the budget gets a group of its own)."""
    parts: list[list[T]] = [[]]
    used = 0
    for item in items:
        price = cost(item)
        if parts[-1] and used + price > budget:
            parts.append([])
            used = 0
        parts[-1].append(item)
        used += price
    return [part for part in parts if part]


def decide_extractive_points(
    lines: Sequence[SummaryLine], smalltalk: SmallTalk, terms: Terms
) -> tuple[list[Pick], list[Pick]]:
    """The cue phrases' points (for the ledger) and the summary's points (the threads of
    the talk within the budget), small talk left out."""
    chatter = smalltalk.lines
    picks = decide_reply_points(lines, decide_points(lines, MAX_SALIENT), chatter)
    picks = [
        pick for pick in decide_settling_points(lines, picks, chatter) if pick.main not in chatter
    ]
    live, links = decide_links(lines, chatter, terms)
    recalls = decide_recalls(lines, live, terms)
    points = decide_thread_points(
        lines, picks, live, links, terms, smalltalk.doubtful, smalltalk.chances, recalls
    )
    return picks, points


def _language() -> str:
    """The language a summary is written in, for its prompt: the room's or the asker's
    (set by whoever asks for the summary), else that of most of the messages."""
    decided = decided_language()
    return language_name(decided) if decided else MESSAGES_LANGUAGE


def _draft_tokens(draft: object) -> int:
    assert isinstance(draft, SummaryDraft)
    return estimate_tokens(draft.model_dump_json())


class Summarizer:
    def __init__(
        self,
        llm: LlmClient | None,
        prompts: Callable[[], Prompts],
        embedders: Embedders | None,
        task: LlmTask = "summary",
        *,
        check_support: Callable[[], bool] = lambda: True,
    ) -> None:
        # The model of the task: summaries, or the catch-up's TL;DR (`[llm.tasks]`); the
        # check's is the support task's (asked of [llm], a task's client has no tasks).
        self.llm = llm.for_task(task) if llm is not None else None
        self.checker = llm.for_task("support") if llm is not None else None
        self.task = task
        # Each point of a model's summary checked against its messages (one more call).
        self.check_support = check_support
        self.prompts = prompts
        self.embedders = embedders

    async def summarize(
        self,
        lines: Sequence[SummaryLine],
        heading: str,
        *,
        timezone: str,
        part_tokens: int,
        notice: PartsNotice | None = None,
        extractive_intro: str | None = None,
    ) -> SummaryResult:
        """The summary of `lines` under `heading`: the model's, or without one the lines'
        own words, introduced by `extractive_intro` (a file's passages; by default, a
        room's discussion)."""
        if self.llm is None:
            return await self._extractive(lines, heading, extractive_intro)
        parts = split_parts(
            lines, lambda line: estimate_tokens(line.text) + 12, part_tokens
        )  # the number, sender and time of a line cost about 12 tokens
        if len(parts) > 1 and notice is not None:
            await notice(len(lines), len(parts))
        results = await asyncio.gather(*(self._draft(part, timezone) for part in parts))
        drafts = [draft for draft, _ in results]
        tokens = sum(used for _, used in results)
        calls = len(parts)
        while len(drafts) > 1:
            groups = split_parts(
                drafts, lambda d: estimate_tokens(d.model_dump_json()), part_tokens
            )
            if len(groups) == len(drafts):  # each alone fills the budget: merge pairs
                groups = [drafts[i : i + 2] for i in range(0, len(drafts), 2)]
            merged = await asyncio.gather(*(self._merge(group) for group in groups))
            drafts = [draft for draft, _ in merged]
            tokens += sum(used for _, used in merged)
            calls += len(groups)
        checked = decide_cited(drafts[0], frozenset(line.number for line in lines))
        if self.check_support() and points_of(checked.draft):
            checked = await self._check(checked, lines)
            calls += 1
        draft = checked.draft
        markdown = build_summary_markdown(
            draft, lines, heading, risks=checked.risks, dropped=checked.dropped
        )
        entries = tuple(build_entries_from_draft(draft, lines))
        return SummaryResult(markdown, calls, tokens, len(parts), draft.tldr.strip(), entries)

    async def _check(self, checked: CheckedDraft, lines: Sequence[SummaryLine]) -> CheckedDraft:
        """Each point judged against its messages; a failed check leaves them unmarked."""
        assert self.checker is not None
        block = fence(build_points_block(checked.draft, lines))
        messages = self.prompts().messages("summary_support", points=block)
        try:
            verdicts, _ = await self.checker.complete_json(
                messages, SummaryVerdicts, "summary_support"
            )
        except LlmError as exc:
            log.warning("a summary goes unchecked: %s", exc)
            return checked
        return decide_supported(checked, {v.point: v.risk for v in verdicts.points})

    async def _draft(self, lines: Sequence[SummaryLine], timezone: str) -> tuple[SummaryDraft, int]:
        assert self.llm is not None
        block = fence(build_messages_block(lines, timezone))
        messages = self.prompts().messages("summary", messages=block, language=_language())
        draft, completion = await self.llm.complete_json(messages, SummaryDraft, self.task)
        return draft, completion.prompt_tokens

    async def _merge(self, drafts: Sequence[SummaryDraft]) -> tuple[SummaryDraft, int]:
        assert self.llm is not None
        summaries = fence("\n".join(draft.model_dump_json() for draft in drafts))
        messages = self.prompts().messages(
            "summary_merge", summaries=summaries, language=_language()
        )
        draft, completion = await self.llm.complete_json(messages, SummaryDraft, self.task)
        return draft, completion.prompt_tokens

    async def _extractive(
        self, lines: Sequence[SummaryLine], heading: str, intro: str | None
    ) -> SummaryResult:
        """A point for each thread of the work talk, in the messages' own words, listed
        by what its lines say (decisions, action items, open questions, the rest), small
        talk left out, within a budget of quoted lines (core/summaries/points.py). The
        ledger gets the decisions and action items the cue phrases find, each with the
        lines it needs to stand alone."""
        # Pure, but seconds for a long room (stop words load once): off the event loop.
        try:
            terms = await asyncio.to_thread(build_terms, lines)
            smalltalk = await fetch_smalltalk(lines, self.embedders, terms)
            picks, points = await asyncio.to_thread(
                decide_extractive_points, lines, smalltalk, terms
            )
            entries = tuple(build_entries_from_picks(picks, lines, points))
        finally:
            # The messages' words were remembered for this summary only (a redacted
            # message's text is not kept; a summary running beside it just reads again).
            forget_room_words()
            forget_wording()
        markdown = build_extractive_markdown(points, lines, heading, intro)
        return SummaryResult(markdown, entries=entries)
