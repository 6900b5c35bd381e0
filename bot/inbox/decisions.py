"""What the bot decided to do with one event: each kind names the exact thing to do and
carries the facts its handler needs, so that no handler asks the router again.

The router (bot/inbox/routing.py) decides; the decision is stored with the event in the
inbox (bot/inbox/state.py) and carried out by the feature that registered for its kind
(bot/inbox/dispatcher.py). A stored decision this release cannot read (a kind renamed,
a field added) is decided again, once, when the workers start (bot/inbox/upgrade.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from functools import cache
from typing import Any, Literal, assert_never, get_args, get_origin, get_type_hints

from core.ids import EventID, UserID

# --- Nothing to do ---------------------------------------------------------------------


@dataclass(frozen=True)
class Ignore:
    reason: str


# --- Answered in the room: the dispatcher writes a reply ------------------------------


@dataclass(frozen=True)
class AnswerQuestion:
    text: str
    thread_root: EventID
    # An image the question is about (its caption, or an image sent to the bot): read by
    # OCR and answered from. Empty text: the image came without a question.
    about: str = ""
    # The room is a direct chat with the asker.
    direct: bool = False
    # The question replies to the bot or is said in a thread the bot is in: the answerer
    # reads it as a follow-up.
    in_conversation: bool = False


@dataclass(frozen=True)
class ShowHelp:
    """`!help`, or a bare mention: how to ask here and the commands."""

    thread_root: EventID
    direct: bool = False


@dataclass(frozen=True)
class ExplainCommand:
    """A command said to the bot that does not run here (unknown, or commands are off in
    the room): the reply says why, and nothing is done."""

    name: str
    thread_root: EventID


@dataclass(frozen=True)
class Summarize:
    """`!summarize [range]`, or "summarize this" replying to a message: the room's (or
    the thread's) summary."""

    request: str
    thread_root: EventID


@dataclass(frozen=True)
class SummarizeFile:
    """`!summarize`, or "summarize this", replying to a file the room shared."""

    file_event: EventID
    thread_root: EventID


@dataclass(frozen=True)
class Ledger:
    """`!decisions [topic]` or `!actions [mine|open]`: what the summaries found."""

    # (not `kind`: the stored decision's own kind is under that key)
    entries: Literal["decision", "action"]
    request: str
    thread_root: EventID


@dataclass(frozen=True)
class Catchup:
    """`!catchup [since …|every …|off]`: what the sender missed, in a direct chat."""

    request: str
    thread_root: EventID
    direct: bool = False


@dataclass(frozen=True)
class ScheduleDigest:
    """`!catchup every …` or `!catchup off`: the sender's daily digest set or ended (no
    model call: never refused by the rate limits)."""

    request: str
    thread_root: EventID


@dataclass(frozen=True)
class ListMemories:
    """`!memory`: what the bot remembers in this room."""

    thread_root: EventID


@dataclass(frozen=True)
class Forget:
    """`!forget <number>|all`."""

    scope: str
    thread_root: EventID


@dataclass(frozen=True)
class ReportFeedback:
    """`!feedback [...]`: for the admins, in the admin room."""

    request: str
    thread_root: EventID


@dataclass(frozen=True)
class ListSources:
    """`!sources`: the collections this room's questions are answered from."""

    thread_root: EventID
    direct: bool = False


@dataclass(frozen=True)
class RefuseDevice:
    """A message to the bot from a device its owner never cross-signed: not acted on;
    the room is told once per device why (without quoting it)."""

    thread_root: EventID


@dataclass(frozen=True)
class KeepFeedback:
    """The reply to "what was wrong?": kept with the 👎, not answered as a question."""

    text: str
    thread_root: EventID


@dataclass(frozen=True)
class AnswerVoice:
    """A voice message addressed to the bot (in a direct chat, a reply to it, in its
    thread): transcribed, and answered as a question."""

    thread_root: EventID
    direct: bool = False
    in_conversation: bool = False


# --- Kept or followed: no reply ---------------------------------------------------------


@dataclass(frozen=True)
class Vote:
    """A 👍 or 👎 (`sign`) by `voter` on the bot's answer `answer_event`."""

    sign: Literal["up", "down"]
    answer_event: EventID
    voter: UserID
    at_ms: int


@dataclass(frozen=True)
class WithdrawVote:
    """The redaction of a vote."""

    vote_event: EventID


@dataclass(frozen=True)
class KeepFile:
    """A file shared in the room, of a kind the bot reads: its text becomes the room's
    knowledge."""

    name: str


@dataclass(frozen=True)
class KeepVoice:
    """A voice message in a room: transcribed into the room's history, and the
    transcript posted in a thread on it when `post`."""

    thread_root: EventID
    post: bool = False


@dataclass(frozen=True)
class FollowEdit:
    """An edit of a message by its sender: the new text wherever the bot keeps the old."""


@dataclass(frozen=True)
class FollowRedaction:
    """A redacted message leaves every store. Later events wait for it (see workers)."""

    redacts: EventID


# The commands, each run by the feature that owns it.
Command = (
    ShowHelp
    | ExplainCommand
    | Summarize
    | SummarizeFile
    | Ledger
    | Catchup
    | ScheduleDigest
    | ListMemories
    | Forget
    | ReportFeedback
    | ListSources
)
# What the bot answers in the room (a reply), and what it only keeps or follows.
Answered = AnswerQuestion | KeepFeedback | AnswerVoice | RefuseDevice
Actionable = Command | Answered
Bookkeeping = Vote | WithdrawVote | KeepFile | KeepVoice | FollowEdit | FollowRedaction
Decision = Ignore | Actionable | Bookkeeping

Handling = Literal["reply", "work", "nothing"]


def decide_handling(decision: Decision) -> Handling:
    """How the dispatcher carries a decision out: a reply to the event (with the
    replies' catch-all), work without a reply, or nothing. Exhaustive: a new kind that is
    not placed here is an error mypy reports."""
    match decision:
        case Ignore():
            return "nothing"
        case (
            AnswerQuestion()
            | KeepFeedback()
            | AnswerVoice()
            | RefuseDevice()
            | ShowHelp()
            | ExplainCommand()
            | Summarize()
            | SummarizeFile()
            | Ledger()
            | Catchup()
            | ScheduleDigest()
            | ListMemories()
            | Forget()
            | ReportFeedback()
            | ListSources()
        ):
            return "reply"
        case Vote() | WithdrawVote() | KeepFile() | KeepVoice() | FollowEdit() | FollowRedaction():
            return "work"
        case _:
            assert_never(decision)


def decide_command_name(command: Command) -> str:
    """The command's name as people type it (after the prefix)."""
    match command:
        case ShowHelp():
            return "help"
        case ExplainCommand(name=name):
            return name
        case Summarize() | SummarizeFile():
            return "summarize"
        case Ledger(entries=entries):
            return f"{entries}s"
        case Catchup() | ScheduleDigest():
            return "catchup"
        case ListMemories():
            return "memory"
        case Forget():
            return "forget"
        case ReportFeedback():
            return "feedback"
        case ListSources():
            return "sources"
        case _:
            assert_never(command)


def _kinds(union: Any) -> tuple[type, ...]:
    return tuple(kind for member in get_args(union) for kind in (_kinds(member) or (member,)))


DECISION_KINDS: dict[str, type] = {kind.__name__: kind for kind in _kinds(Decision)}


@cache
def _literal_fields(kind: type) -> dict[str, tuple[Any, ...]]:
    """The fields of a kind that hold one of a few values, with those values (read once
    per kind: every event's decision is decoded when it is handled)."""
    hints = get_type_hints(kind)
    return {name: get_args(hint) for name, hint in hints.items() if get_origin(hint) is Literal}


def encode_decision(decision: Decision) -> dict[str, Any]:
    """The decision as stored with its message in the inbox (bot/inbox/state.py)."""
    return {"kind": type(decision).__name__, **asdict(decision)}


def decode_decision(data: Mapping[str, Any]) -> Decision | None:
    """The stored decision, or None when it is not one this release knows: a kind it
    does not have, or fields that are not exactly the kind's (an earlier release's
    `RunCommand`, an `AnswerQuestion` stored before it carried `direct`)."""
    stored = dict(data)
    kind = DECISION_KINDS.get(str(stored.pop("kind", "")))
    if kind is None or set(stored) != {field.name for field in fields(kind)}:
        return None
    for name, allowed in _literal_fields(kind).items():
        if stored[name] not in allowed:
            return None  # a value this release does not have
    try:
        decision: Decision = kind(**stored)
    except TypeError:
        return None
    return decision
