"""The latency the rights step adds to a question.

    .venv/bin/python -m tests.bench.bench_rights

Two real source applications (aiohttp, verifying every token with the bot's JWKS) answer
after 5 ms. Each question has 15 retrieved chunks from 10 documents of both applications.
"Cold" asks about documents never asked before; "cached" asks the same again.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from aiohttp.test_utils import TestServer

from core.config import parse_config
from core.knowledge.documents import Hit
from core.knowledge_base.api import IngestApi
from core.knowledge_base.base import KnowledgeBase
from core.rights.readers import Audience
from tests.rights.conftest import RIGHTS_CONFIG, SourceApp, keys_toml, serve, write_key

QUESTIONS = 200


def hits_for(question: int) -> list[Hit]:
    hits = []
    for n in range(15):
        collection, source = ("wiki", "wiki") if n % 2 else ("tickets", "tracker")
        doc = f"q{question}-d{n % 10}"
        hits.append(
            Hit(f"{collection}/{doc}#{n}", collection, doc, source, "t", "", "", "x", n, False, 1.0)
        )
    return hits


def figures(name: str, timings: list[float]) -> str:
    ordered = sorted(timings)
    p95 = ordered[int(0.95 * len(ordered))]
    return f"  {name:<28} p50 {statistics.median(ordered):6.1f} ms   p95 {p95:6.1f} ms"


async def main() -> None:
    folder = Path(tempfile.mkdtemp())
    apps = {name: SourceApp(name, "", delay=0.005) for name in ("wiki", "tracker")}
    servers = {name: await serve(app) for name, app in apps.items()}
    settings = parse_config(
        RIGHTS_CONFIG.format(
            data_dir=folder,
            cache_seconds=600,
            keys=keys_toml(("bot-1", "EdDSA", write_key(folder / "bot.pem"))),
            wiki_url=servers["wiki"].make_url("/rights"),
            tracker_url=servers["tracker"].make_url("/rights"),
        )
        .replace("readers_per_request = 2", "readers_per_request = 20")
        .replace("max_room_members = 5", "max_room_members = 50"),
        origin="bench",
        env={},
        base_dir=folder,
    )
    kb = await KnowledgeBase.open(lambda: settings)
    api = TestServer(IngestApi(kb, lambda: settings).build_app())
    await api.start_server()
    for app in apps.values():
        app.jwks_url = str(api.make_url("/api/v1/jwks.json"))
        app.acl = {
            reader: {
                (c, f"q{q}-d{d}")
                for q in range(QUESTIONS)
                for d in range(10)
                for c in ("wiki", "tickets")
            }
            for reader in [
                "alice",
                *[f"user{i}" for i in range(10)],
                "@alice:example.org",
                *[f"@user{i}:example.org" for i in range(10)],
            ]
        }
    audiences = {
        "direct chat (1 reader)": Audience(("@alice:example.org",), (), ""),
        "group room (10 readers)": Audience(
            tuple(f"@user{i}:example.org" for i in range(10)), (), ""
        ),
    }
    print("rights step, applications answering after 5 ms, 15 chunks from 10 documents:")
    for name, audience in audiences.items():
        await kb.rights.filter(hits_for(QUESTIONS - 1), audience)  # warm up connections
        cold, cached = [], []
        for question in range(QUESTIONS - 1):
            for timings in (cold, cached):
                started = time.perf_counter()
                outcome = await kb.rights.filter(hits_for(question), audience)
                timings.append((time.perf_counter() - started) * 1000)
                assert len(outcome.allowed) == 15 and not outcome.unchecked
        print(figures(f"{name}, cold", cold))
        print(figures(f"{name}, cached", cached))
    await api.close()
    await kb.close()
    for server in servers.values():
        await server.close()


if __name__ == "__main__":
    asyncio.run(main())
