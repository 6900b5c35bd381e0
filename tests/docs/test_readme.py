"""The README stays short, names the test command that CI runs, and links only to pages
and headings that exist."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def slug(heading: str) -> str:
    """The anchor Python-Markdown's toc (mkdocs) and code hosts make of a heading."""
    text = re.sub(r"[`*_]", "", heading).strip().lower()
    text = re.sub(r"[^\w\s-]", "", text)
    return re.sub(r"[\s]+", "-", text)


def anchors_of(page: Path) -> set[str]:
    text, fenced = [], False
    for line in page.read_text().splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced and (found := re.match(r"#{1,6} (.+)", line)):
            text.append(slug(found.group(1)))
    return set(text)


def test_the_readme_is_short():
    assert len(README.read_text().splitlines()) <= 250


def test_the_readme_names_the_test_command_that_ci_runs():
    readme = README.read_text()
    assert "\n    tests/run.sh\n" in readme
    assert (ROOT / ".ci" / "run").read_text().rstrip().endswith("exec tests/run.sh")


def test_the_readmes_links_reach_pages_and_headings():
    links = re.findall(r"\]\(([^)\s]+)\)", README.read_text())
    local = [link for link in links if not link.startswith(("http://", "https://"))]
    assert local, "the README links into the docs"
    for link in local:
        path, _, anchor = link.partition("#")
        target = ROOT / path
        assert target.exists(), f"README links to {link}: no such file"
        if anchor:
            assert anchor in anchors_of(target), f"README links to {link}: no such heading"


def test_the_slugs_are_the_sites():
    assert slug("Encryption is part of the audience") == "encryption-is-part-of-the-audience"
    assert slug("Rights-check protocol (for source applications)") == (
        "rights-check-protocol-for-source-applications"
    )
