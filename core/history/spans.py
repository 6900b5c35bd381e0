"""What the memory store holds of each room's dialog: its span.

A room's span is one time, `since`: every people's text line of the room said at or after
it is held in `history_lines` (None: no claim at all). Summaries read the held part from
the store and only the rest from the homeserver (bot/features/summaries/lines.py), so the
span must never claim a line the store lacks; these rules keep it so. They are pure, and
tested by a table (tests/memory/test_spans.py).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Kept:
    """A line said at `ts` was kept."""

    ts: float


@dataclass(frozen=True)
class LeftOut:
    """A line said at `ts` was not kept although it should have been (the history queue
    was full, the store failed, the room's history was off, the line came before the bot
    joined, or the account could not read it): nothing at or before it is claimed."""

    ts: float


@dataclass(frozen=True)
class Purged:
    """The room's retention dropped every line said before `cutoff`."""

    cutoff: float


SpanChange = Kept | LeftOut | Purged


def after(ts: float) -> float:
    """The first time after a line said at `ts`: one millisecond later (Matrix's unit)."""
    return (round(ts * 1000) + 1) / 1000


def decide_since(since: float | None, change: SpanChange) -> float | None:
    """The room's span after `change`. Spans only move forward: a span that a line left
    out would have to move back is not a span any more."""
    if isinstance(change, Kept):
        # The first line kept starts the span, just after it: lines before it, or said
        # in the same millisecond (kept by a release that did not note what summaries
        # need, or lost by a keeper that stopped uncleanly), are not claimed.
        return after(change.ts) if since is None else since
    if isinstance(change, LeftOut):
        # Also with no span yet: every line after it will be seen, kept or left out.
        return after(change.ts) if since is None else max(since, after(change.ts))
    return None if since is None else max(since, change.cutoff)


@dataclass(frozen=True)
class Sources:
    """Where each part of a time range is read from: `homeserver` and `store` are
    (start, end) or None; the homeserver's part ends just before `store`'s starts."""

    homeserver: tuple[float, float] | None
    store: tuple[float, float] | None


def decide_sources(start: float, end: float, since: float | None) -> Sources:
    """The part of [start, end] the span covers comes from the store, the part before it
    from the homeserver (`since` None: no span, or the store is not to be used)."""
    if since is None or since > end:
        return Sources((start, end), None)
    if since <= start:
        return Sources(None, (start, end))
    return Sources((start, since), (since, end))
