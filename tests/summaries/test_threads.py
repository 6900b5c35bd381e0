"""The threads of a room's talk (pure): what each line continues, in any language."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace

import pytest

from core.summaries.threads import (
    WINDOW,
    Link,
    build_terms,
    decide_links,
    decide_recalls,
    decide_threads,
)
from tests.summaries.rooms import room


def links_in(*said: tuple[str, str]) -> list[Link]:
    """What each line of a room continues, no line small talk."""
    return decide_links(room(*said), frozenset())[1]


def together(threads: list[tuple[int, ...]], *indexes: int) -> bool:
    return any(set(indexes) <= set(thread) for thread in threads)


# A release room in Russian: a blocker named by its ticket, settled twenty lines later.
RELEASE = room(
    ("@olga:x", "Открыты 2 критичных: MOB-2211 (оплата через СБП) и MOB-2230 (пуши дублируются)"),
    ("@dima:x", "2230 это бэк, ретраи без идемпотентности, фикс будет сегодня"),
    *[
        ("@kate:x", f"Сторы: скриншоты для экрана {n} готовы, загружаю в консоль")
        for n in range(12, 30)
    ],
    ("@olga:x", "2230 закрыт, на стейдже не воспроизводится"),
)


def test_a_ticket_said_again_much_later_joins_where_it_was_raised():
    threads = decide_threads(RELEASE, frozenset())
    last = len(RELEASE) - 1
    assert together(threads, 0, 1, last), threads
    assert not together(threads, last, 5), "the screenshots are another thread"


# Who answers whom: the person a line names answers it, though they share no word.
DATES = room(
    ("@anna:x", "Original plan was Tuesday. With the export fix, Chloe needs a full regression"),
    ("@chloe:x", "a complete pass takes about a day and a half, so sign-off Wednesday at best"),
    ("@dmitri:x", "separately: the upgrade guide still describes the previous layout"),
)


def test_the_person_a_line_names_answers_it_in_the_next_line():
    threads = decide_threads(DATES, frozenset())
    assert together(threads, 0, 1), threads
    assert not together(threads, 1, 2), "a line by someone nobody named starts anew"
    hours_later = [DATES[0], replace(DATES[1], ts=DATES[0].ts + 8 * 3600)]
    assert decide_threads(hours_later, frozenset()) == [(0,), (1,)]
    will = room(
        ("@anna:x", "I will rerun the nightly pipeline on staging tonight"),
        ("@will:x", "Marketing wants new banner colours for the spring campaign"),
    )
    assert decide_threads(will, frozenset()) == [(0,), (1,)], "a common word names nobody"


# A bot's account names its job, not a person: "deploy" stays a word of the talk.
DEPLOYS = room(
    ("@deploy-bot:x", "Nightly build finished"),
    ("@ana:x", "Who signs off a deploy on Fridays?"),
    ("@ben:x", "Has anyone seen the new banner colours for the spring campaign?"),
    ("@cid:x", "Tom checks every deploy himself, ask him before noon"),
)


def test_the_words_of_a_bots_account_still_link_the_talk():
    threads = decide_threads(DEPLOYS, frozenset())
    assert together(threads, 1, 3), threads
    assert not together(threads, 0, 3), "the bot's own line names no deploy"


# German: a figure proposed, weighed, and settled by a bare line.
RETENTION = room(
    ("@florian:x", "Was ist mit dem Kafka-Retention-Thema? Das wollten wir vor Weihnachten ändern"),
    (
        "@katrin:x",
        "Das events-Topic hat 14 Tage Retention, Platte bei 78 %. Marketing will mind. 10",
    ),
    ("@stefan:x", "10 reicht platzmäßig bis Februar, grad überschlagen"),
    ("@katrin:x", "dann 10"),
)


def test_a_bare_line_that_settles_joins_the_exchange():
    assert decide_threads(RETENTION, frozenset()) == [(0, 1, 2, 3)]


# A status round: separate items by separate people stay separate points.
ROUND = room(
    ("@bob:x", "The staging database is still on Postgres 15."),
    ("@ann:x", "We agreed to upgrade staging to Postgres 17 before the release."),
    ("@cid:x", "I'll write the upgrade runbook for the database tomorrow."),
    ("@dan:x", "The customer portal got a new login page, translations are missing."),
    ("@eve:x", "Spanish translations for the login page arrive on Thursday."),
)


def test_unrelated_items_of_a_status_round_are_apart():
    threads = decide_threads(ROUND, frozenset())
    assert together(threads, 0, 1) and together(threads, 3, 4), threads
    assert not together(threads, 1, 3), threads


def test_small_talk_is_in_no_thread_and_a_reply_to_it_hangs_on_nothing():
    lines = room(
        ("@lena:x", "The EU deploy at 17:00 has the same invoice change"),
        ("@lena:x", "also saw the apartment on Division, the bedroom is a closet"),
        ("@marc:x", "closets are a proud tradition"),
    )
    lines[2] = replace(lines[2], reply_to="$e2")
    live, links = decide_links(lines, frozenset({1}))
    assert live == [0, 2] and not [link for link in links if link.later == 2]


def test_a_line_after_misjudged_small_talk_still_joins_the_work_it_names():
    # "теперь да" was taken for small talk; the next line closes the ticket it answers.
    lines = room(
        ("@olga:x", "2211 подтверждаю. 2230 пока воспроизводится, Дима, фикс уже на стейдже?"),
        ("@dima:x", "теперь да, задеплоил 10 мин назад"),
        ("@olga:x", "2230 закрыт"),
    )
    lines[2] = replace(lines[2], reply_to="$e2")
    live, links = decide_links(lines, frozenset({1}))
    assert live == [0, 2] and (2, 0) in links


def test_an_answer_joins_the_question_and_the_subject_it_takes_up():
    lines = room(
        ("@ines:x", "Le carrousel a une animation Lottie de 1,8 Mo, trop lourde pour l'écran 2"),
        ("@camille:x", "Tu veux quelle taille max ?"),
        ("@ines:x", "300 ko idéalement"),
        ("@theo:x", "ou on met une image statique et basta ?"),
        ("@camille:x", "Oui, je tente de descendre l'animation Lottie à 300 ko d'ici jeudi"),
    )
    assert together(decide_threads(lines, frozenset()), 0, 2, 4)


# Chinese, written without spaces: lines meet by the character pairs they share.
FRONTEND = room(
    ("@li:x", "前端岗位的候选人王芳今天下午三点二面，面试官是张伟和刘洋"),
    ("@zhang:x", "我下午有客户会议，三点来不了"),
    ("@chen:x", "运维说下周二凌晨要升级数据库，请大家提前保存好自己的工作"),
    ("@liu:x", "那王芳的二面改到四点，我和李娜一起面"),
)


def test_chinese_lines_meet_by_the_characters_they_share():
    threads = decide_threads(FRONTEND, frozenset())
    assert together(threads, 0, 3) and not together(threads, 2, 3), threads


# A Japanese room: the subject in katakana and kanji comes back; two other lines share
# only grammar written in hiragana ("しました", "ですね").
INCIDENT_JA = room(
    ("@sato:x", "決済APIのタイムアウトが増えています。調査をお願いしました"),
    ("@suzuki:x", "明日の勉強会の資料、共有しましたよね"),
    ("@yamada:x", "新しい会議室の予約、いいですね、しましたよね"),
    ("@tanaka:x", "タイムアウトの原因は接続プールの上限でした"),
)


def test_japanese_lines_meet_by_their_subjects_not_their_grammar():
    threads = decide_threads(INCIDENT_JA, frozenset())
    assert together(threads, 0, 3), threads
    assert not together(threads, 1, 2), threads


def test_a_run_of_chinese_characters_counts_as_words_korean_by_its_spaces():
    from core.summaries.words import count_words

    assert count_words("那王芳的二面改到四点，我和李娜一起面") >= 8
    assert count_words("好的") == 1 and count_words("ok hold") == 2
    assert count_words("네 알겠습니다 감사합니다") == 3


def test_a_line_of_punctuation_alone_is_linked_like_any_other():
    lines = room(("@ana:x", "Deploy is done now"), ("@kai:x", "?"), ("@ana:x", "..."))
    live, links = decide_links(lines, frozenset())
    assert live == [0, 1, 2] and len(links) == 2


def test_an_answer_after_misjudged_small_talk_answers_the_question_before_it():
    lines = room(
        ("@marta:x", "javi y lo de migrar el sga al servidor nuevo? estaba para febrero"),
        ("@javi:x", "sin mí no lo veo la verdad, sergio todavía no conoce la bd"),
        ("@lucia:x", "vale, pues eso espera a mayo cuando vuelvas"),
    )
    lines[2] = replace(lines[2], reply_to="$e2")
    live, links = decide_links(lines, frozenset({1}))
    assert live == [0, 2] and (2, 0) in links
    # Two lines of small talk between them: traced back through both.
    lines = [*lines[:2], replace(lines[1], event_id="$e9", text="confirmo 😅"), lines[2]]
    lines[2] = replace(lines[2], reply_to="$e2")
    lines[3] = replace(lines[3], reply_to="$e9")
    live, links = decide_links(lines, frozenset({1, 2}))
    assert live == [0, 3] and (3, 0) in links


TIE = """
from collections import Counter
from core.summaries.draft import SummaryLine
from core.summaries.threads import Terms, decide_links
lines = [SummaryLine(n, f"@p{n}:x", "t", 1e9 + 3600 * n, "l") for n in range(3)]
# Line 2 shares three terms with each earlier line, said by 3, 4 and 5 lines: equal weights.
counts = Counter({"a": 3, "b": 4, "c": 5, "d": 3, "e": 4, "f": 5})
rare = (frozenset("abc"), frozenset("def"), frozenset("abcdef"))
print(decide_links(lines, frozenset(), Terms(rare, (frozenset(),) * 3, counts))[1])
"""


def test_the_same_room_is_linked_the_same_way_in_every_process():
    # A set's order changes with the process's hash seed; summed in that order, equal
    # weights differed in their last digit and a tie broke one way or the other.
    found = {
        subprocess.run(
            [sys.executable, "-c", TIE],
            env={**os.environ, "PYTHONHASHSEED": str(seed)},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in range(8)
    }
    assert len(found) == 1 and "Link(later=2, earlier=1)" in found.pop(), "the nearest of equals"


def test_a_bare_figure_answers_the_question_asked_lines_before_it():
    links = links_in(
        ("@priya:x", "so how many contractor seats do I put in the sheet for eng?"),
        (
            "@leo:x",
            "fwiw we're paying for miro AND mural, mural renews 15 jan, about 9k a year each",
        ),
        ("@marcus:x", "product only uses miro tbh"),
        ("@aisha:x", "design moved off mural in the summer as well"),
        ("@leo:x", "I'll let it lapse then"),
        ("@tom:x", "3"),
    )
    assert (5, 0) in links, links


def test_a_follow_up_question_goes_on_from_the_answer_its_asker_just_got():
    lines = room(
        ("@ellie:x", "support here, do i need to tell merchants anything about the key?"),
        ("@dana:x", "hold for now, i'll get back to you within the hour"),
        ("@dana:x", "@tomasz how many calls with that key came from IPs that aren't ours?"),
        ("@tomasz:x", "37"),
        ("@dana:x", "on how many merchant accounts?"),
        ("@tomasz:x", "4 merchants, all £1 charges, someone checking whether the key works"),
    )
    links = decide_links(lines, frozenset())[1]
    assert Link(4, 3) in links, links
    assert together(decide_threads(lines, frozenset()), 2, 3, 4, 5)
    # A question by someone the line before did not answer asks something new.
    lines[4] = replace(lines[4], sender="@ellie:x")
    assert Link(4, 3) not in decide_links(lines, frozenset())[1]
    # Nor does one after a line that only acknowledged its asker's news.
    links = links_in(
        ("@ana:x", "I'm off tomorrow morning, dentist"),
        ("@ben:x", "ok, get well"),
        ("@ana:x", "when is the Postgres 16 upgrade window again?"),
    )
    assert Link(2, 1) not in links, links


def test_a_commitment_takes_on_what_someone_said_just_before_it():
    said = [
        ("@pablo:x", "las pdas de la zona b están fatal de batería, aguantan media jornada"),
        (
            "@javi:x",
            "el 3 de febrero caduca el certificado del portal b2b, es de pago, no se renueva solo",
        ),
        ("@lucia:x", "eso lo hago yo la semana q viene, así no lo dejamos pal final"),
    ]
    assert Link(2, 1) in links_in(*said)
    # A commitment with a subject of its own, which the room talks of, starts a thread.
    links = links_in(
        *said[:2],
        (
            "@lucia:x",
            "I'll write the release notes for the scanner app tomorrow, before the stand-up",
        ),
        ("@javi:x", "release notes: mention the scanner battery swap"),
    )
    assert Link(2, 1) not in links, links
    # A statement of the same length that commits to nothing starts its own thread.
    assert not [
        link
        for link in links_in(
            *said[:2], ("@lucia:x", "el sótano del almacén sigue sin cobertura wifi")
        )
        if link.later == 2
    ]


def test_a_bare_figure_answers_the_question_put_to_its_sender_first():
    links = links_in(
        ("@dana:x", "@tomasz how many calls with that key came from other IPs?"),
        ("@raj:x", "rotating the key now, payments first and then the relay, it takes a while"),
        ("@raj:x", "which services use it?"),
        ("@dana:x", "payments, billing and the webhook relay"),
        ("@raj:x", "ok, billing first then"),
        ("@tomasz:x", "37"),
    )
    assert (5, 0) in links, links


def test_a_bare_figure_does_not_answer_a_question_answered_right_away():
    links = links_in(
        ("@tomek:x", "ile TB ma hurtownia sprzedażowa? transfer po łączu to osobny temat"),
        (
            "@kasia:x",
            "Fala 1: finanse i logistyka, razem 120 tabel. Fala 2 sprzedaż, fala 3 cała reszta",
        ),
        ("@pawel:x", "kto robi PoC z dbt na tabelach finansów?"),
        ("@marek:x", "ja"),
        ("@kasia:x", "46"),
    )
    assert (4, 0) in links and (4, 2) not in links, links


def test_a_bare_figure_answers_the_count_asked_for_not_the_line_just_before_it():
    links = links_in(
        ("@tanaka:x", "失敗した決済の件数わかる人いる？CSに数字渡したい"),
        ("@suzuki:x", "max_pool直すだけならhotfixで10分くらいでいけると思うけど"),
        ("@tanaka:x", "v2.13.2のイメージってまだECRに残ってる？"),
        ("@takahashi:x", "残ってます"),
        ("@sato:x", "ロールバックの手順書って誰か持ってる？"),
        ("@ito:x", "1284"),
    )
    assert (5, 0) in links and (5, 4) not in links, links


def test_a_bare_figure_takes_up_the_number_of_its_scale_a_question_named():
    lines = [
        ("@nakamura:x", "あと松井さんのオファー額どうしますか？希望は800万〜と聞いてます"),
        ("@yamamoto:x", "グレード的にはシニアの下の方だよね"),
        ("@kobayashi:x", "他社からもオファー出てるって言ってなかったっけ"),
        ("@nakamura:x", "はい、他社の回答期限が12/11(金)だそうです"),
        ("@kato:x", "820"),
    ]
    links = links_in(*lines)
    assert (4, 0) in links and (4, 3) not in links, links
    # A number far off its scale (8,000 for a 800 ask) takes nothing up.
    links = links_in(*lines[:4], ("@kato:x", "8,000"))
    assert (4, 0) not in links, links
    # A date or a time is no quantity, and a figure answers the question just before it.
    links = links_in(
        ("@ana:x", "is the standup still at 10:30 tomorrow, or do we ship on 12/11?"),
        ("@ben:x", "yes, same room as usual"),
        ("@ana:x", "ok, thanks for confirming"),
        ("@carl:x", "which PR should I review next?"),
        ("@dana:x", "12"),
    )
    assert (4, 3) in links, links


def test_a_count_its_asker_looked_up_later_answers_their_own_question():
    links = links_in(
        ("@pablo:x", "how many testers do we have in the TestFlight beta right now?"),
        ("@diego:x", "dark mode still has 11 open bugs on the tracking map, it misses the freeze"),
        ("@lucia:x", "then it goes to 4.7 and 4.6 ships without the toggle"),
        ("@diego:x", "on the rollout: Apple's phased release takes 7 days and cannot be tuned"),
        ("@pablo:x", "230"),
    )
    assert (4, 0) in links and (4, 3) not in links, links


def test_a_line_that_answers_talk_taken_for_chatter_goes_on_from_what_that_talk_took_up():
    lines = room(
        ("@leo:x", "we pay for miro and mural, mural renews 15 jan at 9k a year"),
        ("@marcus:x", "eng only uses miro anyway"),
        ("@aisha:x", "design moved off mural in the summer as well"),
        ("@leo:x", "I'll let it lapse then"),
    )
    _, links = decide_links(lines, frozenset({1, 2}))
    assert (3, 0) in links, links


@pytest.mark.parametrize(
    ("said", "settled"),
    [
        (
            "はい、他社の回答期限が12/11(金)だそうです",
            "じゃあ木曜中には出したいね、オファーレター準備します",
        ),
        (
            "o reindex grande tava marcado pra terça, mas com o plantão reduzido não sei",
            "beleza, quinta 11 às 9h então. Thiago toca",
        ),
        (
            "подрядчик предлагает два варианта: ночное окно в субботу или растянуть на неделю",
            "тогда берём ночь, я им сейчас напишу",
        ),
        (
            "De leverancier kan pas in januari, of met toeslag nog deze week",
            "oké, dan betalen we dat extra bedrag maar gewoon",
        ),
    ],
)
def test_a_line_that_opens_with_then_or_ok_in_any_language_goes_on_from_the_line_before(
    said: str, settled: str
) -> None:
    links = links_in(("@a:x", said), ("@b:x", settled))
    assert (1, 0) in links, links


def test_a_bare_figure_after_a_question_that_asks_no_number_answers_the_count_asked_before():
    links = links_in(
        ("@katrin:x", "Moin Deniz, danke dir. Wie viele Kunden sind offline?"),
        ("@deniz:x", "Bagger hat das Kabel an der Baustelle Harburg erwischt, Trupp ist unterwegs"),
        ("@ole:x", "Zertifikat vom VPN-Gateway läuft Freitag ab, hat nix mit der Störung zu tun"),
        ("@katrin:x", "oha. Wer kümmert sich?"),
        ("@birgit:x", "1240"),
    )
    assert (4, 0) in links and (4, 3) not in links, links


# A trade-fair room: the booth builders' offers, a long talk about the catalogue, then
# one builder's new offer that names the rival again, and two lines that share with a
# line far back only a word said in three lines.
FAIR = room(
    ("@sabine:x", "Standbau: zwei Angebote, Brandt Messebau 18.400 € und expo-concept 19.200 €"),
    ("@tim:x", "Katalog: Fotos der Regale fertig"),
    *[
        ("@tim:x", f"Katalog: Fotos der {name} fertig")
        for name in "Kräne Bänder Sorter Lifte Shuttles Roboter Tore Rampen Waagen".split()
    ],
    ("@sabine:x", "expo-concept hat nachgelegt: 17.900 € inklusive Teppich, unter Brandt"),
    ("@tim:x", "Regale: die Fotos mache ich nochmal, das Licht war schlecht"),
    ("@tim:x", "Regale: Licht passt jetzt"),
)


def test_an_update_far_later_recalls_the_line_it_revises():
    lines = FAIR
    recalls = decide_recalls(lines, list(range(len(lines))), build_terms(lines))
    # The revised offer shares the rare names with the offer, eleven lines back.
    assert Link(11, 0) in recalls, recalls
    assert 11 - 0 > WINDOW
    # A word said in three lines weighs a third: "Regale" eleven and thirteen lines on
    # recalls nothing.
    assert recalls == [Link(11, 0)], recalls


def test_a_line_recalls_nothing_from_another_thread():
    lines = [replace(line, thread_root="$e5") if line.number == 12 else line for line in FAIR]
    assert decide_recalls(lines, list(range(len(lines))), build_terms(lines)) == []


def test_an_update_recalls_the_two_lines_it_weighs_most_with():
    # The update shares one rare word with each of three lines far back: it recalls the
    # two nearest (a coincidence may weigh as much as the line it settles), not all.
    lines = room(
        ("@nahuel:x", "how many tickets are open? the panel shows nonsense"),
        ("@cami:x", "the whatsapp bot still answers with last week's dates"),
        ("@tomi:x", "the courier pickup slot moved, no idea why"),
        *[("@tim:x", f"photos of {name} done") for name in "one two three four five six".split()],
        *[("@tim:x", f"labels of {name} done") for name in "seven eight nine ten".split()],
        ("@flor:x", "switched it off in the panel; whatsapp by hand, courier unchanged"),
    )
    recalls = decide_recalls(lines, list(range(len(lines))), build_terms(lines))
    assert sorted(link.earlier for link in recalls if link.later == 13) == [1, 2], recalls
