"""What people are told for each way the model fails, and the answer made of the
passages found when it does: pure, no server."""

from __future__ import annotations

import pytest

from core import strings
from core.config import parse_config
from core.history.line_store import HistoryLine
from core.i18n.language import LANGUAGE
from core.knowledge.documents import Hit
from core.llm.client import (
    EmptyAnswer,
    IncompleteAnswer,
    LlmCutOff,
    LlmError,
    LlmFiltered,
    LlmInvalidOutput,
    LlmPromptTooLong,
    LlmRefused,
    LlmServerFailed,
    LlmTimedOut,
    LlmUnavailable,
    LlmUnreachable,
)
from core.memory.store import Memory
from core.metrics import Metrics
from core.pipeline.failures import (
    build_failure_notice,
    build_fallback_answer,
    decide_failure_text,
    failure_cause,
)
from core.pipeline.sources import Sources
from core.sources import build_answer_markdown

# Each kind of failure: what people read, and what it is counted as.
FAILURES = {
    "a time-out": (LlmTimedOut("slow"), strings.LLM_FAILED, "llm_timeout"),
    "no connection": (LlmUnreachable("refused"), strings.LLM_UNAVAILABLE, "llm_unreachable"),
    "a server error": (LlmServerFailed("503"), strings.LLM_SERVER_ERROR, "llm_server_error"),
    "a refused request": (LlmRefused("404 model"), strings.LLM_REFUSED, "llm_refused"),
    "a prompt over the window": (
        LlmPromptTooLong("4096", 4096),
        strings.LLM_TOO_LONG,
        "llm_too_long",
    ),
    "cut at the token limit": (LlmCutOff("length"), strings.LLM_CUT_OFF, "llm_cut_off"),
    "not JSON for the schema": (
        LlmInvalidOutput("toxicity: not an int"),
        strings.LLM_INVALID,
        "llm_invalid_output",
    ),
    "a content filter": (LlmFiltered("filtered"), strings.LLM_FILTERED, "llm_filtered"),
    "a stream stopped with nothing": (
        IncompleteAnswer("cut", ""),
        strings.LLM_STOPPED,
        "llm_incomplete",
    ),
    "an empty answer": (EmptyAnswer("empty"), strings.LLM_EMPTY, "llm_empty"),
    "unavailable, no more said": (LlmUnavailable("down"), strings.LLM_UNAVAILABLE, "llm"),
    "any other": (LlmError("odd"), strings.LLM_ERROR, "llm"),
}


@pytest.mark.parametrize("error,text,cause", FAILURES.values(), ids=FAILURES)
def test_each_failure_says_what_happened(error, text, cause):
    assert build_failure_notice(error) == decide_failure_text(error) == text
    assert failure_cause(error) == cause
    assert ("in time" in text) == isinstance(error, LlmTimedOut), "only a time-out is slow"
    assert text.startswith(strings.NOTICE_PREFIX)


def test_each_failure_has_a_sentence_of_its_own():
    timeout_free = [text for _, text, _ in FAILURES.values() if text != strings.LLM_UNAVAILABLE]
    assert len(set(timeout_free)) == len(timeout_free)


def test_the_sentence_is_read_in_the_readers_language():
    token = LANGUAGE.set("de")
    try:
        german = decide_failure_text(LlmCutOff("length"))
    finally:
        LANGUAGE.reset(token)
    assert german != strings.LLM_CUT_OFF and "abgeschnitten" in german


def test_an_incomplete_answer_is_quoted_every_line_else_the_sentence():
    partial = IncompleteAnswer("cut", "Steps:\n\n1. Open Travelink [2]\n2. Pick")
    notice = build_failure_notice(partial)
    assert "> Steps:\n>\n> 1. Open Travelink\n> 2. Pick\n\n_(incomplete)_" in notice
    assert build_failure_notice(partial, show_partial=False) == strings.LLM_STOPPED
    for nothing in ("", "  \n", " [1]"):
        assert build_failure_notice(IncompleteAnswer("cut", nothing)) == strings.LLM_STOPPED


SETTINGS = parse_config(
    '[matrix]\nhomeserver = "http://x"\nuser_id = "@b:x"\npassword = "p"\n',
    origin="t",
    env={},
    base_dir=".",
)


def hit(document: str, text: str, distance: float) -> Hit:
    return Hit(
        f"{document}#0",
        "handbook",
        document,
        "docs",
        document.title(),
        f"https://wiki/{document}",
        "",
        text,
        0,
        True,
        1.0,
        distance=distance,
    )


def sources(documents=(), memories=(), unchecked=False, **flags) -> Sources:
    return Sources(list(documents), [], list(memories), unchecked, trace=(), **flags)


TRAVEL = hit("travel", "Trains are booked through Travelink two weeks ahead.", 0.2)


def test_the_fallback_is_the_true_notice_over_the_passages_with_their_sources():
    found = sources([TRAVEL, hit("far", "Unrelated canteen menu.", 0.95)], unchecked=True)
    answer = build_fallback_answer(
        LlmTimedOut("slow"), "How are trains booked?", found, SETTINGS, {}
    )
    assert answer is not None
    assert answer.text == "\n\n".join(
        [
            strings.LLM_FAILED,
            strings.LLM_FALLBACK_INTRO,
            "> Trains are booked through Travelink two weeks ahead. [1]",
            strings.SOURCES_UNCHECKED,
        ]
    )
    assert [(s.title, s.url) for s in answer.sources] == [("Travel", "https://wiki/travel")]
    assert answer.reason == "llm_fallback:llm_timeout" and answer.kind == "answer"
    assert "1. [Travel](https://wiki/travel)" in build_answer_markdown(answer)


def test_the_fallback_keeps_what_an_incomplete_answer_wrote_and_the_rooms_memories():
    memory = Memory(1, "", "Trains: ask Dana first.", "@a:x", 0.0)
    found = sources([TRAVEL], [memory], unavailable=True)
    error = IncompleteAnswer("cut", "Trains are booked [1] thr")
    answer = build_fallback_answer(error, "How are trains booked?", found, SETTINGS, {})
    assert answer is not None and answer.reason == "llm_fallback:llm_incomplete"
    assert answer.text.startswith(build_failure_notice(error) + "\n\n")
    assert "> Trains are booked thr\n\n_(incomplete)_" in answer.text
    assert "> Trains: ask Dana first." in answer.text
    assert answer.text.endswith(strings.SEARCH_PARTLY_UNAVAILABLE)


def test_a_window_of_the_rooms_discussion_is_quoted_line_by_line():
    window = hit("window", "dana: book via Travelink", 0.3)
    found = Sources([], [window], [], False, trace=())
    lines = {window.chunk_id: [HistoryLine(1, "dana", "Book trains via Travelink.", 0.0, "")]}
    answer = build_fallback_answer(LlmServerFailed("503"), "trains?", found, SETTINGS, lines)
    assert answer is not None and "> dana: Book trains via Travelink. [1]" in answer.text


def test_nothing_relevant_found_leaves_the_notice_alone():
    far = sources([hit("far", "Unrelated canteen menu.", 0.95)])
    assert build_fallback_answer(LlmTimedOut("x"), "trains?", far, SETTINGS, {}) is None
    assert build_fallback_answer(LlmTimedOut("x"), "trains?", sources(), SETTINGS, {}) is None


def test_a_fallback_is_counted_as_the_failure_it_is():
    metrics = Metrics()
    found = sources([TRAVEL])
    answer = build_fallback_answer(LlmCutOff("length"), "trains?", found, SETTINGS, {})
    assert answer is not None
    metrics.observe_answer(answer)
    exposed = metrics.exposition().decode()
    assert 'bot_failures_total{cause="llm_cut_off"} 1.0' in exposed
