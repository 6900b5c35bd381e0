"""The bot's access token from a file (`matrix.access_token_file`, homeservers without
password login): what the config accepts, and which replaced tokens are taken."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace

import pytest
from nio import WhoamiResponse

from bot.matrix.nio_account import decide_token_problem
from bot.runtime import token_watch
from core import strings
from core.config import ConfigError, parse_config

MATRIX = '[matrix]\nhomeserver = "http://127.0.0.1:1"\nuser_id = "@bot:x"\n'


def load(extra: str, folder: Path):
    return parse_config(MATRIX + extra, origin="bot.toml", env={}, base_dir=folder)


def test_the_token_is_read_from_the_file_each_time(tmp_path):
    (tmp_path / "token").write_text("syt_first\n# a comment line the bot ignores\n")
    settings = load('access_token_file = "token"\n', tmp_path)
    assert settings.matrix.login_token() == "syt_first"
    assert settings.matrix.token_file() == tmp_path / "token"
    (tmp_path / "token").write_text("syt_second")
    assert settings.matrix.login_token() == "syt_second", "a replaced token is read anew"


@pytest.mark.parametrize(
    "extra,problem",
    [
        ('access_token_file = "missing"\n', "does not exist"),
        ('access_token_file = "empty"\n', "is empty"),
        ('access_token_file = "token"\npassword = "p"\n', "not both"),
    ],
)
def test_a_token_file_that_cannot_be_used_is_a_config_error(tmp_path, extra, problem):
    (tmp_path / "token").write_text("syt_abc")
    (tmp_path / "empty").write_text("\n")
    with pytest.raises(ConfigError, match=problem):
        load(extra, tmp_path)


def whoami(user_id: str, device_id: str | None) -> WhoamiResponse:
    return WhoamiResponse(user_id, device_id, False)


@pytest.mark.parametrize(
    "found,problem",
    [
        (whoami("@bot:x", "DEV1"), None),
        (whoami("@bot:x", "DEV2"), "for device DEV2, not the bot's device DEV1"),
        (whoami("@bot:x", None), "for device (none)"),
        (whoami("@other:x", "DEV1"), "is for @other:x"),
    ],
)
def test_decide_token_problem(found, problem):
    decided = decide_token_problem("@bot:x", "DEV1", found)
    assert decided == problem if problem is None else problem in decided


class TokenTaker:
    """An account as the watcher sees it: the token in use, and the tokens it was given
    (one starting "bad" is refused)."""

    def __init__(self, token: str) -> None:
        self.client = SimpleNamespace(access_token=token, device_id="DEV")
        self.token_refused = False
        self.given: list[str] = []

    async def use_token(self, token: str) -> str | None:
        self.given.append(token)
        if token.startswith("bad"):
            return "not this account's"
        self.client.access_token = token
        return None


async def test_the_token_in_use_written_back_is_not_reported_as_new(tmp_path, monkeypatch):
    path = tmp_path / "access-token"
    path.write_text("old\n")
    account = TokenTaker("old")
    reports: list[str] = []
    heard, looked = asyncio.Event(), asyncio.Event()
    read = token_watch.read_token_file

    def counted(at: Path) -> str:
        looked.set()
        return read(at)

    async def looked_again() -> None:  # the watcher has read the file since now
        looked.clear()
        await asyncio.wait_for(looked.wait(), 10)

    def report(text: str) -> None:
        reports.append(text)
        heard.set()

    monkeypatch.setattr(token_watch, "POLL_SECONDS", 0.01)
    monkeypatch.setattr(token_watch, "read_token_file", counted)
    watching = asyncio.create_task(token_watch.watch_token_file(path, account, report))  # type: ignore[arg-type]
    try:
        await looked_again()  # it started from "old"
        path.write_text("bad\n")  # refused: the bot keeps "old"
        await asyncio.wait_for(heard.wait(), 10)
        heard.clear()
        path.write_text("old\n")  # the admin puts the one in use back
        await looked_again()
        await looked_again()
        path.write_text("new\n")
        await asyncio.wait_for(heard.wait(), 10)
    finally:
        watching.cancel()
    assert account.given == ["bad", "new"]
    assert reports == [
        strings.TOKEN_NOT_TAKEN.format(problem="not this account's"),
        strings.TOKEN_TAKEN,
    ]
