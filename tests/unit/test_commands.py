"""Requests said in words rather than as commands."""

from __future__ import annotations

import pytest

from bot.inbox.commands import decide_summary_request

SUMMARY_REQUESTS = {
    "summarize this": True,
    "Summarise it please": True,
    "sum it up": True,
    "tl;dr?": True,
    "summarize": True,
    "summarize the budget section": False,
    "what does this say about hotels?": False,
}


@pytest.mark.parametrize(("text", "asks"), SUMMARY_REQUESTS.items(), ids=SUMMARY_REQUESTS)
def test_decide_summary_request(text, asks):
    assert decide_summary_request(text) is asks
