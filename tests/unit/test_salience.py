"""What an extractive summary keeps first: one table of named cases."""

from __future__ import annotations

import pytest

from core.summaries.salience import decide_kind, decide_salient

CASES = {
    "we agreed": ("We agreed to ship on the 28th.", "decision"),
    "let's go with": ("ok, let's go with Postgres 17 then", "decision"),
    "decided": ("Decided: the old VPN gateway stays until March.", "decision"),
    "decision, with a colon": ("Decision: the Vega release ships on Monday.", "decision"),
    "someone will, by a day": ("Dana will send the release notes by Friday", "action"),
    "I'll, with a date": ("I'll update the client profiles tomorrow", "action"),
    "can you, by a day, asked": ("can you renew the certificate before Monday?", "action"),
    "please": ("please review the migration script before the freeze", "action"),
    "a real question": ("Who owns the on-call rota next month?", "question"),
    "should we": ("should we move the retro?", "question"),
    "acknowledgement": ("ok thanks", None),
    "a bare question mark": ("lunch?", None),
    "chit-chat": ("the build is green again", None),
}


@pytest.mark.parametrize("text,expected", CASES.values(), ids=CASES.keys())
def test_decide_kind(text, expected):
    assert decide_kind(text) == expected


def test_decisions_come_first_then_actions_then_questions_up_to_the_limit():
    texts = ["Who joins the call?", "We agreed on Friday.", "Bo will book the room by Monday", "hi"]
    assert decide_salient(texts, 10) == [(1, "decision"), (2, "action"), (0, "question")]
    assert decide_salient(texts, 2) == [(1, "decision"), (2, "action")]


NOT_ACTIONS = {
    "a plan with a date is not an assignment": "The release moves to Friday because QA waits.",
    "a schedule": "The database migration to Postgres 17 is scheduled for Tuesday night.",
}


@pytest.mark.parametrize("text", NOT_ACTIONS.values(), ids=NOT_ACTIONS.keys())
def test_statements_with_dates_are_not_action_items(text):
    assert decide_kind(text) is None


def test_a_message_said_again_counts_once():
    assert decide_salient(["We agreed on Friday."] * 3, 10) == [(0, "decision")]
