"""The cross-lingual retrieval report (`knowledge-eval retrieval --other-languages`) on a
handmade English corpus: German and French questions, searched as asked and with their
English question as the translation a perfect pre-step would write."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.evaluation.cli import main
from core.evaluation.cross_lingual import ROWS, query_of, read_foreign_questions
from core.evaluation.questions import QuestionSetError
from tests.evaluation.test_evaluation import CONFIG

PAGES = {
    "vacation": (
        "Annual leave",
        "Full-time staff have 27 days of annual leave. Carry-over of "
        "up to five days is allowed until March.",
    ),
    "payroll": (
        "Salary and payslips",
        "Salaries are paid on the 25th of each month. Payslips "
        "are in the HR portal under Documents.",
    ),
    "parking": (
        "Parking",
        "The garage has 40 spaces, assigned by a monthly lottery. Charging "
        "points for electric cars are on level -2.",
    ),
    "printer": (
        "Printing",
        "Send the job to the queue PRINT-ALL and release it at any printer with your badge.",
    ),
    "wifi": (
        "Wi-Fi",
        "Staff connect to the network CORP-SECURE with their account; guests use "
        "CORP-GUEST with a daily code from reception.",
    ),
    "canteen": ("Canteen", "Lunch is served 11:30-14:00. Vegetarian options every day."),
    "training": (
        "Training budget",
        "Each employee has 1,500 euros per year for courses and conferences.",
    ),
    "offboarding": (
        "Leaving the company",
        "Return your laptop and badge on the last day. Accounts are disabled at midnight.",
    ),
}
ENGLISH = [
    ("How many days of annual leave do I get?", "vacation", "27 days of annual leave"),
    ("When are salaries paid?", "payroll", "paid on the 25th"),
    ("What is the print queue called?", "printer", "the queue PRINT-ALL"),
]
# Questions that share no word with their page: as asked, the English model and stemmer
# cannot find it; with the English question as the translation, the search does.
OTHER = [
    ("Wie viele Urlaubstage stehen mir jährlich zu?", "de", 0),
    ("Wann wird das Gehalt überwiesen?", "de", 1),
    ("Comment s'appelle la file d'impression ?", "fr", 2),
]


def write_set(tmp_path: Path) -> list[str]:
    """The config, corpus and both question files, as the command's arguments."""
    (tmp_path / "config.toml").write_text(CONFIG)
    (tmp_path / "documents.jsonl").write_text(
        "".join(
            json.dumps({"id": i, "title": t, "content": c}) + "\n" for i, (t, c) in PAGES.items()
        )
    )
    (tmp_path / "questions.jsonl").write_text(
        "".join(
            json.dumps({"question": q, "expected_ids": [p], "facts": [f]}) + "\n"
            for q, p, f in ENGLISH
        )
    )
    other = [
        {
            "question": q,
            "language": lang,
            "english": ENGLISH[n][0],
            "expected_ids": [ENGLISH[n][1]],
            "facts": [ENGLISH[n][2]],
        }
        for q, lang, n in OTHER
    ]
    (tmp_path / "other.jsonl").write_text("".join(json.dumps(item) + "\n" for item in other))
    return [
        "--config",
        str(tmp_path / "config.toml"),
        "retrieval",
        "--collection",
        "handbook",
        "--corpus",
        str(tmp_path / "documents.jsonl"),
        "--questions",
        str(tmp_path / "questions.jsonl"),
        "--other-languages",
        str(tmp_path / "other.jsonl"),
    ]


def cross_rows(output: str) -> dict[tuple[str, str], dict[str, float]]:
    """The first cross-lingual table: (language, search) -> figures."""
    start = output.index("| language | search |")
    header, _, *rows = output[start:].split("\n\n")[0].splitlines()
    names = [cell.strip() for cell in header.strip("|").split("|")]
    table = {}
    for row in rows:
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        table[(cells[0], cells[1])] = {
            n: float(c) for n, c in zip(names[2:], cells[2:], strict=True)
        }
    return table


def test_the_upper_bound_finds_what_the_question_as_asked_does_not(tmp_path, capsys):
    code = main(write_set(tmp_path))
    output = capsys.readouterr().out
    assert code == 0, output
    table = cross_rows(output)
    for language in ("de", "fr", "overall"):
        assert {(language, row) for row in ROWS} <= set(table), output
    assert table[("de", "english")]["questions"] == 2
    assert table[("overall", "english")]["questions"] == 3
    for language in ("de", "fr"):
        english, bare, bound = (table[(language, row)] for row in ROWS)
        assert english["hit@5"] == 1.0 and english["context recall, default"] == 1.0, output
        assert bare["hit@5"] == 0.0 and bare["context recall, default"] == 0.0, output
        assert bound["hit@5"] == 1.0 and bound["context recall, 13000 chars"] == 1.0, output
    assert "a scripted model that translates perfectly" in output
    share = output[output.index("Upper bound as a share of English") :]
    assert "| de | 100% | 100% | 100% | 100% | yes |" in share, output


def test_each_row_searches_its_own_query(tmp_path):
    path = tmp_path / "other.jsonl"
    path.write_text(
        json.dumps(
            {
                "question": "Wann?",
                "language": "de",
                "english": "When?",
                "expected_ids": ["a"],
                "facts": [],
            }
        )
        + "\n"
    )
    (item,) = read_foreign_questions(path)
    assert [query_of(item, row) for row in ROWS] == [
        ("When?", {}),
        ("Wann?", {}),
        ("Wann?", {"en": "When?"}),
    ]


def test_a_line_without_its_english_question_is_refused(tmp_path):
    path = tmp_path / "other.jsonl"
    path.write_text(json.dumps({"question": "Wann?", "language": "de", "expected_ids": ["a"]}))
    with pytest.raises(QuestionSetError, match=r"other\.jsonl:1"):
        read_foreign_questions(path)


def test_the_shipped_set_has_thirty_questions_per_language_with_their_facts():
    data = Path(__file__).parent.parent / "data" / "pgdocs"
    english = {
        item["question"]: item
        for item in map(json.loads, (data / "questions.jsonl").read_text().splitlines())
    }
    items = read_foreign_questions(data / "questions-other-languages.jsonl")
    for language in ("de", "fr", "es"):
        assert sum(item.language == language for item in items) >= 30
    for item in items:
        source = english[item.english]
        assert list(item.question.expected_ids) == source["expected_ids"]
        assert list(item.question.facts) == source["facts"] and item.question.facts
