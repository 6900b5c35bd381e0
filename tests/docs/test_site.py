"""The documentation site (docs/, mkdocs.yml) builds in strict mode: a broken link or
anchor, a page missing from the nav or a nav entry without its page fails the build."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def test_the_site_builds_strictly(tmp_path):
    mkdocs = Path(sys.executable).parent / "mkdocs"
    result = subprocess.run(
        [str(mkdocs), "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-5000:]
    assert (tmp_path / "site" / "index.html").is_file()


def test_every_problem_mkdocs_validates_is_a_warning():
    """`--strict` fails on warnings only: a link, anchor or nav problem set to `info`
    would pass unnoticed."""
    text = (ROOT / "mkdocs.yml").read_text()
    config = yaml.safe_load(text)
    validation = config["validation"]
    assert validation["links"] == {
        "not_found": "warn",
        "anchors": "warn",
        "absolute_links": "warn",
        "unrecognized_links": "warn",
    }
    assert validation["nav"] == {
        "omitted_files": "warn",
        "not_found": "warn",
        "absolute_links": "warn",
    }
    assert config["strict"] is True


def test_the_pages_link_to_each_other_by_relative_md_links():
    """The pages read on a code host without building: links between them are relative
    paths to .md files, never site URLs."""
    for page in (ROOT / "docs").rglob("*.md"):
        text = page.read_text()
        assert "](/" not in text, f"{page}: a link from the site's root"
        assert ".html)" not in text and ".html#" not in text, f"{page}: a link to a built page"
