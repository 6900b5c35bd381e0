"""Mention detection across client styles, and the question left once the mention is gone."""

from __future__ import annotations

import pytest

from bot.inbox.events import IncomingMessage, Mentions, parse_message
from bot.inbox.mentions import BotIdentity, is_mentioned, strip_mention

BOT = BotIdentity("@bot:example.org", "Knowledge Bot")


def message(body: str, html: str | None = None, mentions: Mentions = Mentions()) -> IncomingMessage:
    return IncomingMessage("$e", "!r", "@alice:example.org", 1, "m.text", body, html, mentions)


MENTIONED = {
    "m.mentions with the bot": message("hi", mentions=Mentions(True, frozenset({BOT.user_id}))),
    "user id in the body (no m.mentions)": message("@bot:example.org what is X?"),
    "user id in another case": message("@Bot:Example.org what is X?"),
    "display name prefix (legacy Element)": message("Knowledge Bot: what is X?"),
    "display name mid-sentence": message("hey knowledge bot, what is X?"),
    "matrix.to pill": message(
        "Bot: what?", '<a href="https://matrix.to/#/@bot:example.org">Bot</a>: what?'
    ),
    "url-encoded pill": message("x", '<a href="https://matrix.to/#/%40bot%3Aexample.org">x</a>'),
}
NOT_MENTIONED = {
    "plain message": message("what is X?"),
    "m.mentions naming someone else, with the name in the body": message(
        "Knowledge Bot said X", mentions=Mentions(True, frozenset({"@carol:example.org"}))
    ),
    "empty m.mentions": message("@bot:example.org", mentions=Mentions(True)),
    "name inside a longer word": message("Knowledge Botany is fun"),
    "another user's id that starts like the bot's": message("@bot:example.org.evil what"),
    "pill to another user": message("x", '<a href="https://matrix.to/#/@carol:example.org">x</a>'),
    "name only in a reply quote": message(
        "> <@carol:example.org> Knowledge Bot is slow\n\nI agree"
    ),
}


@pytest.mark.parametrize("msg", MENTIONED.values(), ids=MENTIONED.keys())
def test_mentioned(msg):
    assert is_mentioned(msg, BOT)


@pytest.mark.parametrize("msg", NOT_MENTIONED.values(), ids=NOT_MENTIONED.keys())
def test_not_mentioned(msg):
    assert not is_mentioned(msg, BOT)


STRIPPED = {
    "Knowledge Bot: what is X?": "what is X?",
    "knowledge bot, what is X?": "what is X?",
    "@bot:example.org what is X?": "what is X?",
    "what is X? @bot:example.org": "what is X?",
    "> <@carol:example.org> earlier\n\nKnowledge Bot: and Y?": "and Y?",
    "what does Knowledge Bot know?": "what does Knowledge Bot know?",
}


@pytest.mark.parametrize("body,expected", STRIPPED.items())
def test_strip_mention(body, expected):
    assert strip_mention(body, BOT) == expected


def test_parse_message_reads_threads_replies_and_edits():
    source = {
        "type": "m.room.message",
        "event_id": "$e",
        "sender": "@alice:example.org",
        "origin_server_ts": 5,
        "content": {
            "msgtype": "m.text",
            "body": "x",
            "m.relates_to": {
                "rel_type": "m.thread",
                "event_id": "$root",
                "is_falling_back": True,
                "m.in_reply_to": {"event_id": "$latest"},
            },
        },
    }
    parsed = parse_message(source, "!r")
    assert (parsed.thread_root, parsed.reply_to, parsed.is_edit) == ("$root", None, False)
    source["content"]["m.relates_to"] = {"m.in_reply_to": {"event_id": "$answer"}}
    assert parse_message(source, "!r").reply_to == "$answer"
    source["content"]["m.relates_to"] = {"rel_type": "m.replace", "event_id": "$e0"}
    assert parse_message(source, "!r").is_edit
    assert parse_message({**source, "type": "m.reaction"}, "!r") is None
    assert parse_message({**source, "content": "garbage"}, "!r").body == ""


def test_an_edit_is_read_with_its_new_content_and_its_own_mentions():
    """As Element sends an edit that adds a mention: the edit's `m.mentions` names only
    the newly mentioned; the new content's own are the whole message's."""
    source = {
        "type": "m.room.message",
        "event_id": "$edit",
        "sender": "@alice:example.org",
        "origin_server_ts": 5,
        "content": {
            "msgtype": "m.text",
            "body": "* Knowledge Bot: what is the travel policy?",
            "m.mentions": {"user_ids": [BOT.user_id]},
            "m.new_content": {
                "msgtype": "m.text",
                "body": "Knowledge Bot: what is the travel policy?",
                "m.mentions": {"user_ids": [BOT.user_id, "@bob:example.org"]},
            },
            "m.relates_to": {"rel_type": "m.replace", "event_id": "$original"},
        },
    }
    parsed = parse_message(source, "!r")
    assert parsed.is_edit and parsed.replaces == "$original"
    assert parsed.body == "Knowledge Bot: what is the travel policy?"
    assert parsed.mentions.user_ids == {BOT.user_id}
    del source["content"]["m.mentions"]
    assert not parse_message(source, "!r").mentions.present, "no new mention: not addressed"
