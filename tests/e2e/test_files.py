"""Files shared in rooms become the room's knowledge, on a real homeserver: real PDF and
Word files, uploaded encrypted by a real client, downloaded and decrypted by the bot.
(What the bot says of a file it never read, and "summarize this" replying to one:
tests/bot/test_files.py; a voice message transcribed and answered: tests/bot/test_voice.py.)"""

from __future__ import annotations

import pytest

from bot.dev.synapse import free_port
from tests.e2e.people import Person
from tests.e2e.scripted import ask, llm_config, reading_model
from tests.e2e.test_conversation import room_with_bot
from tests.e2e.test_knowledge import knowledge_config, put
from tests.e2e.test_summaries import chat_model
from tests.support.files import (
    make_docx,
    make_pdf,
    make_picture,
    make_scanned_pdf,
    make_scanned_text_pdf,
    render_text_image,
)

pytestmark = pytest.mark.e2e
FILES = (
    '[sources.matrix]\ntoken = "matrix-token"\n'
    '[collections.room-files]\nsource = "matrix"\n'
    '[files]\ncollection = "room-files"\nmax_bytes = 60000\n'
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
    llm.respond = chat_model
    bot.write_config(
        knowledge_config(free_port()) + llm_config(llm) + FILES, allowed_users=[alice.user_id]
    )
    await bot.start()
    room = await room_with_bot(alice, bot, encrypted=True, visibility="joined")
    policy = await alice.share_file(room, make_pdf(), "travel-policy.pdf", PDF)
    scan = await alice.share_file(room, make_scanned_pdf(), "signed-contract.pdf", PDF)
    onboarding = await alice.share_file(room, make_docx(), "onboarding.docx", DOCX)
    large = await alice.share_file(room, make_docx(filler_paragraphs=200), "large.docx", DOCX)
    liar = await alice.share_file(
        room, make_docx(filler_paragraphs=200), "liar.docx", DOCX, claimed_size=500
    )

    answer = await ask_about(alice, room, "how much may a hotel night cost in Paris?", bot, policy)
    assert "140 euros" in answer["body"]
    assert "travel-policy.pdf (shared by alice" in answer["body"] and ", p. 2]" in answer["body"]
    assert policy.replace("$", "%24") in answer["body"], "the source links to the file's message"

    answer = await ask_about(alice, room, "what does it say?", bot, scan)
    assert answer["body"] == (
        "I could not read “signed-contract.pdf”: it has no text layer, and no text could be "
        "read on its scanned pages."
    )

    answer = await ask_about(alice, room, "what is in it?", bot, large)
    assert answer["body"].startswith("I could not read “large.docx”: it is ")
    assert answer["body"].endswith(" bytes, over the limit of 60,000 bytes.")
    # Its event says 500 bytes: the download stops at the limit, as it streams.
    answer = await ask_about(alice, room, "what is in it?", bot, liar)
    assert answer["body"] == (
        "I could not read “liar.docx”: it is over the limit of 60,000 bytes, so its download "
        "was stopped."
    )

    answer = await ask_about(alice, room, "IT desk room number?", bot, onboarding)
    assert "Room 204" in answer["body"]
    summary = await ask(alice, room, "summarize this", bot, reply_to=onboarding)
    assert summary["body"].startswith("Summary of “onboarding.docx”"), summary["body"]
    assert "**TL;DR** 3 messages." in summary["body"], "the model read its three passages"
    summary = await ask(alice, room, "!summarize", bot, reply_to=policy)
    assert summary["body"].startswith("Summary of “travel-policy.pdf”"), summary["body"]
    await alice.redact(room, onboarding)
    answer = await ask(alice, room, "IT desk room number?", bot)
    assert "Room 204" not in answer["body"] and "onboarding.docx" not in answer["body"]

    # Bob joins after the PDF was shared, in a room whose history new members do not see.
    await alice.invite(room, bob.user_id)
    await bob.join(room)
    answer = await ask(bob, room, "how much may a hotel night cost in Paris?", bot)
    assert "140 euros" not in answer["body"] and "travel-policy.pdf" not in answer["body"]


async def test_a_question_replying_to_a_file_is_answered_from_that_file_first(people, bot, llm):
    """Two versions of the hotel rules: the one replied to is the one answered from."""
    alice = await people("alice")
    llm.respond = reading_model
    bot.write_config(
        knowledge_config(free_port()) + llm_config(llm) + FILES, allowed_users=[alice.user_id]
    )
    await bot.start()
    room = await room_with_bot(alice, bot)
    files = {}
    for cost in ("120", "140"):
        pages = (f"Hotels. A night costs at most {cost} euros in Paris.",)
        files[cost] = await alice.share_file(
            room, make_pdf(pages, table=False), f"hotels-{cost}.pdf", PDF
        )
    for cost, event in [*files.items(), *reversed(files.items())]:
        answer = await ask_about(
            alice, room, "how much may a hotel night cost in Paris?", bot, event
        )
        assert f"{cost} euros" in answer["body"].split("**Sources**")[0], answer["body"]


async def test_scans_and_images_are_read_by_ocr_in_an_encrypted_room(people, bot, llm):
    """Issue 53: a scanned PDF is answered from with its page marked as read from a scan;
    a screenshot of an error, replied to with a question, is answered from the document
    that explains the error; a picture without text gets a sentence saying so."""
    alice = await people("alice")
    llm.respond = reading_model
    port = free_port()
    bot.write_config(
        knowledge_config(port) + llm_config(llm) + FILES.replace("60000", "2000000"),
        allowed_users=[alice.user_id],
    )
    await bot.start()
    await put(
        port,
        "handbook",
        "errors",
        {
            "title": "Error codes",
            "content": (
                "What does error E4711 mean? ERROR E4711: quota exceeded for bucket reports-2027 means "
                "the storage quota is used up: the IT desk raises it at extension 4242."
            ),
        },
    )
    room = await room_with_bot(alice, bot, encrypted=True, visibility="joined")
    scan = await alice.share_file(room, make_scanned_text_pdf(), "scanned-policy.pdf", PDF)
    answer = await ask_about(alice, room, "how much may a hotel night cost in Paris?", bot, scan)
    assert "140 euros" in answer["body"], answer["body"]
    assert "scanned-policy.pdf (shared by alice" in answer["body"]
    assert ", p. 2, read from a scan]" in answer["body"], answer["body"]

    error = render_text_image(
        "ERROR E4711: quota exceeded for bucket reports-2027", width_mm=170, height_mm=25
    )
    screenshot = await alice.share_file(
        room, error, "screenshot.png", "image/png", msgtype="m.image"
    )
    answer = await ask(alice, room, "what does this error mean?", bot, reply_to=screenshot)
    assert "4242" in answer["body"] and "Error codes" in answer["body"], answer["body"]

    cat = await alice.share_file(room, make_picture(), "cat.png", "image/png", msgtype="m.image")
    answer = await ask(alice, room, "what does it say?", bot, reply_to=cat)
    assert answer["body"] == (
        "I could not read “cat.png”: I found no text in it (I read the text in images, such as "
        "screenshots and photos of a whiteboard, not what they show)."
    )
