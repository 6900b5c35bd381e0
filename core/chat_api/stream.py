"""A streamed chat completion (server-sent events), opened only once there is something
to show: a refusal that comes before any word (the rate limit) can still be a 429."""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from core.chat_api.shapes import ApiError, build_chunk, decide_delta
from core.requests import Answer
from core.sources import build_answer_markdown


class CompletionStream:
    def __init__(self, request: web.Request, model: str, completion_id: str, created: int):
        self.request = request
        self.model, self.completion_id, self.created = model, completion_id, created
        self.response = web.StreamResponse(
            headers={
                "Content-Type": "text/event-stream",
                "Cache-Control": "no-cache",
                "X-Accel-Buffering": "no",  # a proxy in front must pass each event on at once
            }
        )
        self.sent = ""

    @property
    def opened(self) -> bool:
        return self.response.prepared

    async def _send(self, chunk: dict[str, Any]) -> None:
        if not self.opened:
            await self.response.prepare(self.request)
            await self._send(self._chunk({"role": "assistant", "content": ""}))
        await self.response.write(f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n".encode())

    def _chunk(self, delta: dict[str, str], **last: Any) -> dict[str, Any]:
        return build_chunk(self.model, self.completion_id, self.created, delta, **last)

    async def show(self, text: str) -> None:
        """The answer so far (the pipeline's progress): only what continues it is sent."""
        delta = decide_delta(self.sent, text)
        if delta:
            self.sent = text
            await self._send(self._chunk({"content": delta}))

    async def finish(self, answer: Answer, badge: str | None) -> None:
        final = build_answer_markdown(answer)
        rest = decide_delta(self.sent, final)
        # The text shown so far was not the start of the final one (rare: a marker the
        # model wrote oddly): the whole answer follows, so that nothing is lost.
        await self._send(self._chunk({"content": rest if rest is not None else "\n\n" + final}))
        if badge:
            await self._send(self._chunk({"content": "\n\n" + badge}))
        await self._send(self._chunk({}, finish="stop", sources=answer.sources))
        await self.response.write(b"data: [DONE]\n\n")
        await self.response.write_eof()

    async def fail(self, error: ApiError) -> None:
        """An error once words are out goes as an event, as OpenAI's own streams do."""
        await self._send(error.body())
        await self.response.write_eof()
