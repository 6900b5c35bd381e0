"""Every command of the getting-started pages runs here, is run by a named test already,
or says why it cannot run here: each shell block carries a marker in an HTML comment
just above it, `command: runs`, `command: tested-by <file> (...)` or
`command: not-runnable: <why>`. The demo (`deploy/local.sh`) is started by
tests/e2e/test_local_demo.py, so it is named there rather than started twice."""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted((ROOT / "docs" / "getting-started").glob("*.md"))
MARKER = re.compile(r"<!-- command: (runs|tested-by|not-runnable:)\s*(.*?)\s*-->")


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    marker: str
    detail: str
    command: str


def read_blocks(name: str, text: str) -> list[Block]:
    """The shell blocks of a page with the marker above each (an empty marker: none)."""
    lines = text.splitlines()
    blocks, index = [], 0
    while index < len(lines):
        opening = re.fullmatch(r"(\s*)```(sh|bash|shell|console)\s*", lines[index])
        if not opening:
            index += 1
            continue
        start = index
        index += 1
        body = []
        while index < len(lines) and lines[index].strip() != "```":
            body.append(lines[index].removeprefix(opening.group(1)))
            index += 1
        above = next((line for line in reversed(lines[:start]) if line.strip()), "")
        found = MARKER.search(above)
        marker, detail = (found.group(1).rstrip(":"), found.group(2)) if found else ("", "")
        blocks.append(Block(name, start + 1, marker, detail, "\n".join(body)))
        index += 1
    return blocks


BLOCKS = [block for page in PAGES for block in read_blocks(page.name, page.read_text())]


def test_the_getting_started_pages_have_commands():
    assert len(PAGES) >= 5 and len(BLOCKS) >= 10


@pytest.mark.parametrize("block", BLOCKS, ids=lambda block: f"{block.page}:{block.line}")
def test_each_command_says_how_it_is_checked(block):
    where = f"docs/getting-started/{block.page}, line {block.line}"
    assert block.marker, f"{where}: no <!-- command: ... --> marker above the block"
    if block.marker == "not-runnable":
        assert len(block.detail) > 10, f"{where}: say why it cannot run here"
    if block.marker == "tested-by":
        named = block.detail.split()[0]
        assert (ROOT / named).is_file(), f"{where}: {named} does not exist"
        assert named.startswith("tests/"), f"{where}: name a test"


RUNNABLE = [block for block in BLOCKS if block.marker == "runs"]


@pytest.mark.parametrize("block", RUNNABLE, ids=lambda block: f"{block.page}:{block.line}")
def test_the_runnable_commands_run(block, tmp_path):
    """Run in a folder of their own with the files of the repository they read."""
    shutil.copy(ROOT / "config.example.toml", tmp_path)
    result = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block.command],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_config_the_steps_copy_is_a_valid_config(tmp_path):
    """`cp config.example.toml config.toml` gives a config the bot accepts, once the
    secrets it names are in the environment."""
    from core.config import load_config

    shutil.copy(ROOT / "config.example.toml", tmp_path / "config.toml")
    settings = load_config(
        tmp_path / "config.toml",
        {"BOT_PASSWORD": "password", "WIKI_TOKEN": "t" * 32, "BOT_PICKLE_KEY": "k" * 32},
        skip_secrets=frozenset({"matrix"}),
    )
    assert settings.matrix.user_id


def test_the_markers_are_read():
    page = "text\n\n<!-- command: not-runnable: needs a GPU here -->\n```sh\nrun it\n```\n"
    (block,) = read_blocks("page.md", page)
    assert (block.marker, block.detail, block.command) == (
        "not-runnable",
        "needs a GPU here",
        "run it",
    )
    (unmarked,) = read_blocks("page.md", "Run:\n\n```sh\nrun it\n```\n")
    assert unmarked.marker == ""
