"""The points of a summary without a model (pure): threads within a budget."""

from __future__ import annotations

from dataclasses import replace

import pytest

from core.summaries.draft import SummaryLine
from core.summaries.extractive import build_extractive_markdown, build_point_text
from core.summaries.points import FEWEST_QUOTED, POINT_LINES, QUOTED_SHARE, decide_thread_points
from core.summaries.salience import Pick
from core.summaries.threads import Link, build_terms, decide_links
from tests.summaries.rooms import room


def points(lines: list[SummaryLine], picks: list[Pick] | None = None) -> list[Pick]:
    terms = build_terms(lines)
    live, links = decide_links(lines, frozenset(), terms)
    return decide_thread_points(lines, picks or [], live, links, terms)


# Thirty lines on six subjects, each named by its own service.
SERVICES = (
    "billing-api",
    "search-indexer",
    "mail-relay",
    "auth-gateway",
    "pdf-renderer",
    "geo-cache",
)
BUSY = room(
    *[
        (
            f"@p{n % 4}:x",
            f"{service} step {step}: latency {100 + 7 * n} ms on node {n}, still checking",
        )
        for n, (service, step) in enumerate(
            (service, step) for service in SERVICES for step in range(5)
        )
    ]
)


def test_a_busy_room_is_quoted_within_its_budget_and_no_point_runs_on():
    found = points(BUSY)
    quoted = [i for pick in found for i in pick.lines]
    assert len(quoted) <= QUOTED_SHARE * len(BUSY)
    assert all(len(pick.lines) <= POINT_LINES for pick in found)
    assert len(quoted) == len(set(quoted)), "a line is quoted once"


NAMES = "amber basil cedar delta ember fjord garnet harbor indigo juniper kestrel lotus maple nectar onyx pepper quartz raven saffron tundra umber violet willow xenon yarrow zinnia acorn birch clover dune".split()
# Thirty separate subjects (nothing links them): thirty points of one line each.
APART = room(
    *[
        (f"@p{n % 4}:x", f"The {name} service needs its owner to check the setup")
        for n, name in enumerate(NAMES)
    ]
)


def test_the_lines_the_cue_phrases_picked_are_kept_longest():
    picked = [Pick("status", (i,), i) for i in range(0, len(APART), 2)]
    quoted = {i for pick in points(APART, picked) for i in pick.lines}
    assert len(quoted) <= QUOTED_SHARE * len(APART)
    assert {pick.main for pick in picked} <= quoted, "the uncued lines went first"


def test_a_decision_is_never_trimmed_away_and_a_shared_line_is_quoted_once():
    decided = room(
        *[(f"@p{n}:x", f"We decided to postpone topic {n} to next quarter") for n in range(9)]
    )
    picked = [Pick("decision", (n,), n) for n in range(9)]
    quoted = [i for pick in points(decided, picked) for i in pick.lines]
    assert sorted(quoted) == list(range(9))
    shared = [Pick("question", (0, 1), 0), Pick("action", (1, 2), 2)]
    quoted = [i for pick in points(decided[:3], shared) for i in pick.lines]
    assert sorted(quoted) == [0, 1, 2]


def test_a_question_a_pick_found_answered_is_not_listed_as_open():
    asked = room(
        ("@ana:x", "How many webhook events failed during the outage yesterday?"),
        ("@kai:x", "about 340 of them, all replayed this morning"),
    )
    found = points(asked, [Pick("answered", (0, 1), 1)])
    assert [(pick.said, pick.lines) for pick in found] == [("answered", (0, 1))]


def test_a_question_someone_answered_within_its_point_is_not_listed_as_open():
    debated = room(
        ("@priya:x", "so: roll back the invoice change, or raise the memory limit?"),
        ("@tomasz:x", "rollback also pulls out the VAT rounding fix. I'd raise the limit to 1Gi"),
        ("@dan:x", "1Gi is tight, we already saw 900Mi on the pods. 1.5Gi?"),
        ("@priya:x", "1.5Gi limit on the pods, go"),
    )
    found = points(debated)
    assert [(pick.said, pick.lines) for pick in found] == [("answered", (0, 1, 2, 3))]
    assert "**Open questions**" not in build_extractive_markdown(found, debated, "x")
    # A question nobody answered yet stays open, even after an earlier answered one.
    still = room(
        *[(line.sender, line.text) for line in debated],
        ("@lena:x", "and who updates the helm chart with the 1.5Gi limit for the pods?"),
    )
    assert [pick.said for pick in points(still)] == ["question"]
    # A reply that says no figure and commits to nothing answers nothing, in any language.
    unknown = room(
        ("@olga:x", "кто обновит helm chart с новым лимитом памяти для подов?"),
        ("@dima:x", "не знаю, в прошлый раз это делал Сергей"),
    )
    assert [pick.said for pick in points(unknown)] == ["question"]


def test_acknowledgements_are_left_out_and_a_small_room_is_quoted_whole():
    lines = room(
        ("@ana:x", "The export job failed again at 02:00, disk full on batch-01"),
        ("@kai:x", "ok"),
        ("@eli:x", "I'll clean the old dumps on batch-01 this morning"),
        ("@kai:x", "👍"),
    )
    quoted = {i for pick in points(lines) for i in pick.lines}
    assert quoted == {0, 2}
    assert len(lines) - 2 < FEWEST_QUOTED


def test_a_short_question_someone_answers_is_no_acknowledgement():
    # "owen?" names the work it hands over only through "mine": both stay, and so does
    # the two-word question whose answer is a bare figure.
    lines = room(
        ("@kofi:x", "widget mocks v3 are in figma, need eng eyes on the resizing states"),
        ("@nadia:x", "owen?"),
        ("@owen:x", "mine"),
        ("@lin:x", "kafka disks were nearly full last week"),
        ("@wang:x", "how much now?"),
        ("@zhou:x", "71%"),
    )
    quoted = {i for pick in points(lines) for i in pick.lines}
    assert {1, 2, 4, 5} <= quoted


def test_a_proposal_asked_in_any_sentence_keeps_the_word_that_accepts_it():
    # "dann B?" is a question though the message goes on; "passt" settles it.
    lines = room(
        ("@felix:x", "drei varianten für den bezahlschritt: A bottom sheet, B eigener screen"),
        ("@jana:x", "dann B? das bottom sheet bleibt nur für die rad-details"),
        ("@murat:x", "passt"),
    )
    found = points(lines)
    assert any({1, 2} <= set(pick.lines) for pick in found)


def test_a_point_recalls_what_its_speaker_said_just_before_in_another_point():
    # "rolled that AP back" goes on from its speaker's "found it" two lines before, which
    # the links hang elsewhere: the point shows it too, recalled in a few words.
    lines = room(
        ("@priya:x", "INC0048213: the infusion pumps on 6B keep dropping off wifi"),
        ("@marco:x", "found it: ROAM_FAIL on AP-6B-03 since the 17.9 firmware"),
        ("@gwen:x", "nice catch"),
        ("@marco:x", "rolled that AP back to 17.6, no drops in the last 10 min"),
    )
    terms = build_terms(lines)
    links = [Link(1, 0), Link(2, 1)]  # "rolled that AP back…" hangs on nothing here
    found = decide_thread_points(lines, [], range(len(lines)), links, terms)
    rolled = next(pick for pick in found if 3 in pick.lines and 3 not in pick.recalled)
    assert 1 in rolled.recalled
    said_long_before = [*lines[:3], replace(lines[3], ts=lines[2].ts + 3600)]
    found = decide_thread_points(said_long_before, [], range(4), links, terms)
    rolled = next(pick for pick in found if 3 in pick.lines and 3 not in pick.recalled)
    assert 1 not in rolled.lines, "an hour later it is another thought"


def test_a_full_point_hands_its_latest_line_to_the_talk_that_goes_on_from_it():
    # Eight lines on the release fill a point; the last of them raises the migration,
    # which the next two lines settle: the migration is a point of its own, whole, and
    # quotes again the release line it goes on from, and the line that one goes on from.
    lines = room(
        *[
            ("@alexey:x", f"Release 3.8 item {n}: checked and ready for the freeze")
            for n in range(7)
        ],
        ("@sergey:x", "In 3.8 the payments table migration (40M rows) should run on its own"),
        ("@alexey:x", "ok: the migration runs Sunday night, Sergey runs it, Dima backs up"),
        ("@dima:x", "fine, I stay online until 4 for the migration"),
        *[("@kate:x", "snow again, two hours digging the car out") for _ in range(6)],
    )
    links = [Link(n + 1, n) for n in range(9)]
    terms = build_terms(lines)
    found = decide_thread_points(lines, [], list(range(10)), links, terms)
    assert {tuple(pick.lines) for pick in found} == {tuple(range(7)), (5, 6, 7, 8, 9)}


def test_a_point_quotes_again_the_line_it_goes_on_from_in_another_point():
    # A date said early, a long talk on it that fills a point, and the change of the
    # date at the end: the change is quoted with the plan it changes.
    lines = room(
        ("@anna:x", "Original plan: release 2.4 ships Tuesday 10 March"),
        *[("@chloe:x", f"regression suite part {n} of the 2.4 export fix") for n in range(7)],
        ("@anna:x", "ok then 2.4 ships Thursday 12 March instead"),
        *[("@kate:x", "snow again, two hours digging the car out") for _ in range(6)],
    )
    links = [*(Link(n + 1, n) for n in range(7)), Link(8, 0)]
    found = decide_thread_points(lines, [], list(range(9)), links, build_terms(lines))
    assert any({0, 8} <= set(pick.lines) for pick in found), found
    quoted = sorted(i for pick in found for i in pick.lines)
    assert set(quoted) == set(range(9)) and quoted.count(0) == 2, "quoted again, not more"


def test_a_point_recalls_the_exchange_it_goes_on_from_not_one_line_of_it():
    # Two blockers talked over in a full point; the second closed in a point of its own.
    lines = room(
        ("@olga:x", "Regression: 2 blockers open, MOB-2211 and MOB-2230"),
        ("@katya:x", "MOB-2211 is mine, the bank SDK update to 4.2 should fix it"),
        ("@dima:x", "MOB-2230 is the backend retry, fix lands on staging today"),
        ("@olga:x", "waiting for both builds, then the full regression again"),
        ("@alexey:x", "the full regression takes a day, plan for Thursday"),
        ("@olga:x", "MOB-2211 confirmed fixed with SDK 4.2"),
        ("@olga:x", "MOB-2230 still fails. Dima, is the fix on staging?"),
        ("@dima:x", "yes now, deployed 10 min ago"),
        ("@olga:x", "MOB-2230 closed"),
        *[("@kate:x", "snow again, two hours digging the car out") for _ in range(8)],
    )
    links = [*(Link(n + 1, n) for n in range(7)), Link(8, 7), Link(8, 6)]
    found = decide_thread_points(lines, [], list(range(9)), links, build_terms(lines))
    closed = next(pick for pick in found if 8 in pick.lines and 8 not in pick.recalled)
    bullet = build_point_text(closed, lines)
    assert "MOB-2211 confirmed" in bullet and "still fails" in bullet, bullet
    assert not {0, 1, 2, 3, 4} & closed.recalled, "the exchange just before it, no more"


def test_a_line_two_picks_share_stays_with_the_question_it_answers():
    lines = room(
        ("@ana:x", "We go with gradient boosting for the forecast, decided"),
        ("@mei:x", "The backtest window is 12 weeks for now"),
        ("@kai:x", "actually can we do 16 instead? 12 weeks does not cover Christmas"),
        ("@mei:x", "16 👍"),
    )
    picks = [Pick("decision", (0, 3), 0), Pick("question", (2, 3), 2)]
    found = decide_thread_points(lines, picks, [0, 1, 2, 3], [], build_terms(lines))
    assert any({2, 3} <= set(pick.lines) for pick in found)


def test_a_bare_figure_that_answers_a_question_is_kept_with_it():
    lines = room(
        ("@priya:x", "how many contractor seats do we put in the sheet for eng?"),
        *[
            ("@leo:x", f"the mural licence item {n}: renews 15 jan, about 9k a year")
            for n in range(4)
        ],
        ("@tom:x", "3"),
        *[("@kate:x", "snow again, two hours digging the car out") for _ in range(4)],
    )
    links = [*(Link(n + 1, n) for n in range(1, 4)), Link(5, 0)]
    found = decide_thread_points(lines, [], list(range(6)), links, build_terms(lines))
    assert any({0, 5} <= set(pick.lines) for pick in found), found


def test_a_point_of_lines_the_small_talk_model_doubts_is_left_out_unless_it_decides():
    lines = room(
        ("@ana:x", "the export fix is merged, 4.18.2 ships Thursday evening"),
        ("@ben:x", "does anyone know if the car park is open on Saturday?"),
        ("@eva:x", "we go with the annual cap for clause 12.2"),
    )
    terms = build_terms(lines)
    decision = Pick("decision", (2,), 2)
    found = decide_thread_points(lines, [decision], [0, 1, 2], [], terms, doubtful={1, 2})
    quoted = {i for point in found for i in point.lines}
    assert quoted == {0, 2}, found


def test_when_the_budget_trims_a_line_the_small_talk_model_leans_to_goes_first():
    # A point that opens on a question the model was not sure enough of to leave out,
    # among lone lines of work a little longer than it: the budget (8 of 13 lines)
    # keeps where the point starts before a line alone, unless the model leans to it.
    lines = room(
        ("@ben:x", "does anyone know if the car park is open on Saturday morning?"),
        ("@ana:x", "the export fix for the door sensors is merged"),
        ("@eva:x", "then 4.18.2 ships Thursday evening with the sensor fix"),
        ("@ana:x", "ok, I write the release notes for 4.18.2"),
        *[
            (
                f"@p{n % 4}:x",
                f"the {name} dashboard was slow for a while this morning, again, oddly enough",
            )
            for n, name in enumerate(NAMES[:9])
        ],
    )
    terms = build_terms(lines)
    links = [Link(1, 0), Link(2, 1), Link(3, 2)]
    live = list(range(len(lines)))

    def quoted(chances: dict[int, float]) -> set[int]:
        found = decide_thread_points(lines, [], live, links, terms, chances=chances)
        return {i for point in found for i in point.lines}

    work = dict.fromkeys(live, 0.02)
    assert 0 in quoted(work), "where a point starts weighs more than a line alone"
    leaning = quoted(work | {0: 0.5})
    assert 0 not in leaning and {1, 2, 3} <= leaning
    assert len(leaning) <= QUOTED_SHARE * len(lines)


def test_a_point_recalls_in_a_few_words_the_line_its_update_revises():
    # The offer, a talk about the catalogue, and the revised offer hours later, which
    # goes on from that talk and recalls the offer: its bullet recalls the offer in a few
    # words, with the offer's link; the offer's own bullet quotes it whole.
    lines = room(
        (
            "@sabine:x",
            "Standbau: zwei Angebote, Brandt Messebau 18.400 € und expo-concept 19.200 €",
        ),
        *[("@tim:x", f"Katalog Seite {n}: Fotos fertig, Texte folgen morgen") for n in range(6)],
        ("@sabine:x", "Katalog passt. expo-concept hat nachgelegt: 17.900 €, unter Brandt"),
    )
    links = [Link(6, 5), Link(7, 6)]
    found = decide_thread_points(
        lines, [], [0, 5, 6, 7], links, build_terms(lines), recalls=[Link(7, 0)]
    )
    update = next(pick for pick in found if 7 in pick.lines)
    assert update.lines == (0, 5, 6, 7) and update.recalled == {0}, found
    summary = build_extractive_markdown(found, lines, "x").splitlines()
    bullet = next(row for row in summary if "17.900" in row)
    assert (
        "@sabine:x: Standbau: zwei Angebote, Brandt Messebau …" in bullet
        and lines[0].link in bullet
    )
    assert "19.200" not in bullet, "recalled in a few words"
    assert sum("19.200 €" in row for row in summary) == 1
    # The update's point is listed where its own talk starts, after the offer's.
    assert summary.index(bullet) > next(i for i, row in enumerate(summary) if "19.200" in row)


def test_a_short_answer_is_not_left_alone_when_its_question_is_trimmed():
    # "how many seats?" "3" among lone lines that each carry more than the question:
    # when the budget takes the question, the bare "3" no longer weighs as its answer.
    lines = room(
        ("@a:x", "how many seats?"),
        ("@b:x", "3"),
        *[
            (
                f"@p{n % 4}:x",
                f"the {name} export ships Thursday with fix {4100 + n} and build {70 + n}",
            )
            for n, name in enumerate(NAMES[:12])
        ],
    )
    live = list(range(len(lines)))
    found = decide_thread_points(lines, [], live, [Link(1, 0)], build_terms(lines))
    quoted = {i for point in found for i in point.lines}
    assert 0 not in quoted, "the question carries least"
    assert 1 not in quoted, found


@pytest.mark.parametrize(
    ("request_", "volunteer"),
    [
        ("legal wants an incident summary by wed 12:00. can someone own that", "mine"),
        ("alguien tiene que armar la macro nueva para los envíos demorados", "yo 🙋‍♀️"),
        ("新的退货话术模板得有人写一下，旧的还是48小时", "我来"),
        ("jemand muss die zutrittskarten für colo süd beantragen", "Kai: ich!"),
    ],
)
def test_a_volunteers_one_word_reply_to_a_request_is_kept_in_any_language(request_, volunteer):
    # Requests for someone without a question mark: the reply says who takes the work.
    lines = room(
        ("@ana:x", "the export job failed at 02:00 again, disk full on batch-01"),
        ("@kai:x", request_),
        ("@eli:x", volunteer),
    )
    quoted = {i for pick in points(lines) for i in pick.lines}
    assert {1, 2} <= quoted


def test_a_volunteers_word_after_a_statement_is_an_acknowledgement():
    # "ja" is Polish "I", and German "yes": after a line that asks for nobody, it is an
    # acknowledgement like "passt".
    lines = room(
        ("@ana:x", "the export job failed at 02:00 again, disk full on batch-01"),
        ("@kai:x", "hab gesehen, die alten dumps liegen noch auf batch-01"),
        ("@eli:x", "ja"),
    )
    quoted = {i for pick in points(lines) for i in pick.lines}
    assert 1 in quoted and 2 not in quoted


def test_agreeing_with_a_request_volunteers_nobody():
    lines = room(
        ("@ana:x", "the export job failed at 02:00 again, disk full on batch-01"),
        ("@kai:x", "someone has to clean the old dumps on batch-01 this week"),
        ("@eli:x", "me too"),
        ("@bo:x", "same"),
    )
    quoted = {i for pick in points(lines) for i in pick.lines}
    assert 1 in quoted and not {2, 3} & quoted
