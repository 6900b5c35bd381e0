"""Files shared in rooms become the room's knowledge, on a real homeserver: real PDF and
Word files, uploaded encrypted by a real client, downloaded and decrypted by the bot."""

from __future__ import annotations

import pytest

from bot.dev.synapse import free_port
from tests.e2e.people import Person
from tests.e2e.scripted import ask, llm_config, reading_model
from tests.e2e.test_conversation import room_with_bot
from tests.e2e.test_knowledge import knowledge_config
from tests.support.files import make_docx, make_pdf, make_scanned_pdf

pytestmark = pytest.mark.e2e
FILES = (
    '[sources.matrix]\ntoken = "matrix-token"\n'
    '[collections.room-files]\nsource = "matrix"\n'
    '[files]\ncollection = "room-files"\n'
)
PDF, DOCX = (
    "application/pdf",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
)


async def ask_about(person: Person, room: str, question: str, bot, file_event: str) -> dict:
    """The answer to a question replying to a shared file, once the bot has read it."""
    while True:
        answer = await ask(person, room, question, bot, reply_to=file_event)
        if "still reading" not in answer["body"]:
            return answer


async def test_a_pdf_shared_in_an_encrypted_room_is_answered_from_with_its_page(people, bot, llm):
    alice, bob = await people("alice"), await people("bob")
    llm.respond = reading_model
    bot.write_config(knowledge_config(free_port()) + llm_config(llm) + FILES,
                     allowed_users=[alice.user_id])  # fmt: skip
    await bot.start()
    room = await room_with_bot(alice, bot, encrypted=True, visibility="joined")
    policy = await alice.share_file(room, make_pdf(), "travel-policy.pdf", PDF)
    scan = await alice.share_file(room, make_scanned_pdf(), "signed-contract.pdf", PDF)
    onboarding = await alice.share_file(room, make_docx(), "onboarding.docx", DOCX)

    answer = await ask_about(alice, room, "how much may a hotel night cost in Paris?", bot, policy)
    assert "140 euros" in answer["body"]
    assert "travel-policy.pdf (shared by alice" in answer["body"] and ", p. 2]" in answer["body"]
    assert policy.replace("$", "%24") in answer["body"], "the source links to the file's message"

    answer = await ask_about(alice, room, "what does it say?", bot, scan)
    assert answer["body"] == (
        "I could not read “signed-contract.pdf”: it has no text layer (a scan, perhaps), "
        "and the bot reads no images."
    )

    answer = await ask_about(alice, room, "IT desk room number?", bot, onboarding)
    assert "Room 204" in answer["body"]
    await alice.redact(room, onboarding)
    answer = await ask(alice, room, "IT desk room number?", bot)
    assert "Room 204" not in answer["body"] and "onboarding.docx" not in answer["body"]

    # Bob joins after the PDF was shared, in a room whose history new members do not see.
    await alice.invite(room, bob.user_id)
    await bob.join(room)
    answer = await ask(bob, room, "how much may a hotel night cost in Paris?", bot)
    assert "140 euros" not in answer["body"] and "travel-policy.pdf" not in answer["body"]
