"""Summarising in parts with the scripted model over real HTTP; extractive with the real
embedding model."""

from __future__ import annotations

import json
import re

from core.config.knowledge import DEFAULT_EMBEDDING_MODEL
from core.config.llm import LlmSettings
from core.llm.client import LlmClient
from core.llm.prompts import load_prompts
from core.pipeline.context import estimate_tokens
from core.summaries.draft import SummaryLine
from core.summaries.summarizer import Summarizer


def lines(count: int) -> list[SummaryLine]:
    return [
        SummaryLine(n, f"@user{n % 3}:x", f"message number {n} about the release plan", 1e9 + n,
                    f"https://matrix.to/#/!r/$e{n}")
        for n in range(1, count + 1)
    ]  # fmt: skip


def part_model(body: dict) -> dict:
    """Decides on the first message of each part; a merge keeps every decision."""
    user = body["messages"][1]["content"]
    if "<summaries>" in user:
        drafts = [json.loads(line) for line in user.split("\n") if line.startswith("{")]
        decisions = [d for draft in drafts for d in draft["decisions"]]
        return {"tldr": "merged", "decisions": decisions, "action_items": [], "open_questions": []}
    first = int(re.search(r"^\[(\d+)\]", user.split("<messages>\n", 1)[1]).group(1))
    return {"tldr": f"part from {first}", "open_questions": [], "action_items": [],
            "decisions": [{"text": f"decided at {first}", "messages": [first]}]}  # fmt: skip


async def test_a_long_range_is_summarised_in_parts_then_merged(llm):
    llm.respond = part_model
    client = LlmClient(LlmSettings(url=llm.url, model="test-model", max_retries=0))
    summarizer = Summarizer(client, load_prompts, None, lambda: DEFAULT_EMBEDDING_MODEL)
    notices = []

    async def notice(count, parts):
        notices.append((count, parts))

    result = await summarizer.summarize(
        lines(300), "**Summary**", timezone="UTC", part_tokens=1000, notice=notice
    )
    assert result.parts > 2 and notices == [(300, result.parts)]
    assert result.calls == len(llm.history) and result.calls > result.parts, "parts, then merges"
    for call in llm.history:
        assert estimate_tokens(call["messages"][1]["content"]) < 1000 * 1.3
    decided = re.findall(
        r"decided at (\d+) \[\1\]\(https://matrix.to/#/!r/\$e\1\)", result.markdown
    )
    assert len(decided) == result.parts, "each part's decision survives the merge, linked"
    await client.close()


async def test_without_a_model_the_summary_is_the_most_representative_messages(embedders):
    topics = (["The release moves to Friday because QA needs two more days."] * 4
              + ["Lunch at the Thai place?", "Sure, 12:30."]
              + ["The database migration to Postgres 17 is scheduled for Tuesday night."] * 4
              + ["ok", "thanks", "👍", "lol"] + ["The VPN certificate expires on 3 December."] * 3)  # fmt: skip
    chat = [SummaryLine(n, "@a:x", text, 1e9 + n, f"https://l/{n}")
            for n, text in enumerate(topics, start=1)]  # fmt: skip
    summarizer = Summarizer(None, load_prompts, embedders, lambda: DEFAULT_EMBEDDING_MODEL)
    result = await summarizer.summarize(chat, "**Summary**", timezone="UTC", part_tokens=1000)
    assert result.calls == 0
    picked = re.findall(r"\[(\d+)\]\(https://l/\1\)", result.markdown)
    assert picked == sorted(picked, key=int), "in time order"
    picked_text = " ".join(chat[int(n) - 1].text for n in picked)
    assert "release" in picked_text and "Postgres" in picked_text
    assert len(set(picked)) == len(picked) >= 3
