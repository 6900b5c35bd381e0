"""Collections in other languages than English: the keyword side stems each in its own
language on both backends (and an index of another language is rebuilt once), and a
question is also searched as translated into a collection's language."""

from __future__ import annotations

from core.knowledge.documents import Document, SearchFilters
from core.knowledge.search.catalog import ChunkRow, DocumentRecord, SqlCatalog
from tests.knowledge.conftest import knowledge_settings


def record(collection: str, doc_id: str, title: str) -> DocumentRecord:
    return DocumentRecord(
        collection,
        doc_id,
        "wiki",
        title,
        f"https://wiki/{doc_id}",
        "de",
        "1",
        "",
        True,
        f"hash-{doc_id}",
        1,
        1.0,
    )


async def put(catalog: SqlCatalog, collection: str, doc_id: str, title: str, text: str) -> None:
    row = ChunkRow(f"{doc_id}#0", 0, title, text)
    await catalog.replace_document(record(collection, doc_id, title), [row])


GERMAN = {"handbuch": "de", "manual": "fr"}
TRAVEL_COSTS = "Die Reisekosten der Mitarbeiter erstattet das Büro."


async def test_each_collection_is_searched_with_its_languages_word_forms(open_database):
    catalog = await SqlCatalog.open(await open_database(), lambda name: GERMAN.get(name, "en"))
    await put(catalog, "handbuch", "urlaub", "Urlaubsanträge", "Urlaubstage werden beantragt.")
    await put(catalog, "handbuch", "reise", "Dienstreisen", TRAVEL_COSTS)
    await put(catalog, "manual", "conges", "Congés", "Les demandes de congés annuels.")
    await put(catalog, "handbook", "leave", "Leave", "Annual leave requests are approved.")
    # Other German forms of the indexed words ("Dienstreisen", "Mitarbeiter"), found by
    # German stems only (PostgreSQL's German stemmer is an older Snowball: both agree here).
    both = SearchFilters(collections=("handbuch", "handbook"))
    assert await catalog.keyword_search("Dienstreise Mitarbeitern", both, 5) == ["reise#0"]
    assert await catalog.keyword_search("Urlaubstage beantragte", both, 5) == ["urlaub#0"]
    assert await catalog.keyword_search("demande congé", SearchFilters(), 5) == ["conges#0"]
    assert await catalog.keyword_search("approving requests", SearchFilters(), 5) == ["leave#0"]


async def test_a_collection_indexed_in_another_language_is_indexed_again_once(open_database):
    db = await open_database()
    catalog = await SqlCatalog.open(db)
    await put(catalog, "handbuch", "reise", "Dienstreisen", TRAVEL_COSTS)
    filters = SearchFilters(collections=("handbuch",))
    assert (
        await catalog.keyword_search("Dienstreise Mitarbeitern", filters, 5) == []
    )  # English stems
    reopened = await SqlCatalog.open(db, lambda name: GERMAN.get(name, "en"))
    assert await reopened.keyword_search("Dienstreise Mitarbeitern", filters, 5) == ["reise#0"]
    rows = await db.fetch("SELECT collection, language FROM keyword_languages")
    assert [tuple(row) for row in rows] == [("handbuch", "de")]
    for _ in range(2):  # the starts after: nothing to do
        again = await SqlCatalog.open(db, lambda name: GERMAN.get(name, "en"))
        assert await again.align_languages() == []
        assert await again.keyword_search("Dienstreise Mitarbeitern", filters, 5) == ["reise#0"]


DOCUMENTS = [
    Document(
        "handbook",
        "leave",
        "Annual leave",
        "# Annual leave\n\nEvery employee has 28 days of paid holiday per calendar year. "
        "Unused days carry over until the end of March.",
    ),
    Document(
        "handbook",
        "travel",
        "Business travel",
        "# Business travel\n\nBook trains and hotels through the travel desk two weeks ahead.",
    ),
    Document(
        "handbook",
        "parking",
        "Parking",
        "# Parking\n\nThe garage under building B has spaces for bicycles and electric cars.",
    ),
]


async def test_a_german_question_finds_english_documents_through_its_translation(
    tmp_path, embedders, storage_toml
):
    from core.knowledge_base.base import KnowledgeBase

    settings = knowledge_settings(tmp_path, extra=storage_toml)
    kb = await KnowledgeBase.open(lambda: settings, embedders)
    try:
        await kb.indexer.put_many(DOCUMENTS)
        question = "Wie viele Urlaubstage bekomme ich pro Jahr?"
        translated = {"en": "How many days of holiday do I get per year?"}
        found = await kb.retriever.search(question, translations=translated, k=3)
        assert found[0].document_id == "leave"
        # The same translation for a language no collection has is not searched.
        unused = await kb.retriever.search(question, translations={"fr": "Combien"}, k=3)
        assert [h.chunk_id for h in unused] == [
            h.chunk_id for h in await kb.retriever.search(question, k=3)
        ]
    finally:
        await kb.close()
