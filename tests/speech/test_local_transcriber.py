"""The local transcriber with the real model (Whisper tiny.en, bundled) on real speech:
espeak-ng's voice, encoded as Element sends voice messages (Ogg/Opus) and as WAV."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import pytest

from core.config import parse_config
from core.speech import LocalTranscriber, SpeechError, bundled_model, open_transcriber
from tests.support.files import make_wav
from tests.support.voices import speak, speak_wav

MATRIX = '[matrix]\nhomeserver = "http://h"\nuser_id = "@bot:h"\npassword = "p"\n'


def speech(extra: str = "", base_dir: Path = Path("/srv/bot")):
    text = MATRIX + "[speech]\nlocal = true\n" + extra
    return parse_config(text, origin="bot.toml", env={}, base_dir=base_dir).speech


@pytest.fixture(scope="module")
def transcriber():
    # One model for the module (it loads in under a second, but there is no need).
    return LocalTranscriber(speech("threads = 2\n"))


def words_of(text: str) -> set[str]:
    return {word.strip(".,?!").lower() for word in text.split()}


async def test_a_voice_message_as_element_records_it_is_heard(transcriber):
    text = await transcriber.transcribe(
        speak("Who approves travel expenses?"), "Voice message.ogg", "audio/ogg"
    )
    assert {"who", "approves", "travel"} <= words_of(text), text


async def test_a_wav_recording_is_heard_too(transcriber):
    text = await transcriber.transcribe(
        speak_wav("The printer on the third floor is broken."), "voice.wav", "audio/wav"
    )
    assert {"printer", "third", "floor", "broken"} <= words_of(text), text


async def test_a_recording_of_no_words_or_no_audio_is_a_failure_not_a_guess(transcriber):
    # A tone: Whisper alone makes words up from silence and noise; its voice activity
    # filter hears nobody.
    for audio in (make_wav(seconds=3), b"not audio at all" * 100):
        with pytest.raises(SpeechError) as caught:
            await transcriber.transcribe(audio, "voice.wav", "audio/wav")
        assert "not audio" not in str(caught.value)


async def test_limits_apply_as_to_an_endpoint():
    small = LocalTranscriber(speech("max_bytes = 1000\n"))
    with pytest.raises(SpeechError, match=r"over speech\.max_bytes"):
        await small.transcribe(speak("A long question about the travel policy."), "v", "audio/ogg")
    hasty = LocalTranscriber(speech("timeout_seconds = 0.001\n"))
    with pytest.raises(SpeechError, match="timeout_seconds"):
        await hasty.transcribe(speak("A question that takes its time."), "v", "audio/ogg")
    await small.close()
    await hasty.close()


async def test_recordings_are_heard_one_at_a_time_while_the_loop_runs_on(transcriber):
    recordings = [speak(f"Room {n} is booked on Monday.") for n in ("one", "two", "three")]
    ticks = 0

    async def loop_runs() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    ticking = asyncio.create_task(loop_runs())
    started = time.monotonic()
    texts = await asyncio.gather(
        *(transcriber.transcribe(audio, "v.ogg", "audio/ogg") for audio in recordings)
    )
    elapsed = time.monotonic() - started
    ticking.cancel()
    # Each its own words, in order (tiny.en may hear "two" as "2", "booked on" as "Book Time").
    assert all("monday" in text.lower() for text in texts) and len(set(texts)) == 3, texts
    assert [t.name for t in threading.enumerate() if t.name.startswith("speech")] == ["speech_0"]
    # The loop went on while the recordings were heard (a transcription run on the loop
    # would hold it for seconds: a handful of ticks at most). A count, not a rate: on a
    # busy machine the loop ticks slower, but it still ticks.
    assert ticks >= min(50, elapsed / 0.01 / 10), "the event loop was held up"


def test_a_model_folder_the_admin_names_is_loaded(tmp_path):
    folder = tmp_path / "whisper"
    folder.symlink_to(bundled_model())
    settings = speech('model_dir = "whisper"\n', base_dir=tmp_path)
    assert settings.model_dir == folder
    transcriber = open_transcriber(settings)
    assert isinstance(transcriber, LocalTranscriber)
    assert transcriber.load() is not None
