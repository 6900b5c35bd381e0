"""Whether a question is read as asked in another language than the passages
(core/knowledge/search/across.py): by its script, else by the language lingua is sure of
in it."""

from __future__ import annotations

import pytest

from core.i18n.detection import LanguageFinder
from core.i18n.scripts import decide_script
from core.knowledge.search.across import decide_across_languages, decide_language_script
from core.knowledge.search.embed_e5 import E5_CALIBRATION
from core.knowledge.search.embedding import REFERENCE, calibrate


@pytest.mark.parametrize(
    ("text", "script"),
    [
        ("How many vacation days do I get?", "LATIN"),
        ("Сколько дней отпуска?", "CYRILLIC"),
        ("VPN ошибка при входе", "CYRILLIC"),  # an acronym says nothing
        ("年假有几天？", "CJK"),
        ("有給休暇は何日ありますか", "CJK"),  # kana go with the ideographs
        ("ホテル", "CJK"),
        ("如何配置Kubernetes", "CJK"),  # a character is about a word
        ("Outlook邮箱满了怎么办", "CJK"),
        ("WG-503 错误", "CJK"),  # a code says nothing
        ("2015年黑豹队的防守有多少次拦截记录？", "CJK"),  # a year, not the sentence, goes
        ("有多少人参加了AS-206的试飞?", "CJK"),
        ("휴가는 며칠인가요?", "HANGUL"),
        ("Πόσες μέρες άδεια;", "GREEK"),
        ("რამდენი დღე შვებულება?", "GEORGIAN"),
        ("what does 张伟 do here?", "LATIN"),
        ("WG-503 2024", None),
    ],
)
def test_decide_script(text, script):
    assert decide_script(text) == script


@pytest.mark.parametrize(
    ("language", "script"),
    [
        ("en", "LATIN"),
        ("sv", "LATIN"),
        ("ru", "CYRILLIC"),
        ("mn", "CYRILLIC"),
        ("zh", "CJK"),
        ("ja", "CJK"),
        ("ka", "GEORGIAN"),
        ("hy", "ARMENIAN"),
        ("sr", None),  # Cyrillic and Latin both
        ("xx", None),
    ],
)
def test_decide_language_script(language, script):
    assert decide_language_script(language) == script


@pytest.mark.parametrize(
    ("query", "passages", "detected", "across"),
    [
        ("Сколько дней отпуска?", "en", None, True),
        ("Сколько дней отпуска?", "ru", None, False),
        ("Сколько дней отпуска?", "mn", None, False),  # no script told apart wrongly
        ("Хэдэн өдөр амрах вэ?", "mn", None, False),
        ("年假有几天？", "en", "en", True),
        ("年假有几天？", "zh", None, False),
        ("How many vacation days?", "ru", None, True),
        ("Wie viele Urlaubstage habe ich?", "en", "de", True),
        ("Wie viele Urlaubstage habe ich?", "de", "de", False),
        ("guest wifi password", "en", None, False),  # unknown: the stricter reading
        # Swedish pages: the detector does not know Swedish, so its guess is not taken.
        ("Hur många semesterdagar?", "sv", "nl", False),
    ],
)
def test_decide_across_languages(query, passages, detected, across):
    assert decide_across_languages(query, passages, detected) is across


@pytest.mark.parametrize(
    ("query", "across"),
    [
        # A few English keywords: lingua leans to Italian (0.57), not surely.
        ("guest wifi password", False),
        ("wifi password", False),
        ("password reset portal", False),
        ("printer toner empty", False),
        ("how many days of annual leave do I get?", False),
        ("Wie viele Urlaubstage bekomme ich?", True),
        ("Urlaubstage?", True),
        ("¿Cuántos días de vacaciones tengo?", True),
        ("Combien de jours de congé?", True),
    ],
)
def test_english_pages_with_the_real_detector(query, across):
    detected = LanguageFinder().find_sure(query)
    assert decide_across_languages(query, "en", detected) is across, detected


def test_a_question_in_another_language_reads_nearer_on_e5s_second_pair():
    assert E5_CALIBRATION.across is not None
    assert calibrate(0.2, E5_CALIBRATION.of(True)) < calibrate(0.2, E5_CALIBRATION.of(False))
    assert REFERENCE.of(True) == REFERENCE  # one pair: the same both ways
