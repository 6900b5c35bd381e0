"""Votes move the documents an answer cited, within the configured bounds."""

from __future__ import annotations

import pytest

from core.feedback.ranking import FeedbackRanking
from core.feedback.store import AnswerRecord, SourceRecord, SqlFeedbackStore
from core.knowledge.documents import Document
from tests.knowledge.conftest import chroma_server, kb  # noqa: F401  (fixtures)

DOCS = [
    Document("handbook", "trains-a", "Booking trains", "Book train tickets on Travelink."),
    Document("handbook", "trains-b", "Train bookings", "Train tickets are booked on Travelink."),
]


def answer(answer_id: str, doc_id: str) -> AnswerRecord:
    source = SourceRecord("handbook", doc_id, doc_id, "", 0.03)
    return AnswerRecord(
        answer_id,
        f"$e{answer_id}",
        "!r",
        "@a:x",
        "q",
        "q",
        "a",
        "answer",
        "m",
        "v",
        [],
        (source,),
        1.0,
    )


async def test_downvoted_documents_rank_lower_and_upvoted_ones_higher(kb, open_database):  # noqa: F811
    await kb.indexer.put_many(DOCS)
    store = await SqlFeedbackStore.open(await open_database())
    kb.retriever.adjustments = FeedbackRanking(store, kb.indexer.settings).factors

    async def ranking() -> dict[str, float]:
        hits = await kb.retriever.search("book train tickets", k=2)
        return {hit.document_id: hit.score for hit in hits}

    base = await ranking()
    top, other = base
    # The votes come in through another process, on the same database.
    voter = await SqlFeedbackStore.open(await open_database())
    await voter.store_answer(answer("a1", top))
    for n, user in enumerate(["@a:x", "@b:x", "@c:x"]):
        await voter.add_reaction(f"$r{n}", "a1", user, "down", float(n))
    sunk = await ranking()
    assert list(sunk) == [other, top], "three 👎 on answers citing it sink the first document"
    assert sunk[top] == pytest.approx(base[top] * 0.7), "down_step 0.1 per 👎"

    for n in range(3):
        await voter.redact("!team", f"$r{n}")
    await store.store_answer(answer("a2", top))
    for n in range(20):
        await store.add_reaction(f"$up{n}", "a2", f"@u{n}:x", "up", 10.0 + n)
    lifted = await ranking()
    assert lifted[top] == pytest.approx(base[top] * 1.1), "capped at max_up"
