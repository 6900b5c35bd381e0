"""What should the bot do with an event? One pure decision, tested by tables of cases.

Every timeline event is decided once, when the sync stores it in the inbox: a question,
a command (run, or explained), the comment after a 👎, a vote or its withdrawal, an edit
or a redaction to follow, or nothing. The dispatcher gathers what the event alone cannot
tell (was the replied-to message the bot's, has the bot answered in this thread, is the
room a direct chat, is the reaction on one of the bot's answers) into RoutingFacts, and
later carries out the stored action (see bot/inbox/dispatcher.py's handlers).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any

from bot.inbox.commands import COMMANDS, decide_summary_request
from bot.inbox.events import IncomingMessage, parse_message, parse_reaction, parse_redaction
from bot.inbox.mentions import BotIdentity, is_mentioned, strip_mention, strip_reply_fallback
from core.config import RoomSettings
from core.feedback.votes import parse_vote
from core.ids import EventID, RoomID
from core.knowledge.parse.extraction import decide_file_kind

TEXT_MSGTYPES = frozenset({"m.text", "m.emote"})


@dataclass(frozen=True)
class RoutingFacts:
    not_before_ms: int = 0
    replied_to_bot: bool = False
    thread_has_bot: bool = False
    is_direct: bool = False
    ignored_users: frozenset[str] = frozenset()
    command_prefix: str = "!"
    # The bot asked this person in this thread what was wrong with an answer they rated 👎.
    feedback_asked: bool = False
    # For an edit: the message it replaces was already addressed to the bot.
    edited_was_addressed: bool = False
    # For a reaction: it is on one of the bot's answers (and votes are kept).
    reacts_to_answer: bool = False
    # For a redaction: it takes back a vote.
    redacts_vote: bool = False
    # Files shared in the room become its knowledge ([files], bot/features/files).
    keeps_files: bool = False
    # Voice messages are transcribed ([speech] is set, bot/features/voice).
    transcribes: bool = False
    # The message replies to a shared file (looked up only for a reply that asks for a
    # summary: "summarize this" replying to a file needs no mention).
    replied_to_file: bool = False
    # The room was upgraded into another (bot/features/upgrades): nothing is answered here.
    room_replaced: bool = False
    # `matrix.verified_devices_only`: the message came from a device its owner never
    # cross-signed; and whether that device was told so in this room already.
    unverified_device: bool = False
    device_told: bool = False


@dataclass(frozen=True)
class Ignore:
    reason: str


@dataclass(frozen=True)
class RunCommand:
    name: str
    args: str
    thread_root: EventID


@dataclass(frozen=True)
class ExplainCommand:
    """A command said to the bot that does not run here (unknown, or commands are off in
    the room): the reply says why, and nothing is done."""

    name: str
    args: str
    thread_root: EventID


@dataclass(frozen=True)
class AnswerQuestion:
    text: str
    thread_root: EventID
    # An image the question is about (its caption, or an image sent to the bot): read by
    # OCR and answered from. Empty text: the image came without a question.
    about: str = ""


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
class KeepVote:
    """A 👍 or 👎 on one of the bot's answers, or (`withdrawn`) its redaction."""

    withdrawn: bool = False


@dataclass(frozen=True)
class KeepFile:
    """A file shared in the room, of a kind the bot reads: its text becomes the room's
    knowledge."""

    name: str


@dataclass(frozen=True)
class AnswerVoice:
    """A voice message addressed to the bot (in a direct chat, a reply to it, in its
    thread): transcribed, and answered as a question."""

    thread_root: EventID


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


# What the bot answers in the room (a reply), and what it only keeps or follows.
Actionable = (
    RunCommand | ExplainCommand | AnswerQuestion | KeepFeedback | AnswerVoice | RefuseDevice
)
Bookkeeping = KeepVote | KeepFile | KeepVoice | FollowEdit | FollowRedaction
Action = Ignore | Actionable | Bookkeeping


def _parse_command(text: str, prefix: str) -> tuple[str, str] | None:
    match = re.match(rf"\A{re.escape(prefix)}([a-zA-Z][\w-]*)\b\s*(.*)\Z", text, re.DOTALL)
    return (match.group(1).lower(), match.group(2).strip()) if match else None


def _ignore_reason(message: IncomingMessage, bot: BotIdentity, facts: RoutingFacts) -> str | None:
    if message.sender == bot.user_id:
        return "own message"
    if message.sender in facts.ignored_users:
        return "sender is an ignored bot"
    if message.is_edit and not _edit_adds_mention(message, bot, facts):
        return "edit"
    if message.msgtype == "m.notice":
        return "notice"
    if message.msgtype not in TEXT_MSGTYPES:
        return "not a text message"
    if message.timestamp_ms < facts.not_before_ms:
        return "sent before the bot started or joined"
    if facts.room_replaced:
        return "the room was upgraded"
    return None


def _edit_adds_mention(message: IncomingMessage, bot: BotIdentity, facts: RoutingFacts) -> bool:
    """An edit is a new question only when it newly mentions the bot (the edit's own
    `m.mentions`, as Element sends them) and the message was not addressed already."""
    newly = message.mentions.present and bot.user_id in message.mentions.user_ids
    return newly and not facts.edited_was_addressed


def decide_is_question(text: str) -> bool:
    """Whether a message asks something: it ends with a question mark (any script's), or
    opens with Spanish's."""
    stripped = text.strip()
    return stripped.endswith(("?", "？", "؟", "\u037e")) or stripped.startswith("¿")


def decide_action(
    message: IncomingMessage, bot: BotIdentity, room: RoomSettings, facts: RoutingFacts
) -> Action:
    """Decide whether and how to respond to one message in a room."""
    reason = _ignore_reason(message, bot, facts)
    if reason:
        return Ignore(reason)

    mentioned = is_mentioned(message, bot)
    addressed = (
        mentioned
        or facts.replied_to_bot
        or facts.thread_has_bot
        or facts.is_direct
        or room.answer_without_mention
    )
    text = (
        strip_mention(message.body, bot)
        if mentioned
        else strip_reply_fallback(message.body).strip()
    )
    thread_root = message.thread_root or message.replaces or message.event_id

    if facts.unverified_device:
        if not addressed and not text.startswith(facts.command_prefix):
            return Ignore("not addressed to the bot")
        if facts.device_told:
            return Ignore("an unverified device, told already")
        return RefuseDevice(thread_root)
    command = _parse_command(text, facts.command_prefix)
    # After "what was wrong?", what says something about the answer is the comment; a
    # new question to the bot (a mention, or a question mark) is answered instead.
    asks = mentioned or decide_is_question(text)
    if facts.feedback_asked and message.thread_root and not command and text and not asks:
        return KeepFeedback(text, thread_root)
    if command:
        name, args = command
        known = name in COMMANDS
        if name == "help" or (known and room.commands_enabled):
            return RunCommand(name, args, thread_root)
        # Unknown or disabled commands get an explanation only when said to the bot:
        # in a shared room, `!something` may well be for another bot.
        if addressed:
            return ExplainCommand(name, args, thread_root)
        return Ignore("commands are off here" if known else "command for another bot")

    if message.reply_to and decide_summary_request(text) and (addressed or facts.replied_to_file):
        # "summarize this" replying to a message (a shared file, even without a mention):
        # the command, with its rate limits, as if `!summarize` had been sent as that reply.
        if room.commands_enabled:
            return RunCommand("summarize", "", thread_root)
        if addressed:
            return ExplainCommand("summarize", "", thread_root)
        return Ignore("commands are off here")
    if not addressed:
        return Ignore("not addressed to the bot")
    if not text:
        return RunCommand("help", "", thread_root)
    return AnswerQuestion(text, thread_root)


def decide_event(
    source: Mapping[str, Any],
    room_id: RoomID,
    bot: BotIdentity,
    room: RoomSettings,
    facts: RoutingFacts,
) -> Action:
    """Decide what to do with any timeline event of a room."""
    reaction = parse_reaction(source)
    if reaction is not None:
        if reaction.sender == bot.user_id or parse_vote(reaction.key) is None:
            return Ignore("a reaction that is no vote")
        return KeepVote() if facts.reacts_to_answer else Ignore("not on an answer")
    redaction = parse_redaction(source)
    if redaction is not None:
        if facts.redacts_vote:
            return KeepVote(withdrawn=True)
        return FollowRedaction(redaction.redacts)
    message = parse_message(source, room_id)
    if message is None:
        return Ignore("not a message")
    if message.msgtype == "m.file":
        return decide_file(message, bot, facts)
    if message.msgtype == "m.audio":
        return decide_voice(message, bot, room, facts)
    if message.msgtype == "m.image":
        return decide_image(message, bot, room, facts)
    action = decide_action(message, bot, room, facts)
    if isinstance(action, Ignore) and _followed_edit(message, bot):
        return FollowEdit()
    return action


def decide_file(message: IncomingMessage, bot: BotIdentity, facts: RoutingFacts) -> Action:
    """A shared file is kept when the room's files are, it is of a kind the bot reads,
    and it was shared since the bot is in the room."""
    shared = message.file
    if message.sender == bot.user_id or message.sender in facts.ignored_users:
        return Ignore("a bot's file")
    if shared is None or message.is_edit:
        return Ignore("no file to read")
    if message.timestamp_ms < facts.not_before_ms:
        return Ignore("sent before the bot started or joined")
    if not facts.keeps_files:
        return Ignore("files are not kept")
    kind = decide_file_kind(shared.name, shared.media_type)
    if kind is None:
        return Ignore("not a kind of file the bot reads")
    if kind == "image":  # as an m.image: read when asked about (decide_image)
        return Ignore("an image is read when asked about")
    return KeepFile(shared.name)


def decide_image(
    message: IncomingMessage, bot: BotIdentity, room: RoomSettings, facts: RoutingFacts
) -> Action:
    """An image is read (by OCR) only when asked about: its caption addresses the bot, or
    it is sent to the bot without one (in a direct chat, the bot's thread, a reply to
    it); then it is answered from. Other images wait for a question replying to them
    (bot/features/files): photos shared among people are not read unasked."""
    if message.file is None:
        return Ignore("no image to read")
    body = message.body.strip()
    caption = body if body and body != message.file.name else ""
    if not caption and not (facts.is_direct or facts.thread_has_bot or facts.replied_to_bot):
        return Ignore("an image is read when asked about")
    # The caption decides as a text message would ("?" stands for none: the bot was
    # addressed by where the image was sent).
    as_text = replace(
        message,
        msgtype="m.text",
        body=caption or "?",
        formatted_body=message.formatted_body if caption else None,
    )
    action = decide_action(as_text, bot, room, facts)
    if isinstance(action, AnswerQuestion):
        return AnswerQuestion(action.text if caption else "", action.thread_root, message.event_id)
    # A command in a caption is not run: the image is what it shares.
    return action if isinstance(action, Ignore | RefuseDevice) else Ignore("a caption's command")


def decide_voice(
    message: IncomingMessage, bot: BotIdentity, room: RoomSettings, facts: RoutingFacts
) -> Action:
    """A voice message is answered when addressed to the bot, else transcribed into the
    room's history as the room says; nothing without a transcription endpoint."""
    if message.sender == bot.user_id or message.sender in facts.ignored_users:
        return Ignore("a bot's voice message")
    if message.file is None or message.is_edit:
        return Ignore("no recording to transcribe")
    if message.timestamp_ms < facts.not_before_ms:
        return Ignore("sent before the bot started or joined")
    if not facts.transcribes:
        return Ignore("voice is not transcribed")
    thread_root = message.thread_root or message.event_id
    addressed = (
        facts.is_direct
        or facts.replied_to_bot
        or facts.thread_has_bot
        or room.answer_without_mention
    )
    if addressed:
        return AnswerVoice(thread_root)
    if room.transcribe == "off":
        return Ignore("voice is not transcribed here")
    return KeepVoice(thread_root, post=room.transcribe == "reply")


def _followed_edit(message: IncomingMessage, bot: BotIdentity) -> bool:
    """An edit of someone's text message (an edit that addresses the bot is answered,
    and followed as it is answered)."""
    return (
        message.is_edit
        and bool(message.replaces)
        and message.sender != bot.user_id
        and message.msgtype in TEXT_MSGTYPES
    )


ACTION_KINDS: dict[str, type[Action]] = {
    kind.__name__: kind
    for kind in (
        Ignore,
        RunCommand,
        ExplainCommand,
        AnswerQuestion,
        KeepFeedback,
        KeepVote,
        KeepFile,
        AnswerVoice,
        KeepVoice,
        FollowEdit,
        FollowRedaction,
        RefuseDevice,
    )
}


def encode_action(action: Action) -> dict[str, str]:
    """The action as stored with its message in the inbox (bot/inbox/state.py)."""
    return {"kind": type(action).__name__, **asdict(action)}


def decode_action(data: Mapping[str, Any]) -> Action | None:
    """The stored action, or None when it is not one this release knows (decide again)."""
    fields = dict(data)
    kind = ACTION_KINDS.get(str(fields.pop("kind", "")))
    if kind is None:
        return None
    try:
        return kind(**fields)
    except TypeError:
        return None
