"""What an extractive summary keeps, and with what: tables of named cases."""

from __future__ import annotations

import pytest

from core.summaries.draft import SummaryLine
from core.summaries.salience import decide_chatter_lines, decide_points
from core.summaries.smalltalk import decide_smalltalk
from core.summaries.wording import decide_asks, decide_chatter, decide_kind, decide_said
from tests.summaries.rooms import room

SAID = {
    "we agreed": ("We agreed to ship on the 28th.", "decision"),
    "let's go with": ("ok, let's go with Postgres 17 then", "decision"),
    "decided": ("Decided: the old VPN gateway stays until March.", "decision"),
    "decision, with a colon": ("Decision: the Vega release ships on Monday.", "decision"),
    "X it is": ("fine, Postgres it is.", "decision"),
    "ok then": ("ok then we ship Thursday 12th", "decision"),
    "ruled out": ("ok, that rules out managed ClickHouse for launch", "decision"),
    "German decision": ("Ok, dann machen wir Donnerstag 14 Uhr", "decision"),
    "French decision": ("c'est acté, on part sur la version 3", "decision"),
    "someone will, by a day": ("Dana will send the release notes by Friday", "action"),
    "I'll, with a date": ("I'll update the client profiles tomorrow", "action"),
    "can you, by a day, asked": ("can you renew the certificate before Monday?", "action"),
    "please": ("please review the migration script before the freeze", "action"),
    "a commitment, then a question": ("yes, I'll write it up. Friday 11:00?", "action"),
    "German action": ("Ich generier dir heute Nachmittag eine Datei", "action"),
    "German action, spoken": ("jo mach ich heute noch", "action"),
    "German refusal": ("das mach ich nicht", None),
    "German lunch break": ("so, mach ich mal Mittagspause", None),
    "German question without its mark": ("wie mach ich das am besten", None),
    "French action": ("merci, je m'en occupe d'ici vendredi", "action"),
    "on call and backup": ("Bob is on call next week, Dave is backup", "arrangement"),
    "release captain": ("Ben is release captain for 2.4", "arrangement"),
    "German on call": ("Tobias hat nächste Woche Rufbereitschaft", "arrangement"),
    "French on call": ("Nicolas est d'astreinte ce week-end", "arrangement"),
    "leave it open, decide later": (
        "let's leave the switchover date open and decide next Tuesday",
        "deferral",
    ),
    "stays open": ("ok, retention stays open until legal answers", "deferral"),
    "bring it to the retro": ("not in this room, bring it to the team retro", "deferral"),
    "German deferral": ("Lass uns das im nächsten Planning als Erstes besprechen", "deferral"),
    "French deferral": ("On en reparle la semaine prochaine", "deferral"),
    "fixed and merged": ("merged: PR #1182, the export is fixed", "status"),
    "a requirement": ("the audit log DB has to be in the EU region. not negotiable", "status"),
    "a real question": ("Who owns the on-call rota next month?", "question"),
    "a question, then context": ("do we know how many orders failed? finance will ask", "question"),
    "should we": ("should we move the retro?", "question"),
    "we go with, stated": ("We go with Postgres for the reporting service.", "decision"),
    "we go with, asked": ("Should we go with Postgres or MongoDB?", "question"),
    "we go with, asked without should": ("Do we go with plan B then?", "question"),
    "we go with, supposed": ("If we go with Mongo we need a second backup setup.", None),
    "a sentence's first word is no name": ("It runs on staging since Monday.", None),
    "acknowledgement": ("ok thanks", None),
    "a bare question mark": ("lunch?", None),
    "chit-chat": ("the build looks nice today", None),
    "a plan with a date is not an assignment": (
        "The release moves to Friday because QA waits.",
        None,
    ),
}


@pytest.mark.parametrize("text,expected", SAID.values(), ids=SAID.keys())
def test_decide_said(text, expected):
    assert decide_said(text) == expected


def test_arrangements_are_listed_with_decisions_and_deferrals_with_open_questions():
    assert decide_kind("Bob is on call next week, Dave is backup") == "decision"
    assert decide_kind("let's leave it open and decide next Tuesday") == "question"
    assert decide_kind("merged: PR #1182, the export is fixed") is None


CHATTER = {
    "lunch": ("anyone up for the Thai place at 12:15?", True),
    "a pet": ("did you see Mochi on the office cam? asleep in the printer tray", True),
    "German lunch": ("Hat jemand Lust, mittags zum Vietnamesen zu gehen?", True),
    "work": ("the staging server went down twice this week", False),
    "a decision at lunch is still a decision": ("we agreed at lunch: Postgres it is", False),
    "lunch as a deadline": ("Lena has the Figma, v3 by tomorrow lunch", False),
    "Swedish for lunch": ("Någon som hänger med till thaikiosken till lunch?", True),
    "come by for lunch": ("come by for lunch, there's cake", True),
    "a deadline beside cake": ("by lunch we also have cake for Ana!", True),
    "German noon as a deadline": ("feedback bis mittag, Henning guckt ab 11 mit rein", False),
    "after lunch is still lunch talk": ("after lunch, anyone for a walk by the river?", True),
    "French resto": ("on se fait un resto ce midi ?", True),
    "Italian resto is the rest": ("al 30% sul resto della collezione invernale", False),
    "Portuguese resto is the rest": ("manda as 3 do box 2, o resto vai amanhã", False),
    "a cat": ("did you see the cat on the office cam?", True),
    "cat pasted from a shell": ("cat /etc/hosts on db-2 still shows the old IP", False),
    "the CAT tool": ("CAT tool licence renewal is due Friday", False),
    "an aside, marked": ("kurz off topic: hat wer a ladekabel fürs iphone?", True),
    "an aside, OT": ("Sorry kurz OT: wer hat den Kuchen in die Teeküche gestellt?", True),
    "an aside, Russian": ("не по теме, но кто едет на корпоратив?", True),
    "an aside, Japanese": ("余談ですが今日めっちゃ寒くないですか", True),
    "overtime is work": ("the OT budget for nights is 30 hours this month", False),
    "on the topic, Russian": ("по теме релиза: 3 бага открыты", False),
}


@pytest.mark.parametrize("text,expected", CHATTER.values(), ids=CHATTER.keys())
def test_decide_chatter(text, expected):
    assert decide_chatter(text) == expected


def chat(*said: tuple[str, str] | tuple[str, str, dict]) -> list[SummaryLine]:
    """Lines a minute apart; a third item sets reply_to / thread_root by line number."""
    lines = []
    for number, (sender, text, *more) in enumerate(said, start=1):
        links = {key: f"$e{value}" for key, value in (more[0] if more else {}).items()}
        lines.append(
            SummaryLine(
                number,
                sender,
                text,
                1e9 + 60 * number,
                f"https://matrix.to/#/!r/$e{number}",
                f"$e{number}",
                **links,
            )
        )
    return lines


POINTS = {
    "an answer carries what it answers": (
        chat(
            ("dana", "The docs page still says we support Python 3.8, we dropped it in 2.3"),
            ("ben", "I'll fix the docs page this afternoon"),
        ),
        [("action", (1, 2))],
    ),
    "a question and the answer that leaves it open are one open question": (
        chat(
            ("erin", "Do we support SSO with Azure AD for ACME?"),
            ("ben", "Not yet. That's an open question for product, I'll raise it with Erin"),
        ),
        [("question", (1, 2))],
    ),
    "a question answered with a decision is a decision": (
        chat(("ana", "Should we ship on Thursday then?"), ("bo", "yes, let's ship Thursday")),
        [("decision", (1, 2))],
    ),
    "an arrangement said plainly": (
        chat(
            ("ana", "Bob is on call next week, Dave is backup"),
        ),
        [("arrangement", (1,))],
    ),
    "an explicit deferral is kept over a weaker line about the same subject": (
        chat(
            ("ana", "the switchover date is still tricky with the migration running"),
            ("bo", "let's leave the switchover date open and decide next Tuesday"),
        ),
        [("deferral", (2,))],
    ),
    "a reply carries the message it replies to, not the one before it": (
        chat(
            ("ana", "Who renews the VPN certificate this month?"),
            ("bo", "the build is green again"),
            ("cy", "I can take that, before Friday", {"reply_to": 1}),
        ),
        [("action", (1, 3))],
    ),
    "answers in a thread end where the thread ends": (
        chat(
            ("ana", "Will the per-tenant timeout survive the next upgrade?"),
            ("bo", "good question, no idea", {"thread_root": 1}),
            (
                "cy",
                "should, but let me confirm with the platform team on Monday",
                {"thread_root": 1},
            ),
        ),
        [("question", (1, 3))],
    ),
    "chatter and its quick replies stay out": (
        chat(
            ("ana", "anyone up for the Thai place at 12:15?"),
            ("bo", "yes please"),
            ("cy", "wasn't that supposed to be a surprise?"),
        ),
        [],
    ),
    "an update is joined to what it updates": (
        chat(
            ("ana", "The payment API is done, only the load tests are left"),
            ("bo", "Bob is on call next week"),
            ("ana", "load tests of the payment API started, results tomorrow"),
        ),
        [("arrangement", (2,)), ("status", (1, 3))],
    ),
    "a line said again counts once": (
        chat(("ana", "We agreed on Friday."), ("bo", "We agreed on Friday.")),
        [("decision", (1,))],
    ),
}


@pytest.mark.parametrize("lines,expected", POINTS.values(), ids=POINTS.keys())
def test_decide_points(lines, expected):
    found = [(pick.said, tuple(i + 1 for i in pick.lines)) for pick in decide_points(lines, 16)]
    assert found == expected


def test_decisions_come_first_and_the_limit_keeps_the_strongest():
    lines = chat(
        ("ana", "Who joins the call on the new rollout?"),
        ("bo", "hmm"),
        ("cy", "We agreed on Friday."),
        ("dee", "Bo will book the room by Monday"),
    )
    assert [p.said for p in decide_points(lines, 10)] == ["decision", "action", "question"]
    assert [p.said for p in decide_points(lines, 2)] == ["decision", "action"]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("失敗した決済の件数わかる人いる？CSに数字渡したい", True),  # ja, full-width mark
        ("那王芳的二面几点？", True),  # zh
        ("هل انتهى النشر؟", True),  # ar
        ("do we know how many failed? finance will ask", True),
        ("回归完了，可以发。", False),
        ("デプロイ完了！", False),
        ("the fix ships Thursday", False),
    ],
)
def test_decide_asks_in_every_script(text, expected):
    assert decide_asks(text) is expected


def test_a_statement_after_the_reply_to_small_talk_is_judged_by_its_own_words():
    lines = room(
        ("@ben:x", "anyone up for lunch at the Thai place?"),
        ("@eva:x", "me!"),
        ("@kai:x", "isn't it closed on Mondays?"),
        ("@ben:x", "the nightly build failed again on staging"),
    )
    assert decide_chatter_lines(lines) == frozenset({0, 1, 2})
    assert decide_smalltalk(lines, {}) == frozenset({0, 1, 2}), "without the model too"


def test_a_bare_figure_after_a_joke_answers_the_question_before_it():
    # "37" answers "cuántas te quedan?" across a joke said in between; a short laugh
    # after the joke ("jajaja valiente") stays small talk, and so does "me too" after it.
    lines = room(
        ("@nuria:x", "@rocio cuántas facturas te quedan?"),
        ("@maite:x", "hace 2 grados en la calle y he venido en bici 🥶"),
        ("@javi:x", "jajaja valiente"),
        ("@rocio:x", "37"),
        ("@ben:x", "is the canteen open? lunch?"),
        ("@eva:x", "me too"),
    )
    chatter = decide_chatter_lines(lines)
    assert 2 in chatter and 3 not in chatter
    assert 5 in chatter
