"""Voice to text through an OpenAI-compatible transcription endpoint, with the openai
client the LLM already uses (its multipart upload, retries and error types)."""

from __future__ import annotations

import logging

import openai

from core.config.speech import SpeechSettings

log = logging.getLogger(__name__)


class SpeechError(Exception):
    """A transcription that failed; the message is for the admin's log."""


class Transcriber:
    def __init__(self, settings: SpeechSettings) -> None:
        if not settings.url:
            raise ValueError("no [speech] url configured")
        self.settings = settings
        self._client = openai.AsyncOpenAI(
            base_url=settings.url, api_key=settings.api_key() or "not-needed",
            timeout=settings.timeout_seconds, max_retries=1,
        )  # fmt: skip

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
        text = " ".join(str(getattr(result, "text", "") or "").split())
        if not text:
            raise SpeechError("the transcription is empty")
        return text

    async def close(self) -> None:
        await self._client.close()
