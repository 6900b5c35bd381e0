"""The scripted model in vLLM's place in the container stack (tests/deploy/stack/):

    python -m tests.deploy.scripted_model --port 8000

run in the bot's image with the tests folder mounted. It serves the OpenAI-compatible
API of tests/support/fake_llm.py with the reading model of the end-to-end tests, and
vLLM's /health."""

from __future__ import annotations

import argparse
import asyncio
import signal

from tests.support.fake_llm import FakeLlm
from tests.support.reading import reading_model


async def serve(host: str, port: int, model: str) -> None:
    llm = FakeLlm(model=model, host=host, port=port)
    llm.respond = reading_model
    await llm.start()
    print(f"scripted model {model!r} on http://{host}:{port}/v1", flush=True)
    stopped = asyncio.Event()
    # As a container's first process, it gets no default handler for SIGTERM.
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stopped.set)
    await stopped.wait()
    await llm.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="0.0.0.0")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--model", default="assistant")
    args = parser.parse_args()
    asyncio.run(serve(args.host, args.port, args.model))


if __name__ == "__main__":
    main()
