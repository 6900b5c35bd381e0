"""The chat API's pure parts: reading OpenAI's request bodies, the tokens file, and what
a stream may add."""

from __future__ import annotations

import pytest

from core.chat_api.shapes import ApiError, build_request, decide_delta, parse_chat_call
from core.chat_api.tokens import (
    TokenBook,
    TokensFileError,
    build_token_entry,
    decide_caller,
    digest_of,
    parse_tokens,
)
from core.config import ConfigError, parse_config

USER = {"role": "user", "content": "How is travel booked?"}

REFUSED = {
    "not an object": ([], None),
    "no model": ({"messages": [USER]}, "model"),
    "no messages": ({"model": "m", "messages": []}, "messages"),
    "unknown role": (
        {"model": "m", "messages": [{"role": "boss", "content": "x"}]},
        "messages.0.role",
    ),
    "image part": (
        {
            "model": "m",
            "messages": [
                {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}
            ],
        },
        "messages.0.content",
    ),
    "ends with the assistant": (
        {"model": "m", "messages": [USER, {"role": "assistant", "content": "Hi"}]},
        "messages",
    ),
    "empty question": ({"model": "m", "messages": [{"role": "user", "content": "  "}]}, "messages"),
    "stream not a bool": ({"model": "m", "messages": [USER], "stream": "yes"}, "stream"),
}


@pytest.mark.parametrize("body,param", REFUSED.values(), ids=REFUSED.keys())
def test_a_body_that_cannot_be_answered_names_its_field(body, param):
    with pytest.raises(ApiError) as raised:
        parse_chat_call(body)
    assert raised.value.status == 400 and raised.value.param == param


def test_the_last_user_message_is_the_question_and_system_messages_are_left_out():
    call = parse_chat_call(
        {
            "model": "docs",
            "stream": True,
            "messages": [
                {"role": "system", "content": "Be terse."},
                {"role": "user", "content": [{"type": "text", "text": "Hi"}]},
                {"role": "assistant", "content": "Hello!"},
                {"role": "user", "content": " How is travel booked? "},
            ],
        }
    )
    assert call.question == "How is travel booked?" and call.stream
    assert call.history == (("user", "Hi"), ("assistant", "Hello!"))


def test_a_reader_is_asked_for_alone_and_no_reader_means_public_documents():
    call = parse_chat_call({"model": "docs", "messages": [USER]})
    mine = build_request(call, "@alice:example.org", "alice", keep=8)  # type: ignore[arg-type]
    assert mine.is_direct and mine.readers == ("@alice:example.org",) and not mine.open_room
    anyone = build_request(call, None, "kiosk", keep=8)
    assert anyone.open_room and anyone.readers == () and not anyone.knowledge


def test_only_the_last_messages_of_the_conversation_are_kept():
    turns = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"} for i in range(9)]
    call = parse_chat_call({"model": "docs", "messages": [*turns, USER]})
    recent = build_request(call, None, "kiosk", keep=3).recent
    assert [line.text for line in recent] == ["m6", "m7", "m8"]
    assert [line.from_bot for line in recent] == [False, True, False]
    assert build_request(call, None, "kiosk", keep=0).recent == ()


DELTAS = {
    "first words": ("", "Travel", "Travel"),
    "more words": ("Travel", "Travel is booked", " is booked"),
    "nothing new": ("Travel", "Travel", ""),
    "taken back": ("Travel is [3", "Travel is [1]", None),
}


@pytest.mark.parametrize("sent,text,delta", DELTAS.values(), ids=DELTAS.keys())
def test_a_stream_only_adds(sent, text, delta):
    assert decide_delta(sent, text) == delta


def test_tokens_are_found_by_their_hash_only():
    token, lines = build_token_entry("alice-laptop", "@alice:example.org")
    callers = parse_tokens(lines)
    assert token not in lines and digest_of(token) in lines
    found = decide_caller(token, callers)
    assert found is not None and found.reader == "@alice:example.org"
    assert decide_caller(token + "x", callers) is None
    public = decide_caller(*_one("kiosk", ""))
    assert public is not None and public.reader is None


def _one(name: str, reader: str) -> tuple[str, dict]:
    token, lines = build_token_entry(name, reader)
    return token, parse_tokens(lines)


BROKEN_FILES = {
    "not TOML": ("[tokens.a\n", "not valid TOML"),
    "short hash": ('[tokens.a]\nsha256 = "abc"\n', "tokens.a.sha256"),
    "bad reader": (f'[tokens.a]\nsha256 = "{"a" * 64}"\nreader = "alice"\n', "tokens.a.reader"),
    "unknown key": (f'[tokens.a]\nsha256 = "{"a" * 64}"\nrole = "admin"\n', "tokens.a"),
    "same token twice": (
        f'[tokens.a]\nsha256 = "{"a" * 64}"\n[tokens.b]\nsha256 = "{"a" * 64}"\n',
        "tokens.b",
    ),
}


@pytest.mark.parametrize("text,named", BROKEN_FILES.values(), ids=BROKEN_FILES.keys())
def test_a_broken_tokens_file_names_the_entry(text, named):
    with pytest.raises(TokensFileError, match=named.replace(".", r"\.")):
        parse_tokens(text)


def test_a_token_name_must_be_a_plain_key():
    with pytest.raises(ValueError, match="letters, digits"):
        build_token_entry('a"]\n[tokens.evil', "")


MATRIX = '[matrix]\nhomeserver = "http://h"\nuser_id = "@b:h"\npassword = "p"\n'
WIKI = '[sources.wiki]\ntoken = "t"\n[collections.handbook]\nsource = "wiki"\n'
ASSISTANT_ERRORS = {
    "unknown collection": (
        '[assistants.docs]\ncollections = ["wiki"]\n',
        "assistants: docs.collections: 'wiki' is not a [collections] entry",
    ),
    "bad name": ('[assistants."Docs Bot"]\n', "the name 'Docs Bot' must match"),
    "unknown placeholder": (
        '[assistants.docs]\nanswer_system = "Answer {questoin}"\n',
        "assistants.docs.answer_system",
    ),
    "tokens file missing": ('[chat_api]\ntokens_file = "nowhere.toml"\n', "chat_api.tokens_file"),
}


@pytest.mark.parametrize("text,named", ASSISTANT_ERRORS.values(), ids=ASSISTANT_ERRORS.keys())
def test_chat_api_config_errors_name_the_key(text, named, tmp_path):
    with pytest.raises(ConfigError) as caught:
        parse_config(MATRIX + WIKI + text, origin="bot.toml", env={}, base_dir=tmp_path)
    assert any(named in problem for problem in caught.value.problems), caught.value.problems


def test_a_broken_or_deleted_tokens_file_lets_nobody_in(tmp_path):
    """Revoking a token must hold even when the edit breaks the file: fail closed."""
    path = tmp_path / "tokens.toml"
    kept, kept_lines = build_token_entry("kept", "")
    path.write_text(kept_lines)
    book = TokenBook(path)
    assert book.find(kept) is not None and book.problem is None
    path.write_text(kept_lines + "[tokens.broken\n")
    assert book.find(kept) is None and "not valid TOML" in (book.problem or "")
    path.write_text(kept_lines)
    assert book.find(kept) is not None and book.problem is None
    path.unlink()
    assert book.find(kept) is None and book.problem
