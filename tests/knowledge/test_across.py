"""Whether a question is read as asked in another language than the passages
(core/knowledge/search/across.py): by its script, else by the language detected in it."""

from __future__ import annotations

import pytest

from core.knowledge.search.across import decide_across_languages, decide_script
from core.knowledge.search.embed_e5 import E5_CALIBRATION
from core.knowledge.search.embedding import REFERENCE, calibrate


@pytest.mark.parametrize(
    ("text", "script"),
    [
        ("How many vacation days do I get?", "LATIN"),
        ("Сколько дней отпуска?", "CYRILLIC"),
        ("VPN ошибка при входе", "CYRILLIC"),  # the letters' majority, not the first
        ("年假有几天？", "CJK"),
        ("有給休暇は何日ありますか", "CJK"),  # kana go with the ideographs
        ("ホテル", "CJK"),
        ("휴가는 며칠인가요?", "HANGUL"),
        ("Πόσες μέρες άδεια;", "GREEK"),
        ("WG-503 2024", "LATIN"),
        ("42 ?", None),
    ],
)
def test_decide_script(text, script):
    assert decide_script(text) == script


@pytest.mark.parametrize(
    ("query", "passages", "detected", "across"),
    [
        ("Сколько дней отпуска?", "en", None, True),
        ("Сколько дней отпуска?", "ru", None, False),
        ("年假有几天？", "en", "en", True),
        ("年假有几天？", "zh", None, False),
        ("How many vacation days?", "ru", None, True),
        ("Wie viele Urlaubstage habe ich?", "en", "de", True),
        ("Wie viele Urlaubstage habe ich?", "de", "de", False),
        ("guest wifi password", "en", "en", False),
        ("guest wifi password", "en", None, False),  # unknown: the stricter reading
        ("Urlaub?", "en", None, False),
        # Swedish pages: the detector does not know Swedish, so its guess is not taken.
        ("Hur många semesterdagar?", "sv", "nl", False),
    ],
)
def test_decide_across_languages(query, passages, detected, across):
    assert decide_across_languages(query, passages, detected) is across


def test_e5s_anchors_map_onto_the_reference_scale_both_ways():
    for anchors in (E5_CALIBRATION.of(False), E5_CALIBRATION.of(True)):
        assert calibrate(anchors.related, anchors) == pytest.approx(REFERENCE.related)
        assert calibrate(anchors.unrelated, anchors) == pytest.approx(REFERENCE.unrelated)
    # A question in another language is farther from its answer: the same distance
    # reads nearer across languages.
    assert calibrate(0.2, E5_CALIBRATION.of(True)) < calibrate(0.2, E5_CALIBRATION.of(False))
    assert REFERENCE.of(True) == REFERENCE
