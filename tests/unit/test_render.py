"""What the bot's notices look like to clients."""

from __future__ import annotations

from bot.inbox.commands import build_command_reply
from bot.inbox.render import ANSWER_ID_KEY, build_edit, build_notice
from core import strings
from core.config import RoomSettings
from core.requests import Answer, Source
from core.sources import build_answer_markdown


def test_notice_is_threaded_with_html_and_a_plain_body():
    content = build_notice(
        "**Yes.** See <b>x</b>", thread_root="$root", reply_to="$q", notify="@a:x"
    )
    assert content["msgtype"] == "m.notice"
    assert content["body"] == "**Yes.** See <b>x</b>"
    # Raw HTML from documents or people is escaped, never rendered.
    assert content["formatted_body"] == "<p><strong>Yes.</strong> See &lt;b&gt;x&lt;/b&gt;</p>"
    assert content["m.relates_to"] == {
        "rel_type": "m.thread",
        "event_id": "$root",
        "is_falling_back": False,
        "m.in_reply_to": {"event_id": "$q"},
    }
    assert content["m.mentions"] == {"user_ids": ["@a:x"]}


def test_edit_replaces_the_placeholder_and_carries_the_answer_id():
    content = build_edit("$placeholder", "Done", answer_id="a1")
    assert content["m.relates_to"] == {"rel_type": "m.replace", "event_id": "$placeholder"}
    assert content["m.new_content"]["body"] == "Done"
    assert content["m.new_content"][ANSWER_ID_KEY] == "a1"
    assert content["body"] == "* Done"
    assert content["m.mentions"] == {} == content["m.new_content"]["m.mentions"]


def test_the_edit_that_completes_an_answer_notifies_the_asker():
    content = build_edit("$placeholder", "Done", answer_id="a1", notify="@alice:x")
    assert content["m.mentions"] == {"user_ids": ["@alice:x"]}
    assert content["m.new_content"]["m.mentions"] == {"user_ids": ["@alice:x"]}


def test_sources_are_listed_as_numbered_links():
    answer = Answer(
        "Travel is booked by HR [1].",
        sources=(Source("Travel [policy]", "https://w/t"), Source("Notes")),
    )
    assert build_answer_markdown(answer).endswith("1. [Travel (policy)](https://w/t)\n2. Notes")


def test_help_reflects_the_room_and_unknown_commands_point_to_it():
    assert "`!help`" in build_command_reply("help", RoomSettings(), "!", False)
    assert "Mention me" in build_command_reply("help", RoomSettings(), "!", False)
    assert "Write a question" in build_command_reply("help", RoomSettings(), "!", True)
    assert "turned off" in build_command_reply(
        "help", RoomSettings(commands_enabled=False), "!", False
    )
    unknown = build_command_reply("deploy", RoomSettings(), "!", False)
    assert "`!deploy`" in unknown and "`!help`" in unknown


def test_help_names_every_way_to_use_the_bot_with_the_rooms_prefix():
    shown = build_command_reply("help", RoomSettings(), "?", False)
    assert "remember that" in shown and "👍" in shown and "👎" in shown
    assert "`?summarize last 3 days`" in shown and "`?forget all`" in shown
    assert "`summarize" not in shown and "`forget" not in shown, "never without the prefix"


def test_help_names_files_voice_and_search_only_where_they_apply():
    from bot.inbox.commands import Abilities

    plain = build_command_reply("help", RoomSettings(), "!", False)
    assert strings.HELP_FILES not in plain and strings.HELP_SEARCH_ONLY not in plain
    every = build_command_reply(
        "help", RoomSettings(), "!", False, Abilities(files=True, voice=True, search_only=True)
    )
    for line in (strings.HELP_FILES, strings.HELP_VOICE, strings.HELP_SEARCH_ONLY):
        assert line in every
