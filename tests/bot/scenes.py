"""People in rooms with the bot on a FakeAccount, as their clients would act: they say,
reply, react, edit, redact and invite; and the bot's messages read as they would see
them. Built on tests/bot/harness.py's public helpers (`running_bot`, `Bot`,
`eventually`); `running_rooms` also runs the history keeper that running_bot leaves out,
found among the live objects (see there)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any
from weakref import WeakKeyDictionary

from bot.matrix.fake import FakeAccount, Written
from tests.bot.harness import BOT, Bot, eventually, running_bot
from tests.support.messages import build_text_content

ALICE, BOB, CAROL = "@alice:fake.test", "@bob:fake.test", "@carol:fake.test"


@contextlib.asynccontextmanager
async def running_rooms(tmp_path: Path, config: str = "", **options: Any) -> AsyncIterator[Bot]:
    """`running_bot` with the features that read the rooms, and the rooms' lines kept
    in their history as the app keeps them."""
    async with running_bot(tmp_path, config, rooms=True, **options) as bot:
        yield bot


def invites(*people: str, extra: str = "") -> str:
    """Config whose [invites] let `people` invite the bot; `extra` goes before it."""
    listed = ", ".join(f'"{person}"' for person in people)
    return f"{extra}\n[invites]\nallowed_users = [{listed}]\n"


def say(
    bot: Bot,
    room: str,
    sender: str,
    body: str,
    *,
    mentions: list[str] | None = None,
    thread: str | None = None,
    reply_to: str | None = None,
    **content: Any,
) -> str:
    """A message as a client sends it (tests/e2e/people.py's `say`); its event id."""
    message = {
        **build_text_content(body, mentions=mentions, thread=thread, reply_to=reply_to),
        **content,
    }
    return str(
        bot.account.add_event(room, sender, "m.room.message", message, **stamp(bot))["event_id"]
    )


_LAST_MS: WeakKeyDictionary[FakeAccount, int] = WeakKeyDictionary()


def stamp(bot: Bot) -> dict[str, int]:
    """A send time after every earlier one of the scene's, and not ahead of the clock:
    two messages said in one millisecond would be one instant to a read receipt, and
    one stamped ahead would come after a catch-up asked just after it."""
    while (ms := int(time.time() * 1000)) <= _LAST_MS.get(bot.account, 0):
        time.sleep(0.0002)  # less than a millisecond, once in a while
    _LAST_MS[bot.account] = ms
    return {"origin_server_ts": ms}


async def ask(bot: Bot, room: str, sender: str, text: str, **how: Any) -> dict[str, Any]:
    """The bot's reply to `text` (mentioning it) as it reads once finished: the content
    of its message, or of the edit that finished it."""
    return content_of(await bot.reply_to(say(bot, room, sender, text, mentions=[BOT], **how)))


async def reply_to(bot: Bot, event_id: str) -> dict[str, Any]:
    """The finished content of the bot's reply to `event_id`."""
    return content_of(await bot.reply_to(event_id))


def content_of(written: Written) -> dict[str, Any]:
    """What a message reads as now: an edit's new content, else its own."""
    content: dict[str, Any] = written.content.get("m.new_content", written.content)
    return content


def react(bot: Bot, room: str, sender: str, event_id: str, key: str) -> str:
    relates = {"rel_type": "m.annotation", "event_id": event_id, "key": key}
    reaction = bot.account.add_event(
        room, sender, "m.reaction", {"m.relates_to": relates}, **stamp(bot)
    )
    return str(reaction["event_id"])


def redact(bot: Bot, room: str, sender: str, event_id: str) -> None:
    bot.account.add_event(room, sender, "m.room.redaction", {}, redacts=event_id, **stamp(bot))


def edit(bot: Bot, room: str, sender: str, event_id: str, body: str) -> None:
    say(
        bot,
        room,
        sender,
        f"* {body}",
        **{
            "m.new_content": {"msgtype": "m.text", "body": body},
            "m.relates_to": {"rel_type": "m.replace", "event_id": event_id},
        },
    )


def posted(bot: Bot, room: str | None = None) -> list[Written]:
    """The bot's messages (not their edits) in `room`, oldest first."""
    return [
        written
        for written in bot.account.messages(room)
        if written.content.get("m.relates_to", {}).get("rel_type") != "m.replace"
    ]


def replies(bot: Bot, event_id: str) -> list[Written]:
    """The bot's messages (not edits) that reply to `event_id` (tests/e2e's `replies_to`)."""
    return [
        written
        for written in posted(bot)
        if written.content.get("m.relates_to", {}).get("m.in_reply_to", {}).get("event_id")
        == event_id
    ]


async def written(bot: Bot, found: Callable[[Written], bool], timeout: float = 10.0) -> Written:
    """The bot's first message (or edit) that `found` accepts, once it is written."""
    return await bot.account.wait_for(
        lambda: next((w for w in bot.account.messages() if found(w)), None), timeout
    )


async def settle(bot: Bot, room: str, sender: str, rounds: int = 2) -> None:
    """The bot's replies to `rounds` later `!help`s, one after the other: by then it took
    everything said before them (tests/e2e/people.py's `settle`): what it has not done
    by now, it does not do."""
    for _ in range(rounds):
        await bot.reply_to(say(bot, room, sender, "!help"))


async def invited(bot: Bot, room: str, inviter: str, *, direct: bool = False) -> None:
    """`inviter` invites the bot into `room` (one the test added with its members); back
    once the bot has joined and noted when (what is said from then on is its)."""
    bot.account.invite(room, inviter, direct=direct)

    async def noted() -> bool | None:
        joined_ms, _ = await bot.state.joined_room(room)
        return True if joined_ms else None

    await eventually(noted)


async def direct_chat(bot: Bot, room: str, person: str, **room_state: Any) -> str:
    """A direct chat of `person` with the bot (its invite allowed by the config)."""
    bot.account.add_room(room, [person], **room_state)
    await invited(bot, room, person, direct=True)
    return room


def link(event_id: str) -> str:
    """An event id as a matrix.to link holds it."""
    return event_id.replace("$", "%24")


def room_link(room_id: str) -> str:
    """How a notice links a room (bot/inbox/links.py): its id, escaped, in matrix.to."""
    return "https://matrix.to/#/" + room_id.replace("!", "%21").replace(":", "%3A")
