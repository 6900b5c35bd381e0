"""Voice messages heard by a real speech model, on a real homeserver: espeak-ng speaks
the questions, a real client sends them as Element does (Ogg/Opus, `m.audio` with
MSC3245's voice flag, encrypted in an encrypted room), and the bot transcribes them with
the demo's `[speech]`: Whisper tiny.en in its own process, no transcription endpoint."""

from __future__ import annotations

import pytest
import tomlkit

from bot.dev.demo_config import SPEECH
from bot.dev.synapse import free_port
from core import strings
from tests.e2e.people import replies_to
from tests.e2e.scripted import ask, finished_reply
from tests.e2e.test_conversation import room_with_bot
from tests.e2e.test_knowledge import knowledge_config, put
from tests.support.voices import speak

pytestmark = pytest.mark.e2e

# The demo's [speech], as it writes it; the rooms post transcripts (the room asks).
VOICE = tomlkit.dumps({"speech": SPEECH}) + '[room_defaults]\ntranscribe = "reply"\n'
HANDBOOK = {
    "leave": ("Leave policy", "Full-time staff have 27 days of annual leave per year."),
    "travel": ("Travel policy", "Trains are booked through Travelink, in second class."),
    "printers": ("Printers", "The printer on the third floor is serviced every Friday."),
}


def is_transcript(event: dict) -> bool:
    return "Transcript:" in event.get("content", {}).get("body", "")


async def test_a_spoken_question_in_an_encrypted_direct_chat_is_answered_from_its_document(
    people, bot
):
    alice = await people("alice")
    port = free_port()
    # No [llm]: search-only answers, as the demo gives without a model.
    bot.write_config(knowledge_config(port) + VOICE, allowed_users=[alice.user_id])
    await bot.start()
    for doc_id, (title, content) in HANDBOOK.items():
        await put(port, "handbook", doc_id, {"title": title, "content": content})
    direct = await room_with_bot(alice, bot, encrypted=True, direct=True)

    voice = await alice.share_file(
        direct,
        speak("How many days of annual leave do full time staff get?"),
        "Voice message.ogg",
        "audio/ogg",
        voice=True,
    )

    def answering(event: dict) -> bool:
        return replies_to(voice)(event) and not is_transcript(event)

    answer = await finished_reply(alice, direct, answering, timeout=120)
    assert "27 days of annual leave" in answer["body"], answer["body"]
    assert "Travelink" not in answer["body"]
    # Posted as the room asks: the words as the model heard them (tiny.en hears "a manual
    # leads to" for "of annual leave": the search finds the page by the other words and
    # the meaning, with no list of corrections).
    [transcript] = alice.seen(direct, is_transcript)
    assert "staff" in transcript["content"]["body"].lower(), transcript["content"]["body"]
    assert transcript["content"]["m.relates_to"]["m.in_reply_to"]["event_id"] == voice

    # As the model may hear it: the search still finds the leave policy.
    answer = await ask(alice, direct, "How many days a manual leave do full time staff get?", bot)
    assert "27 days of annual leave" in answer["body"], answer["body"]


async def test_a_redacted_voice_message_leaves_no_transcript(people, bot, homeserver):
    from tests.e2e.server_view import ServerView

    alice = await people("alice")
    bot.write_config(VOICE, allowed_users=[alice.user_id])
    await bot.start()
    room = await room_with_bot(alice, bot, encrypted=True)
    voice = await alice.share_file(
        room,
        speak("The door code of the server room is blue falcon."),
        "Voice message.ogg",
        "audio/ogg",
        voice=True,
    )
    transcript = await alice.wait_for(room, is_transcript, timeout=120)
    assert "falcon" in transcript["content"]["body"].lower()

    await alice.redact(room, voice)

    def takes_it_down(event: dict) -> bool:
        return (
            event.get("type") == "m.room.redaction"
            and event.get("redacts") == (transcript["event_id"])
        )

    taken = await alice.wait_for(room, takes_it_down, timeout=60)
    assert taken["sender"] == bot.user_id
    assert taken["content"].get("reason") == strings.TRANSCRIPT_TAKEN_BACK
    answer = await ask(alice, room, "What is the door code of the server room?", bot)
    assert "falcon" not in answer["body"].lower(), answer["body"]
    server = await ServerView.open(homeserver)
    assert await server.holding(room, "falcon") == []
    # Nor in the bot's files: the history, conversation and inbox forgot it.
    for path in (bot.folder / "data").rglob("*"):
        if path.is_file():
            assert b"falcon" not in path.read_bytes().lower(), path
