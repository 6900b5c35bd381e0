"""A scripted OpenAI-compatible transcription endpoint over real HTTP: it takes the
multipart upload of `/v1/audio/transcriptions` as OpenAI's API and vLLM's Whisper server
do (`file` and `model` required) and answers `{"text": ...}` with the transcript the test
set for that recording, or a 500 when the test makes it fail."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from aiohttp import web
from aiohttp.test_utils import TestServer


@dataclass
class FakeSpeech:
    transcripts: dict[str, str] = field(default_factory=dict)
    fail: bool = False
    # What each request sent: (model, file name, content type, size).
    requests: list[tuple[str, str, str, int]] = field(default_factory=list)
    server: TestServer | None = None

    def say(self, audio: bytes, transcript: str) -> None:
        """The transcript of this recording."""
        self.transcripts[hashlib.sha256(audio).hexdigest()] = transcript

    @property
    def url(self) -> str:
        assert self.server is not None
        return str(self.server.make_url("/v1"))

    async def start(self) -> FakeSpeech:
        app = web.Application(client_max_size=50_000_000)
        app.router.add_post("/v1/audio/transcriptions", self._transcribe)
        self.server = TestServer(app)
        await self.server.start_server()
        return self

    async def close(self) -> None:
        if self.server:
            await self.server.close()

    async def _transcribe(self, request: web.Request) -> web.Response:
        form = await request.post()
        upload, model = form.get("file"), form.get("model")
        if not isinstance(upload, web.FileField) or not isinstance(model, str):
            return web.json_response(
                {
                    "error": {
                        "message": "file and model are required",
                        "type": "invalid_request_error",
                    }
                },
                status=400,
            )
        audio = upload.file.read()
        self.requests.append((model, upload.filename, upload.content_type, len(audio)))
        if self.fail:
            return web.json_response({"error": {"message": "scripted failure"}}, status=500)
        text = self.transcripts.get(hashlib.sha256(audio).hexdigest(), "")
        return web.json_response({"text": text})
