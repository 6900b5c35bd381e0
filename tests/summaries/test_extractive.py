"""A summary without a model as the room reads it (pure): how a recalled message reads."""

from __future__ import annotations

import pytest

from core.summaries.draft import SummaryLine
from core.summaries.extractive import RECALL_CHARACTERS, build_recall


def recall(text: str) -> str:
    """The recalled words alone, without the sender and the link."""
    said = build_recall(SummaryLine(1, "@ana:x", text, 0.0, "https://l/1", "$e1"))
    assert said.startswith("@ana:x: ") and said.endswith(" ([message](https://l/1))"), said
    return said.removeprefix("@ana:x: ").removesuffix(" ([message](https://l/1))")


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("the export fix ships Thursday", "the export fix ships Thursday"),
        # A word that ends at the cut stays; one the cut would split goes.
        (
            "Standbau: zwei Angebote, Brandt Messebau 18.400 € und expo-concept 19.200 €",
            "Standbau: zwei Angebote, Brandt Messebau …",
        ),
        (
            "the new booth builder offers carpet and rigging for less than Brandt",
            "the new booth builder offers carpet and …",
        ),
        # A markdown link keeps its words; a code span the cut would open is left out.
        (
            "See [the runbook](https://wiki.example.org/runbooks/api) before the restart",
            "See the runbook before the restart",
        ),
        (
            "restart it with `kubectl rollout restart deploy/orders-api` then watch",
            "restart it with …",
        ),
        ("https://grafana.example.org/d/orders-api/latency?from=now-6h ok", "…"),
    ],
)
def test_a_recalled_message_reads_as_its_first_words(text, shown):
    assert recall(text) == shown


def test_a_language_without_spaces_is_recalled_by_its_first_characters():
    said = "明日のリリースは延期します。理由はクラッシュが再現したためです。詳細はチケットを見てください"
    assert recall(said) == said[:RECALL_CHARACTERS] + " …"


def test_an_emoji_of_several_code_points_is_not_cut_in_two():
    family = "👩\u200d👩\u200d👧"
    for pad in range(RECALL_CHARACTERS - 6, RECALL_CHARACTERS + 1):
        shown = recall("x" * pad + family + " and more words after the family")
        assert not shown.removesuffix(" …").endswith(("\u200d", "👩", "👩\u200d👩")) or (
            shown.removesuffix(" …").endswith(family)
        ), shown


def test_a_recalled_message_is_recalled_from_the_sentence_the_point_takes_up():
    offers = (
        "Zum Standbauer: zwei Angebote. Brandt Messebau aus Esslingen mit 18.400 €. "
        "Und expo-concept mit 19.200 € ohne Teppich."
    )
    line = SummaryLine(1, "@sabine:x", offers, 0.0, "https://l/1", "$e1")
    update = "So, expo-concept hat nachgelegt: 17.900 € inklusive Teppich"
    said = build_recall(line, [update])
    assert said.startswith("@sabine:x: … Und expo-concept mit 19.200 €"), said
    # With nothing shared, the message is recalled from its start.
    assert build_recall(line, ["Katalog fertig"]).startswith("@sabine:x: Zum Standbauer")
    # Japanese shares words by its character pairs.
    news = "明日のリリースは延期します。理由はクラッシュが再現したためです。"
    japanese = SummaryLine(2, "@kato:x", news, 0.0, "https://l/2", "$e2")
    assert build_recall(japanese, ["クラッシュ直りました"]).startswith("@kato:x: … 理由は")
