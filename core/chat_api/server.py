"""The chat API over HTTP: `/v1/models` and `/v1/chat/completions`, streamed (SSE) or
whole, every refusal in OpenAI's error shape so that clients show it as they would
OpenAI's own."""

from __future__ import annotations

import json
import logging
import math
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import replace

from aiohttp import web

from core.answering import Answerer
from core.bearer import parse_bearer
from core.chat_api.assistants import Assistants
from core.chat_api.conversation import ConversationScreen, decide_history
from core.chat_api.shapes import (
    ApiError,
    ChatCall,
    build_completion,
    build_model_list,
    build_request,
    decide_window,
    parse_chat_call,
)
from core.chat_api.stream import CompletionStream
from core.chat_api.tokens import Caller, TokenBook
from core.config import Settings
from core.guardrails.limits import WINDOW_SECONDS
from core.guardrails.rate_store import RateLimits
from core.i18n.detection import LanguageFinder
from core.i18n.language import ENGLISH, LANGUAGE
from core.llm.client import LlmError, LlmTimedOut
from core.pipeline.failures import build_failure_notice
from core.requests import Answer, Request
from core.sources import build_answer_markdown

log = logging.getLogger(__name__)
# A 429's Retry-After, whole seconds as HTTP has it: the limits count one minute, so a
# call after it is allowed again (at most that long).
RETRY_AFTER = math.ceil(WINDOW_SECONDS)

CALLER = web.RequestKey("caller", Caller)
MISSING_KEY = "Invalid or missing API key. Send it as 'Authorization: Bearer <token>'."
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _error(error: ApiError) -> web.Response:
    headers = {"WWW-Authenticate": "Bearer"} if error.status == 401 else {}
    if error.retry_after is not None:
        # OpenAI's clients wait this long before they retry (theirs is 0.5-8 s, twice).
        headers["Retry-After"] = str(error.retry_after)
    return web.json_response(error.body(), status=error.status, headers=headers)


def _failure_status(error: LlmError) -> int:
    return 504 if isinstance(error, LlmTimedOut) else 502


class ChatApi:
    def __init__(
        self,
        assistants: Assistants,
        settings: Callable[[], Settings],
        tokens: TokenBook,
        limits: RateLimits,
    ) -> None:
        self.assistants = assistants
        self.settings = settings
        self.tokens = tokens
        self.limits = limits
        self.screen = ConversationScreen()
        # One per process (lingua's models are shared with the bot's, when it runs here).
        self.languages = LanguageFinder()
        self._reported: str | None = None

    def build_app(self) -> web.Application:
        app = web.Application(middlewares=[self._authenticated])
        app.router.add_get("/v1/models", self.models)
        app.router.add_post("/v1/chat/completions", self.completions)
        return app

    @web.middleware
    async def _authenticated(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """Every call names its caller by bearer token; the one catch-all of this API."""
        token = parse_bearer(request.headers.get("Authorization", ""))
        caller = self.tokens.find(token) if token else None
        if self.tokens.problem != self._reported:
            self._reported = self.tokens.problem
            if self._reported:
                log.error(
                    "the tokens file cannot be used, so no token is accepted "
                    "until it is mended: %s",
                    self._reported,
                )
        if caller is None:
            return _error(ApiError(401, MISSING_KEY, code="invalid_api_key"))
        request[CALLER] = caller
        try:
            return await handler(request)
        except ApiError as error:
            return _error(error)
        except web.HTTPException:
            raise
        except Exception:
            reference = uuid.uuid4().hex[:8]
            log.exception("the chat API failed (reference %s)", reference)
            return _error(
                ApiError(500, f"The server failed (reference {reference}).", type="server_error")
            )

    async def models(self, request: web.Request) -> web.Response:
        return web.json_response(build_model_list(self.assistants.descriptions()))

    async def completions(self, request: web.Request) -> web.StreamResponse:
        caller = request[CALLER]
        try:
            body = await request.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise ApiError(400, "the body is not JSON") from None
        call = parse_chat_call(body)
        answerer = self.assistants.answerer(call.model)
        if answerer is None:
            raise ApiError(
                404,
                f"The model '{call.model}' does not exist; GET /v1/models lists them.",
                code="model_not_found",
                param="model",
            )
        per_minute = self.settings().chat_api.requests_per_minute
        if await self.limits.allows({f"token:{caller.name}": per_minute}):
            raise ApiError(
                429,
                f"Rate limit reached: {per_minute} requests per minute for this token.",
                type="requests",
                code="rate_limit_exceeded",
                retry_after=RETRY_AFTER,
            )
        keep = self.settings().chat_api.history_messages
        call = await self._screened(call, caller.name, keep)
        asked = build_request(call, caller.reader, caller.name, keep)
        # The asker's language, as in rooms: the bot's sentences (nothing found, a
        # refusal) and the model's answer follow it.
        language = await self.languages.detect(call.question)
        asked = replace(asked, language=language)
        started = time.perf_counter()
        completion_id = f"chatcmpl-{uuid.uuid4().hex}"
        created = int(time.time())
        # Set and reset by hand: contextlib's manager writes the traceback of the
        # (frozen) ApiError that may pass through it.
        spoken = LANGUAGE.set(language or ENGLISH)
        try:
            if call.stream:
                response = await self._streamed(
                    request, answerer, asked, call.model, completion_id, created
                )
            else:
                response = await self._whole(answerer, asked, call.model, completion_id, created)
        finally:
            LANGUAGE.reset(spoken)
        log.info(
            "chat API: %s asked %s (%.2f s)", caller.name, call.model, time.perf_counter() - started
        )
        return response

    async def _screened(self, call: ChatCall, caller: str, keep: int) -> ChatCall:
        """The call with only the turns of its conversation that pass the guardrails
        (core/chat_api/conversation.py); the question itself passes them in the
        answerer."""
        window = decide_window(call.history, keep)
        failures = await self.screen.failures(window, self.settings().guardrails)
        kept = decide_history(window, failures)
        if len(kept) < len(window):
            log.warning(
                "chat API: %d of the earlier turns %s sent failed the guardrails "
                "or were refused; they are left out",
                len(window) - len(kept),
                caller,
            )
        return replace(call, history=kept)

    async def _whole(
        self, answerer: Answerer, asked: Request, model: str, completion_id: str, created: int
    ) -> web.Response:
        try:
            answer: Answer = await answerer.answer(asked)
        except LlmError as error:
            raise ApiError(
                _failure_status(error),
                build_failure_notice(error),
                type="server_error",
                code="model_failed",
            ) from None
        _refuse_if_limited(answer)
        text = await _with_badge(answer)
        return web.json_response(build_completion(text, answer, model, completion_id, created))

    async def _streamed(
        self,
        request: web.Request,
        answerer: Answerer,
        asked: Request,
        model: str,
        completion_id: str,
        created: int,
    ) -> web.StreamResponse:
        stream = CompletionStream(request, model, completion_id, created)
        try:
            answer: Answer = await answerer.answer(asked, stream.show)
            _refuse_if_limited(answer)
            await stream.finish(answer, await _badge(answer))
        except ConnectionResetError:
            log.info("chat API: the client left before the answer was complete")
        except Exception as exc:
            failure = (
                ApiError(
                    _failure_status(exc),
                    build_failure_notice(exc),
                    type="server_error",
                    code="model_failed",
                )
                if isinstance(exc, LlmError)
                else exc
                if isinstance(exc, ApiError)
                else None
            )
            if not stream.opened:
                if failure is None:
                    raise
                raise failure from None
            if failure is None:
                reference = uuid.uuid4().hex[:8]
                log.exception("the chat API failed mid-stream (reference %s)", reference)
                failure = ApiError(
                    500, f"The server failed (reference {reference}).", type="server_error"
                )
            await stream.fail(failure)
        return stream.response


def _refuse_if_limited(answer: Answer) -> None:
    """The guardrails' rate limit as OpenAI's 429, which clients wait on and retry."""
    if answer.kind == "refusal" and answer.reason == "rate_limited":
        raise ApiError(
            429,
            answer.text,
            type="requests",
            code="rate_limit_exceeded",
            retry_after=RETRY_AFTER,
        )


async def _badge(answer: Answer) -> str | None:
    """The support check's line for the answer (the bot adds it after showing the
    answer; here it comes before the stream ends)."""
    if answer.followup is None:
        return None
    try:
        return await answer.followup()
    except (TimeoutError, LlmError) as exc:
        log.warning("the support check failed: %s", type(exc).__name__)
        return None


async def _with_badge(answer: Answer) -> str:
    text = build_answer_markdown(answer)
    badge = await _badge(answer)
    return f"{text}\n\n{badge}" if badge else text


async def start_chat_api(api: ChatApi, host: str, port: int) -> web.AppRunner:
    runner = web.AppRunner(api.build_app(), access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
    except OSError:
        await runner.cleanup()
        raise
    log.info("chat API listening on http://%s:%d/v1", host, port)
    return runner
