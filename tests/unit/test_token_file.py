"""The bot's access token from a file (`matrix.access_token_file`, homeservers without
password login): what the config accepts, and which replaced tokens are taken."""

from __future__ import annotations

from pathlib import Path

import pytest
from nio import WhoamiResponse

from bot.matrix.nio_account import decide_token_problem
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
