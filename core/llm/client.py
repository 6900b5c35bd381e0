"""One async client for an OpenAI-compatible endpoint (vLLM in production).

The openai library does the HTTP, the timeouts and the retries with backoff; this adds a
limit on concurrent calls, streaming, and structured output: `response_format` with a
JSON schema (what vLLM honours), validated after parsing, with one repair attempt.

Endpoints that do not honour `response_format` still work: one that refuses a JSON
schema (an error naming it: vLLM's 400, llama-cpp-python's 500) is asked for a JSON
object with its schema from then on (what llama-cpp-python's server constrains its
output with), and one that refuses
that too gets the schema in the prompt instead; one that ignores it and wraps the JSON
in prose or a code fence has the object taken out of its reply. Either way the result
is validated against the schema, as with an endpoint that honours it.

A streamed answer counts only when the model ended it: a stream that stops early, or
that ends with no text, raises instead of passing for an answer (`stream`).

A model's inline reasoning (`<think>…</think>`, see core/llm/reasoning.py) is taken out
of every reply here, streamed or not, so no caller ever sees it; only its length is
kept. Whether the model's template opens the tag in the prompt (its replies then start
with reasoning and only close the tag) is found out: until then a stream is shown only
once the tag closes or the reply is whole; a reply that closes a tag it never opened
says it does, a whole streamed answer without one says it does not
(`[llm] reasoning_opens_in_prompt` says so from the start).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, cast

import httpx
import openai
from openai.types.chat import ChatCompletionMessageParam
from pydantic import BaseModel, ValidationError

from core.config.llm import LlmSettings, LlmTask
from core.llm.reasoning import CLOSE as CLOSING_TAG
from core.llm.reasoning import Reasoned, parse_reasoning
from core.llm.window import estimate_tokens
from core.trace import Messages

Model = TypeVar("Model", bound=BaseModel)
StructuredOutput = Literal["json_schema", "json_object", "prompt"]
log = logging.getLogger(__name__)

REPAIR = (
    "Your previous answer was not valid JSON for the required schema ({problem}). "
    "Answer again with only the JSON object."
)
SCHEMA_IN_PROMPT = (
    "Answer with only one JSON object, no other text, that follows this JSON schema:\n{schema}"
)
# A JSON object in a reply that says more: in a ```json fence, or from the first { to the
# last }.
FENCED = re.compile(r"```(?:json)?\s*(\{.*\})\s*```", re.DOTALL)


class LlmError(Exception):
    """The language model could not give a usable answer; the text is for logs, and
    `setting` names what an admin may change about it."""

    setting = "[llm]"


class LlmUnavailable(LlmError):
    """The endpoint failed, timed out or could not be reached (after the retries)."""


class LlmUnreachable(LlmUnavailable):
    """No connection to the endpoint."""

    setting = "llm.url"


class LlmTimedOut(LlmUnavailable):
    """The endpoint did not answer within `llm.timeout_seconds`."""

    setting = "llm.timeout_seconds"


class LlmServerFailed(LlmUnavailable):
    """The endpoint answered with a server error (5xx): overloaded, restarting, broken."""

    setting = "the model server's own log"


class LlmRefused(LlmUnavailable):
    """The endpoint refused the request (4xx: a bad request, an unknown model)."""

    setting = "llm.model and llm.request_fields"


class LlmPromptTooLong(LlmRefused):
    """The endpoint refused the prompt as longer than the model's context window;
    `window` is the window it named, when it did (vLLM, llama.cpp)."""

    setting = "llm.context_window (or pipeline.context_tokens)"

    def __init__(self, message: str, window: int | None) -> None:
        super().__init__(message)
        self.window = window


class LlmInvalidOutput(LlmError):
    """The output did not follow the schema (even after one repair attempt)."""


class LlmCutOff(LlmInvalidOutput):
    """A structured reply was cut at its token limit (finish_reason "length"): a JSON
    object never closed. `[llm.max_tokens]` bounds each task's reply."""

    setting = "llm.max_tokens"


class LlmFiltered(LlmError):
    """The endpoint's content filter stopped the reply (finish_reason "content_filter",
    as hosted OpenAI-compatible APIs say it)."""

    setting = "the model provider's content filter"


class LlmRefusedOption(LlmRefused):
    """The endpoint answered 400 to a request with `response_format` (it supports none)."""


# How servers say a prompt is over the window: vLLM "This model's maximum context length
# is 4096 tokens. However, you requested…", llama.cpp's server "the request exceeds the
# available context size" (exceed_context_size_error, with "n_ctx": 1024),
# llama-cpp-python "Requested tokens (1100) exceed context window of 1024", OpenAI
# "context_length_exceeded".
TOO_LONG = re.compile(
    r"maximum context length|context[_ ]length[_ ]exceeded|exceeds? the available context"
    r"|exceed_context_size|exceed context window|too many tokens|prompt is too long",
    re.IGNORECASE,
)
WINDOW = re.compile(
    r"(?:maximum context length is|context window of|n_ctx\W+)\s*(\d+)", re.IGNORECASE
)


def build_llm_error(error: Exception) -> LlmUnavailable:
    """The typed error of a failed call, named for what happened (see `LlmError`)."""
    said = f"{type(error).__name__}: {error}"
    if isinstance(error, openai.APITimeoutError):
        return LlmTimedOut(said)
    if isinstance(error, openai.APIConnectionError):
        return LlmUnreachable(said)
    if isinstance(error, openai.APIStatusError) and TOO_LONG.search(str(error)):
        window = WINDOW.search(str(error))
        return LlmPromptTooLong(said, int(window.group(1)) if window else None)
    if isinstance(error, openai.APIStatusError) and error.status_code >= 500:
        return LlmServerFailed(said)
    if isinstance(error, openai.APIStatusError):
        return LlmRefused(said)
    return LlmUnavailable(said)


class IncompleteAnswer(LlmError):
    """The answer's stream stopped before the model ended it (see `stream`).

    `partial` is the text received until then: it may be shown marked as incomplete,
    never as an answer."""

    def __init__(self, why: str, partial: str) -> None:
        super().__init__(f"the answer stopped early ({why}) after {len(partial)} characters")
        self.why = why
        self.partial = partial


class EmptyAnswer(LlmError):
    """The model ended its answer normally, with no text (or only whitespace)."""


@dataclass(frozen=True)
class Completion:
    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    # Characters of inline reasoning taken out of the reply (never its text).
    reasoning_chars: int = 0


API_ERRORS = (openai.APIError, openai.APIConnectionError, openai.APITimeoutError)

# The one finish_reason that means the model ended its answer. "length" is the answer
# cut at the token limit (max_tokens, or the server's context length): it stops
# mid-sentence, so it is incomplete like a dropped stream, not a short answer. The
# others ("content_filter", vLLM's "abort" and "error") are no whole answer either.
FINISHED = "stop"


class LlmClient:
    def __init__(self, settings: LlmSettings) -> None:
        if not settings.url:
            raise ValueError("no [llm] url configured")
        self.model = settings.model
        self._client = openai.AsyncOpenAI(
            base_url=settings.url,
            # vLLM accepts any key unless started with --api-key.
            api_key=settings.api_key() or "not-needed",
            timeout=settings.timeout_seconds,
            max_retries=settings.max_retries,
        )
        self._slots = asyncio.Semaphore(settings.max_concurrency)
        # How structured output is asked for: `response_format` with a JSON schema (vLLM,
        # OpenAI); a JSON object with its schema (llama-cpp-python's server, which refuses
        # the former); or, once both were refused, the schema in the prompt.
        self.structured_output: StructuredOutput = "json_schema"
        # The model's template opens its reasoning tag in the prompt (see the module).
        self.reasoning_opens_in_prompt = settings.reasoning_opens_in_prompt
        self.settings = settings
        # The model's context window: configured, read from the endpoint, or learned from
        # a refusal; and whether the endpoint counts tokens (vLLM's /tokenize).
        self.window: int | None = settings.context_window
        self._window_asked = settings.context_window is not None
        self._tokenize: bool | None = None
        # Clients of the tasks that go to another model or endpoint (`[llm.tasks]`).
        self._tasks = {task: LlmClient(settings.for_task(task)) for task in settings.tasks}

    def for_task(self, task: LlmTask) -> LlmClient:
        """The client a task's calls go through: its own model's, or this one."""
        return self._tasks.get(task, self)

    def _without_reasoning(
        self, raw: str, *, final: bool = True, streamed: bool = False
    ) -> Reasoned:
        """`raw` without its reasoning. While it is not known whether the model's template
        opens the tag (None), a stream is held as if it did: shown once the tag closes or
        the reply ends. A lone closing tag says it does; a whole streamed answer without
        any closing tag says it does not."""
        held = self.reasoning_opens_in_prompt is not False
        found = parse_reasoning(raw, final=final, opens_in_prompt=held)
        if found.closed_alone and not self.reasoning_opens_in_prompt:
            log.info(
                "the model closes a reasoning tag its template opened: its streamed "
                "answers are shown once the reasoning is over"
            )
            self.reasoning_opens_in_prompt = True
        elif final and streamed and self.reasoning_opens_in_prompt is None:
            if not CLOSING_TAG.search(raw):
                self.reasoning_opens_in_prompt = False
        return found

    async def close(self) -> None:
        await self._client.close()
        for client in self._tasks.values():
            await client.close()

    async def context_window(self) -> int | None:
        """The model's context window in tokens: `[llm] context_window`, else what the
        endpoint's model list says (vLLM's `max_model_len`), else what a refusal named;
        None while not known."""
        if not self._window_asked:
            self._window_asked = True
            try:
                listed = await self._client.models.list()
            except API_ERRORS as exc:
                log.info("the model list could not be read: %s", type(exc).__name__)
                return self.window
            for entry in listed.data:
                found = (entry.model_extra or {}).get("max_model_len")
                if entry.id == self.model and isinstance(found, int) and found > 0:
                    self.window = found
                    log.info("the model's context window is %d tokens", found)
        return self.window

    def learn_window(self, error: LlmPromptTooLong) -> None:
        """A refusal for length named the window: believe it from now on."""
        if error.window and (self.window is None or error.window < self.window):
            log.warning(
                "the model's context window is %d tokens (the endpoint says so); "
                "set llm.context_window to say it from the start",
                error.window,
            )
            self.window = error.window

    async def count_tokens(self, messages: Messages) -> int:
        """The prompt's tokens with the served model's tokenizer where the endpoint counts
        them (vLLM's /tokenize), else a safe estimate (core/llm/window.py)."""
        if self._tokenize is not False:
            root = str(self._client.base_url).rstrip("/").removesuffix("/v1")
            try:
                response = await self._client.post(
                    f"{root}/tokenize",
                    cast_to=httpx.Response,
                    body={"model": self.model, "messages": messages},
                )
                count = response.json().get("count")
                if isinstance(count, int):
                    self._tokenize = True
                    return count
            except (*API_ERRORS, ValueError):
                pass
            if self._tokenize is None:
                log.info("the endpoint does not count tokens: prompts are estimated")
                self._tokenize = False
        return estimate_tokens(messages)

    def _extra(self, task: str) -> dict[str, Any]:
        """The task's extra request fields (`[llm.request_fields.<task>]`)."""
        fields = self.settings.request_fields.get(task)  # type: ignore[call-overload]
        return {"extra_body": dict(fields)} if fields else {}

    async def complete(self, messages: Messages, task: str = "", **options: Any) -> Completion:
        """One reply, whole (its reasoning left out); `task` names the kind of call for
        its extra request fields."""
        async with self._slots:
            try:
                response = await self._client.chat.completions.create(
                    model=self.model,
                    messages=cast("list[ChatCompletionMessageParam]", messages),
                    **options,
                    **self._extra(task),
                )
            except openai.APIStatusError as exc:
                # Only a refusal that names the option: a prompt over the context length
                # is a 400 too, and must not turn structured output off for good.
                # (llama-cpp-python's server answers a `json_schema` format with a 500
                # that quotes its validation error.)
                said = str(exc)
                names_option = "response_format" in said or "json_schema" in said
                if "response_format" in options and names_option and not TOO_LONG.search(said):
                    raise LlmRefusedOption(f"{type(exc).__name__}: {exc}") from None
                raise build_llm_error(exc) from None
            except API_ERRORS as exc:
                raise build_llm_error(exc) from None
        choice = response.choices[0]
        if choice.finish_reason == "length":
            # Cut at the token limit: a truncated JSON, summary or check, never a whole one
            # (asking for a repair would be cut the same way). No partial text: it is not
            # an answer a reader could use.
            raise LlmCutOff(
                f"{task or 'a'} reply was cut at the token limit "
                f"(finish_reason 'length', max_tokens {options.get('max_tokens')})"
            )
        if choice.finish_reason == "content_filter":
            raise LlmFiltered(f"{task or 'a'} reply was stopped by the content filter")
        usage = response.usage
        reply = self._without_reasoning(choice.message.content or "")
        return Completion(
            reply.text,
            usage.prompt_tokens if usage else 0,
            usage.completion_tokens if usage else 0,
            reply.reasoning_chars,
        )

    async def stream(self, messages: Messages, **options: Any) -> AsyncIterator[Reasoned]:
        """The answer as it is generated: each item is the text that may be shown so far
        (reasoning left out, see the module), the last one the whole answer.

        Raises IncompleteAnswer when the stream stops before a chunk says the model
        finished (`FINISHED`): the connection dropped or the server sent an error
        mid-stream (openai raises APIConnectionError or APIError), or the body just ended
        without a finish_reason (openai then ends the iteration quietly, [DONE] or not).
        Raises EmptyAnswer when the model finished with no text."""
        async with self._slots:
            try:
                stream = await self._client.chat.completions.create(
                    model=self.model,
                    messages=cast("list[ChatCompletionMessageParam]", messages),
                    stream=True,
                    **options,
                    **self._extra("answer"),
                )
            except API_ERRORS as exc:
                raise build_llm_error(exc) from None
            raw, shown, finish = "", "", None
            try:
                async for chunk in stream:
                    # A chunk with no choices: usage, or an error in an older vLLM's format.
                    if not chunk.choices:
                        continue
                    choice = chunk.choices[0]
                    finish = choice.finish_reason or finish
                    if choice.delta and choice.delta.content:
                        raw += choice.delta.content
                        so_far = self._without_reasoning(raw, final=False)
                        if so_far.text != shown:
                            shown = so_far.text
                            yield so_far
            except API_ERRORS as exc:
                raise IncompleteAnswer(f"{type(exc).__name__}: {exc}", shown) from None
        whole = self._without_reasoning(raw, streamed=finish == FINISHED)
        if finish == "content_filter":
            # Not an answer cut short: what the filter stopped is not shown, even in part.
            raise LlmFiltered("the answer was stopped by the content filter")
        _check_ending(finish, whole.text, shown)
        if whole.text != shown:
            yield whole

    async def complete_json(
        self, messages: Messages, schema: type[Model], name: str
    ) -> tuple[Model, Completion]:
        """An answer that follows `schema`: asked for with `response_format`, or with the
        schema in the prompt where the endpoint refuses that (see the module's text)."""
        completion, options = await self._complete_structured(messages, schema, name)
        try:
            return schema.model_validate_json(build_json_text(completion.text)), completion
        except ValidationError as exc:
            problem = _describe(exc)
        repair = [
            *messages,
            {"role": "assistant", "content": completion.text},
            {"role": "user", "content": REPAIR.format(problem=problem)},
        ]
        repaired = await self.complete(repair, name, **options)
        try:
            return schema.model_validate_json(build_json_text(repaired.text)), repaired
        except ValidationError as exc:
            raise LlmInvalidOutput(f"{name}: {_describe(exc)}") from None

    async def _complete_structured(
        self, messages: Messages, schema: type[Model], name: str
    ) -> tuple[Completion, dict[str, Any]]:
        json_schema = schema.model_json_schema()
        # Every structured reply is bounded: a small model may otherwise write until the
        # timeout (a JSON object never closed) and hold the endpoint all that time.
        bound = {"max_tokens": self.settings.max_tokens.of(name)}
        in_prompt = [
            *messages,
            {"role": "user", "content": SCHEMA_IN_PROMPT.format(schema=json.dumps(json_schema))},
        ]
        formats: dict[StructuredOutput, dict[str, Any]] = {
            "json_schema": {
                "type": "json_schema",
                "json_schema": {"name": name, "schema": json_schema, "strict": True},
            },
            "json_object": {"type": "json_object", "schema": json_schema},
        }
        while (mode := self.structured_output) != "prompt":
            options: dict[str, Any] = {"response_format": formats[mode], **bound}
            # A JSON object without its schema for a server that ignores "schema": the
            # prompt says the shape too.
            asked = messages if mode == "json_schema" else in_prompt
            try:
                return await self.complete(asked, name, **options), options
            except LlmRefusedOption:
                # Only the first of calls refused at once moves on (each step is tried).
                if self.structured_output == mode:
                    self.structured_output = "json_object" if mode == "json_schema" else "prompt"
                    log.warning(
                        "the model endpoint refuses response_format %s: asking with %s from now on",
                        mode,
                        self.structured_output,
                    )
        return await self.complete(in_prompt, name, **bound), bound


def _check_ending(finish: str | None, text: str, shown: str) -> None:
    if finish != FINISHED:
        why = f"finish_reason {finish!r}" if finish else "no finish_reason"
        raise IncompleteAnswer(why, shown)
    if not text.strip():
        raise EmptyAnswer("the model finished its answer with no text")


def build_json_text(reply: str) -> str:
    """The JSON object of a reply: the reply itself, or the object in its ```json fence,
    or from its first { to its last } (an endpoint that ignores `response_format` may
    say "Here is the JSON:" around it)."""
    text = reply.strip()
    if text.startswith("{"):
        return text
    fenced = FENCED.search(text)
    if fenced:
        return fenced.group(1)
    first, last = text.find("{"), text.rfind("}")
    return text[first : last + 1] if 0 <= first < last else text


def _describe(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "the whole answer"
    return f"{where}: {first['msg']}"
