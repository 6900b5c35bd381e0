"""Starting the bot with a broken config stops at once and says where."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_an_invalid_config_stops_the_start_with_file_key_and_reason(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text(
        '[matrix]\nhomeserver = "http://127.0.0.1:1"\nuser_id = "@bot:x"\n'
        'password_env = "NOT_SET_ANYWHERE"\n[bot]\ncolour = "blue"\n'
    )
    result = subprocess.run(
        [sys.executable, "-m", "bot", "--config", str(config)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin"},
        timeout=60,
    )
    assert result.returncode == 2
    assert f"{config}: bot.colour: unknown key" in result.stderr
    assert (
        f"{config}: matrix.password_env: the environment variable NOT_SET_ANYWHERE" in result.stderr
    )
