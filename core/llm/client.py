"""One async client for an OpenAI-compatible endpoint (vLLM in production).

The openai library does the HTTP, the timeouts and the retries with backoff; this adds a
limit on concurrent calls, streaming, and structured output: `response_format` with a
JSON schema (what vLLM honours), validated after parsing, with one repair attempt.

Endpoints that do not honour `response_format` still work: one that refuses it (HTTP
400) is asked from then on with the schema in the prompt instead; one that ignores it
and wraps the JSON in prose or a code fence has the object taken out of its reply. Either
way the result is validated against the schema, as with an endpoint that honours it.

A streamed answer counts only when the model ended it: a stream that stops early, or
that ends with no text, raises instead of passing for an answer (`stream`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import openai
from openai.types.chat import ChatCompletionMessageParam
from pydantic import BaseModel, ValidationError

from core.config.llm import LlmSettings
from core.trace import Messages

Model = TypeVar("Model", bound=BaseModel)
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
    """The language model could not give a usable answer; the text is for logs."""


class LlmUnavailable(LlmError):
    """The endpoint failed, timed out or could not be reached (after the retries)."""


class LlmInvalidOutput(LlmError):
    """The output did not follow the schema (even after one repair attempt), or was cut
    at the token limit."""


class LlmRefusedOption(LlmUnavailable):
    """The endpoint answered 400 to a request with `response_format` (it supports none)."""


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
        # False once the endpoint refused `response_format`: the schema goes in the prompt.
        self.structured_output = True

    async def close(self) -> None:
        await self._client.close()

    async def complete(self, messages: Messages, **options: Any) -> Completion:
        async with self._slots:
            try:
                response = await self._client.chat.completions.create(
                    model=self.model,
                    messages=cast("list[ChatCompletionMessageParam]", messages),
                    **options,
                )
            except openai.BadRequestError as exc:
                # Only a refusal that names the option: a prompt over the context length
                # is a 400 too, and must not turn structured output off for good.
                said = str(exc)
                if "response_format" in options and ("response_format" in said
                                                     or "json_schema" in said):  # fmt: skip
                    raise LlmRefusedOption(f"{type(exc).__name__}: {exc}") from None
                raise LlmUnavailable(f"{type(exc).__name__}: {exc}") from None
            except API_ERRORS as exc:
                raise LlmUnavailable(f"{type(exc).__name__}: {exc}") from None
        choice = response.choices[0]
        if choice.finish_reason == "length":
            # Cut at the token limit: a truncated JSON, summary or check, never a whole one
            # (asking for a repair would be cut the same way). No partial text: it is not
            # an answer a reader could use.
            raise LlmInvalidOutput("the reply was cut at the token limit (finish_reason 'length')")
        usage = response.usage
        return Completion(
            choice.message.content or "",
            usage.prompt_tokens if usage else 0,
            usage.completion_tokens if usage else 0,
        )

    async def stream(self, messages: Messages) -> AsyncIterator[str]:
        """The answer's text as it is generated, in pieces.

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
                )
            except API_ERRORS as exc:
                raise LlmUnavailable(f"{type(exc).__name__}: {exc}") from None
            text, finish = "", None
            try:
                async for chunk in stream:
                    # A chunk with no choices: usage, or an error in an older vLLM's format.
                    if not chunk.choices:
                        continue
                    choice = chunk.choices[0]
                    finish = choice.finish_reason or finish
                    if choice.delta and choice.delta.content:
                        text += choice.delta.content
                        yield choice.delta.content
            except API_ERRORS as exc:
                raise IncompleteAnswer(f"{type(exc).__name__}: {exc}", text) from None
        _check_ending(finish, text)

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
        repaired = await self.complete(repair, **options)
        try:
            return schema.model_validate_json(build_json_text(repaired.text)), repaired
        except ValidationError as exc:
            raise LlmInvalidOutput(f"{name}: {_describe(exc)}") from None

    async def _complete_structured(
        self, messages: Messages, schema: type[Model], name: str
    ) -> tuple[Completion, dict[str, Any]]:
        json_schema = schema.model_json_schema()
        if self.structured_output:
            options: dict[str, Any] = {
                "response_format": {
                    "type": "json_schema",
                    "json_schema": {"name": name, "schema": json_schema, "strict": True},
                }
            }
            try:
                return await self.complete(messages, **options), options
            except LlmRefusedOption:
                log.warning("the model endpoint refuses response_format: the JSON schema "
                            "goes in the prompt from now on")  # fmt: skip
                self.structured_output = False
        asked = [
            *messages,
            {"role": "user", "content": SCHEMA_IN_PROMPT.format(schema=json.dumps(json_schema))},
        ]
        return await self.complete(asked), {}


def _check_ending(finish: str | None, text: str) -> None:
    if finish != FINISHED:
        why = f"finish_reason {finish!r}" if finish else "no finish_reason"
        raise IncompleteAnswer(why, text)
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
