"""A personal catch-up (pure): what one person missed in a room, in sections: decisions,
what was addressed to them (mentions, replies to their messages), action items, and
the rest in a line or two. Every point links to its message."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from core import strings
from core.summaries.addressing import decide_addressees, decide_named
from core.summaries.draft import SummaryLine, build_one_line
from core.summaries.wording import decide_kind

# The rest of a room's messages is said in this many of its messages at most (without a
# model; with one, its TL;DR).
REST_LINES = 2
# Points per section per room at most; the count of the others is said.
MAX_POINTS = 10


@dataclass(frozen=True)
class Reader:
    """The person catching up: their id, the names others call them by, and their own
    messages (a reply to one of them is addressed to them)."""

    user_id: str
    names: tuple[str, ...] = ()
    own_events: frozenset[str] = frozenset()


@dataclass
class RoomCatchup:
    room_name: str
    decisions: list[SummaryLine] = field(default_factory=list)
    for_you: list[SummaryLine] = field(default_factory=list)
    actions: list[SummaryLine] = field(default_factory=list)
    rest: list[SummaryLine] = field(default_factory=list)
    total: int = 0
    tldr: str = ""
    # Said in an encrypted room: the catch-up then goes only to an encrypted chat.
    encrypted: bool = False
    # Messages of the time that the bot could not decrypt (named, not summarised).
    unreadable: int = 0
    # Senders' names as the room shows them (display names), by user id.
    names: dict[str, str] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return self.total == 0 and self.unreadable == 0


def decide_addressed(line: SummaryLine, reader: Reader) -> bool:
    """Whether a message speaks to the reader: it is addressed to them as the ledger
    reads its owners (`decide_addressees`: the mention metadata, "@name", "Name, can
    you …"), names them (their id or a name of theirs as a word), or replies to one of
    their messages."""
    if line.reply_to and line.reply_to in reader.own_events:
        return True
    if decide_named(", ".join(decide_addressees(line)), (reader.user_id, *reader.names)):
        return True
    words = [reader.user_id, *reader.names]
    return any(re.search(rf"(?<!\w){re.escape(w)}(?!\w)", line.text, re.I) for w in words if w)


def build_room_catchup(room_name: str, lines: Sequence[SummaryLine], reader: Reader) -> RoomCatchup:
    """The reader's catch-up of one room from its messages since they last read it; their
    own messages are not news to them."""
    missed = [line for line in lines if line.sender != reader.user_id]
    catchup = RoomCatchup(room_name, total=len(missed))
    for line in missed:
        kind = decide_kind(line.text)
        if decide_addressed(line, reader):
            catchup.for_you.append(line)
        elif kind == "decision":
            catchup.decisions.append(line)
        elif kind == "action":
            catchup.actions.append(line)
        else:
            catchup.rest.append(line)
    return catchup


def _point(line: SummaryLine, names: Mapping[str, str]) -> str:
    sender = names.get(line.sender) or line.sender
    return f"- {sender}: {build_one_line(line.text)} ([{strings.MESSAGE_LINK}]({line.link}))"


def _section(title: str, lines: Sequence[SummaryLine], names: Mapping[str, str]) -> list[str]:
    """A titled list; the blank line before it ends the list above it (else Markdown
    reads the title as that list's last item going on)."""
    if not lines:
        return []
    out = ["", f"*{title}*"] + [_point(line, names) for line in lines[:MAX_POINTS]]
    if len(lines) > MAX_POINTS:
        out.append(strings.CATCHUP_MORE.format(count=len(lines) - MAX_POINTS))
    return out


def build_catchup_markdown(heading: str, rooms: Sequence[RoomCatchup]) -> str:
    """The catch-up as the reader gets it: a part per room with news, in sections; the
    rest of a room's messages in its TL;DR (with a model) or a couple of them."""
    news = [room for room in rooms if not room.empty]
    if not news:
        return f"{heading}\n\n{strings.CATCHUP_NOTHING}"
    out = [heading]
    for room in news:
        count = (
            strings.CATCHUP_COUNT_ONE
            if room.total == 1
            else strings.CATCHUP_COUNT.format(count=room.total)
        )
        out += ["", f"**{room.room_name}** ({count})"]
        out += _section(strings.CATCHUP_FOR_YOU, room.for_you, room.names)
        out += _section(strings.SUMMARY_DECISIONS, room.decisions, room.names)
        out += _section(strings.SUMMARY_ACTIONS, room.actions, room.names)
        if room.tldr:
            out += ["", f"*{strings.CATCHUP_REST}* {room.tldr}"]
        elif room.rest:
            chosen = sorted(room.rest, key=lambda line: -len(line.text))[:REST_LINES]
            out += ["", f"*{strings.CATCHUP_REST}*"]
            in_order = sorted(chosen, key=lambda line: line.ts)
            out += [_point(line, room.names) for line in in_order]
            if len(room.rest) > len(chosen):
                out.append(strings.CATCHUP_MORE.format(count=len(room.rest) - len(chosen)))
        if room.unreadable:
            out += ["", strings.UNREADABLE_MESSAGES.format(count=room.unreadable)]
    return "\n".join(out)
