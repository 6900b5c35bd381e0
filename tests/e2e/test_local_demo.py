"""The local demo as a new admin runs it: `deploy/local.sh`, twice, with a model from the
environment, and a question in the demo room addressed by its alias."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import time
from pathlib import Path
from types import SimpleNamespace

import aiohttp
import pytest

from core import strings
from tests.e2e.conftest import ROOT
from tests.e2e.people import Person, membership_of, replies_to
from tests.e2e.scripted import ask, finished_reply, reading_model
from tests.e2e.test_files import PDF, ask_about
from tests.mcp_server.conftest import connect_to
from tests.support.files import make_pdf
from tests.support.voices import speak

pytestmark = pytest.mark.e2e

START_SECONDS = 240


def start_demo(folder: Path, llm, log: Path) -> subprocess.Popen:
    env = {
        **os.environ,
        "LOCAL_DEMO_DIR": str(folder),
        "LLM_URL": llm.url,
        "LLM_MODEL": "test-model",
    }
    return subprocess.Popen(
        ["deploy/local.sh"], cwd=ROOT, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT
    )


async def test_the_demo_runs_once_answers_with_the_model_and_has_an_alias(tmp_path, llm):
    folder, log = tmp_path / "demo", tmp_path / "demo.log"
    llm.respond = reading_model
    demo = start_demo(folder, llm, log)
    person = None
    try:
        deadline = time.monotonic() + START_SECONDS
        while "Press Ctrl-C to stop." not in log.read_text():
            assert demo.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            await asyncio.sleep(0.5)
        second = await asyncio.to_thread(
            subprocess.run,
            ["deploy/local.sh"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "LOCAL_DEMO_DIR": str(folder)},
        )
        assert second.returncode == 1 and "already running" in second.stderr, second.stderr
        assert demo.poll() is None, "the first demo still runs"

        state = json.loads((folder / "state.json").read_text())
        shown = log.read_text()
        assert state["room_id"] in shown and "#knowledge-bot-demo:localhost" in shown
        # The demo gives the bot its store's passphrase: no warning meant for production.
        assert "pickle_key" not in shown, shown
        homeserver = f"http://127.0.0.1:{state['port']}"
        person = await Person.login(
            homeserver, state["demo_user"], state["demo_password"], tmp_path / "demo-user"
        )
        joined = await person.client.join("#knowledge-bot-demo:localhost")
        room = joined.room_id
        assert room == state["room_id"]
        bot = SimpleNamespace(user_id=state["bot_user"])
        answer = await ask(person, room, "what does error WG-503 mean?", bot, timeout=120)
        assert any(call.get("stream") for call in llm.history), "the model wrote the answer"
        assert not answer["body"].startswith(strings.SEARCH_ONLY_INTRO)
        assert "WG-503" in answer["body"]

        # A Markdown file's citation is its first heading, linked to where the demo serves it.
        answer = await ask(person, room, "how far ahead must travel be booked?", bot, timeout=120)
        link = f"http://127.0.0.1:{state['docs_port']}/travel.md"
        assert "two weeks" in answer["body"]
        assert f"[Travel policy]({link})" in answer["body"], answer["body"]
        assert f'href="{link}"' in answer.get("formatted_body", ""), answer
        async with aiohttp.ClientSession() as http, http.get(link) as served:
            assert served.status == 200 and "Travelink" in await served.text()

        # The chat API is on, and the banner's curl line works as printed.
        curl = next(line.strip() for line in shown.splitlines() if line.strip().startswith("curl "))
        called = await asyncio.to_thread(
            subprocess.run, curl, shell=True, capture_output=True, text=True, timeout=120
        )
        assert called.returncode == 0, called.stderr
        reply = json.loads(called.stdout)
        assert "WG-503" in reply["choices"][0]["message"]["content"], reply

        # The MCP server is on, with the same token: its search finds the handbook's page.
        mcp_url = next(
            word
            for line in shown.splitlines()
            if line.startswith("MCP server")
            for word in line.split()
            if word.startswith("http://")
        )
        async with connect_to(mcp_url, state["chat_token"]) as mcp:
            found = await mcp.call_tool("search", {"query": "what does error WG-503 mean?"})
        assert "WG-503" in json.dumps(found.structured_content), found

        # Files shared in the demo room are kept: a question replying to a PDF is answered
        # from it.
        assert "Files shared in the demo room are kept" in shown
        policy = await person.share_file(room, make_pdf(), "travel-policy.pdf", PDF)
        answer = await ask_about(
            person, room, "how much may a hotel night cost in Paris?", bot, policy
        )
        assert "140 euros" in answer["body"], answer["body"]
    finally:
        if person:
            await person.close()
        demo.send_signal(signal.SIGINT)
        try:
            demo.wait(timeout=60)
        except subprocess.TimeoutExpired:
            demo.kill()
        print(log.read_text()[-4000:])


async def wait_until_running(demo: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + START_SECONDS
    while "Press Ctrl-C to stop." not in log.read_text():
        assert demo.poll() is None, log.read_text()
        assert time.monotonic() < deadline, log.read_text()
        await asyncio.sleep(0.5)


def stop(demo: subprocess.Popen) -> None:
    demo.send_signal(signal.SIGINT)
    try:
        demo.wait(timeout=60)
    except subprocess.TimeoutExpired:
        demo.kill()


async def test_the_demo_goes_back_to_search_only_has_a_colleague_and_keeps_the_admin_room(
    tmp_path, llm
):
    """What a newcomer hit (issue 33): a start without LLM_URL after one with it still
    used the model; the catch-up landed in the admin room; `!feedback` was refused in the
    demo's own admin room; and there was nobody else to catch up on."""
    folder = tmp_path / "demo"
    llm.respond = reading_model
    demo = start_demo(folder, llm, tmp_path / "first.log")
    try:
        await wait_until_running(demo, tmp_path / "first.log")
    finally:
        stop(demo)

    log = tmp_path / "second.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("LLM_")}
    demo = subprocess.Popen(
        ["deploy/local.sh"],
        cwd=ROOT,
        env={**env, "LOCAL_DEMO_DIR": str(folder)},
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
    )
    people: list[Person] = []
    try:
        await wait_until_running(demo, log)
        state = json.loads((folder / "state.json").read_text())
        shown = log.read_text()
        assert "Language model: none" in shown
        assert state["colleague_user"] in shown and state["colleague_password"] in shown
        homeserver = f"http://127.0.0.1:{state['port']}"
        person = await Person.login(
            homeserver, state["demo_user"], state["demo_password"], tmp_path / "demo-user"
        )
        people.append(person)
        colleague = await Person.login(
            homeserver, state["colleague_user"], state["colleague_password"], tmp_path / "other"
        )
        people.append(colleague)
        room, admin_room = state["room_id"], state["admin_room_id"]
        bot = SimpleNamespace(user_id=state["bot_user"])
        for joined in (room, admin_room):  # the banner comes before the bot has joined
            await person.wait_for(joined, membership_of(bot.user_id, "join"), timeout=120)
        calls = len(llm.history)
        answer = await ask(person, room, "what does error WG-503 mean?", bot, timeout=120)
        assert answer["body"].startswith(strings.SEARCH_ONLY_INTRO), answer["body"]
        assert len(llm.history) == calls, "the model is not asked"
        # The banner's question in another language finds the English page, without a model.
        german = "Wie viele Tage Jahresurlaub bekommen Vollzeitbeschäftigte?"
        assert german in shown
        answer = await ask(person, room, german, bot, timeout=120)
        assert "27 days of annual leave" in answer["body"], answer["body"]

        assert room in colleague.client.rooms, "the colleague is in the demo room"
        await colleague.say(room, "Decision: the demo review moves to Thursday.")
        notice = (await ask(person, room, "!catchup", bot, timeout=120))["body"]
        assert "https://matrix.to/#/" in notice, notice
        assert admin_room.replace("!", "%21") not in notice, "not the admin room"
        await person.wait_until(lambda: bool(person.client.invited_rooms), timeout=60)
        private = next(iter(person.client.invited_rooms))
        assert private != admin_room and private.replace("!", "%21") in notice
        await person.join(private)
        await person.wait_for(
            private, lambda e: "demo review moves" in e["content"].get("body", ""), timeout=60
        )

        report = await ask(person, admin_room, "!feedback", bot, timeout=120)
        assert not report["body"].startswith(strings.NOTICE_PREFIX), report["body"]
        in_admin = [e["content"].get("body", "") for e in person.seen(admin_room, lambda e: True)]
        assert not any("demo review moves" in body for body in in_admin)

        # Voice messages are heard with no transcription endpoint: a spoken question in
        # an encrypted direct chat with the bot (after the catch-up, which would
        # go to this chat) is answered from the leave policy.
        assert "Voice messages are transcribed by the bot itself" in shown
        direct = await person.create_room([bot.user_id], encrypted=True, direct=True)
        await person.wait_for(direct, membership_of(bot.user_id, "join"), timeout=60)
        voice = await person.share_file(
            direct,
            speak("How many days of annual leave do full time staff get?"),
            "Voice message.ogg",
            "audio/ogg",
            voice=True,
        )
        answer = await finished_reply(person, direct, replies_to(voice), timeout=120)
        assert "27 days of annual leave" in answer["body"], answer["body"]
    finally:
        for someone in people:
            await someone.close()
        stop(demo)
        print(log.read_text()[-4000:])
