"""What core receives for a question and what it gives back; no Matrix types here."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal

from core.ids import AnswerID, EventID, RoomID, UserID
from core.trace import Step


@dataclass(frozen=True)
class ChatLine:
    """One earlier message of the conversation, as context for the question."""

    sender: UserID
    text: str
    from_bot: bool = False


@dataclass(frozen=True)
class Request:
    """A question addressed to the bot, stripped of the mention that addressed it.

    `readers` are everyone other than the bot who reads the answer (the room's joined
    members, and invited ones who will read it once they join). `knowledge` are the
    rooms whose own knowledge (summaries, memories, history, earlier answers) all of
    them may get, each with the time from which (the room itself first, when allowed).
    `open_room`: anyone may join and read, so only public documents may be used.
    `in_bot_conversation` is true for a reply to the bot or a message in its thread.
    """

    text: str
    sender: UserID
    room: RoomID
    thread: EventID | None
    recent: tuple[ChatLine, ...] = ()
    is_direct: bool = False
    readers: tuple[UserID, ...] = ()
    knowledge: tuple[tuple[RoomID, float], ...] = ()
    # Of `knowledge`, the encrypted rooms while this room is not: only what was written
    # there before encryption was turned on may be used.
    plaintext_only: tuple[RoomID, ...] = ()
    open_room: bool = False
    event: EventID | None = None
    in_bot_conversation: bool = False
    # A document the question is about (the shared file it replies to): its passages
    # come first, as far as the readers may see them.
    focus: tuple[str, str] | None = None
    # The language to answer in (ISO 639-1): the room's, else the asker's as detected;
    # None when neither is known (the model answers in the question's language).
    language: str | None = None
    # The rooms this one replaced (upgrades), newest first: their memories, history and
    # ledger are this room's too, as far as `knowledge` lets its readers have them.
    predecessors: tuple[RoomID, ...] = ()


@dataclass(frozen=True)
class Source:
    """A document an answer is grounded in, rendered as a numbered citation."""

    title: str
    url: str | None = None
    collection: str | None = None
    document_id: str | None = None
    score: float | None = None  # the retrieval score it was found with


# The reason of an answer made of the passages search found, shown under the failure
# notice when the model gave no answer (core/pipeline/failures.py).
FALLBACK_REASON = "llm_fallback:"

AnswerKind = Literal["answer", "refusal", "question", "notice"]


@dataclass(frozen=True)
class Answer:
    """The text to post, the sources it cites, and how it was made (for debugging, feedback)."""

    text: str
    kind: AnswerKind = "answer"
    sources: tuple[Source, ...] = ()
    trace: tuple[Step, ...] = ()
    id: AnswerID = field(default_factory=lambda: AnswerID(uuid.uuid4().hex))
    # Why a refusal or notice was given ("toxic", "rate_limited", "nothing_found", ...);
    # FALLBACK_REASON + the failure's cause for the passages shown when the model failed.
    reason: str = ""
    # Work to do after the answer is shown, without delaying it: it returns a line to add
    # to the answer (the support badge), or None.
    followup: Callable[[], Awaitable[str | None]] | None = field(default=None, compare=False)
    # The model cited none of its sources: `sources` are those it was given (consulted),
    # so that a reader can still check the answer.
    uncited: bool = False


# Called with the answer's text so far while it is being written.
Progress = Callable[[str], Awaitable[None]]
