"""An OpenAI-compatible chat server for tests: real HTTP, scripted replies, inspectable history.

    llm = FakeLlm(); await llm.start()
    llm.enqueue("Hello")                       # a plain answer
    llm.enqueue({"toxicity": 0})               # JSON, for a response_format request
    llm.enqueue("{not json")                   # something broken, on purpose
    llm.enqueue(status=500) / enqueue("x", delay=2)
    llm.enqueue("Half an ans", ending="cut")   # a stream that ends badly (ENDINGS)
    llm.respond = lambda body: ...             # replies when nothing is enqueued
    llm.held = asyncio.Event(); llm.hold_after = 3   # the next stream waits after 3 pieces
    ... llm.history[0]["messages"] ...

Streams with server-sent events when asked (`stream: true`), in small pieces, like vLLM:
the last piece carries `finish_reason: "stop"`, then `data: [DONE]`. A scripted `ending`
breaks that on purpose (ENDINGS); it applies to streamed replies only.
An unscripted request (nothing enqueued and no `respond`) gets a 500, so a test never
passes on a reply it did not expect. Replies are taken in order, except that a streamed
request takes the first one that is not JSON (`_next_reply`).

It plays what real models and servers do when asked to:
    llm.reasoning = "tagged"     # replies start with <think>…</think> (R1 distills, Qwen3)
    llm.reasoning = "opened"     # …only with </think>: the template opened the tag
    llm.context_window = 1024    # /v1/models lists max_model_len; longer prompts get
                                 # vLLM's 400 "maximum context length is 1024 tokens"
    llm.tokenize = True          # vLLM's /tokenize counts a prompt's tokens
Tokens are counted as words and symbols, four more per message (`count_tokens`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from aiohttp import web
from aiohttp.test_utils import TestServer

# How a stream ends. "stop": normally. "length": cut at the token limit (the last piece
# says `finish_reason: "length"`; a reply that is not streamed says it too). "no_done": no piece carries a finish_reason, and the
# body ends cleanly without `data: [DONE]`. "cut": the pieces, then the connection is
# closed mid-body (no finish_reason, no [DONE], no end of the chunked body). "empty": no
# content at all (a role chunk and a finish chunk, as vLLM sends), then a normal end.
# "error": the pieces, then an error event as vLLM sends one mid-stream, then [DONE].
# "content_filter": a hosted API's filter stopped it (the last piece, or the whole reply,
# says `finish_reason: "content_filter"`).
Ending = Literal["stop", "length", "no_done", "cut", "empty", "error", "content_filter"]
AFTER_STREAM_SECONDS = 30
ENDINGS: tuple[Ending, ...] = (
    "stop",
    "length",
    "no_done",
    "cut",
    "empty",
    "error",
    "content_filter",
)
FINISH_REASONS = {"stop": "stop", "length": "length", "content_filter": "content_filter"}


@dataclass
class Reply:
    content: str | dict | None = None
    status: int = 200
    delay: float = 0.0
    ending: Ending = "stop"
    # Sent only once a streamed request (an answer) has come, whatever the machine's speed.
    after_stream: bool = False


@dataclass
class FakeLlm:
    model: str = "test-model"
    history: list[dict[str, Any]] = field(default_factory=list)
    replies: deque[Reply] = field(default_factory=deque)
    server: TestServer | None = None
    delay: float = 0.0
    # A scripted model for long conversations: the request body in, the reply out.
    respond: Callable[[dict[str, Any]], str | dict] | None = None
    # The next stream stops after `hold_after` pieces until the test sets `held`.
    held: asyncio.Event | None = None
    hold_after: int = 0
    # How the server treats `response_format`, as endpoints do: "honour" it (vLLM),
    # "ignore" it (a structured reply comes back as prose around a ```json fence),
    # "refuse" it (HTTP 400 naming the option), or honour only a JSON object with its
    # schema ("json_object", llama-cpp-python's server: a 500 quoting its validation
    # error for a JSON schema).
    response_format: Literal["honour", "ignore", "refuse", "json_object"] = "honour"
    # Inline reasoning before every reply (see the module's text).
    reasoning: Literal["tagged", "opened"] | None = None
    reasoning_text: str = "Okay, the user asks something. Let me look at the sources first."
    context_window: int | None = None
    # Whether /v1/models says the window (vLLM does, llama.cpp's server does not).
    lists_window: bool = True
    # How a streamed request over the window is refused: with vLLM's 400, or as
    # llama-cpp-python does, with an empty event stream (only a request that is not
    # streamed gets its 400).
    too_long_stream: Literal["refuse", "empty"] = "refuse"
    tokenize: bool = False
    # The kind of each reply once sent whole ("json" or "stream"), in that order.
    finished: list[str] = field(default_factory=list)
    # Where it listens: the loopback on a free port, unless a stack needs it elsewhere.
    host: str = "127.0.0.1"
    port: int | None = None
    _streamed: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def url(self) -> str:
        assert self.server is not None
        return str(self.server.make_url("/v1"))

    async def start(self) -> FakeLlm:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._complete)
        app.router.add_get("/v1/models", self._models)
        app.router.add_post("/tokenize", self._tokenize)
        app.router.add_get("/health", self._health)
        self.server = TestServer(app, host=self.host, port=self.port)
        await self.server.start_server()
        return self

    async def close(self) -> None:
        if self.server:
            await self.server.close()

    def enqueue(
        self,
        content: str | dict | None = None,
        *,
        status: int = 200,
        delay: float = 0.0,
        ending: Ending = "stop",
        after_stream: bool = False,
    ) -> None:
        assert ending in ENDINGS, ending
        self.replies.append(Reply(content, status, delay, ending, after_stream))

    def _next_reply(self, *, streamed: bool) -> Reply | None:
        """The next scripted reply for a request: in order, except that a streamed request
        (an answer) takes the first reply that is not JSON. The bot starts an answer
        beside its pre-step, so the two may arrive in either order."""
        for reply in self.replies:
            if not streamed or not isinstance(reply.content, dict):
                self.replies.remove(reply)
                return reply
        return None

    async def _health(self, request: web.Request) -> web.Response:
        return web.Response(text="")  # as vLLM's /health: 200, empty

    async def _models(self, request: web.Request) -> web.Response:
        entry: dict[str, Any] = {"id": self.model, "object": "model"}
        if self.context_window and self.lists_window:
            entry["max_model_len"] = self.context_window
        return web.json_response({"object": "list", "data": [entry]})

    async def _tokenize(self, request: web.Request) -> web.Response:
        if not self.tokenize:
            return web.json_response({"detail": "Not Found"}, status=404)
        count = count_tokens(await request.json())
        return web.json_response(
            {"count": count, "max_model_len": self.context_window, "tokens": list(range(count))}
        )

    async def _complete(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.history.append(body)
        if body.get("stream"):
            self._streamed.set()
        if "response_format" in body and self.response_format == "refuse":
            return web.json_response(
                {
                    "error": {
                        "message": "response_format is not supported by this server",
                        "type": "invalid_request_error",
                    }
                },
                status=400,
            )
        asked_format = body.get("response_format", {}).get("type")
        if asked_format == "json_schema" and self.response_format == "json_object":
            message = (
                "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', "
                "'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\"}"
            )
            return web.json_response({"error": {"message": message}}, status=500)
        asked = count_tokens(body) + int(body.get("max_tokens") or 0)
        too_long = bool(self.context_window) and asked > (self.context_window or 0)
        if too_long and body.get("stream") and self.too_long_stream == "empty":
            response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
            await response.prepare(request)
            await response.write_eof()
            return response
        if too_long:
            message = (
                f"This model's maximum context length is {self.context_window} tokens. "
                f"However, you requested {asked} tokens ({count_tokens(body)} in the "
                f"messages, {body.get('max_tokens') or 0} in the completion). Please reduce "
                "the length of the messages or completion."
            )
            return web.json_response(
                {
                    "object": "error",
                    "message": message,
                    "type": "BadRequestError",
                    "param": None,
                    "code": 400,
                },
                status=400,
            )
        queued = self._next_reply(streamed=bool(body.get("stream")))
        if queued is not None:
            reply = queued
        elif self.respond is not None:
            reply = Reply(self.respond(body))
        else:
            reply = Reply("unscripted request", status=500)
        if reply.after_stream:
            # Bounded: a bot that never starts the answer gets its reply all the same.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._streamed.wait(), AFTER_STREAM_SECONDS)
        await asyncio.sleep(reply.delay or self.delay)
        if reply.status != 200:
            return web.json_response(
                {"error": {"message": "scripted failure", "type": "server_error"}},
                status=reply.status,
            )
        text = json.dumps(reply.content) if isinstance(reply.content, dict) else str(reply.content)
        if isinstance(reply.content, dict) and self.response_format == "ignore":
            text = f"Sure! Here is the JSON you asked for:\n```json\n{text}\n```\nAnything else?"
        if self.reasoning == "tagged":
            text = f"<think>\n{self.reasoning_text}\n</think>\n\n{text}"
        elif self.reasoning == "opened":
            text = f"{self.reasoning_text}\n</think>\n\n{text}"
        if body.get("stream"):
            streamed = await self._stream(request, text, reply.ending)
            self.finished.append("stream")
            return streamed
        self.finished.append("json")
        return web.json_response(
            {
                "id": f"chatcmpl-{len(self.history)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", self.model),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": FINISH_REASONS.get(reply.ending, "stop"),
                    }
                ],
                "usage": {
                    "prompt_tokens": _count(body),
                    "completion_tokens": len(text.split()),
                    "total_tokens": 0,
                },
            }
        )

    async def _stream(self, request: web.Request, text: str, ending: Ending) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        if ending == "empty":
            # No content at all, as vLLM streams it: the role, then the finish reason.
            await self._send(response, {"role": "assistant", "content": ""}, None)
            await self._send(response, {}, "stop")
        else:
            await self._send_pieces(response, text, FINISH_REASONS.get(ending))
        if ending == "cut":
            # Gone mid-body: what was written is flushed, then the socket is closed, so
            # the chunked body never gets its last chunk (a server or proxy that died).
            assert request.transport is not None
            request.transport.close()
            return response
        if ending == "error":
            error = {
                "message": "scripted failure mid-stream",
                "type": "InternalServerError",
                "param": None,
                "code": 500,
            }
            await response.write(f"data: {json.dumps({'error': error})}\n\n".encode())
        if ending != "no_done":
            await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response

    async def _send_pieces(
        self, response: web.StreamResponse, text: str, finish: str | None
    ) -> None:
        """The text in small pieces; the last one says why it ended (`finish`)."""
        pieces = [text[i : i + 8] for i in range(0, len(text), 8)] or [""]
        held, self.held = self.held, None
        for index, piece in enumerate(pieces):
            if held is not None and index == self.hold_after:
                await held.wait()
            last = index == len(pieces) - 1
            await self._send(response, {"content": piece}, finish if last else None)

    async def _send(
        self, response: web.StreamResponse, delta: dict[str, Any], finish: str | None
    ) -> None:
        chunk = {
            "id": f"chatcmpl-{len(self.history)}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": self.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        await response.write(f"data: {json.dumps(chunk)}\n\n".encode())


def count_tokens(body: dict[str, Any]) -> int:
    """The fake tokenizer: words and symbols, four more per message."""
    messages = body.get("messages", [])
    words = sum(len(re.findall(r"\w+|[^\w\s]", str(m.get("content", "")))) for m in messages)
    return words + 4 * len(messages)


def _count(body: dict[str, Any]) -> int:
    return sum(len(str(m.get("content", "")).split()) for m in body.get("messages", []))
