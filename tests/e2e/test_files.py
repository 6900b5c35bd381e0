"""Files shared in rooms become the room's knowledge, on a real homeserver: real PDF and
Word files, uploaded encrypted by a real client, downloaded and decrypted by the bot."""

from __future__ import annotations

import pytest

from bot.dev.synapse import free_port
from core import strings
from tests.e2e.people import Person, from_user, replies_to
from tests.e2e.scripted import ask, finished_reply, llm_config, reading_model
from tests.e2e.test_conversation import room_with_bot
from tests.e2e.test_knowledge import knowledge_config, put
from tests.e2e.test_summaries import chat_model
from tests.support.files import (
    make_docx,
    make_pdf,
    make_picture,
    make_scanned_pdf,
    make_scanned_text_pdf,
    make_wav,
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


async def test_a_voice_message_in_a_direct_chat_is_transcribed_and_answered(
    people, bot, llm, speech
):
    alice = await people("alice")
    llm.respond = reading_model
    port = free_port()
    bot.write_config(
        knowledge_config(port)
        + llm_config(llm)
        + f'[speech]\nurl = "{speech.url}"\nmodel = "whisper-large-v3"\n'
        + '[room_defaults]\ntranscribe = "reply"\n',
        allowed_users=[alice.user_id],
    )
    await bot.start()
    await put(
        port,
        "handbook",
        "travel",
        {
            "title": "Travel policy",
            "content": "Trains are booked through Travelink, in second class.",
        },
    )
    direct = await room_with_bot(alice, bot, encrypted=True, direct=True)
    recording = make_wav(pitch=440)
    speech.say(recording, "How are trains booked?")
    voice = await alice.share_file(direct, recording, "voice.wav", "audio/wav", voice=True)

    def answering(event: dict) -> bool:
        return replies_to(voice)(event) and "Transcript:" not in event["content"]["body"]

    answer = await finished_reply(alice, direct, answering)
    assert "Travelink" in answer["body"]
    transcript = alice.seen(direct, lambda e: "Transcript:" in e.get("content", {}).get("body", ""))
    assert transcript and "How are trains booked?" in transcript[0]["content"]["body"]
    assert speech.requests[0][:2] == ("whisper-large-v3", "voice.wav")

    speech.fail = True
    failing = await alice.share_file(
        direct, make_wav(pitch=660), "voice.wav", "audio/wav", voice=True
    )
    notice = await alice.wait_for(direct, replies_to(failing), timeout=60)
    assert notice["content"]["body"] == strings.VOICE_FAILED


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


async def test_a_file_the_bot_never_read_says_why_and_summarize_this_needs_no_mention(
    people, bot, llm
):
    """Issue 48: a question replying to a PDF got "I found nothing about this" when files
    were off, and again for a file shared before they were turned on; "summarize this"
    as a plain reply to a file was ignored."""
    alice = await people("alice")
    llm.respond = chat_model
    admin_room = await alice.create_room([bot.user_id])
    port = free_port()
    base = knowledge_config(port) + llm_config(llm)
    bot.write_config(base, allowed_users=[alice.user_id], admin_room=admin_room)
    await bot.start()
    room = await room_with_bot(alice, bot)
    early = await alice.share_file(room, make_pdf(), "travel-policy.pdf", PDF)

    answer = await ask(
        alice, room, "how much may a hotel night cost in Paris?", bot, reply_to=early
    )
    assert answer["body"] == strings.FILE_NOT_KEPT_HERE.format(name="travel-policy.pdf")
    plain = await alice.say(room, "summarize this", reply_to=early)
    answer = await finished_reply(alice, room, replies_to(plain))
    assert answer["body"] == strings.FILE_NOT_KEPT_HERE.format(name="travel-policy.pdf")

    # An admin turns files on while the bot runs.
    bot.write_config(base + FILES, allowed_users=[alice.user_id], admin_room=admin_room)
    await alice.wait_for(admin_room, lambda e: e["content"].get("body") == strings.CONFIG_APPLIED)
    answer = await ask(
        alice, room, "how much may a hotel night cost in Paris?", bot, reply_to=early
    )
    assert answer["body"] == strings.FILE_SHARED_EARLIER.format(name="travel-policy.pdf")

    again = await alice.share_file(room, make_pdf(), "travel-policy.pdf", PDF)
    answer = await ask_about(alice, room, "how much may a hotel night cost in Paris?", bot, again)
    assert "140 euros" in answer["body"]
    plain = await alice.say(room, "summarize this", reply_to=again)
    summary = await finished_reply(alice, room, replies_to(plain))
    assert summary["body"].startswith("Summary of “travel-policy.pdf”"), summary["body"]
    # A plain reply to someone's text is theirs, not the bot's: the sentinel comes first.
    said = await alice.say(room, "Lunch at noon?")
    await alice.say(room, "summarize this", reply_to=said)
    sentinel = await alice.say(room, "what is the hotel limit in Paris?", mentions=[bot.user_id])
    await alice.wait_for(room, replies_to(sentinel), timeout=60)
    replies = alice.seen(room, lambda e: from_user(bot.user_id)(e) and "Summary" in str(e))
    assert len(replies) == 1, "only the file's summary"


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
