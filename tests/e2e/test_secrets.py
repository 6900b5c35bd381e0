"""Secrets on a real Synapse: a DEBUG log of the bot in an encrypted room holds no message
text, password, token or key material; the encryption keys are locked with a real key;
the data folder is the bot's own; and a changed pickle key is handled at the next start."""

from __future__ import annotations

import json
import logging
import sqlite3
import stat
import uuid
from contextlib import closing
from pathlib import Path

import pytest
from nio.crypto import OlmAccount
from vodozemac import LibolmPickleException

from bot.dev.synapse import free_port
from bot.matrix.store_key import KEY_FILE, NIO_DEFAULT_KEY
from tests.e2e.conftest import PASSWORD
from tests.e2e.people import replies_to
from tests.e2e.scripted import ask, llm_config, reading_model
from tests.e2e.test_conversation import room_with_bot
from tests.e2e.test_knowledge import knowledge_config, put

pytestmark = pytest.mark.e2e

# Where matrix-nio's SQLite store keeps pickles: table -> column.
PICKLES = {"accounts": "account", "olmsessions": "session", "megolminboundsessions": "session"}


class LogCapture(logging.Handler):
    """Every record that reaches the root logger, formatted as a log file would hold it
    (with tracebacks), at the time it is logged."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        self.records: list[logging.LogRecord] = []
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)
        self.lines.append(self.format(record))

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def stored_pickles(data: Path) -> dict[str, list[str]]:
    """The pickles in the bot's encryption store, by table."""
    [database] = (data / "matrix-store").glob("*.db")
    with closing(sqlite3.connect(database)) as db:
        return {
            table: [
                bytes(value).decode() for (value,) in db.execute(f"SELECT {column} FROM {table}")
            ]
            for table, column in PICKLES.items()
        }


def saved_session(data: Path) -> dict[str, str]:
    return json.loads((data / "session.json").read_text())


def phrase(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex}"


def use_pickle_key_variable(bot, key: str) -> None:
    """`[matrix] pickle_key_env`: write_config writes the [matrix] section itself."""
    credential = 'password_env = "BOT_PASSWORD"\n'
    text = bot.config_path.read_text()
    bot.config_path.write_text(
        text.replace(credential, credential + 'pickle_key_env = "BOT_PICKLE_KEY"\n')
    )
    bot.env["BOT_PICKLE_KEY"] = key


async def test_a_debug_log_holds_no_message_text_secret_or_key_material(people, bot, llm):
    """The bot at DEBUG, in an encrypted room, answering from a document with the model
    (whose requests carry the question), holds nothing private in its log."""
    alice = await people("alice")
    llm.respond = reading_model
    port = free_port()
    bot.write_config(
        knowledge_config(port) + llm_config(llm), allowed_users=[alice.user_id], log_level="DEBUG"
    )
    chat, question_phrase, document_phrase = phrase("chat"), phrase("what-is"), phrase("vault")
    capture, root = LogCapture(), logging.getLogger()
    level = root.level
    root.addHandler(capture)
    try:
        await bot.start()
        room = await room_with_bot(alice, bot, encrypted=True)
        await put(
            port,
            "handbook",
            "vault",
            {
                "title": "Vault",
                "content": f"The vault opens on Tuesdays with the code {document_phrase}.",
            },
        )
        ignored = await alice.say(room, f"just between us: {chat}")
        answer = await ask(alice, room, f"when does the vault open? ({question_phrase})", bot)
        # The bot decides to ignore the chat line at DEBUG (after decrypting it).
        await alice.wait_until(lambda: any(ignored in line for line in capture.lines))
        await bot.stop()
    finally:
        root.removeHandler(capture)
        root.setLevel(level)  # the bot set DEBUG for the whole test process

    assert ignored in alice.decrypted
    assert document_phrase in answer["body"], "the bot read the question and the document"
    assert any(question_phrase in json.dumps(request) for request in llm.history)
    data = bot.folder / "data"
    pickle_key = (data / KEY_FILE).read_text().strip()
    pickles = stored_pickles(data)
    # Positive controls: the store holds what a leak would show, locked with this key,
    # and the log is a real DEBUG log of the bot.
    assert all(pickles.values()), {table: len(found) for table, found in pickles.items()}
    [account] = pickles["accounts"]
    OlmAccount.from_pickle(account.encode(), pickle_key)
    with pytest.raises(LibolmPickleException):
        OlmAccount.from_pickle(account.encode(), NIO_DEFAULT_KEY)
    bot_debug = [
        r for r in capture.records if r.levelno == logging.DEBUG and r.name.startswith("bot.")
    ]
    assert bot_debug, "no DEBUG record of the bot was captured"

    secrets = {
        "the chat line": chat,
        "the question": question_phrase,
        "the document": document_phrase,
        "the bot's password": PASSWORD,
        "the access token": saved_session(data)["access_token"],
        "the source's token": "wiki-token",
        "the pickle key": pickle_key,
    }
    secrets |= {f"a pickle of {table}": p for table, found in pickles.items() for p in found}
    leaked = [name for name, secret in secrets.items() if secret in capture.text]
    assert leaked == []

    # The data folder (Chroma, the SQLite files, the key store, the session) is private.
    paths = [data, *data.rglob("*")]
    expected = {"session.json", KEY_FILE, "chroma", "matrix-store"}
    if not bot.storage_toml:  # the stores' SQLite files, unless they live in PostgreSQL
        expected.add("knowledge.sqlite3")
    assert expected <= {path.name for path in paths}
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    readable = [str(path.relative_to(data)) for path in paths if path.lstat().st_mode & 0o077]
    assert readable == []


async def test_a_newly_configured_key_relocks_the_store_and_keeps_the_device(people, bot):
    alice = await people("alice")
    bot.write_config(allowed_users=[alice.user_id])
    await bot.start()
    room = await room_with_bot(alice, bot, encrypted=True)
    first = await alice.say(room, "first question", mentions=[bot.user_id])
    await alice.wait_for(room, replies_to(first))
    await bot.stop()
    data = bot.folder / "data"
    device = saved_session(data)["device_id"]
    generated = (data / KEY_FILE).read_text().strip()

    key = phrase("the operator's pickle key")
    use_pickle_key_variable(bot, key)
    await bot.start()
    # Alice still encrypts with the room key the bot got before the restart: the bot reads
    # her question only if the re-locked store kept its sessions.
    second = await alice.say(room, "second question", mentions=[bot.user_id])
    answer = await alice.wait_for(room, replies_to(second))
    await bot.stop()

    assert answer["event_id"] in alice.decrypted
    assert saved_session(data)["device_id"] == device
    [account] = stored_pickles(data)["accounts"]
    OlmAccount.from_pickle(account.encode(), key)
    with pytest.raises(LibolmPickleException):
        OlmAccount.from_pickle(account.encode(), generated)


async def test_a_store_no_known_key_opens_gets_a_new_device_not_a_crash(people, bot):
    alice = await people("alice")
    bot.write_config(allowed_users=[alice.user_id])
    use_pickle_key_variable(bot, phrase("the first key"))
    await bot.start()
    await bot.stop()
    data = bot.folder / "data"
    old_device = saved_session(data)["device_id"]
    assert stored_pickles(data)["accounts"], "the old device's keys are in its store"

    bot.env["BOT_PICKLE_KEY"] = phrase("a key that locked nothing")
    await bot.start()
    room = await room_with_bot(alice, bot)
    question = await alice.say(room, "are you there?", mentions=[bot.user_id])
    await alice.wait_for(room, replies_to(question))
    await bot.stop()

    assert saved_session(data)["device_id"] != old_device
    assert (data / "matrix-store" / f"{bot.user_id}_{old_device}.db").exists(), "kept as it was"


async def test_an_event_nio_cannot_read_leaves_no_trace_of_its_content_in_the_log(people, bot):
    """A malformed file message (a hash that is a number) carrying an attachment's key: nio
    logs such an event whole when it cannot validate it. The log, at DEBUG, names the
    event and holds nothing of its content."""
    alice = await people("alice")
    bot.write_config(allowed_users=[alice.user_id], log_level="DEBUG")
    key, text = phrase("attachment-key"), phrase("said")
    capture, root = LogCapture(), logging.getLogger()
    level = root.level
    root.addHandler(capture)
    try:
        await bot.start()
        room = await room_with_bot(alice, bot)
        malformed = await alice.send(
            room,
            {
                "msgtype": "m.file",
                "body": text,
                "file": {
                    "url": "mxc://localhost/x",
                    "v": "v2",
                    "iv": "AAAAAAAAAAAAAAAAAAAAAA",
                    "hashes": {"sha256": 12345},
                    "key": {
                        "kty": "oct",
                        "alg": "A256CTR",
                        "k": key,
                        "ext": True,
                        "key_ops": ["encrypt", "decrypt"],
                    },
                },
            },
        )
        await ask(alice, room, "!help", bot)  # the bot has synced past it
        await alice.wait_until(lambda: any(malformed in line for line in capture.lines))
        await bot.stop()
    finally:
        root.removeHandler(capture)
        root.setLevel(level)
    assert any(malformed in line for line in capture.lines), "the bot saw it"
    said = [line for line in capture.lines if "Error validating event" in line]
    assert said, "nio told of the event it could not validate (the positive control)"
    assert all(line.endswith("[content withheld]") for line in said), said
    assert key not in capture.text and text not in capture.text, said
