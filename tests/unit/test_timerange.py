"""Time expressions read as ranges in the room's time zone."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from core.timerange import TimeExpressionFinder, resolve_deadline, resolve_range

PARIS = ZoneInfo("Europe/Paris")
# A Saturday.
NOW = datetime(2026, 11, 21, 10, 30, tzinfo=PARIS)


def at(day: str) -> datetime:
    return datetime.fromisoformat(day).replace(tzinfo=PARIS)


CASES = {
    "today": ("today", "", at("2026-11-21"), NOW),
    "yesterday": ("yesterday", "", at("2026-11-20"), at("2026-11-21")),
    "last week is Monday to Monday": ("last week", "", at("2026-11-09"), at("2026-11-16")),
    "this week": ("this week", "", at("2026-11-16"), NOW),
    "last month": ("last month", "", at("2026-10-01"), at("2026-11-01")),
    "the last 3 days": ("the last 3 days", "", at("2026-11-18T10:30"), NOW),
    "past two weeks": ("past two weeks", "", at("2026-11-07T10:30"), NOW),
    "since Monday": ("Monday", "since", at("2026-11-16"), NOW),
    "a weekday alone is its last one": ("Tuesday", "", at("2026-11-17"), at("2026-11-18")),
    "in March: this year's": ("March", "in", at("2026-03-01"), at("2026-04-01")),
    "December asked in November: last year's": (
        "December",
        "",
        at("2025-12-01"),
        at("2026-01-01"),
    ),
    "a year": ("2025", "in", at("2025-01-01"), at("2026-01-01")),
    "a date": ("3 November", "on", at("2026-11-03"), at("2026-11-04")),
    "before a month": ("October", "before", at("1970-01-01"), at("2026-10-01")),
}


@pytest.mark.parametrize("expression,connective,start,end", CASES.values(), ids=CASES.keys())
def test_resolve_range(expression, connective, start, end):
    found = resolve_range(expression, NOW, connective)
    assert found is not None and (found.start, found.end) == (start, end)


@pytest.mark.parametrize(
    "expression",
    ["two weeks", "soon", "the weekly sync", "December 31, 9999", "the last 99999999 years"],
)
def test_durations_and_vague_words_are_not_ranges(expression):
    assert resolve_range(expression, NOW) is None


def test_the_finder_reads_questions():
    finder = TimeExpressionFinder()
    last_week = finder.find_range("what did we decide last week about the VPN?", NOW)
    assert last_week and last_week.start == at("2026-11-09")
    since = finder.find_range("summarize since Monday", NOW)
    assert since and (since.start, since.end) == (at("2026-11-16"), NOW)
    assert finder.find_range("how do I reset my password?", NOW) is None
    assert finder.find_range("do we book trains two weeks ahead?", NOW) is None


# German, French and Spanish: what a user of each language expects, on the same Saturday.
FRIDAY, MONDAY, TUESDAY = at("2026-11-20"), at("2026-11-16"), at("2026-11-17")
TODAY, EPOCH = at("2026-11-21"), at("1970-01-01")
LAST_WEEK = (at("2026-11-09"), MONDAY)
LAST_MONTH = (at("2026-10-01"), at("2026-11-01"))
LAST_YEAR = (at("2025-01-01"), at("2026-01-01"))
MARCH, MARCH_2025 = (at("2026-03-01"), at("2026-04-01")), (at("2025-03-01"), at("2025-04-01"))
MARCH_3 = (at("2026-03-03"), at("2026-03-04"))
THREE_DAYS, TWO_WEEKS = (at("2026-11-18T10:30"), NOW), (at("2026-11-07T10:30"), NOW)
ARGUMENTS = {
    "de since a weekday": ("seit Montag", MONDAY, NOW),
    "de today": ("heute", TODAY, NOW),
    "de yesterday": ("gestern", FRIDAY, TODAY),
    "de this week": ("diese Woche", MONDAY, NOW),
    "de last week": ("letzte Woche", *LAST_WEEK),
    "de last week, dative": ("letzter Woche", *LAST_WEEK),
    "de last week, vergangene": ("vergangene Woche", *LAST_WEEK),
    "de this month": ("diesen Monat", at("2026-11-01"), NOW),
    "de last month": ("letzten Monat", *LAST_MONTH),
    "de this year": ("dieses Jahr", at("2026-01-01"), NOW),
    "de last year": ("letztes Jahr", *LAST_YEAR),
    "de the last 3 days": ("die letzten 3 Tage", *THREE_DAYS),
    "de the last three days": ("die letzten drei Tage", *THREE_DAYS),
    "de last 2 weeks": ("letzte 2 Wochen", *TWO_WEEKS),
    "de on a weekday": ("am Montag", MONDAY, TUESDAY),
    "de a weekday alone": ("Dienstag", TUESDAY, at("2026-11-18")),
    "de in March": ("im März", *MARCH),
    "de in March 2025": ("im März 2025", *MARCH_2025),
    "de December: last year's": ("im Dezember", at("2025-12-01"), at("2026-01-01")),
    "de a date": ("3. März", *MARCH_3),
    "de before a date": ("vor dem 3. März", EPOCH, MARCH_3[0]),
    "de from": ("ab Montag", MONDAY, NOW),
    "de after": ("nach Montag", MONDAY, NOW),
    "de until": ("bis gestern", EPOCH, FRIDAY),
    "de for 3 days": ("seit 3 Tagen", *THREE_DAYS),
    "de 3 days ago": ("vor 3 Tagen", at("2026-11-18"), at("2026-11-19")),
    "fr since a weekday": ("depuis lundi", MONDAY, NOW),
    "fr today": ("aujourd'hui", TODAY, NOW),
    "fr today, typographic apostrophe": ("Aujourd’hui", TODAY, NOW),
    "fr yesterday": ("hier", FRIDAY, TODAY),
    "fr this week": ("cette semaine", MONDAY, NOW),
    "fr last week": ("la semaine dernière", *LAST_WEEK),
    "fr last week, no accents": ("la semaine derniere", *LAST_WEEK),
    "fr this month": ("ce mois-ci", at("2026-11-01"), NOW),
    "fr last month": ("le mois dernier", *LAST_MONTH),
    "fr this year": ("cette année", at("2026-01-01"), NOW),
    "fr last year": ("l'année dernière", *LAST_YEAR),
    "fr the last 3 days": ("les 3 derniers jours", *THREE_DAYS),
    "fr the last two weeks": ("les deux dernières semaines", *TWO_WEEKS),
    "fr on a weekday": ("le lundi", MONDAY, TUESDAY),
    "fr in March": ("en mars", *MARCH),
    "fr in March 2025": ("en mars 2025", *MARCH_2025),
    "fr a date": ("3 mars 2026", *MARCH_3),
    "fr until yesterday": ("jusqu'à hier", EPOCH, FRIDAY),
    "fr until a date": ("jusqu'au 3 mars", EPOCH, MARCH_3[0]),
    "fr from": ("à partir de lundi", MONDAY, NOW),
    "fr after": ("après lundi", MONDAY, NOW),
    "fr before": ("avant lundi", EPOCH, MONDAY),
    "fr for 3 days": ("depuis 3 jours", *THREE_DAYS),
    "es since a weekday": ("desde el lunes", MONDAY, NOW),
    "es today": ("hoy", TODAY, NOW),
    "es yesterday": ("ayer", FRIDAY, TODAY),
    "es this week": ("esta semana", MONDAY, NOW),
    "es last week": ("la semana pasada", *LAST_WEEK),
    "es this month": ("este mes", at("2026-11-01"), NOW),
    "es last month": ("el mes pasado", *LAST_MONTH),
    "es this year": ("este año", at("2026-01-01"), NOW),
    "es last year": ("el año pasado", *LAST_YEAR),
    "es the last 3 days": ("los últimos 3 días", *THREE_DAYS),
    "es the last 3 days, no accents": ("los ultimos 3 dias", *THREE_DAYS),
    "es the last two weeks": ("las últimas dos semanas", *TWO_WEEKS),
    "es on a weekday": ("el lunes", MONDAY, TUESDAY),
    "es in March": ("en marzo", *MARCH),
    "es in March 2025": ("en marzo de 2025", *MARCH_2025),
    "es a date": ("3 de marzo", *MARCH_3),
    "es before a date": ("antes del 3 de marzo", EPOCH, MARCH_3[0]),
    "es until": ("hasta ayer", EPOCH, FRIDAY),
    "es from": ("a partir del lunes", MONDAY, NOW),
    "es after": ("después del lunes", MONDAY, NOW),
    "es for 3 days": ("desde hace 3 días", *THREE_DAYS),
}
QUESTIONS = {
    "de since": ("Was wurde seit Montag entschieden?", MONDAY, NOW),
    "de last week": ("Was haben wir letzte Woche besprochen?", *LAST_WEEK),
    "de before a date": ("Was ist vor dem 3. März passiert?", EPOCH, MARCH_3[0]),
    "de the last 3 days": ("Was wurde in den letzten 3 Tagen entschieden?", *THREE_DAYS),
    "de a month and year": ("Was haben wir im März 2025 beschlossen?", *MARCH_2025),
    "de until a year": ("Was war bis 2025 geplant?", EPOCH, at("2025-01-01")),
    "de yesterday": ("Wer hat gestern angerufen?", FRIDAY, TODAY),
    "fr since": ("Qu'est-ce qui a changé depuis lundi ?", MONDAY, NOW),
    "fr yesterday in a French question": ("Qu'est-ce qu'on a décidé hier ?", FRIDAY, TODAY),
    "fr until yesterday": ("Quelles décisions jusqu'à hier ?", EPOCH, FRIDAY),
    "fr last week": ("Qu'avons-nous décidé la semaine dernière ?", *LAST_WEEK),
    "fr a date": ("Qu'est-ce qui s'est passé le 3 mars 2026 ?", *MARCH_3),
    "fr a month and year": ("Qu'avons-nous décidé en mars 2025 ?", *MARCH_2025),
    "fr a weekday": ("Qu'avons-nous décidé lundi ?", MONDAY, TUESDAY),
    "es last week": ("¿Qué pasó la semana pasada?", *LAST_WEEK),
    "es since": ("¿Qué decidimos desde el lunes?", MONDAY, NOW),
    "es a date": ("¿Qué pasó el 3 de marzo de 2026?", *MARCH_3),
    "es this week": ("¿Qué ha pasado esta semana?", MONDAY, NOW),
    "es the last 3 days": ("¿Qué decidimos en los últimos 3 días?", *THREE_DAYS),
    "es today": ("¿Qué dijimos hoy?", TODAY, NOW),
    "es a weekday": ("¿Qué decidimos el domingo?", at("2026-11-15"), MONDAY),
}
NOT_TIMES = {
    "a Spanish word as a name in English": "Configure the Hoy plugin for Slack",
    "a German word asked about in English": "What does HEUTE mean in the logs?",
    "de hier is here": "Was ist hier los?",
    "de hier is here, with a connective": "Können wir ab hier weitermachen?",
    "de a duration": "Wir brauchen 3 Tage dafür.",
    "de vor alone": "Vor allem brauchen wir Tests.",
    "de bis alone": "Bis dann!",
    "de ab alone": "Ab und zu stürzt der Server ab.",
    "de no time": "Wo ist das Dokument?",
    "fr no time": "Qu'est-ce que tu en penses ?",
    "fr a month that is a name": "Le projet Mars avance-t-il ?",
    "fr a duration": "Peut-on le faire en un jour ?",
    "es a weekday that is a name": "¿Qué dijo Domingo?",
    "es hasta alone": "¿Hasta cuándo dura la migración?",
    "es no time": "¿Dónde está el informe?",
    "en a foreign month in English": "What's the status of the Mars rover?",
}


@pytest.fixture(scope="module")
def finder():
    return TimeExpressionFinder()


@pytest.mark.parametrize("text,start,end", ARGUMENTS.values(), ids=ARGUMENTS.keys())
def test_arguments_in_german_french_and_spanish(finder, text, start, end):
    found = finder.read_range(text, NOW)
    assert found is not None and (found.start, found.end) == (start, end)


@pytest.mark.parametrize("text,start,end", QUESTIONS.values(), ids=QUESTIONS.keys())
def test_questions_in_german_french_and_spanish(finder, text, start, end):
    found = finder.find_range(text, NOW)
    assert found is not None and (found.start, found.end) == (start, end)


@pytest.mark.parametrize("text", NOT_TIMES.values(), ids=NOT_TIMES.keys())
def test_questions_without_a_time_have_no_range(finder, text):
    assert finder.find_range(text, NOW) is None


@pytest.mark.parametrize(
    "expression",
    [
        "vor",
        "hier ist",
        "bis dann",
        "nach Berlin",
        "vor allem",
        "depuis longtemps",
        "eine Woche",
        "hasta luego",
        "el informe",
    ],
)
def test_words_that_are_not_times_in_any_language(expression):
    assert resolve_range(expression, NOW) is None


# Said on a Tuesday afternoon: a deadline is ahead of it.
TUESDAY = datetime(2026, 11, 24, 15, 0, tzinfo=PARIS)
DEADLINES = {
    "a weekday later this week": ("Thursday", "2026-11-26"),
    "a weekday earlier in the week is next week's": ("Monday", "2026-11-30"),
    "the day it is said is next week's": ("Tuesday", "2026-12-01"),
    "next Friday": ("next Friday", "2026-11-27"),
    "tomorrow": ("tomorrow", "2026-11-25"),
    "tonight": ("tonight", "2026-11-24"),
    "a day of the month past is next month's": ("the 3rd", "2026-12-03"),
    "a day of the month ahead": ("the 28th", "2026-11-28"),
    "a date": ("3 December", "2026-12-03"),
    "next week ends on its Sunday": ("next week", "2026-12-06"),
    "German": ("Freitag", "2026-11-27"),
    "French": ("jeudi", "2026-11-26"),
    "Spanish": ("lunes", "2026-11-30"),
}


@pytest.mark.parametrize("expression,day", DEADLINES.values(), ids=DEADLINES.keys())
def test_resolve_deadline_reads_forward_from_when_it_was_said(expression, day):
    assert resolve_deadline(expression, TUESDAY) == at(day)


def test_a_deadline_that_is_no_day_is_none():
    assert resolve_deadline("end of", TUESDAY) is None
    assert resolve_deadline("the 45th", TUESDAY) is None
