"""A question in another language than the documents': searched as the pre-step
translates it, answered in the asker's language, and searched as asked when the model
writes no translation."""

from __future__ import annotations

import pytest

from core.pipeline.prestep import PrestepVerdict, decide_translations
from core.requests import Request
from core.rights.readers import ALWAYS
from core.trace import RetrieveStep, find_step
from tests.pipeline.conftest import verdict

BOB = "@bob:example.org"
GERMAN = "Wie viele Urlaubstage haben Vollzeitkräfte?"
ENGLISH = "How many days of annual leave do full-time staff have?"


def ask(text: str, language: str | None) -> Request:
    return Request(
        text, BOB, "!room", None, is_direct=True, knowledge=(("!room", ALWAYS),), language=language
    )


def translated(query: str = ENGLISH, language: str = "en") -> dict:
    return verdict(search_queries=[{"language": language, "query": query}])


async def test_a_german_question_is_searched_in_english_and_answered_in_german(pipeline, llm):
    llm.enqueue(translated())
    llm.enqueue("Vollzeitkräfte haben 27 Urlaubstage [1].")
    answer = await pipeline.answer(ask(GERMAN, "de"))
    assert [s.document_id for s in answer.sources] == ["leave"]
    prestep, answering = llm.history[0]["messages"][0], llm.history[1]["messages"][0]
    assert "English (en)" in prestep["content"], "the pre-step is told the collections' languages"
    assert "Write the answer in German" in answering["content"]
    assert "Annual leave" in llm.history[1]["messages"][1]["content"]
    schema = llm.history[0]["response_format"]["json_schema"]["schema"]
    assert "search_queries" in schema["properties"]


async def test_without_a_translation_the_question_is_searched_as_asked(pipeline, llm):
    llm.enqueue(verdict())
    answer = await pipeline.answer(ask(GERMAN, None))
    retrieve = find_step(answer.trace, RetrieveStep)
    assert retrieve and retrieve.question == GERMAN
    # As before languages: the German words find nothing in English documents.
    assert answer.reason == "nothing_found" and len(llm.history) == 1


async def test_an_asker_of_unknown_language_is_answered_in_the_questions(pipeline, llm):
    llm.enqueue(verdict())
    llm.enqueue("27 days [1].")
    await pipeline.answer(ask("annual leave days?", None))
    system = llm.history[1]["messages"][0]["content"]
    assert "Write the answer in the language of the question" in system


async def test_a_translation_that_repeats_the_question_is_not_searched_again(pipeline, llm):
    llm.enqueue(translated(query="How many leave days do full-timers have?"))
    llm.enqueue("27 days [1].")
    answer = await pipeline.answer(ask("How many leave days do full-timers have?", "en"))
    # Answered beside the pre-step (no second search, no second answer call).
    assert len(llm.history) == 2 and answer.sources


QUESTION = "Wie viele Urlaubstage?"
TRANSLATIONS = {
    "one per collection language": (
        [("en", "How many leave days?")],
        {"en": "How many leave days?"},
    ),
    "a language no collection has": ([("fr", "Combien de jours ?")], {}),
    "the question repeated": ([("en", " wie viele urlaubstage? ")], {}),
    "empty": ([("en", "  ")], {}),
    "runaway output": ([("en", "leave " * 300)], {}),
    "the first of two for one language": (
        [("EN", "How many leave days?"), ("en", "Leave days?")],
        {"en": "How many leave days?"},
    ),
}


@pytest.mark.parametrize("queries,expected", TRANSLATIONS.values(), ids=TRANSLATIONS.keys())
def test_decide_translations(queries, expected):
    found = PrestepVerdict.model_validate(
        verdict(
            search_queries=[{"language": language, "query": query} for language, query in queries]
        )
    )
    assert decide_translations(found, QUESTION, {"en", "de"}) == expected
