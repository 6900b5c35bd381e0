"""The import contracts of pyproject.toml ([tool.importlinter]): `core` never imports `bot`
or matrix-nio, core's packages and the bot's stand in layers, and the decision modules
import no I/O library, not even indirectly."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_import_contracts_hold():
    # In a process of its own: import-linter reconfigures logging in the process it runs in.
    lint = Path(sys.executable).parent / "lint-imports"
    result = subprocess.run(
        [str(lint), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]


def test_the_contracts_fail_when_broken(tmp_path):
    """A copy of the code with a raw nio import outside bot.matrix, the inbox reaching
    up into a feature, bot.matrix reaching up into the bot, the summaries reaching up into
    the pipeline, the search into the ingestion, core reaching into the bot and a pure
    decision importing an HTTP library: every contract of pyproject.toml breaks."""
    for folder in ("bot", "core"):
        shutil.copytree(
            ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__")
        )
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    sync = tmp_path / "bot" / "inbox" / "sync.py"
    sync.write_text("import nio  # noqa\n" + sync.read_text())
    workers = tmp_path / "bot" / "inbox" / "workers.py"
    workers.write_text(workers.read_text() + "\nimport bot.features.answers.feed  # noqa\n")
    types = tmp_path / "bot" / "matrix" / "types.py"
    types.write_text(types.read_text() + "\nimport bot.inbox.state  # noqa\n")
    summarizer = tmp_path / "core" / "summaries" / "summarizer.py"
    summarizer.write_text(summarizer.read_text() + "\nimport core.pipeline.context  # noqa\n")
    retrieval = tmp_path / "core" / "knowledge" / "search" / "retrieval.py"
    retrieval.write_text(retrieval.read_text() + "\nimport core.knowledge.ingest.queue  # noqa\n")
    ids = tmp_path / "core" / "ids.py"
    ids.write_text(ids.read_text() + "\nimport bot.logs  # noqa\n")
    votes = tmp_path / "core" / "feedback" / "votes.py"
    votes.write_text(votes.read_text() + "\nimport aiohttp  # noqa\n")
    lint = Path(sys.executable).parent / "lint-imports"
    result = subprocess.run(
        [str(lint), "--no-cache"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
    )
    assert result.returncode != 0
    assert "only bot.matrix talks to matrix-nio BROKEN" in result.stdout
    assert "the Matrix account knows nothing of what the bot does with it BROKEN" in result.stdout
    assert "the bot's layers: runtime, features, inbox, account BROKEN" in result.stdout
    assert "core's layers, entry points down to the foundation BROKEN" in result.stdout
    assert "knowledge's trades: ingest, then parse and search BROKEN" in result.stdout
    assert "core knows nothing of Matrix BROKEN" in result.stdout
    assert "decisions are pure: no I/O library, however indirect BROKEN" in result.stdout
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    contracts = [contract["name"] for contract in config["tool"]["importlinter"]["contracts"]]
    assert all(f"{name} BROKEN" in result.stdout for name in contracts), result.stdout


def test_the_formatter_is_not_fought():
    """`ruff format` writes the code as it is: no more than a few `# fmt: skip` tables."""
    markers = [
        f"{path.relative_to(ROOT)}:{number}"
        for folder in ("bot", "core", "tests")
        for path in (ROOT / folder).rglob("*.py")
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if line.rstrip().endswith("# fmt: skip")
    ]
    assert len(markers) < 30, markers
