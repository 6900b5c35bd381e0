"""Decisions an earlier release stored are decided again once, before the workers take
the first event: a pending `RunCommand("summarize")` of the release before becomes this
release's `Summarize`, and the handlers only ever see decisions they know."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from bot.inbox.decisions import Decision, Ignore, decode_decision, encode_decision
from bot.inbox.events import IncomingMessage
from bot.inbox.state import PendingEvent, StateStore
from core.storage.database import StorageError

log = logging.getLogger(__name__)

Route = Callable[[PendingEvent], Awaitable[tuple[IncomingMessage | None, Decision]]]


async def redecide_stored(state: StateStore, route: Route) -> int:
    """Decide again every pending event whose stored decision this release cannot read
    (or that has none); returns how many were."""
    count = 0
    for event in await state.pending_events():
        if event.decision is not None and decode_decision(event.decision) is not None:
            continue
        event_id = str(event.source.get("event_id", ""))
        try:
            _, decision = await route(event)
        except StorageError:
            raise  # the store is away: the workers start again later, and so does this
        except Exception:
            # One event that cannot be decided must not keep the others from answers.
            log.exception("event %s could not be decided again; it is left", event_id)
            decision = Ignore("could not be decided again after an upgrade")
        await state.store_decision(event_id, encode_decision(decision))
        count += 1
    if count:
        log.info("%d pending events stored by an earlier release were decided again", count)
    return count
