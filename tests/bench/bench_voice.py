"""What hearing voice messages costs, with the real model on this machine's CPU.

    .venv/bin/python -m tests.bench.bench_voice [--repeat 3]

1. The local transcriber (faster-whisper, Whisper tiny.en int8, the model the voice
   extra bundles) on espeak-ng's speech of about 10 and 30 seconds, encoded as Element
   sends voice messages (Ogg/Opus): seconds of audio heard per second of CPU (all the
   process's threads), and per second of wall time; the model's load once.
2. The bot's logic on a fake account (tests/bot/harness.py): the time from a voice
   question of about 10 seconds arriving to the first word of its answer, with a
   scripted answering model that takes 300 ms to its first word, transcribed (a) by the
   local model and (b) by the scripted transcription endpoint over real HTTP (answering
   at once: what the bot itself adds around an endpoint).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from core.config import parse_config
from core.speech import LocalTranscriber
from tests.bot.harness import eventually, running_bot
from tests.support.fake_speech import FakeSpeech
from tests.support.voices import seconds_of, speak

ANN = "@ann:fake.test"
TEN_SECONDS = (
    "How many days of annual leave do full time staff get, and may they carry any of "
    "them over into the next year, or do they lose them in March?"
)
THIRTY_SECONDS = " ".join(
    [
        "The travel policy says that trains are booked two weeks ahead through Travelink,",
        "in second class, and that hotels cost at most one hundred and forty euros a night",
        "in Paris. Receipts are filed within thirty days in the expenses tool, with the",
        "project code, and the team lead approves every trip over five hundred euros.",
        "The printer on the third floor is serviced every Friday, and the reception on",
        "the ground floor keeps the visitor badges and the keys to the meeting rooms.",
    ]
)
MATRIX = '[matrix]\nhomeserver = "http://h"\nuser_id = "@bot:h"\npassword = "p"\n'


def local_settings():
    text = MATRIX + "[speech]\nlocal = true\n"
    return parse_config(text, origin="bench", env={}, base_dir=Path(".")).speech


async def throughput(repeat: int) -> None:
    transcriber = LocalTranscriber(local_settings())
    started = time.perf_counter()
    await asyncio.to_thread(transcriber.load)
    print(f"model load: {time.perf_counter() - started:.2f} s")
    for label, text in (("~10 s", TEN_SECONDS), ("~30 s", THIRTY_SECONDS)):
        audio = speak(text)
        seconds = seconds_of(audio)
        cpu, wall = [], []
        for _ in range(repeat):
            cpu_started, wall_started = time.process_time(), time.perf_counter()
            heard = await transcriber.transcribe(audio, "v.ogg", "audio/ogg")
            cpu.append(time.process_time() - cpu_started)
            wall.append(time.perf_counter() - wall_started)
        print(
            f"{label} question ({seconds:.1f} s of audio, {len(audio) // 1000} kB Ogg/Opus): "
            f"{seconds / statistics.median(cpu):.1f} s of audio per CPU second, "
            f"{seconds / statistics.median(wall):.1f} per wall second "
            f"(median of {repeat}: {statistics.median(wall):.2f} s)"
        )
        print(f"    heard: {heard}")
    await transcriber.close()


async def first_word(
    folder: Path, transcriber, label: str, config: str, repeat: int, audio: bytes
) -> None:
    folder.mkdir(parents=True)
    async with running_bot(folder, config, transcriber=transcriber) as bot:

        async def slow_model(request) -> None:
            await asyncio.sleep(0.3)  # the scripted model's time to its first word

        bot.answerer.on_question = slow_model
        times = []
        for n in range(repeat):
            room = f"!r{n}"
            bot.account.add_room(room, [ANN])
            url = f"mxc://fake.test/voice-{n}"
            bot.account.media[url] = audio
            started = time.perf_counter()
            # The room answers every message: the voice message is a question.
            bot.account.say(
                room,
                ANN,
                "Voice message",
                msgtype="m.audio",
                url=url,
                info={"mimetype": "audio/ogg"},
                **{"org.matrix.msc3245.voice": {}},
            )

            async def answered(room: str = room) -> bool | None:
                return (
                    True
                    if any(
                        "Answer to:" in w.content.get("body", "")
                        for w in bot.account.messages(room)
                    )
                    else None
                )

            await eventually(answered, timeout=120)
            times.append(time.perf_counter() - started)
        print(
            f"voice question (~10 s) to the answer's first word, {label}: "
            f"median {statistics.median(times):.2f} s, max {max(times):.2f} s "
            f"({repeat} questions)"
        )


async def main(repeat: int) -> None:
    await throughput(repeat)
    audio = speak(TEN_SECONDS)  # one recording: the scripted endpoint knows it by its bytes
    everyone = '[room_defaults]\nanswer_without_mention = true\ntranscribe = "off"\n'
    with tempfile.TemporaryDirectory() as folder:
        local = LocalTranscriber(local_settings())
        await first_word(
            Path(folder) / "local",
            local,
            "local tiny.en",
            "[speech]\nlocal = true\n" + everyone,
            repeat,
            audio,
        )
        await local.close()
    speech = await FakeSpeech().start()
    try:
        from core.speech import EndpointTranscriber

        speech.say(audio, TEN_SECONDS)
        config = f'[speech]\nurl = "{speech.url}"\n' + everyone
        settings = parse_config(MATRIX + config, origin="bench", env={}, base_dir=Path("."))
        endpoint = EndpointTranscriber(settings.speech)
        with tempfile.TemporaryDirectory() as folder:
            await first_word(
                Path(folder) / "endpoint", endpoint, "scripted endpoint", config, repeat, audio
            )
        await endpoint.close()
    finally:
        await speech.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    asyncio.run(main(parser.parse_args().repeat))
