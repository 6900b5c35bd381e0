"""A model's summary checked against the messages it cites: the pure decisions, then
the summarizer with the scripted model over real HTTP."""

from __future__ import annotations

import re

import pytest

from core import strings
from core.config.llm import LlmSettings
from core.llm.client import LlmClient
from core.llm.prompts import load_prompts
from core.summaries.draft import ActionItem, Point, SummaryDraft, SummaryLine
from core.summaries.summarizer import Summarizer
from core.summaries.support import (
    CheckedDraft,
    build_points_block,
    decide_cited,
    decide_supported,
)
from tests.support.fake_llm import FakeLlm

LINES = [
    SummaryLine(1, "ana", "We ship Atlas on 14 December.", 1e9, "https://l/1"),
    SummaryLine(2, "bo", "I will write the release notes by Friday.", 1e9 + 1, "https://l/2"),
    SummaryLine(3, "cy", "Who updates the status page?", 1e9 + 2, "https://l/3"),
]


def draft(*decisions: tuple[str, list[int]]) -> SummaryDraft:
    return SummaryDraft(
        tldr="t",
        decisions=[Point(text=t, messages=m) for t, m in decisions],
        action_items=[ActionItem(text="release notes", owner="bo", due="Friday", messages=[2])],
        open_questions=[Point(text="who updates the status page", messages=[3])],
    )


def test_a_point_that_cites_no_message_of_the_summary_is_dropped():
    checked = decide_cited(draft(("Atlas ships on 14 December", [1]), ("invented", [9])), {1, 2, 3})
    assert [p.text for p in checked.draft.decisions] == ["Atlas ships on 14 December"]
    assert checked.dropped == 1


def test_the_block_numbers_points_in_order_with_their_messages():
    block = build_points_block(draft(("Atlas ships on 14 December", [1])), LINES)
    assert block.splitlines() == [
        "Point 1: Atlas ships on 14 December",
        "  [1] ana: We ship Atlas on 14 December.",
        "Point 2: release notes (bo) (Friday)",
        "  [2] bo: I will write the release notes by Friday.",
        "Point 3: who updates the status page",
        "  [3] cy: Who updates the status page?",
    ]


VERDICTS = {
    "high is dropped and counted": ({1: "high", 2: "low"}, ["release notes"], 1, ("low", None)),
    "medium stays with its verdict": (
        {2: "medium"},
        ["Atlas", "release notes"],
        0,
        (None, "medium", None),
    ),
    "no verdict: kept, unmarked": ({}, ["Atlas", "release notes"], 0, (None, None, None)),
}


@pytest.mark.parametrize("verdicts,kept,dropped,risks", VERDICTS.values(), ids=VERDICTS.keys())
def test_verdicts_drop_or_mark_points(verdicts, kept, dropped, risks):
    checked = decide_supported(CheckedDraft(draft(("Atlas", [1]))), verdicts)
    texts = [p.text for p in [*checked.draft.decisions, *checked.draft.action_items]]
    assert texts == kept
    assert checked.dropped == dropped and checked.risks == risks


def judging_model(invented: str, risk: str = "high"):
    def respond(body: dict) -> dict:
        schema = body["response_format"]["json_schema"]["name"]
        user = body["messages"][1]["content"]
        if schema == "summary_support":
            points = re.findall(r"^Point (\d+): (.*)$", user, re.M)
            return {
                "points": [
                    {"point": int(n), "risk": risk if invented in t else "low"} for n, t in points
                ]
            }
        return {
            "tldr": "Atlas ships.",
            "action_items": [],
            "open_questions": [],
            "decisions": [
                {"text": "Atlas ships on 14 December", "messages": [1]},
                {"text": invented, "messages": [2]},
                {"text": "a point citing nothing", "messages": []},
            ],
        }

    return respond


async def summarize(llm, check: bool = True):
    client = LlmClient(LlmSettings(url=llm.url, model="test-model", max_retries=0))
    summarizer = Summarizer(client, load_prompts, None, check_support=lambda: check)
    try:
        return await summarizer.summarize(LINES, "**S**", timezone="UTC", part_tokens=1000)
    finally:
        await client.close()


async def test_an_invented_decision_is_left_out_and_the_summary_says_so(llm):
    llm.respond = judging_model("The budget doubles next year")
    result = await summarize(llm)
    assert "Atlas ships on 14 December [1](https://l/1)" in result.markdown
    assert "budget doubles" not in result.markdown
    assert "citing nothing" not in result.markdown
    assert strings.SUMMARY_POINTS_DROPPED.format(count=2) in result.markdown
    assert [e.text for e in result.entries] == ["Atlas ships on 14 December"], "nor in the ledger"
    assert result.calls == 2, "the summary, then one check"


async def test_a_point_its_messages_say_only_in_part_keeps_the_answers_badge(llm):
    llm.respond = judging_model("Atlas ships on 14 December with dark mode", "medium")
    result = await summarize(llm)
    line = next(x for x in result.markdown.splitlines() if "dark mode" in x)
    assert line.endswith(strings.SUPPORT_BADGES["medium"])
    assert strings.SUPPORT_BADGES["medium"] not in result.markdown.replace(line, "")


async def test_a_failed_check_leaves_the_summary_unmarked(llm):
    answer = judging_model("The budget doubles next year")
    llm.respond = lambda body: (
        answer(body) if body["response_format"]["json_schema"]["name"] == "summary" else "no json"
    )
    result = await summarize(llm)
    assert "budget doubles" in result.markdown, "unchecked, as an answer whose check failed"
    assert "citing nothing" not in result.markdown


async def test_without_the_check_there_is_no_second_call(llm):
    llm.respond = judging_model("The budget doubles next year")
    result = await summarize(llm, check=False)
    assert result.calls == 1 and "budget doubles" in result.markdown


async def test_the_check_goes_to_the_support_tasks_model_when_summaries_have_their_own(llm):
    llm.respond = judging_model("The budget doubles next year")
    checker = await FakeLlm().start()
    checker.respond = llm.respond
    settings = LlmSettings.model_validate(
        {
            "url": "http://127.0.0.1:1/v1",
            "model": "main",
            "max_retries": 0,
            "tasks": {
                "summary": {"url": llm.url, "model": "summarizer"},
                "support": {"url": checker.url, "model": "checker"},
            },
        }
    )
    client = LlmClient(settings)
    summarizer = Summarizer(client, load_prompts, None)
    try:
        result = await summarizer.summarize(LINES, "**S**", timezone="UTC", part_tokens=1000)
    finally:
        await client.close()
        await checker.close()
    assert [c["model"] for c in llm.history] == ["summarizer"]
    assert [c["model"] for c in checker.history] == ["checker"]
    assert "budget doubles" not in result.markdown
