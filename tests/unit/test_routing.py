"""What the bot does with a message: one table of named cases."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from bot.inbox.decisions import (
    AnswerQuestion,
    AnswerVoice,
    Catchup,
    ExplainCommand,
    FollowEdit,
    FollowRedaction,
    Ignore,
    KeepFeedback,
    KeepFile,
    KeepVoice,
    Ledger,
    ListSources,
    RefuseDevice,
    ShowHelp,
    Summarize,
    SummarizeFile,
    Vote,
    WithdrawVote,
    decode_decision,
    encode_decision,
)
from bot.inbox.events import IncomingMessage, Mentions
from bot.inbox.mentions import BotIdentity
from bot.inbox.routing import RoutingFacts, decide_action, decide_event
from core.config import RoomSettings
from core.ids import EventID, RoomID

BOT = BotIdentity("@bot:example.org", "Knowledge Bot")
ALICE = "@alice:example.org"
BASE = IncomingMessage(
    event_id="$q",
    room_id="!room",
    sender=ALICE,
    timestamp_ms=2_000,
    msgtype="m.text",
    body="what is the travel policy?",
)
MENTIONED = replace(
    BASE,
    body="Knowledge Bot: what is the travel policy?",
    mentions=Mentions(True, frozenset({BOT.user_id})),
)
FACTS = RoutingFacts(not_before_ms=1_000, ignored_users=frozenset({"@otherbot:example.org"}))
ROOM = RoomSettings()

CASES = {
    "mention by m.mentions": (
        MENTIONED,
        ROOM,
        FACTS,
        AnswerQuestion("what is the travel policy?", "$q"),
    ),
    "no mention": (BASE, ROOM, FACTS, Ignore("not addressed to the bot")),
    "own message": (replace(MENTIONED, sender=BOT.user_id), ROOM, FACTS, Ignore("own message")),
    "ignored bot": (
        replace(MENTIONED, sender="@otherbot:example.org"),
        ROOM,
        FACTS,
        Ignore("sender is an ignored bot"),
    ),
    "notice": (replace(MENTIONED, msgtype="m.notice"), ROOM, FACTS, Ignore("notice")),
    "image": (replace(MENTIONED, msgtype="m.image"), ROOM, FACTS, Ignore("not a text message")),
    "edit": (replace(BASE, is_edit=True, replaces="$q0"), ROOM, FACTS, Ignore("edit")),
    "edit that adds the mention: a question in the original's thread": (
        replace(MENTIONED, event_id="$edit", is_edit=True, replaces="$q0"),
        ROOM,
        FACTS,
        AnswerQuestion("what is the travel policy?", "$q0"),
    ),
    "edit of a message already addressed": (
        replace(MENTIONED, event_id="$edit", is_edit=True, replaces="$q0"),
        ROOM,
        replace(FACTS, edited_was_addressed=True),
        Ignore("edit"),
    ),
    "before start": (
        replace(MENTIONED, timestamp_ms=500),
        ROOM,
        FACTS,
        Ignore("sent before the bot started or joined"),
    ),
    "in a thread answers in that thread": (
        replace(MENTIONED, thread_root="$root"),
        ROOM,
        FACTS,
        AnswerQuestion("what is the travel policy?", "$root"),
    ),
    "follow-up in the bot's thread": (
        replace(BASE, thread_root="$root"),
        ROOM,
        replace(FACTS, thread_has_bot=True),
        AnswerQuestion("what is the travel policy?", "$root", in_conversation=True),
    ),
    "a remark with a question mark inside is kept": (
        replace(BASE, body="it said 27? the page says 30", thread_root="$root"),
        ROOM,
        replace(FACTS, thread_has_bot=True, feedback_asked=True),
        KeepFeedback("it said 27? the page says 30", "$root"),
    ),
    "the reply to what was wrong is kept, not answered": (
        replace(BASE, body="the link is dead", thread_root="$root"),
        ROOM,
        replace(FACTS, thread_has_bot=True, feedback_asked=True),
        KeepFeedback("the link is dead", "$root"),
    ),
    "a question there is answered, not kept as the comment": (
        replace(BASE, body="how far ahead must trains be booked?", thread_root="$root"),
        ROOM,
        replace(FACTS, thread_has_bot=True, feedback_asked=True),
        AnswerQuestion("how far ahead must trains be booked?", "$root", in_conversation=True),
    ),
    "a mention there is answered": (
        replace(MENTIONED, body="Knowledge Bot: list the offices", thread_root="$root"),
        ROOM,
        replace(FACTS, thread_has_bot=True, feedback_asked=True),
        AnswerQuestion("list the offices", "$root", in_conversation=True),
    ),
    "a command there is still a command": (
        replace(BASE, body="!help", thread_root="$root"),
        ROOM,
        replace(FACTS, thread_has_bot=True, feedback_asked=True),
        ShowHelp("$root"),
    ),
    "thread without the bot": (
        replace(BASE, thread_root="$root"),
        ROOM,
        FACTS,
        Ignore("not addressed to the bot"),
    ),
    "reply to the bot": (
        replace(BASE, reply_to="$answer"),
        ROOM,
        replace(FACTS, replied_to_bot=True),
        AnswerQuestion("what is the travel policy?", "$q", in_conversation=True),
    ),
    "direct chat": (
        BASE,
        ROOM,
        replace(FACTS, is_direct=True),
        AnswerQuestion("what is the travel policy?", "$q", direct=True),
    ),
    "room answers everything": (
        BASE,
        RoomSettings(answer_without_mention=True),
        FACTS,
        AnswerQuestion("what is the travel policy?", "$q"),
    ),
    "help command": (replace(BASE, body="!help"), ROOM, FACTS, ShowHelp("$q")),
    "help with a mention": (
        replace(MENTIONED, body="Knowledge Bot: !help"),
        ROOM,
        FACTS,
        ShowHelp("$q"),
    ),
    "help while commands are off": (
        replace(BASE, body="!help"),
        RoomSettings(commands_enabled=False),
        FACTS,
        ShowHelp("$q"),
    ),
    "unknown command for another bot": (
        replace(BASE, body="!deploy prod"),
        ROOM,
        FACTS,
        Ignore("command for another bot"),
    ),
    "unknown command said to the bot": (
        replace(MENTIONED, body="Knowledge Bot: !deploy prod"),
        ROOM,
        FACTS,
        ExplainCommand("deploy", "$q"),
    ),
    "disabled command said to the bot is explained, not run": (
        replace(MENTIONED, body="Knowledge Bot: !forget all"),
        RoomSettings(commands_enabled=False),
        FACTS,
        ExplainCommand("forget", "$q"),
    ),
    "disabled command in a direct chat is explained, not run": (
        replace(BASE, body="!summarize"),
        RoomSettings(commands_enabled=False),
        replace(FACTS, is_direct=True),
        ExplainCommand("summarize", "$q"),
    ),
    "disabled command not said to the bot": (
        replace(BASE, body="!forget all"),
        RoomSettings(commands_enabled=False),
        FACTS,
        Ignore("commands are off here"),
    ),
    "other prefix": (
        replace(BASE, body="?help"),
        ROOM,
        replace(FACTS, command_prefix="?"),
        ShowHelp("$q"),
    ),
    "bare mention asks for help": (
        replace(MENTIONED, body="Knowledge Bot"),
        ROOM,
        FACTS,
        ShowHelp("$q"),
    ),
    "@room is not a mention of the bot": (
        replace(BASE, body="@room meeting now", mentions=Mentions(True, frozenset(), True)),
        ROOM,
        FACTS,
        Ignore("not addressed to the bot"),
    ),
    "summarize this, replying to a message, is the command": (
        replace(MENTIONED, body="Knowledge Bot: summarize this", reply_to="$file"),
        ROOM,
        FACTS,
        Summarize("", EventID("$q")),
    ),
    "summarize this where commands are off is told so, as !summarize is": (
        replace(MENTIONED, body="Knowledge Bot: summarize this", reply_to="$file"),
        RoomSettings(commands_enabled=False),
        FACTS,
        ExplainCommand("summarize", EventID("$q")),
    ),
    "summarize this as a plain reply to a file is the command": (
        replace(BASE, body="summarize this", reply_to="$file"),
        ROOM,
        replace(FACTS, replied_file="$file"),
        SummarizeFile(EventID("$file"), EventID("$q")),
    ),
    "its German form as a plain reply to a file too": (
        replace(BASE, body="Fass das bitte zusammen", reply_to="$file"),
        ROOM,
        replace(FACTS, replied_file="$file"),
        SummarizeFile(EventID("$file"), EventID("$q")),
    ),
    "summarize this as a plain reply to a file where commands are off is left": (
        replace(BASE, body="summarize this", reply_to="$file"),
        RoomSettings(commands_enabled=False),
        replace(FACTS, replied_file="$file"),
        Ignore("commands are off here"),
    ),
    "summarize this as a plain reply to someone's text is theirs": (
        replace(BASE, body="summarize this", reply_to="$text"),
        ROOM,
        FACTS,
        Ignore("not addressed to the bot"),
    ),
    "!summarize with a range replying to a kept file is the file's summary too": (
        replace(BASE, body="!summarize last week", reply_to="$file"),
        ROOM,
        replace(FACTS, replied_file="$file", keeps_files=True),
        SummarizeFile(EventID("$file"), EventID("$q")),
    ),
    "!summarize with a range is the room's summary of that range": (
        replace(BASE, body="!summarize last 3 days"),
        ROOM,
        FACTS,
        Summarize("last 3 days", EventID("$q")),
    ),
    "!actions mine is the ledger's action items": (
        replace(BASE, body="!actions mine"),
        ROOM,
        FACTS,
        Ledger("action", "mine", EventID("$q")),
    ),
    "!decisions with a topic": (
        replace(BASE, body="!Decisions budget"),
        ROOM,
        FACTS,
        Ledger("decision", "budget", EventID("$q")),
    ),
    "!catchup in a direct chat knows it is one": (
        replace(BASE, body="!catchup since Monday"),
        ROOM,
        replace(FACTS, is_direct=True),
        Catchup("since Monday", EventID("$q"), direct=True),
    ),
    "!sources": (replace(BASE, body="!sources"), ROOM, FACTS, ListSources(EventID("$q"))),
    "!help in a direct chat knows it is one": (
        replace(BASE, body="!help"),
        ROOM,
        replace(FACTS, is_direct=True),
        ShowHelp(EventID("$q"), direct=True),
    ),
    "a question from a device its owner never cross-signed is refused": (
        MENTIONED,
        ROOM,
        replace(FACTS, unverified_device=True),
        RefuseDevice(EventID("$q")),
    ),
    "once per device and room": (
        MENTIONED,
        ROOM,
        replace(FACTS, unverified_device=True, device_told=True),
        Ignore("an unverified device, told already"),
    ),
    "a command from it too": (
        replace(BASE, body="!summarize"),
        ROOM,
        replace(FACTS, unverified_device=True),
        RefuseDevice(EventID("$q")),
    ),
    "its chatter is not for the bot either way": (
        BASE,
        ROOM,
        replace(FACTS, unverified_device=True),
        Ignore("not addressed to the bot"),
    ),
    "a plain reply to a file that asks more than a summary is not for the bot": (
        replace(BASE, body="summarize this for the board, it's late", reply_to="$file"),
        ROOM,
        replace(FACTS, replied_file="$file"),
        Ignore("not addressed to the bot"),
    ),
}


@pytest.mark.parametrize("message,room,facts,expected", CASES.values(), ids=CASES.keys())
def test_decide_action(message, room, facts, expected):
    assert decide_action(message, BOT, room, facts) == expected


@pytest.mark.parametrize("message,room,facts,expected", CASES.values(), ids=CASES.keys())
def test_every_decision_is_stored_and_read_back_as_it_was(message, room, facts, expected):
    stored = json.loads(json.dumps(encode_decision(decide_action(message, BOT, room, facts))))
    assert decode_decision(stored) == expected


@pytest.mark.parametrize(
    "stored",
    [{"kind": "Launch"}, {}, {"kind": "AnswerQuestion", "text": "hi"}, {"kind": "Ignore", "x": 1}],
    ids=["unknown kind", "no kind", "missing field", "unknown field"],
)
def test_a_decision_this_release_does_not_know_is_decided_again(stored):
    assert decode_decision(stored) is None


def reaction(key: str, sender: str = ALICE) -> dict:
    return {
        "type": "m.reaction",
        "sender": sender,
        "event_id": "$r",
        "origin_server_ts": 7,
        "content": {"m.relates_to": {"rel_type": "m.annotation", "event_id": "$a", "key": key}},
    }


REDACTION = {"type": "m.room.redaction", "sender": ALICE, "event_id": "$x", "redacts": "$q"}
EDIT = {
    "type": "m.room.message",
    "sender": ALICE,
    "event_id": "$e",
    "origin_server_ts": 2_000,
    "content": {
        "msgtype": "m.text",
        "body": "* new",
        "m.new_content": {"msgtype": "m.text", "body": "new"},
        "m.relates_to": {"rel_type": "m.replace", "event_id": "$q"},
    },
}
ON_ANSWER = replace(FACTS, reacts_to_answer=True)
KEEPS = replace(FACTS, keeps_files=True)


def shared(name: str = "contract.pdf", sender: str = ALICE, ts: int = 2_000, **content) -> dict:
    return {
        "type": "m.room.message",
        "sender": sender,
        "event_id": "$f",
        "origin_server_ts": ts,
        "content": {
            "msgtype": "m.file",
            "body": name,
            "url": "mxc://hs/abc",
            "info": {"mimetype": "application/pdf", "size": 1234},
            **content,
        },
    }


def image(caption: str = "", sender: str = ALICE, *, mentions: bool = False) -> dict:
    content = {
        "msgtype": "m.image",
        "body": caption or "error.png",
        "filename": "error.png",
        "url": "mxc://hs/png",
        "info": {"mimetype": "image/png"},
    }
    if mentions:
        content["m.mentions"] = {"user_ids": [BOT.user_id]}
    return {
        "type": "m.room.message",
        "sender": sender,
        "event_id": "$i",
        "origin_server_ts": 2_000,
        "content": content,
    }


def voice(sender: str = ALICE, ts: int = 2_000) -> dict:
    return {
        "type": "m.room.message",
        "sender": sender,
        "event_id": "$v",
        "origin_server_ts": ts,
        "content": {
            "msgtype": "m.audio",
            "body": "Voice message",
            "url": "mxc://hs/ogg",
            "info": {"mimetype": "audio/ogg"},
            "org.matrix.msc3245.voice": {},
        },
    }


HEARS = replace(FACTS, transcribes=True)
ENCRYPTED_FILE = {
    "url": "mxc://hs/enc",
    "key": {"k": "key"},
    "iv": "iv",
    "hashes": {"sha256": "hash"},
    "v": "v2",
}

EVENTS = {
    # name: (event, facts, expected)
    "a 👍 on an answer is a vote": (
        reaction("👍"),
        ON_ANSWER,
        Vote("up", EventID("$a"), ALICE, 7),
    ),
    "a 👎 with a skin tone is a vote": (
        reaction("👎🏽"),
        ON_ANSWER,
        Vote("down", EventID("$a"), ALICE, 7),
    ),
    "a 👍 on anything else is nothing": (reaction("👍"), FACTS, Ignore("not on an answer")),
    "a 🎉 on an answer is no vote": (
        reaction("🎉"),
        ON_ANSWER,
        Ignore("a reaction that is no vote"),
    ),
    "the bot's own reaction is no vote": (
        reaction("👍", BOT.user_id),
        ON_ANSWER,
        Ignore("a reaction that is no vote"),
    ),
    "a vote's redaction takes it back": (
        REDACTION,
        replace(FACTS, redacts_vote=True),
        WithdrawVote(EventID("$q")),
    ),
    "a message's redaction is followed": (REDACTION, FACTS, FollowRedaction(EventID("$q"))),
    "an edit is followed": (EDIT, FACTS, FollowEdit()),
    "the bot's own edit is not": ({**EDIT, "sender": BOT.user_id}, FACTS, Ignore("own message")),
    "a PDF shared in a room that keeps files is kept": (shared(), KEEPS, KeepFile("contract.pdf")),
    "an encrypted Word file is kept": (
        {
            **shared("procedure.docx"),
            "content": {"msgtype": "m.file", "body": "procedure.docx", "file": ENCRYPTED_FILE},
        },
        KEEPS,
        KeepFile("procedure.docx"),
    ),
    "a file where files are not kept": (shared(), FACTS, Ignore("files are not kept")),
    "an image shared as a file": (
        shared("photo.jpg", info={"mimetype": "image/jpeg"}),
        KEEPS,
        Ignore("an image is read when asked about"),
    ),
    "an image shared among people is not read unasked": (
        image(),
        KEEPS,
        Ignore("an image is read when asked about"),
    ),
    "an image sent to the bot in a direct chat is asked about": (
        image(),
        replace(KEEPS, is_direct=True),
        AnswerQuestion("", EventID("$i"), "$i", direct=True),
    ),
    "an image whose caption asks the bot": (
        image("Knowledge Bot: what does this error mean?", mentions=True),
        KEEPS,
        AnswerQuestion("what does this error mean?", EventID("$i"), "$i"),
    ),
    "an image whose caption is for people": (
        image("look at this"),
        KEEPS,
        Ignore("not addressed to the bot"),
    ),
    "the bot's own image": (
        image(sender=BOT.user_id),
        replace(KEEPS, is_direct=True),
        Ignore("own message"),
    ),
    "a file shared before the bot came": (
        shared(ts=500),
        KEEPS,
        Ignore("sent before the bot started or joined"),
    ),
    "the bot's own file": (shared(sender=BOT.user_id), KEEPS, Ignore("a bot's file")),
    "a file without a usable URL": (
        {**shared(), "content": {"msgtype": "m.file", "body": "x.pdf", "url": "https://e/x.pdf"}},
        KEEPS,
        Ignore("no file to read"),
    ),
    "voice without a transcription endpoint": (voice(), FACTS, Ignore("voice is not transcribed")),
    "voice in a room is kept as its history": (voice(), HEARS, KeepVoice(EventID("$v"))),
    "voice in a direct chat is a question": (
        voice(),
        replace(HEARS, is_direct=True),
        AnswerVoice(EventID("$v"), direct=True),
    ),
    "voice in the bot's thread is a question": (
        voice(),
        replace(HEARS, thread_has_bot=True),
        AnswerVoice(EventID("$v"), in_conversation=True),
    ),
    "the bot's own voice": (voice(BOT.user_id), HEARS, Ignore("a bot's voice message")),
    "a state event is nothing": (
        {"type": "m.room.topic", "sender": ALICE, "content": {}},
        FACTS,
        Ignore("not a message"),
    ),
}


@pytest.mark.parametrize(("event", "facts", "expected"), EVENTS.values(), ids=EVENTS.keys())
def test_decide_event(event, facts, expected):
    decided = decide_event(event, RoomID("!room"), BOT, RoomSettings(), facts)
    assert decided == expected
    assert decode_decision(json.loads(json.dumps(encode_decision(decided)))) == decided


TRANSCRIBE = {
    "reply: the transcript is posted": ("reply", KeepVoice(EventID("$v"), post=True)),
    "silent: only kept": ("silent", KeepVoice(EventID("$v"))),
    "off: nothing": ("off", Ignore("voice is not transcribed here")),
}


@pytest.mark.parametrize(("mode", "expected"), TRANSCRIBE.values(), ids=TRANSCRIBE.keys())
def test_a_rooms_transcribe_setting_decides_what_becomes_of_voice(mode, expected):
    room = RoomSettings(transcribe=mode)
    assert decide_event(voice(), RoomID("!room"), BOT, room, HEARS) == expected
