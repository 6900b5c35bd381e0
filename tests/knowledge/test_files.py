"""Files read as documents: front matter, titles, links and ids that do not depend on
which folder is named."""

from __future__ import annotations

from core.knowledge.parse.files import FileProblem, read_documents

TRAVEL = """---
title: Travel policy
url: https://wiki.example.org/travel
date: 2026-03-01
owner: ops
---
# Booking trains

Trains are booked through Travelink.
"""


def read(*args, **options) -> list:
    return list(read_documents(list(args), "handbook", **options))


def test_front_matter_gives_title_link_and_date_and_is_not_content(tmp_path):
    (tmp_path / "travel.md").write_text(TRAVEL)
    [doc] = read(tmp_path)
    assert (doc.id, doc.title, doc.url, doc.date) == (
        "travel.md",
        "Travel policy",
        "https://wiki.example.org/travel",
        "2026-03-01",
    )
    assert doc.content.startswith("# Booking trains") and "owner" not in doc.content


def test_without_front_matter_the_first_heading_or_the_name_is_the_title(tmp_path):
    (tmp_path / "leave.md").write_text("Intro line\n\n## Annual leave\n\n30 days.")
    (tmp_path / "expense_claims.txt").write_text("claims are filed monthly")
    titles = {doc.id: doc.title for doc in read(tmp_path)}
    assert titles == {"leave.md": "Annual leave", "expense_claims.txt": "Expense claims"}


def test_ids_under_a_root_are_the_same_whichever_folder_is_named(tmp_path):
    (tmp_path / "docs" / "hr").mkdir(parents=True)
    (tmp_path / "docs" / "hr" / "leave.md").write_text("# Leave\n\n30 days.")
    whole = read(tmp_path / "docs", root=tmp_path / "docs", base_url="https://wiki/h/")
    part = read(tmp_path / "docs" / "hr", root=tmp_path / "docs", base_url="https://wiki/h/")
    assert [d.id for d in whole] == [d.id for d in part] == ["hr/leave.md"]
    assert part[0].url == "https://wiki/h/hr/leave.md", "clickable: the base URL and the id"
    (tmp_path / "docs" / "top.md").write_text("# Top")
    inside, outside = read(tmp_path / "docs", root=tmp_path / "docs" / "hr")
    assert inside.id == "leave.md"
    assert isinstance(outside, FileProblem) and "top.md: not inside --root" in str(outside)


def test_a_broken_front_matter_or_date_names_the_file(tmp_path):
    (tmp_path / "a.md").write_text("---\ntitle: [unclosed\n---\ntext")
    (tmp_path / "b.md").write_text("---\ndate: someday\n---\ntext")
    problems = [str(item) for item in read(tmp_path)]
    assert "a.md: the front matter is not valid YAML" in problems[0]
    assert "b.md" in problems[1] and len(problems) == 2


def test_json_lines_records_without_a_link_link_to_their_file(tmp_path):
    """The demo's FAQ answers had no clickable citation (issue 48's walk-through)."""
    (tmp_path / "faq").mkdir()
    (tmp_path / "faq" / "it.jsonl").write_text(
        '{"id": "vpn", "title": "VPN", "content": "WG-503: renew the profile."}\n'
        '{"id": "own", "title": "Own", "content": "x", "url": "https://it/own"}\n'
    )
    vpn, own = read(tmp_path, root=tmp_path, base_url="https://docs/")
    assert vpn.url == "https://docs/faq/it.jsonl" and own.url == "https://it/own"
    assert [d.url for d in read(tmp_path)] == ["", "https://it/own"], "no base URL: none"
