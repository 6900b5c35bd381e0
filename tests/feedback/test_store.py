"""Votes and answer traces: latest reaction counts once, redaction withdraws, nothing is
lost on reopening; on both store backends."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from core.feedback.store import AnswerRecord, SourceRecord, SqlFeedbackStore


def record(answer_id: str, room: str = "!team", *sources: SourceRecord) -> AnswerRecord:
    return AnswerRecord(
        answer_id,
        f"$event-{answer_id}",
        room,
        "@asker:x",
        f"question {answer_id}",
        f"rephrased {answer_id}",
        "answer text",
        "answer",
        "test-model",
        "2026-11-21.2",
        [{"name": "retrieve", "seconds": 0.01, "details": {}}],
        sources,
        1.0,
    )


TRAVEL = SourceRecord("handbook", "travel", "Travel policy", "https://wiki/travel", 0.031)


@pytest.fixture
async def store(open_database) -> SqlFeedbackStore:
    return await SqlFeedbackStore.open(await open_database())


async def test_a_persons_latest_reaction_counts_once_and_a_removal_brings_back_the_earlier(store):
    await store.store_answer(record("a1", "!team", TRAVEL))
    assert await store.answer_of_event("$event-a1") == "a1"
    await store.add_reaction("$r1", "a1", "@bob:x", "up", 10.0)
    await store.add_reaction("$r2", "a1", "@bob:x", "up", 11.0)
    assert await store.document_votes() == {("handbook", "travel"): (1, 0)}, "twice counts once"
    await store.add_reaction("$r3", "a1", "@bob:x", "down", 12.0)
    assert await store.vote_of("a1", "@bob:x") == "down"
    await store.redact("!elsewhere", "$r3")
    assert await store.vote_of("a1", "@bob:x") == "down", "a redaction of another room"
    assert await store.is_reaction("!team", "$r3")
    assert not await store.is_reaction("!elsewhere", "$r3")
    await store.redact("!team", "$r3")
    assert await store.vote_of("a1", "@bob:x") == "up"
    await store.redact("!team", "$r2")
    await store.redact("!team", "$r1")
    assert await store.vote_of("a1", "@bob:x") is None
    assert await store.document_votes() == {}


async def test_an_answer_takes_votes_only_from_its_own_room(store):
    """A reaction names the answer by event id alone: one sent in another room on that
    id (a bridge, a crafted event) is no vote on the answer."""
    await store.note_answer_event("$event-a1", "a1")
    # Sent, not recorded yet: its room is not known, and a vote is not turned away.
    assert await store.answer_of_event("$event-a1", room="!team") == "a1"
    await store.store_answer(record("a1", "!team", TRAVEL))
    assert await store.answer_of_event("$event-a1", room="!team") == "a1"
    assert await store.answer_of_event("$event-a1", room="!elsewhere") is None


async def test_votes_comments_and_traces_survive_reopening(store, open_database):
    await store.store_answer(record("a1", "!team", TRAVEL))
    await store.add_reaction("$r1", "a1", "@bob:x", "down", 10.0)
    await store.ask("!team", "$root", "@bob:x", "a1")
    again = await SqlFeedbackStore.open(await open_database())
    assert await again.pending_ask("!team", "$root", "@bob:x") == "a1"
    await again.add_comment("!team", "$root", "@bob:x", "the link is dead")
    assert await again.pending_ask("!team", "$root", "@bob:x") is None
    [exported] = [record async for record in again.export(since=0)]
    assert exported["question"] == "question a1" and exported["rephrased"] == "rephrased a1"
    assert exported["model"] == "test-model" and exported["prompt_version"] == "2026-11-21.2"
    assert exported["sources"][0]["score"] == pytest.approx(0.031)
    assert exported["votes"] == [{"user": "@bob:x", "vote": "down", "ts": 10.0}]
    assert exported["comments"] == ["the link is dead"]
    assert json.dumps(exported)


async def test_counts_per_room_and_the_worst_answers(store):
    await store.store_answer(record("a1", "!team", TRAVEL))
    await store.store_answer(record("a2", "!ops"))
    await store.add_reaction("$r1", "a1", "@bob:x", "down", 10.0)
    await store.add_reaction("$r2", "a1", "@eve:x", "down", 11.0)
    await store.add_reaction("$r3", "a2", "@bob:x", "up", 12.0)
    counts = {c.room: (c.up, c.down) for c in await store.room_counts(since=0)}
    assert counts == {"!team": (0, 2), "!ops": (1, 0)}
    assert (await store.room_counts(since=11.5))[0].room == "!ops", "the period counts"
    [worst] = await store.worst(since=0, limit=5)
    assert (worst["answer_id"], worst["down"]) == ("a1", 2)
    assert worst["sources"][0]["title"] == "Travel policy"


async def test_a_message_answered_again_after_a_restart_keeps_only_the_new_answer(store):
    """The answer went into the message, then the bot stopped before the message was
    marked done: after the restart the same message gets an answer with a new id."""
    await store.store_answer(record("a1", "!team", TRAVEL))
    again = replace(record("a2", "!team"), event_id="$event-a1", readers=("@eve:x",))
    await store.store_answer(again)
    assert await store.answer_of_event("$event-a1") == "a2"
    await store.add_reaction("$r1", "a2", "@bob:x", "up", 10.0)
    [exported] = [record async for record in store.export(since=0)]
    assert exported["answer_id"] == "a2" and exported["sources"] == []
    assert exported["readers"] == ["@eve:x"], "the earlier answer's readers went with it"


async def test_a_redaction_takes_the_question_and_the_comment_and_keep_days_the_rest(store):
    asked = replace(record("a1"), question_event="$question", encrypted=True)
    await store.store_answer(asked)
    await store.store_answer(replace(record("a2"), created=50.0))
    await store.add_reaction("$r1", "a1", "@bob:x", "down", 10.0)
    await store.ask("!team", "$root", "@bob:x", "a1")
    await store.add_comment("!team", "$root", "@bob:x", "the link is dead", "$comment")
    [worst] = await store.worst(since=0, limit=5)
    assert worst["question"] == "question a1" and worst["encrypted"] is True
    for event_id in ("$question", "$comment", "$event-a1"):
        await store.forget_event("!elsewhere", event_id)  # it names them from another room
    [kept] = [r async for r in store.export(since=0)]
    assert kept["question"] == "question a1" and kept["answer"] == "answer text"
    assert kept["comments"], "the comment stays"
    await store.forget_event("!team", "$question")
    await store.forget_event("!team", "$comment")
    [exported] = [r async for r in store.export(since=0)]
    for field in ("question", "rephrased", "answer"):
        assert exported[field] == ""
    assert exported["trace"] == [] and exported["comments"] == []
    assert exported["votes"], "the vote stays"
    assert await store.purge_before(20.0) == 1, "a1 is older than the cut-off"
    assert [r async for r in store.export(since=0)] == []
    assert await store.answer_of_event("$event-a1") is None


async def test_a_rooms_retention_keeps_votes_not_text(store):
    await store.store_answer(record("a1", "!team"))
    await store.store_answer(record("a2", "!other"))
    await store.add_reaction("$r1", "a1", "@bob:x", "down", 10.0)
    await store.add_reaction("$r2", "a2", "@bob:x", "down", 10.0)
    await store.purge_room_before("!team", 2.0)
    by_id = {r["answer_id"]: r async for r in store.export(since=0)}
    assert by_id["a1"]["question"] == "" and by_id["a1"]["votes"]
    assert by_id["a2"]["question"] == "question a2"
