"""`knowledge-ingest` on the sample documents, as an admin runs it: in its own process
for a folder ingested, dry run and again; the cases of bad input call the same `main`
in the test's process (a process of its own costs seconds of CPU to import the models'
libraries, and says nothing more about a refused line)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from core.knowledge_base.cli import main
from tests.knowledge.conftest import KB_CONFIG
from tests.support.files import make_docx, make_pdf, make_scanned_pdf

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "deploy" / "sample-documents"


def ingest_here(
    capsys: pytest.CaptureFixture[str], config: Path, *args: str
) -> subprocess.CompletedProcess:
    """`main` of the command with its output, as `ingest` gives them."""
    capsys.readouterr()
    code = main(["--config", str(config), *args])
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(["knowledge-ingest", *args], code, out, err)


def ingest(config: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "core.knowledge_base.cli", "--config", str(config), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_ingest_a_folder_with_progress_dry_run_and_idempotence(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text(KB_CONFIG.format(data_dir=tmp_path / "data", chroma=""))

    dry = ingest(config, "--collection", "handbook", "--dry-run", str(SAMPLES))
    assert dry.returncode == 0, dry.stderr
    assert "5 would be added, 0 would be updated, 0 unchanged, 0 unreadable" in dry.stdout
    assert "would add travel.md" in dry.stdout

    first = ingest(config, "--collection", "handbook", str(SAMPLES))
    assert first.returncode == 0, first.stderr
    assert "5 added, 0 updated, 0 unchanged, 0 unreadable" in first.stdout
    assert "ingesting: 100%" in first.stderr and "5/5" in first.stderr

    (tmp_path / "extra").mkdir()
    (tmp_path / "extra" / "leave.txt").write_text("Full-time staff have 30 days of annual leave.")
    (tmp_path / "extra" / "clip.gif").write_bytes(b"GIF89a")  # not a document: not read
    again = ingest(config, "--collection", "handbook", str(SAMPLES), str(tmp_path / "extra"))
    assert "0 added, 1 updated, 5 unchanged, 0 unreadable" in again.stdout, again.stdout


def test_pdf_and_word_files_in_a_folder_are_read_and_unreadable_ones_named(tmp_path, capsys):
    config = tmp_path / "config.toml"
    config.write_text(
        KB_CONFIG.format(data_dir=tmp_path / "data", chroma="") + "\n[files]\nmax_pages = 5\n"
    )
    folder = tmp_path / "policies"
    folder.mkdir()
    (folder / "travel.pdf").write_bytes(make_pdf())
    (folder / "onboarding.docx").write_bytes(make_docx())
    (folder / "scan.pdf").write_bytes(make_scanned_pdf())
    (folder / "long.pdf").write_bytes(make_pdf(tuple(f"Page {n}." for n in range(6))))
    result = ingest_here(capsys, config, "--collection", "handbook", str(folder))
    assert result.returncode == 1
    assert "2 added, 0 updated, 0 unchanged, 2 unreadable" in result.stdout, result.stdout
    assert f"skipped: {folder / 'scan.pdf'}: it has no text layer" in result.stderr
    assert f"skipped: {folder / 'long.pdf'}: it has 6 pages, more than the 5" in result.stderr


def test_bad_input_gets_a_clear_answer(tmp_path, capsys):
    config = tmp_path / "config.toml"
    config.write_text(KB_CONFIG.format(data_dir=tmp_path / "data", chroma=""))
    unknown = ingest_here(capsys, config, "--collection", "nope", str(SAMPLES))
    assert (
        unknown.returncode == 2
        and "no collection 'nope' (configured: handbook, tickets)" in unknown.stderr
    )

    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"id": "ok", "title": "Fine", "content": "Fine."}\n{"title": "no id"}\n')
    result = ingest_here(capsys, config, "--collection", "handbook", str(broken))
    assert result.returncode == 1
    assert f"{broken}:2: KeyError" in result.stderr
    assert "1 added, 0 updated, 0 unchanged, 1 unreadable" in result.stdout


def test_json_lines_the_api_would_refuse_are_skipped_with_the_reason(tmp_path, capsys):
    config = tmp_path / "config.toml"
    config.write_text(KB_CONFIG.format(data_dir=tmp_path / "data", chroma=""))
    lines = tmp_path / "hostile.jsonl"
    lines.write_text(
        "\n".join(
            [
                '{"id": "ok", "title": "Fine", "content": "Fine."}',
                '{"id": "deep", "content": ' + "[" * 100_000 + "]" * 100_000 + "}",
                '{"id": "far", "content": "x", "date": "9999-12-31"}',
                '{"id": "broken", "content": "a \\ud800 b"}',
                '{"id": "esc\\u001b[31m", "content": "x"}',
            ]
        )
        + "\n"
    )
    result = ingest_here(capsys, config, "--collection", "handbook", str(lines))
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    for number, reason in [
        (2, "nests arrays or objects too deeply"),
        (3, "out of range: years 1 to 9998"),
        (4, "content: has a lone UTF-16 surrogate"),
        (5, "cannot hold control characters"),
    ]:
        said = rf"skipped: {re.escape(str(lines))}:{number}: [^\n]*{re.escape(reason)}"
        assert re.search(said, result.stderr), result.stderr
    assert "1 added, 0 updated, 0 unchanged, 4 unreadable" in result.stdout


async def test_documents_ingested_while_the_bot_runs_are_found_by_vector_search_at_once(tmp_path):
    """The bot holds the embedded Chroma's index in memory: what another process writes to
    it stays unseen there until a restart. The command hands its documents to the running
    bot's ingestion API instead, which indexes them in the bot."""
    import asyncio
    import contextlib

    from bot.dev.synapse import free_port
    from core.config import parse_config
    from core.knowledge.documents import Document
    from core.knowledge_base.base import KnowledgeBase
    from core.serve import run_knowledge_services

    port = free_port()
    text = KB_CONFIG.format(data_dir=tmp_path / "data", chroma="") + (
        f"\n[ingest_api]\nenabled = true\nport = {port}\n"
    )
    config = tmp_path / "config.toml"
    config.write_text(text)
    settings = parse_config(text, origin=str(config), env={}, base_dir=tmp_path)
    kb = await KnowledgeBase.open(lambda: settings)
    services = asyncio.create_task(run_knowledge_services(kb, lambda: settings))
    try:
        first = Document("handbook", "leave.md", "Leave", "Staff have 30 days of annual leave.")
        await kb.indexer.put_many([first])
        models = {"handbook": settings.embedding_model_of("handbook")}
        await kb.retriever.vector_ranking("annual leave", models, 5)  # the index is loaded
        folder = tmp_path / "new"
        folder.mkdir()
        (folder / "parking.md").write_text(
            "# Parking\n\nVisitors park in the north garage; ask reception for a ticket.\n"
        )
        result = await asyncio.to_thread(ingest, config, "--collection", "handbook", str(folder))
        assert result.returncode == 0, result.stderr
        assert "1 added" in result.stdout, result.stdout
        assert "ingestion API" in result.stdout, "it says where the documents went"
        found = await kb.retriever.vector_ranking("where do visitors park?", models, 5)
        assert found and found[0][0].startswith("handbook/parking.md#"), found
    finally:
        services.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await services
        await kb.close()
