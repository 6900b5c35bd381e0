"""Encryption integrity on a real homeserver, judged by what the server stores (Synapse's
admin API) and by what the bot's own stores hold: text said in an encrypted room is
never posted where the server can read it, the bot keeps its encryption device through
a homeserver's hiccup, and nothing the bot keeps outlives a redaction."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import psycopg
import pytest
from aiohttp import ClientSession, web

from bot.dev.synapse import free_port
from core import strings
from tests.e2e.people import from_user, membership_of, replies_to
from tests.e2e.scripted import ask, llm_config, reading_model
from tests.e2e.server_view import ServerView
from tests.e2e.test_conversation import room_with_bot
from tests.e2e.test_feedback import THUMBS_DOWN
from tests.e2e.test_knowledge import knowledge_config, put_travel_policy
from tests.e2e.test_summaries import chat_model

pytestmark = pytest.mark.e2e
SUMMARIES = (
    '[sources.matrix]\ntoken = "matrix-token"\n'
    '[collections.room-summaries]\nsource = "matrix"\n'
    '[summaries]\ncollection = "room-summaries"\npost_in_room = true\n'
)


def with_room_defaults(bot, lines: str) -> None:
    text = bot.config_path.read_text()
    bot.config_path.write_text(text.replace("[invites]", f"[room_defaults]\n{lines}\n[invites]"))


def bodies(person, room: str, sender: str) -> str:
    return json.dumps([e["content"] for e in person.seen(room, from_user(sender))])


async def summarised_sealed_room(people, bot, llm, summaries: str) -> tuple:
    """Alice, and an encrypted room of hers whose scheduled summary (a secret decision)
    was posted in it: written into the collection too, unless `summaries` says not."""
    alice = await people("alice")
    llm.respond = chat_model
    bot.write_config(
        knowledge_config(free_port()) + llm_config(llm) + summaries, allowed_users=[alice.user_id]
    )
    with_room_defaults(bot, 'summary_schedule = "every 10s"')
    await bot.start()
    sealed_room = await room_with_bot(alice, bot, encrypted=True)
    await alice.say(sealed_room, "Decision: the Orion vault code becomes 4417-blue")

    def posted(event: dict) -> bool:
        return from_user(bot.user_id)(event) and "4417-blue" in event["content"].get("body", "")

    await alice.wait_for(sealed_room, posted, timeout=90)
    return alice, sealed_room


async def test_an_encrypted_rooms_summary_is_never_posted_into_an_unencrypted_room(
    people, bot, llm, homeserver
):
    alice, sealed_room = await summarised_sealed_room(people, bot, llm, SUMMARIES)
    plain_chat = await room_with_bot(alice, bot, direct=True)
    answer = await ask(alice, plain_chat, "what does the Orion vault code become?", bot)
    assert "4417" not in answer["body"]
    assert strings.ENCRYPTED_LEFT_OUT in answer["body"], "the asker is told why, in one line"
    # The positive control: the same question in an encrypted chat gets the text.
    sealed_chat = await room_with_bot(alice, bot, direct=True, encrypted=True)
    control = await ask(alice, sealed_chat, "what does the Orion vault code become?", bot)
    assert "4417-blue" in control["body"]

    server = await ServerView.open(homeserver)
    assert await server.holding(plain_chat, "Orion vault"), "the plain chat's question is read"
    assert not await server.holding(plain_chat, "4417")
    assert not await server.holding(sealed_chat, "4417")
    assert not await server.holding(sealed_room, "4417")
    sent = [
        e
        for e in await server.messages(sealed_chat)
        if e["sender"] == bot.user_id and "state_key" not in e
    ]
    assert sent and {e["type"] for e in sent} == {"m.room.encrypted"}


async def test_summaries_of_encrypted_rooms_can_be_kept_out_of_the_collection(people, bot, llm):
    kept_out = SUMMARIES + 'encrypted_rooms = "room_only"\n'
    alice, _ = await summarised_sealed_room(people, bot, llm, kept_out)  # in its room only
    sealed_chat = await room_with_bot(alice, bot, direct=True, encrypted=True)
    answer = await ask(alice, sealed_chat, "what does the Orion vault code become?", bot)
    assert "4417" not in answer["body"], "not in the collection, even for an encrypted chat"


async def test_a_catchup_of_an_encrypted_room_goes_only_to_an_encrypted_chat(
    people, bot, homeserver
):
    alice, bob = await people("alice"), await people("bob")
    bot.write_config(allowed_users=[alice.user_id, bob.user_id])
    await bot.start()
    room = await alice.create_room([bot.user_id, bob.user_id], encrypted=True)
    await alice.wait_for(room, membership_of(bot.user_id, "join"))
    await bob.wait_until(lambda: room in bob.client.invited_rooms)
    await bob.join(room)
    await alice.wait_for(room, membership_of(bob.user_id, "join"))
    await alice.say(room, "Decision: the Lyra budget is 77 thousand.")

    plain_chat = await room_with_bot(bob, bot, direct=True)
    sent = await bob.say(plain_chat, "!catchup")
    notice = (await bob.wait_for(plain_chat, replies_to(sent), timeout=90))["content"]
    assert notice["body"].startswith(strings.CATCHUP_SENT_ENCRYPTED.split("{")[0])
    await bob.wait_until(lambda: bool(bob.client.invited_rooms), timeout=30)
    private = next(iter(bob.client.invited_rooms))
    await bob.join(private)
    delivered = await bob.wait_for(
        private, lambda e: "Lyra budget" in e.get("content", {}).get("body", ""), timeout=60
    )
    assert delivered["event_id"] in bob.decrypted, "sent encrypted"

    server = await ServerView.open(homeserver)
    assert await server.holding(plain_chat, "!catchup"), "the plain chat's command is read"
    assert not await server.holding(plain_chat, "Lyra")
    assert not await server.holding(private, "Lyra")
    kinds = {event["type"] for event in await server.state(private)}
    assert "m.room.encryption" in kinds


class FlakyProxy:
    """A reverse proxy in front of Synapse that answers `whoami` with a proxy's 502 page
    the next `fail_whoami` times, as one does while the homeserver restarts."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.fail_whoami = 0
        self.failed = 0
        self.url = ""
        self._runner: web.AppRunner | None = None

    async def start(self) -> FlakyProxy:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/{path:.*}", self.forward)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        port = free_port()
        await web.TCPSite(self._runner, "127.0.0.1", port).start()
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def forward(self, request: web.Request) -> web.StreamResponse:
        if request.path.endswith("/account/whoami") and self.fail_whoami > 0:
            self.fail_whoami -= 1
            self.failed += 1
            page = "<html><body><h1>502 Bad Gateway</h1></body></html>"
            return web.Response(status=502, text=page, content_type="text/html")
        headers = {k: v for k, v in request.headers.items() if k.lower() != "host"}
        async with ClientSession(auto_decompress=False) as http:
            async with http.request(
                request.method,
                f"{self.upstream}{request.rel_url}",
                headers=headers,
                data=await request.read(),
            ) as upstream:
                body = await upstream.read()
                kept = {
                    k: v
                    for k, v in upstream.headers.items()
                    if k.lower() not in ("transfer-encoding", "content-length")
                }
                return web.Response(status=upstream.status, body=body, headers=kept)

    async def close(self) -> None:
        if self._runner:
            await self._runner.cleanup()


def session_of(bot) -> tuple[str, str]:
    """The bot's device and access token as it saved them."""
    saved = json.loads((bot.folder / "data" / "session.json").read_text())
    return saved["device_id"], saved["access_token"]


async def test_a_homeserver_hiccup_at_start_keeps_the_encryption_device(people, bot, homeserver):
    alice = await people("alice")
    proxy = await FlakyProxy(homeserver.url).start()
    try:
        bot.write_config(allowed_users=[alice.user_id])
        text = bot.config_path.read_text().replace(homeserver.url, proxy.url)
        bot.config_path.write_text(text)
        await bot.start()
        room = await room_with_bot(alice, bot, encrypted=True)
        assert (await ask(alice, room, "!help", bot))["body"]
        session = session_of(bot)
        await bot.stop()

        proxy.fail_whoami = 3
        await bot.start()
        asked = await alice.say(room, "!help", mentions=[bot.user_id])
        answer = await alice.wait_for(room, replies_to(asked), timeout=60)
        assert answer["event_id"] in alice.decrypted
        assert proxy.failed == 3 and session_of(bot) == session, "no new login after 502s"
        await bot.stop()

        # The control: a token the homeserver revoked means a new login.
        token = session[1]
        async with ClientSession() as http:
            logout = f"{homeserver.url}/_matrix/client/v3/logout"
            async with http.post(logout, headers={"Authorization": f"Bearer {token}"}) as r:
                assert r.status == 200
        await bot.start()  # ready once logged in and synced
        assert session_of(bot)[1] != token
    finally:
        await proxy.close()


def stores_holding(folder: Path, storage_toml: str, needle: str) -> list[str]:
    """Where the bot keeps `needle`: files of its data folder (SQLite files with their
    journals, Chroma's, nio's), and the rows of its PostgreSQL tables when it has one."""
    found = [
        str(path.relative_to(folder))
        for path in folder.rglob("*")
        if path.is_file() and needle.encode() in path.read_bytes()
    ]
    url = re.search(r'url = "([^"]+)"', storage_toml)
    if url:
        with psycopg.connect(url.group(1)) as db:
            tables = db.execute(
                "SELECT table_name FROM information_schema.tables"
                " WHERE table_schema = 'public' AND table_type = 'BASE TABLE'"
            ).fetchall()
            for (table,) in tables:
                query = f'SELECT count(*) FROM "{table}" t WHERE t::text LIKE %s'
                if db.execute(query, (f"%{needle}%",)).fetchone()[0]:  # type: ignore[index]
                    found.append(f"postgres table {table}")
    return found


async def test_a_redacted_question_and_comment_leave_no_text_behind(people, bot, llm, storage_toml):
    alice = await people("alice")
    llm.respond = reading_model
    port = free_port()
    # Encrypted, as the room asked in is: the report may quote its questions there.
    admin_room = await alice.create_room([bot.user_id], encrypted=True)
    bot.write_config(
        knowledge_config(port) + llm_config(llm) + f"[feedback]\nadmins = ['{alice.user_id}']\n",
        allowed_users=[alice.user_id],
        admin_room=admin_room,
        edit_window_seconds=1,
    )
    await bot.start()
    await alice.wait_for(admin_room, membership_of(bot.user_id, "join"))
    room = await room_with_bot(alice, bot, encrypted=True)
    await put_travel_policy(port, url="https://wiki/t")
    question = await alice.say(
        room, "how do I book trains for the Quokkafest?", mentions=[bot.user_id]
    )
    answer = await alice.wait_for(room, replies_to(question), timeout=60)
    await ask(alice, admin_room, "!feedback", bot)  # the answer is finished meanwhile
    await alice.react(room, answer["event_id"], THUMBS_DOWN)
    asked = await alice.wait_for(
        room, lambda e: e["content"].get("body") == strings.FEEDBACK_ASK, timeout=30
    )
    thread = asked["content"]["m.relates_to"]["event_id"]
    comment = await alice.say(
        room, "Quokkafest trains are not in it", thread=thread, reply_to=asked["event_id"]
    )
    await alice.wait_for(room, replies_to(comment), timeout=30)
    report = (await ask(alice, admin_room, "!feedback worst", bot))["body"]
    assert "Quokkafest" in report, "the report quotes question and comment before"
    assert stores_holding(bot.folder, storage_toml, "Quokkafest"), "and the stores hold them"

    await alice.redact(room, question)
    await alice.redact(room, comment)
    report = (await ask(alice, admin_room, "!feedback worst", bot))["body"]
    assert "Quokkafest" not in report
    assert stores_holding(bot.folder, storage_toml, "Quokkafest") == []


def inbox_rows(folder: Path, storage_toml: str) -> list[tuple]:
    """The bot's inbox as stored: (event id, done, source, decision) per message."""
    query = "SELECT event_id, done, source, decision FROM inbox"
    url = re.search(r'url = "([^"]+)"', storage_toml)
    if url:
        with psycopg.connect(url.group(1)) as db:
            return list(db.execute(query).fetchall())
    with sqlite3.connect(folder / "data" / "state.sqlite3") as db:
        return list(db.execute(query).fetchall())


async def test_answered_messages_keep_no_text_and_go_after_the_edit_window(
    people, bot, storage_toml
):
    alice = await people("alice")
    bot.write_config(allowed_users=[alice.user_id], edit_window_seconds=1)
    await bot.start()
    room = await room_with_bot(alice, bot)
    question = await alice.say(room, "!help", mentions=[bot.user_id])
    await alice.wait_for(room, replies_to(question))

    def handled() -> bool:
        # The reply is sent before its question's row is marked done: wait for that.
        return any(row[0] == question and row[1] for row in inbox_rows(bot.folder, storage_toml))

    await alice.wait_until(handled)
    done = [row for row in inbox_rows(bot.folder, storage_toml) if row[1]]
    assert done and all(row[2] is None and row[3] is None for row in done), "no text kept"

    def purged() -> bool:
        return question not in {row[0] for row in inbox_rows(bot.folder, storage_toml)}

    # Each later sync batch drops what is past the window; a question a second brings one.
    for _ in range(30):
        await ask(alice, room, "!help", bot)
        if purged():
            break
    assert purged()


async def test_commands_off_hold_when_the_bot_is_addressed(people, bot):
    alice = await people("alice")
    bot.write_config(knowledge_config(free_port()), allowed_users=[alice.user_id])
    with_room_defaults(bot, "commands_enabled = false")
    await bot.start()
    room = await room_with_bot(alice, bot)
    await ask(alice, room, "remember that the wifi password is swordfish", bot)
    refused = await ask(alice, room, "!forget all", bot)
    assert refused["body"].startswith(strings.COMMANDS_OFF.split("{")[0].rstrip())
    answer = await ask(alice, room, "what is the wifi password?", bot)
    assert "swordfish" in answer["body"], "nothing was forgotten"
    for command in ("!summarize", "!catchup"):
        reply = await ask(alice, room, command, bot)
        assert "Commands are turned off" in reply["body"], command
