"""Small talk told by the learned model (real multilingual e5) and by its neighbours."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from core.config.knowledge import MULTILINGUAL_EMBEDDING_MODEL
from core.evaluation.summaries import read_logs
from core.knowledge.search.embedding import Embedders
from core.summaries.smalltalk import (
    ROOM_FEATURES,
    SmallTalk,
    SmalltalkModelError,
    build_room_features,
    decide_judged,
    decide_smalltalk,
    fetch_smalltalk,
    load_smalltalk_model,
)
from core.summaries.threads import build_terms
from tests.summaries.rooms import room

LOGS = Path(__file__).parent.parent / "data" / "summaries"
HELD_OUT = [LOGS / f"heldout{n}" for n in range(2, 6)]
# The first model's threshold by a line's words alone (tests/support/train_smalltalk.py:
# WORDS_THRESHOLD); in a room the second model decides.
PEOPLE_THRESHOLD = 0.62


LINES = room(
    ("@lena:x", "my tram sat outside the station for 40 min because of a goose"),
    ("@marc:x", "is the goose ok"),
    ("@lena:x", "ha, the 7:40 one"),
    ("@dan:x", "the replay of the failed webhook events is done, 11 failed again"),
    ("@priya:x", "lol ok"),
)


def test_a_short_line_is_what_it_answers_unless_it_names_a_figure():
    judged = {0: True, 3: False}
    assert decide_smalltalk(LINES, judged) == {0, 1}, "a figure makes '7:40' something else"
    replied = [*LINES[:4], replace(LINES[4], reply_to="$e1")]
    assert 4 in decide_smalltalk(replied, judged), "a reply to small talk is small talk"


def test_a_cue_phrase_does_not_make_small_talk_of_what_the_model_found_surely_work():
    day = room(
        (
            "@carmen:x",
            "buenos días ☕ tenemos 140 tickets abiertos, prioridad 1 los cargos duplicados",
        ),
        ("@oscar:x", "☕☕ café para todos, que hoy va a ser largo y la máquina vuelve a fallar"),
    )
    assert decide_smalltalk(day, {}) == {0, 1}, "without the model the cue phrases tell"
    assert decide_smalltalk(day, {0: 0.02, 1: 0.3}, 0.6) == {1}


def test_small_talk_does_not_spread_to_what_is_decided_next_or_later():
    lunch = room(
        ("@ben:x", "anyone up for the Thai place today?"),
        ("@eva:x", "me!"),
        ("@ana:x", "We decided to move the release"),
        ("@kai:x", "ok"),
    )
    assert decide_smalltalk(lunch, {}) == {0, 1}, "a decision is no small talk"
    later = [*lunch[:2], replace(lunch[3], ts=lunch[1].ts + 5 * 3600)]
    assert decide_smalltalk(later, {}) == {0, 1}, "hours later is another exchange"


async def test_without_the_embedding_models_only_the_cue_phrases_tell_small_talk():
    lunch = room(("@ben:x", "anyone up for the Thai place today?"), ("@eva:x", "me!"))
    assert await fetch_smalltalk(lunch, None) == SmallTalk(frozenset({0, 1}))
    assert await fetch_smalltalk(LINES, None) == SmallTalk(frozenset())


async def test_the_model_tells_small_talk_in_rooms_it_was_not_trained_on(embedders: Embedders):
    """The held-out logs (heldout2/ to heldout5/: twenty-eight rooms in fourteen languages,
    written by people who had not read the code, never trained on), judged in their
    rooms as a summary judges them: their chatter messages against the messages of
    their key facts, each of JUDGED_WORDS words or more (a shorter one is what it
    answers)."""
    caught = chatter = lost = work = 0
    for log in read_logs(HELD_OUT):
        found = (await fetch_smalltalk(log.lines, embedders)).lines
        facts = {m for fact in log.facts for group in fact.alternatives for m in group}
        for index in decide_judged(log.lines):
            if log.lines[index].event_id in log.noise:
                chatter, caught = chatter + 1, caught + (index in found)
            elif log.lines[index].event_id in facts:
                work, lost = work + 1, lost + (index in found)
    print(f"held-out chatter caught {caught} of {chatter}, work lost {lost} of {work}")
    # Measured 2026-11-29: 119 of 140 caught, 6 of 350 lost once trained on every
    # development log (eighth session); 118 and 7 since a line someone laughs at
    # weighs as a joke (117 before); 117 and 11 with the four labelled
    # sets (with two of them: 120 and 13; heldout2/ to heldout4/ alone: 86 of 97 and 7 of
    # 258); in the third session 7 lost (a reply to a reply to small talk judged by its
    # own words; a meal as a deadline, "bis mittag", no small talk); a line or two of
    # margin for another machine's arithmetic.
    assert caught >= 0.82 * chatter and lost <= 0.03 * work


# Lines nobody trained on, each set by a helper who read no code: (folder, lines, least
# chatter caught, most work lost). people/: a candidate's interview, who covers a shift,
# an upset customer's director against a colleague's wedding, a farewell cake, a
# marathon in 3:58 (measured 2026-11-29: 429 of 476 caught, 28 of 484 lost). hard/:
# written to be hard, chatter with numbers ("get 18, owen eats 4", a quiz answer "42"),
# work after a greeting or an option picked in two words ("a mano, hoy"): 174 of 261
# caught, 33 of 265 lost, where small talk gets into summaries. long/: messages of 45
# to 110 words, careful explanations from many trades and long stories (174 of 210
# caught, 2 of 210 lost).
UNSEEN = [
    ("people", 960, 0.87, 0.07),
    ("hard", 526, 0.64, 0.14),
    ("long", 420, 0.8, 0.03),
]


@pytest.mark.parametrize(("folder", "count", "least_caught", "most_lost"), UNSEEN)
async def test_the_model_tells_small_talk_by_its_words_in_lines_it_never_saw(
    embedders: Embedders, folder: str, count: int, least_caught: float, most_lost: float
):
    rows = [
        json.loads(raw)
        for path in sorted((LOGS / "smalltalk" / folder).glob("*.jsonl"))
        for raw in path.read_text(encoding="utf-8").splitlines()
    ]
    embedder = embedders.get(MULTILINGUAL_EMBEDDING_MODEL)
    vectors = np.array(await embedder.embed_queries([row["text"] for row in rows]))
    said = load_smalltalk_model().probabilities(vectors) > PEOPLE_THRESHOLD
    chatter = [s for s, row in zip(said, rows, strict=True) if row["label"] == "chatter"]
    work = [s for s, row in zip(said, rows, strict=True) if row["label"] == "work"]
    print(f"{folder}: chatter caught {sum(chatter)} of {len(chatter)}, work lost {sum(work)}")
    assert len(rows) == count
    assert sum(chatter) >= least_caught * len(chatter) and sum(work) <= most_lost * len(work)


def test_a_line_is_weighed_with_its_neighbours_its_people_and_the_work_it_takes_up():
    lines = room(
        ("@julien.roy:x", "the db-repl-02 replica lags 40 min behind since Thursday"),
        ("@amelie:x", "snow again in Grenoble this morning, 70 minutes for 12 km"),
        ("@julien.roy:x", "Amélie takes the db-repl-02 reporting job off the replica"),
    )
    chances = np.array([0.1, 0.9, 0.2])
    rows = build_room_features(lines, [0, 1, 2], chances, build_terms(lines))
    feature = {name: column for name, column in zip(ROOM_FEATURES, rows.T, strict=True)}
    assert list(feature["chance"]) == [0.1, 0.9, 0.2]
    assert list(feature["before"]) == [0.0, 0.1, 0.9], "the line said just before"
    assert list(feature["after"]) == [0.9, 0.2, 0.0], "the line said just after"
    assert list(feature["names"]) == [0, 0, 1], "Amélie is one of the room"
    assert feature["figures"][0] >= 1 and feature["states"][1] == 0


@pytest.mark.parametrize(
    "laugh",
    [
        "jaja eso no está difícil",
        "哈哈哈",
        "ㅋㅋㅋ 인정",
        "war ja klar 😂",
        "lol same",
        "mdr",
        "それな笑",
    ],
)
def test_a_line_someone_laughs_at_is_weighed_as_a_joke(laugh: str):
    lines = room(
        ("@valeria:x", "mi hijo sacó 10 en el examen de inglés, ya me superó"),
        ("@emilio:x", laugh),
        ("@fernanda:x", "ok, Paulina empieza el 18 de enero, le mando el contrato hoy"),
        ("@ximena:x", "perfecto, gracias, lo reviso esta tarde con legal"),
    )
    rows = build_room_features(lines, [0, 2], np.array([0.5, 0.0]), build_terms(lines))
    laughed = list(rows.T[ROOM_FEATURES.index("laughed")])
    assert laughed == [1.0, 0.0]


@pytest.mark.parametrize("reply", ["草稿发了", "www.intranet.example", "笑顔で対応します", "ok 18"])
def test_words_that_only_look_like_laughter_are_none(reply: str):
    lines = room(
        ("@linwei:x", "第一批到底签几个？我好去谈档期"),
        ("@zhangyu:x", reply),
    )
    rows = build_room_features(lines, [0], np.array([0.5]), build_terms(lines))
    assert list(rows.T[ROOM_FEATURES.index("laughed")]) == [0.0]


def test_weights_trained_on_other_features_are_refused_by_name(tmp_path: Path):
    stale = tmp_path / "smalltalk.json"
    stale.write_text(
        json.dumps(
            {
                "weights": [0.1],
                "bias": 0.0,
                "room": {"features": ["chance"], "weights": [1.0], "bias": 0.0, "threshold": 0.6},
            }
        )
    )
    with pytest.raises(SmalltalkModelError, match=r"smalltalk\.json was trained on other features"):
        load_smalltalk_model(stale)
