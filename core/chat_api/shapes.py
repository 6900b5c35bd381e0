"""OpenAI's chat completion shapes, read and written. Pure: no I/O here.

What we add to OpenAI's shapes: `sources`, the documents the answer cites, numbered as
the `[n]` markers in its text (on the response, and on a stream's last chunk). The same
sources are also listed under the text, so that a client that shows only `content`
still shows them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.ids import RoomID, UserID
from core.requests import Answer, ChatLine, Request, Source

ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})


@dataclass(frozen=True)
class ApiError(Exception):
    """A refusal in OpenAI's error shape."""

    status: int
    message: str
    type: str = "invalid_request_error"
    code: str | None = None
    param: str | None = None
    # Seconds a client should wait before it asks again (a 429's Retry-After).
    retry_after: int | None = None

    def body(self) -> dict[str, Any]:
        return {
            "error": {
                "message": self.message,
                "type": self.type,
                "param": self.param,
                "code": self.code,
            }
        }


@dataclass(frozen=True)
class ChatCall:
    """What a chat completion request asks: the last user message is the question, the
    messages before it the conversation (system messages are the client's, not ours:
    they are left out, as instructions from a caller never reach the prompt)."""

    model: str
    question: str
    history: tuple[tuple[str, str], ...]  # (role, text): "user" or "assistant"
    stream: bool


def _text_of(content: Any, index: int) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if not isinstance(part, dict) or part.get("type") != "text":
                raise ApiError(
                    400, "only text content parts are supported", param=f"messages.{index}.content"
                )
            parts.append(str(part.get("text", "")))
        return "\n".join(parts)
    if content is None:
        return ""
    raise ApiError(
        400, "content must be a string or a list of parts", param=f"messages.{index}.content"
    )


def parse_chat_call(body: Any) -> ChatCall:
    """The request body as a ChatCall; an ApiError names the field that is wrong."""
    if not isinstance(body, dict):
        raise ApiError(400, "the body must be a JSON object")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise ApiError(400, "model is required", param="model")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise ApiError(400, "messages must be a non-empty list", param="messages")
    turns: list[tuple[str, str]] = []
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            raise ApiError(
                400,
                "each message needs a role: system, user or assistant",
                param=f"messages.{index}.role",
            )
        role = message["role"]
        if role in ("user", "assistant"):
            turns.append((role, _text_of(message.get("content"), index)))
    if not turns or turns[-1][0] != "user" or not turns[-1][1].strip():
        raise ApiError(400, "the last message must be the user's question", param="messages")
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise ApiError(400, "stream must be true or false", param="stream")
    return ChatCall(model, turns[-1][1].strip(), tuple(turns[:-1]), stream)


def decide_window(history: tuple[tuple[str, str], ...], keep: int) -> tuple[tuple[str, str], ...]:
    """The last `keep` turns of the conversation that say something: those that may be
    passed on as context."""
    said = tuple(turn for turn in history if turn[1].strip())
    return said[-keep:] if keep else ()


def build_request(call: ChatCall, reader: UserID | None, caller: str, keep: int) -> Request:
    """The question as the pipeline takes it. A reader's answers are bounded by their
    rights alone (as in a direct chat); a caller with no reader gets public documents
    only (as in a room anyone may join). The room is the caller's with the assistant,
    which has no history, memories or summaries: no room's knowledge is named."""
    sender = reader or UserID(f"@{caller}:chat-api.invalid")
    bot = UserID("@assistant:chat-api.invalid")
    lines = [
        ChatLine(bot if role == "assistant" else sender, text, from_bot=role == "assistant")
        for role, text in decide_window(call.history, keep)
    ]
    return Request(
        # A room per assistant and caller: the guardrails' per-room limit is the caller's.
        call.question,
        sender,
        RoomID(f"!{call.model}.{caller}:chat-api.invalid"),
        None,
        recent=tuple(lines),
        is_direct=reader is not None,
        readers=(reader,) if reader else (),
        open_room=reader is None,
        in_bot_conversation=bool(lines),
    )


def build_sources(sources: tuple[Source, ...]) -> list[dict[str, Any]]:
    return [
        {
            "number": number,
            "title": source.title,
            "url": source.url,
            "collection": source.collection,
            "document_id": source.document_id,
        }
        for number, source in enumerate(sources, start=1)
    ]


def build_completion(
    answer_text: str, answer: Answer, model: str, completion_id: str, created: int
) -> dict[str, Any]:
    """A whole (non-streamed) chat completion."""
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": answer_text},
                "finish_reason": "stop",
            }
        ],
        "sources": build_sources(answer.sources),
    }


def build_chunk(
    model: str,
    completion_id: str,
    created: int,
    delta: dict[str, str],
    finish: str | None = None,
    sources: tuple[Source, ...] | None = None,
) -> dict[str, Any]:
    """One chunk of a streamed completion; the last carries `finish` and the sources."""
    chunk: dict[str, Any] = {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    if sources is not None:
        chunk["sources"] = build_sources(sources)
    return chunk


def decide_delta(sent: str, text: str) -> str | None:
    """What to send after `sent` to show `text`: its rest, or None when `text` does
    not continue what was sent (a stream cannot take words back)."""
    return text[len(sent) :] if text.startswith(sent) else None


def build_model_list(assistants: dict[str, str]) -> dict[str, Any]:
    """`/v1/models`: each assistant by name, with its description."""
    return {
        "object": "list",
        "data": [
            {
                "id": name,
                "object": "model",
                "created": 0,
                "owned_by": "knowledge-bot",
                "description": description,
            }
            for name, description in assistants.items()
        ],
    }
