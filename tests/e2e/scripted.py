"""The scripted model of the end-to-end tests, the config that points the bot at it,
and asking the bot as a person does (waiting for the finished, edited answer)."""

from __future__ import annotations

from bot.dev.synapse import free_port
from bot.inbox.reply import STREAMING_MARK
from core import strings
from core.i18n.language import speaking
from tests.e2e.people import replies_to
from tests.e2e.test_knowledge import knowledge_config
from tests.e2e.test_pipeline import edits_of
from tests.support.reading import judge_points, question_in, reading_model, verdict, words

__all__ = ["judge_points", "question_in", "reading_model", "verdict", "words"]


async def ask(person, room, text, bot, timeout=60, reply_to=None) -> dict:
    """The bot's reply as it reads once finished (streamed answers are edited)."""
    question = await person.say(room, text, mentions=[bot.user_id], reply_to=reply_to)
    return await finished_reply(person, room, replies_to(question), timeout)


async def finished_reply(person, room, first_reply, timeout=60) -> dict:
    """The content of the first message matching `first_reply`, once finished."""
    first = await person.wait_for(room, first_reply, timeout=timeout)

    def finished(event: dict) -> dict | None:
        if event["event_id"] == first["event_id"]:
            content = event["content"]
        elif edits_of(first["event_id"])(event):
            content = event["content"]["m.new_content"]
        else:
            return None
        streaming = content["body"].endswith(STREAMING_MARK) or content["body"] in PLACEHOLDERS
        return None if streaming else content

    final = await person.wait_for(room, lambda e: finished(e) is not None, timeout=timeout)
    return finished(final)


def _placeholders() -> frozenset[str]:
    """The "working on it" notice in every language the bot speaks (the asker's may be any)."""
    found = set()
    for language in ("en", "de", "fr", "es"):
        with speaking(language):
            found.add(strings.PLACEHOLDER)
    return frozenset(found)


PLACEHOLDERS = _placeholders()


def llm_config(llm, extra: str = "", *, reasoning_known: bool = True) -> str:
    """[llm] on the scripted server, with no support check (its badge edits the answer).
    The scripted model writes no reasoning unless a test asks (`reasoning_known`: it is
    said, so the first answer streams)."""
    known = "reasoning_opens_in_prompt = false\n" if reasoning_known else ""
    return (
        f'[llm]\nurl = "{llm.url}"\nmodel = "test-model"\nmax_retries = 0\n{known}{extra}'
        "[pipeline]\nsupport_check = false\n"
    )


async def start_alice_and_bot(people, bot, llm) -> tuple:
    """Alice, and the bot on the reading model with an ingestion API; (alice, its port)."""
    alice = await people("alice")
    llm.respond = reading_model
    port = free_port()
    bot.write_config(knowledge_config(port) + llm_config(llm), allowed_users=[alice.user_id])
    await bot.start()
    return alice, port
