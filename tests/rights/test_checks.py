"""Rights checks against source applications that verify the bot's tokens over real HTTP."""

from __future__ import annotations

import time

import pytest

from core.knowledge.documents import Document
from core.knowledge_base.base import KnowledgeBase
from core.passages import PassagesAnswerer
from core.requests import Request
from core.rights.readers import ALWAYS
from core.strings import SOURCES_UNCHECKED

ALICE, BOB, CAROL, BOSS = (
    "@alice:example.org",
    "@bob:example.org",
    "@carol:other.org",
    "@boss:example.org",
)
DOCUMENTS = [
    Document("handbook", "pub-1", "Travel basics", "Travel is booked through the travel desk."),
    Document(
        "wiki",
        "salaries",
        "Salary bands",
        "Travel managers are in salary band E4.",
        url="https://wiki/secret-salaries",
    ),
    Document("wiki", "roadmap", "Roadmap 2027", "The travel booking tool is replaced in 2027."),
    Document("tickets", "T-1", "Travel outage", "The travel booking site was down on Monday."),
]


@pytest.fixture
async def answerer(world):
    await world.kb.indexer.put_many(DOCUMENTS)
    world.wiki.acl = {
        "alice": {("wiki", "salaries"), ("wiki", "roadmap")},
        "bob": {("wiki", "roadmap")},
        "jane.doe": {("wiki", "salaries"), ("wiki", "roadmap")},
    }
    world.tracker.acl = {ALICE: {("tickets", "T-1")}, CAROL: {("tickets", "T-1")}}
    return PassagesAnswerer(world.kb.retriever, world.kb.rights, world.kb.indexer.settings)


def ask(
    asker,
    members=(),
    *,
    direct=False,
    room="!room",
    shared=None,
    text="travel booking salary band roadmap outage",
):
    return Request(
        text,
        asker,
        room,
        None,
        is_direct=direct,
        readers=tuple(members),
        knowledge=tuple(
            item if isinstance(item, tuple) else (item, ALWAYS) for item in (shared or (room,))
        ),
    )


def cited(answer) -> set[str]:
    return {source.document_id for source in answer.sources}


async def test_a_reader_without_rights_never_gets_restricted_text_title_or_url(answerer, world):
    bob = await answerer.answer(ask(BOB, direct=True))
    assert cited(bob) == {"pub-1", "roadmap"}
    shown = bob.text + repr(bob.sources)
    for secret in ("E4", "Salary bands", "secret-salaries", "booking site was down"):
        assert secret not in shown
    alice = await answerer.answer(ask(ALICE, direct=True))
    assert cited(alice) == {"pub-1", "salaries", "roadmap", "T-1"}
    assert world.wiki.rejected == [] and world.tracker.rejected == []


async def test_a_group_room_gets_the_intersection_of_its_members_rights(answerer, world):
    group = await answerer.answer(ask(ALICE, (ALICE, BOB)))
    assert cited(group) == {"pub-1", "roadmap"}
    boss_and_alice = await answerer.answer(ask(BOSS, (ALICE,)))
    assert cited(boss_and_alice) == {"pub-1", "salaries", "roadmap"}


async def test_members_are_checked_in_batches(answerer, world):
    await answerer.answer(ask(ALICE, (ALICE, BOB, BOSS)))
    assert sorted(len(r["tokens"]) for r in world.wiki.requests) == [1, 2]


async def test_a_member_with_no_identity_in_an_application_means_public_documents_from_it(
    answerer, world
):
    mixed = await answerer.answer(ask(ALICE, (ALICE, CAROL)))
    assert cited(mixed) == {"pub-1", "T-1"}, "carol has no wiki identity; the tracker maps her id"
    assert world.wiki.requests == []
    assert SOURCES_UNCHECKED not in mixed.text


async def test_a_room_set_to_public_only_and_a_crowded_room_get_public_documents(answerer, world):
    crowded = ask(ALICE, (ALICE, BOB, BOSS, CAROL, "@d:example.org", "@e:example.org"))
    assert cited(await answerer.answer(crowded)) == {"pub-1"}
    assert world.wiki.requests == [] and world.tracker.requests == []


@pytest.mark.parametrize("mode", ["down", "slow", "garbage"])
async def test_an_application_that_fails_yields_what_could_be_checked_in_time(
    answerer, world, mode
):
    world.wiki.mode = mode
    started = time.monotonic()
    answer = await answerer.answer(ask(ALICE, direct=True))
    # The configured timeout is 1 s and a slow application never answers: the answer
    # comes long before (a wide bound, so that a loaded machine does not fail it).
    assert time.monotonic() - started < 30, "the configured timeout is 1 s"
    assert cited(answer) == {"pub-1", "T-1"}
    assert SOURCES_UNCHECKED in answer.text


MALFORMED_ITEMS = {
    "a bare id": "budget",
    "no id": {"collection": "wiki"},
    "a number for an id": {"collection": "wiki", "id": 7},
    "no collection": {"id": "salaries"},
    "a list": ["wiki", "salaries"],
}


@pytest.mark.parametrize("item", MALFORMED_ITEMS.values(), ids=MALFORMED_ITEMS.keys())
async def test_an_answer_with_a_malformed_allowed_item_counts_as_unchecked(answerer, world, item):
    world.wiki.malformed = [item]
    answer = await answerer.answer(ask(ALICE, direct=True))
    assert cited(answer) == {"pub-1", "T-1"}, "nothing of the wiki's answer is trusted"
    assert SOURCES_UNCHECKED in answer.text, "the readers are told, not silently denied"
    world.wiki.malformed = []
    again = await answerer.answer(ask(ALICE, direct=True))
    assert cited(again) == {"pub-1", "salaries", "roadmap", "T-1"}, "nothing was cached"


async def test_decisions_are_cached_and_dropped_when_a_document_changes(answerer, world):
    await answerer.answer(ask(ALICE, direct=True))
    await answerer.answer(ask(ALICE, direct=True))
    assert len(world.wiki.requests) == 1, "the second question is answered from the cache"

    world.wiki.acl["alice"] = {("wiki", "roadmap")}
    await world.kb.indexer.put_many(
        [Document("wiki", "salaries", "Salary bands", "Travel managers are in salary band E5.")]
    )
    after = await answerer.answer(ask(ALICE, direct=True))
    assert len(world.wiki.requests) == 2 and "salaries" not in cited(after)


async def test_a_document_replaced_through_another_process_is_asked_about_again(
    answerer, world, embedders
):
    await answerer.answer(ask(ALICE, direct=True))
    # Another process on the same storage: its own catalog connection and rights cache.
    other = await KnowledgeBase.open(world.kb.indexer.settings, embedders)
    try:
        world.wiki.acl["alice"] = {("wiki", "roadmap")}
        salaries = Document("wiki", "salaries", "Salary bands", "Travel managers are in E5.")
        assert [o.status for o in await other.indexer.put_many([salaries])] == ["indexed"]
    finally:
        await other.close()
    after = await answerer.answer(ask(ALICE, direct=True))
    assert "salaries" not in cited(after), "the decision cached for the old version was used"
    assert len(world.wiki.requests) == 2


@pytest.mark.parametrize("cache_seconds", [60])
async def test_cached_decisions_expire(answerer, world, cache_seconds):
    await answerer.answer(ask(ALICE, direct=True))
    await answerer.answer(ask(ALICE, direct=True))
    assert len(world.wiki.requests) == 1, "decided once within its time"
    world.kb.decisions.clock = lambda: time.monotonic() + cache_seconds
    await answerer.answer(ask(ALICE, direct=True))
    assert len(world.wiki.requests) == 2


async def test_what_the_bot_wrote_from_room_a_stays_with_room_a_members(answerer, world):
    summary = Document(
        "wiki",
        "summary-a",
        "Summary of room A",
        "Room A decided that travel booking moves to Friday.",
        room="!roomA",
    )
    await world.kb.indexer.put_many([summary])
    in_b = await answerer.answer(ask(BOB, (BOB,), room="!roomB", shared=("!roomB",)))
    assert "summary-a" not in cited(in_b) and "Friday" not in in_b.text
    in_b_all_also_in_a = await answerer.answer(
        ask(BOB, (BOB,), room="!roomB", shared=("!roomB", "!roomA"))
    )
    assert "summary-a" in cited(in_b_all_also_in_a)
    assert all("summary-a" not in str(r) for r in world.wiki.requests), (
        "membership, not the application, decides"
    )


async def test_the_jwks_is_published_by_the_rest_api(world):
    async with world.kb.http().get(world.bot_api + "/jwks.json") as response:
        jwks = await response.json()
    assert [(k["kid"], k["alg"], k["kty"]) for k in jwks["keys"]] == [("bot-1", "EdDSA", "OKP")]
    assert "d" not in jwks["keys"][0], "never the private part"
