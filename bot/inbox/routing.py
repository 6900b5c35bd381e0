"""What should the bot do with an event? One pure decision, tested by tables of cases.

Every timeline event is decided once, when the sync stores it in the inbox: a question,
one of the commands, the comment after a 👎, a vote or its withdrawal, an edit or a
redaction to follow, or nothing (the kinds are in bot/inbox/decisions.py). The router
(bot/inbox/router.py) gathers what the event alone cannot tell (was the replied-to
message the bot's, has the bot answered in this thread, is the room a direct chat, is
the reaction on one of the bot's answers) into RoutingFacts; the decision carries what
its handler needs, so the feature that carries it out never asks again.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from bot.inbox.commands import COMMANDS, decide_summary_request
from bot.inbox.decisions import (
    AnswerQuestion,
    AnswerVoice,
    Catchup,
    Command,
    Decision,
    ExplainCommand,
    FollowEdit,
    FollowRedaction,
    Forget,
    Ignore,
    KeepFeedback,
    KeepFile,
    KeepVoice,
    Ledger,
    ListMemories,
    ListSources,
    RefuseDevice,
    ReportFeedback,
    ScheduleDigest,
    ShowHelp,
    Summarize,
    SummarizeFile,
    Vote,
    WithdrawVote,
)
from bot.inbox.events import IncomingMessage, parse_message, parse_reaction, parse_redaction
from bot.inbox.mentions import BotIdentity, is_mentioned, strip_mention, strip_reply_fallback
from core.config import RoomSettings
from core.feedback.votes import parse_vote
from core.ids import EventID, RoomID, UserID
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
    # The shared file the message replies to, when the files feature runs (looked up only
    # for a reply that asks for a summary: "summarize this" replying to a file needs no
    # mention).
    replied_file: str = ""
    # The room was upgraded into another (bot/features/upgrades): nothing is answered here.
    room_replaced: bool = False
    # `matrix.verified_devices_only`: the message came from a device its owner never
    # cross-signed; and whether that device was told so in this room already.
    unverified_device: bool = False
    device_told: bool = False


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
) -> Decision:
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
            return decide_command(name, args, thread_root, facts)
        # Unknown or disabled commands get an explanation only when said to the bot:
        # in a shared room, `!something` may well be for another bot.
        if addressed:
            return ExplainCommand(name, thread_root)
        return Ignore("commands are off here" if known else "command for another bot")

    if message.reply_to and decide_summary_request(text) and (addressed or facts.replied_file):
        # "summarize this" replying to a message (a shared file, even without a mention):
        # the command, with its rate limits, as if `!summarize` had been sent as that reply.
        if room.commands_enabled:
            return decide_command("summarize", "", thread_root, facts)
        if addressed:
            return ExplainCommand("summarize", thread_root)
        return Ignore("commands are off here")
    if not addressed:
        return Ignore("not addressed to the bot")
    if not text:
        return ShowHelp(thread_root, facts.is_direct)
    return AnswerQuestion(
        text,
        thread_root,
        direct=facts.is_direct,
        in_conversation=facts.replied_to_bot or facts.thread_has_bot,
    )


def decide_command(name: str, args: str, thread_root: EventID, facts: RoutingFacts) -> Command:
    """The command `name` (one of COMMANDS) with what its handler needs."""
    match name:
        case "help":
            return ShowHelp(thread_root, facts.is_direct)
        case "summarize" if facts.replied_file:
            # Summarised by the files feature, or told why it cannot be (files are not
            # kept here, it was shared before they were, its kind is not read).
            return SummarizeFile(EventID(facts.replied_file), thread_root)
        case "summarize":
            return Summarize(args, thread_root)
        case "decisions":
            return Ledger("decision", args, thread_root)
        case "actions":
            return Ledger("action", args, thread_root)
        case "catchup" if args.lower().startswith("every") or args.lower() == "off":
            return ScheduleDigest(args, thread_root)
        case "catchup":
            return Catchup(args, thread_root, facts.is_direct)
        case "memory":
            return ListMemories(thread_root)
        case "forget":
            return Forget(args, thread_root)
        case "feedback":
            return ReportFeedback(args, thread_root)
        case "sources":
            return ListSources(thread_root, facts.is_direct)
        case _:
            return ExplainCommand(name, thread_root)


def decide_event(
    source: Mapping[str, Any],
    room_id: RoomID,
    bot: BotIdentity,
    room: RoomSettings,
    facts: RoutingFacts,
) -> Decision:
    """Decide what to do with any timeline event of a room."""
    reaction = parse_reaction(source)
    if reaction is not None:
        sign = parse_vote(reaction.key)
        if reaction.sender == bot.user_id or sign is None:
            return Ignore("a reaction that is no vote")
        if not facts.reacts_to_answer:
            return Ignore("not on an answer")
        return Vote(sign, EventID(reaction.target), UserID(reaction.sender), reaction.timestamp_ms)
    redaction = parse_redaction(source)
    if redaction is not None:
        if facts.redacts_vote:
            return WithdrawVote(EventID(redaction.redacts))
        return FollowRedaction(EventID(redaction.redacts))
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


def decide_file(message: IncomingMessage, bot: BotIdentity, facts: RoutingFacts) -> Decision:
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
) -> Decision:
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
        return replace(action, text=action.text if caption else "", about=message.event_id)
    # A command in a caption is not run: the image is what it shares.
    return action if isinstance(action, Ignore | RefuseDevice) else Ignore("a caption's command")


def decide_voice(
    message: IncomingMessage, bot: BotIdentity, room: RoomSettings, facts: RoutingFacts
) -> Decision:
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
        in_conversation = facts.replied_to_bot or facts.thread_has_bot
        return AnswerVoice(thread_root, facts.is_direct, in_conversation)
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
