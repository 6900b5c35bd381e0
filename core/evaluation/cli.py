"""`knowledge-eval`: evaluate the pipeline on a corpus and a question set, and compare runs.

    knowledge-eval run --config config.toml --collection eval --corpus docs/ \\
        --questions questions.jsonl [--label "chunks of 200"] [--index-dir DIR]
    knowledge-eval compare 3 4 [--plot scores.png]
    knowledge-eval list
    knowledge-eval retrieval --config config.toml --collection eval --corpus docs/ \
        --questions questions.jsonl [--index-dir DIR] [--fusion-grid] \
        [--other-languages questions-other-languages.jsonl]
    knowledge-eval summaries [--logs tests/data/summaries] [--no-embeddings]
    knowledge-eval xquad [--models all-MiniLM-L6-v2 multilingual-e5-small ENDPOINT] \
        [--split development held-out] [--languages en de es ru zh] [--per-split N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from core.config import ConfigError, Settings, load_config
from core.config.knowledge import DEFAULT_EMBEDDING_MODEL, MULTILINGUAL_EMBEDDING_MODEL
from core.config.storage import StorageSettings
from core.evaluation.compare import build_comparison, write_plot
from core.evaluation.cross_lingual import (
    build_cross_lingual_table,
    measure_cross_lingual,
    read_foreign_questions,
)
from core.evaluation.questions import QuestionSetError, read_questions
from core.evaluation.retrieval import build_table, measure_fusion_grid, measure_retrieval
from core.evaluation.runner import Evaluation
from core.evaluation.scores import average
from core.evaluation.store import RunStore, SqlRunStore
from core.evaluation.summaries import (
    LogError,
    build_misses,
    build_summaries_table,
    measure_summaries,
    read_logs,
)
from core.evaluation.xquad import (
    LANGUAGES,
    SPLITS,
    build_xquad_table,
    decide_sample,
    run_xquad,
)
from core.evaluation.xquad import ROWS as XQUAD_ROWS
from core.evaluation.xquad import read_questions as read_xquad_questions
from core.knowledge.documents import Document
from core.knowledge.parse.files import FileProblem, read_documents
from core.knowledge.search.embedding import Embedders
from core.knowledge_base.base import KnowledgeBase
from core.knowledge_base.cli import ingest
from core.llm.client import LlmClient
from core.llm.prompts import load_prompts
from core.privacy import create_private_files
from core.storage.database import StorageError
from core.storage.opening import Storage
from core.storage.sqlite import SqliteDatabase
from core.summaries.summarizer import Summarizer


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="knowledge-eval", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--config", type=Path, default=Path(os.environ.get("BOT_CONFIG", "config.toml"))
    )
    parser.add_argument("--db", type=Path, help="the runs database (default: in bot.data_dir)")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="index a corpus and run a question set")
    run.add_argument("--collection", required=True, help="a collection from the config")
    run.add_argument("--corpus", type=Path, nargs="+", required=True, help="files or folders")
    run.add_argument("--questions", type=Path, required=True, help="JSON lines")
    run.add_argument("--label", default="", help="a name for the run")
    run.add_argument(
        "--index-dir",
        type=Path,
        help="keep the index here and reuse it next time (default: a fresh one per run)",
    )
    compare = commands.add_parser("compare", help="two runs side by side")
    compare.add_argument("runs", type=int, nargs=2)
    compare.add_argument("--plot", type=Path, help="write the score distributions as a PNG")
    commands.add_parser("list", help="the stored runs")
    study = commands.add_parser(
        "retrieval", help="retrieval alone, per search mode: hit@5, MRR, context recall"
    )
    study.add_argument("--collection", required=True, help="a collection from the config")
    study.add_argument("--corpus", type=Path, nargs="+", required=True, help="files or folders")
    study.add_argument("--questions", type=Path, required=True, help="JSON lines")
    study.add_argument("--index-dir", type=Path, help="keep the index here and reuse it")
    study.add_argument(
        "--fusion-grid",
        action="store_true",
        help="also rank with each of a grid of fusion weights (hybrid mode, hit@5 and MRR)",
    )
    study.add_argument(
        "--other-languages",
        type=Path,
        metavar="FILE",
        help="also these questions in other languages (JSON lines with language and english):"
        " the English question, the question as asked, and the question with its known"
        " English as the pre-step's translation (an upper bound)",
    )
    summaries = commands.add_parser(
        "summaries",
        help="key-fact coverage and noise of summaries over labelled room logs, without a"
        " model and (when [llm] is configured) with it",
    )
    summaries.add_argument(
        "--logs",
        type=Path,
        nargs="+",
        default=[Path("tests/data/summaries")],
        help="labelled logs (JSON) or folders of them",
    )
    summaries.add_argument(
        "--totals",
        action="store_true",
        help="the tables only, not what each log missed or let in: for a held-out set,"
        " whose failures nobody should read (nor tune on)",
    )
    summaries.add_argument(
        "--no-embeddings",
        action="store_true",
        help="pick the other representative messages without the embedding model",
    )
    xquad = commands.add_parser(
        "xquad",
        help="cross-lingual retrieval on XQuAD (English paragraphs, questions in five"
        " languages), per embedding model, the held-out half reported apart",
    )
    xquad.add_argument("--data", type=Path, default=Path("tests/data/xquad"))
    xquad.add_argument(
        "--models",
        nargs="+",
        default=[DEFAULT_EMBEDDING_MODEL, MULTILINGUAL_EMBEDDING_MODEL],
        help="embedding models: bundled names, or [knowledge.embedding_endpoints] entries"
        " of --config",
    )
    xquad.add_argument("--split", nargs="+", choices=SPLITS, default=list(SPLITS))
    xquad.add_argument("--languages", nargs="+", choices=LANGUAGES, default=list(LANGUAGES))
    xquad.add_argument("--per-split", type=int, help="at most this many questions per split")
    xquad.add_argument("--chunk-tokens", type=int, help="chunk size (default: the model's)")
    xquad.add_argument(
        "--rows",
        nargs="+",
        choices=XQUAD_ROWS,
        default=list(XQUAD_ROWS),
        help="as asked (no model) and/or translated (a perfect pre-step)",
    )
    return parser.parse_args(argv)


async def study_xquad(args: argparse.Namespace) -> int:
    endpoints = {}
    if args.config.is_file():
        settings = load_config(args.config, os.environ, skip_secrets=frozenset({"matrix"}))
        endpoints = settings.knowledge.embedding_endpoints
    try:
        questions = decide_sample(read_xquad_questions(args.data), args.split, args.per_split)
    except (OSError, ValueError, KeyError) as exc:
        print(f"The XQuAD files in {args.data} cannot be used: {exc}", file=sys.stderr)
        return 2
    results = {}
    for model in args.models:
        started = time.monotonic()
        results[model] = await run_xquad(
            args.data,
            model,
            endpoints,
            questions,
            args.languages,
            rows=args.rows,
            chunk_tokens=args.chunk_tokens,
        )
        print(f"{model}: {time.monotonic() - started:.0f} s", file=sys.stderr)
    print(build_xquad_table(results))
    return 0


def _with_index_dir(settings: Settings, folder: Path) -> Settings:
    # A fresh index lives in its own folder with embedded Chroma and SQLite, never in a
    # shared server or database.
    return settings.model_copy(
        update={
            "bot": settings.bot.model_copy(update={"data_dir": folder}),
            "knowledge": settings.knowledge.model_copy(update={"chroma_url": None}),
            "storage": StorageSettings(),
        }
    )


async def _run(settings: Settings, args: argparse.Namespace, documents: list) -> tuple[dict, list]:
    kb = await KnowledgeBase.open(lambda: settings)
    llm = LlmClient(settings.llm) if settings.llm.url else None
    try:
        await ingest(kb, documents, dry_run=False)
        prompts = load_prompts(settings.prompts.overrides())
        evaluation = Evaluation(kb, lambda: settings, lambda: prompts, llm)
        results = [await evaluation.ask(q) for q in read_questions(args.questions)]
    finally:
        await kb.close()
        if llm:
            await llm.close()
    totals = average([r.scores for r in results])
    for step in sorted({s for r in results for s in r.seconds}):
        times = [r.seconds[step] for r in results if step in r.seconds]
        totals[f"p50_seconds_{step}"] = statistics.median(times)
    return totals, [r.as_record() for r in results]


async def run(settings: Settings, args: argparse.Namespace, store: RunStore) -> int:
    if args.collection not in settings.collections:
        print(f"There is no collection {args.collection!r} in the config.", file=sys.stderr)
        return 2
    try:
        read_questions(args.questions)
    except (QuestionSetError, OSError) as exc:
        print(f"The question set cannot be used: {exc}", file=sys.stderr)
        return 2
    documents = []
    for item in read_documents(args.corpus, args.collection):
        if isinstance(item, FileProblem):
            print(f"The corpus cannot be used: {item}", file=sys.stderr)
            return 2
        documents.append(item)
    with tempfile.TemporaryDirectory(prefix="evaluation-") as fresh:
        indexed = _with_index_dir(settings, args.index_dir or Path(fresh))
        totals, records = await _run(indexed, args, documents)
    run_id = await store.add(
        label=args.label,
        config=json.dumps(settings.model_dump(mode="json"), default=str),
        corpus=" ".join(map(str, args.corpus)),
        questions=str(args.questions),
        totals=totals,
        records=records,
    )
    print(f"run {run_id}: {len(records)} questions")
    for key, value in totals.items():
        print(f"  {key:<28}{value:.3f}")
    return 0


async def study_retrieval(settings: Settings, args: argparse.Namespace) -> int:
    if args.collection not in settings.collections:
        print(f"There is no collection {args.collection!r} in the config.", file=sys.stderr)
        return 2
    try:
        questions = read_questions(args.questions)
        foreign = read_foreign_questions(args.other_languages) if args.other_languages else []
    except (QuestionSetError, OSError) as exc:
        print(f"The question set cannot be used: {exc}", file=sys.stderr)
        return 2
    documents = [d for d in read_documents(args.corpus, args.collection) if isinstance(d, Document)]
    with tempfile.TemporaryDirectory(prefix="evaluation-") as fresh:
        current = [_with_index_dir(settings, args.index_dir or Path(fresh))]
        kb = await KnowledgeBase.open(lambda: current[0])
        try:
            await ingest(kb, documents, dry_run=False)
            tallies = await measure_retrieval(kb, current[0], questions, args.collection)
            print(build_table(tallies))
            if args.fusion_grid:
                print()
                print(await measure_fusion_grid(kb, current, questions, args.collection))
            if foreign:
                print()
                crossed = await measure_cross_lingual(kb, current[0], foreign, args.collection)
                print(build_cross_lingual_table(crossed))
        finally:
            await kb.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.command == "xquad":  # its own index and settings; --config only for endpoints
        try:
            return asyncio.run(study_xquad(args))
        except ConfigError as exc:
            print(exc, file=sys.stderr)
            return 2
    return _main(args)


def _main(args: argparse.Namespace) -> int:
    try:
        settings = load_config(args.config, os.environ, skip_secrets=frozenset({"matrix"}))
    except ConfigError as exc:
        print(f"The config is not valid:\n{exc}", file=sys.stderr)
        return 2
    # The runs hold questions and answers drawn from private documents.
    create_private_files()
    try:
        return asyncio.run(_command(settings, args))
    except StorageError as exc:
        print(f"The storage could not be opened: {exc}", file=sys.stderr)
        return 2


async def study_summaries(settings: Settings, args: argparse.Namespace) -> int:
    try:
        logs = read_logs(args.logs)
    except LogError as exc:
        print(f"The logs cannot be used: {exc}", file=sys.stderr)
        return 2
    embedders = None if args.no_embeddings else Embedders()
    llm = LlmClient(settings.llm) if settings.llm.url else None
    prompts = load_prompts(settings.prompts.overrides())
    summarizers = {"without a model": Summarizer(None, lambda: prompts, embedders)}
    if llm is not None:
        summarizers[f"model {settings.llm.model}"] = Summarizer(llm, lambda: prompts, embedders)
    try:
        scores = await measure_summaries(logs, summarizers, settings.summaries.part_tokens)
    finally:
        if llm is not None:
            await llm.close()
        if embedders is not None:
            embedders.close()
    print(build_summaries_table(scores))
    if not args.totals and (misses := build_misses(scores)):
        print()
        print(misses)
    return 0


async def _command(settings: Settings, args: argparse.Namespace) -> int:
    if args.command == "retrieval":  # measures only: no run is stored
        return await study_retrieval(settings, args)
    if args.command == "summaries":
        return await study_summaries(settings, args)
    storage = Storage(settings.storage, settings.bot.data_dir)
    db = await (SqliteDatabase.open(args.db) if args.db else storage.database("evaluations"))
    store = await SqlRunStore.open(db)
    try:
        if args.command == "run":
            return await run(settings, args, store)
        if args.command == "list":
            for stored in await store.runs():
                print(
                    f"run {stored.id}  {stored.label or '-'}  {stored.questions}  "
                    f"hit@3 {stored.totals.get('hit@3', float('nan')):.2f}"
                )
            return 0
        first, second = [await store.run(n) for n in args.runs]
        if first is None or second is None:
            print(f"No such run; stored: {[r.id for r in await store.runs()]}", file=sys.stderr)
            return 2
        records = [await store.records(first.id), await store.records(second.id)]
        print(build_comparison(first, second, *records))
        if args.plot:
            write_plot([(first, records[0]), (second, records[1])], args.plot)
            print(f"plot written to {args.plot}")
        return 0
    finally:
        if args.db:
            await db.close()
        await storage.close()


if __name__ == "__main__":
    sys.exit(main())
