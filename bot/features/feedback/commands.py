"""`!feedback`: who may use it, what was asked, and the report's text (pure)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any, Literal

from bot.inbox.links import build_room_link
from core import strings
from core.feedback.store import RoomCounts


@dataclass(frozen=True)
class FeedbackRequest:
    kind: Literal["summary", "worst", "export"]
    days: int = 30
    limit: int = 5


def decide_feedback_request(
    args: str,
    *,
    sender: str,
    room: str,
    admins: Sequence[str],
    admin_room: str | None,
    prefix: str,
) -> FeedbackRequest | str:
    """`!feedback [worst [n] | export [days]]`; the reply text when it cannot run here."""
    if sender not in admins or not admin_room or room != admin_room:
        return strings.FEEDBACK_REFUSED
    words = args.lower().split()
    kind = words.pop(0) if words and words[0] in ("summary", "worst", "export") else "summary"
    if len(words) > 1 or (words and not (words[0].isdigit() and 0 < int(words[0]) <= 3650)):
        return strings.FEEDBACK_USAGE.format(prefix=prefix)
    number = int(words[0]) if words else None
    if kind == "worst":
        return FeedbackRequest("worst", limit=min(number or 5, 50))
    return FeedbackRequest(kind, days=number or 30)  # type: ignore[arg-type]


def _room_lines(counts: Mapping[int, Sequence[RoomCounts]], via: str) -> list[str]:
    rooms = sorted({c.room for per_period in counts.values() for c in per_period})
    by_period = {days: {c.room: c for c in per} for days, per in counts.items()}
    lines = ["| room | last 7 days 👍 / 👎 | last 30 days 👍 / 👎 |", "| --- | --- | --- |"]
    for room in rooms:
        cells = []
        for days in (7, 30):
            found = by_period.get(days, {}).get(room)
            cells.append(f"{found.up} / {found.down}" if found else "0 / 0")
        lines.append(f"| {build_room_link(room, via)} | {cells[0]} | {cells[1]} |")
    return lines


def decide_shown(answer_readers: Sequence[str], room_readers: AbstractSet[str]) -> bool:
    """An answer's question, text, sources and trace are shown in a room only when every
    reader there was among the people it was written for."""
    return bool(answer_readers) and room_readers <= set(answer_readers)


def decide_postable(from_encrypted: bool | None, room_encrypted: bool) -> bool:
    """Text said in an encrypted room (or where it is not known) is only posted into an
    encrypted room: the homeserver reads the others."""
    return room_encrypted or from_encrypted is False


def build_export_record(
    record: Mapping[str, Any], room_readers: AbstractSet[str], room_encrypted: bool
) -> dict:
    """A rated answer for the export: whole where everyone may read it, else ids and counts."""
    if decide_shown(record.get("readers", ()), room_readers) and decide_postable(
        record.get("encrypted"), room_encrypted
    ):
        return dict(record)
    votes = [vote["vote"] for vote in record.get("votes", ())]
    return {
        "answer_id": record["answer_id"],
        "event_id": record["event_id"],
        "room": record["room"],
        "created": record["created"],
        "hidden": True,
        "up": votes.count("up"),
        "down": votes.count("down"),
    }


def _worst_lines(
    worst: Sequence[Mapping[str, Any]],
    room_readers: AbstractSet[str],
    room_encrypted: bool,
    via: str,
) -> list[str]:
    lines = []
    for number, item in enumerate(worst, start=1):
        room = build_room_link(item["room"], via)
        if not decide_shown(item["readers"], room_readers):
            lines.append(strings.FEEDBACK_HIDDEN.format(number=number, **{**item, "room": room}))
            continue
        if not decide_postable(item.get("encrypted"), room_encrypted):
            lines.append(
                strings.FEEDBACK_HIDDEN_ENCRYPTED.format(number=number, **{**item, "room": room})
            )
            continue
        sources = "; ".join(
            f"{s['title']} ({s['collection']}/{s['document_id']}"
            + (f", score {s['score']:.3f})" if s["score"] is not None else ")")
            for s in item["sources"]
        )
        question = f"“{item['question']}”" if item["question"] else strings.FEEDBACK_NO_QUESTION
        lines.append(
            f"{number}. 👎 {item['down']} · 👍 {item['up']}: {question} in "
            f"{room}. Sources: {sources or 'none'}."
        )
        lines += [f"   - said: “{comment}”" for comment in item["comments"]]
    return lines


def build_feedback_reply(
    request: FeedbackRequest,
    *,
    counts: Mapping[int, Sequence[RoomCounts]],
    worst: Sequence[Mapping[str, Any]],
    room_readers: AbstractSet[str],
    room_encrypted: bool,
    via: str,
) -> str:
    """The report: votes per room for the last 7 and 30 days, then the worst answers, in
    detail only where every reader of the room could read them (and, for answers in
    encrypted rooms, only in an encrypted room). Rooms are links (`via`: the bot's user
    id), which clients show by name to whoever may see the room."""
    lines = [strings.FEEDBACK_HEADER]
    if request.kind == "summary":
        lines += _room_lines(counts, via) if any(counts.values()) else [strings.FEEDBACK_NONE]
        lines.append("")
    lines.append(strings.FEEDBACK_WORST_HEADER.format(days=request.days))
    lines += _worst_lines(worst, room_readers, room_encrypted, via) or [strings.FEEDBACK_NO_WORST]
    return "\n".join(lines)
