"""`deploy/compose/setup.sh` as a new admin runs it. No container engine can pull images
here, so `docker` is a recording stand-in (DOCKER=…) that plays Synapse's part: it has
no config until `generate`, answers its health check, and takes the registration."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

from core.config import load_config

ROOT = Path(__file__).resolve().parents[2]

FAKE_DOCKER = r"""#!/usr/bin/env bash
here=$(dirname "$0")
echo "$*" >> "$here/calls"
case "$*" in
  *"--entrypoint test synapse -f /data/homeserver.yaml"*) [ -f "$here/generated" ] ;;
  *"synapse generate"*) touch "$here/generated" ;;
  *register_new_matrix_user*) cat > "$here/password-given" ;;
  *) true ;;
esac
"""


def stack(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    folder = tmp_path / "compose"
    shutil.copytree(ROOT / "deploy" / "compose", folder)
    (folder / ".env").unlink(missing_ok=True)
    docker = tmp_path / "docker"
    docker.write_text(FAKE_DOCKER)
    docker.chmod(0o755)
    return folder, {**os.environ, "DOCKER": str(docker)}


def setup(folder: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(folder / "setup.sh")], env=env, capture_output=True, text=True, timeout=60
    )


def fill_env(folder: Path) -> None:
    text = (folder / ".env").read_text()
    text = text.replace("SERVER_NAME=example.org", "SERVER_NAME=chat.example.com")
    text = text.replace("BOT_PASSWORD=change-me", "BOT_PASSWORD=correct horse battery")
    text = text.replace("BOT_PICKLE_KEY=\n", "BOT_PICKLE_KEY=" + "k" * 32 + "\n")
    (folder / ".env").write_text(text)


def test_a_first_run_writes_env_and_asks_for_the_secrets(tmp_path):
    folder, env = stack(tmp_path)
    first = setup(folder, env)
    assert first.returncode == 1 and "set SERVER_NAME, BOT_PASSWORD" in first.stderr
    assert stat.S_IMODE((folder / ".env").stat().st_mode) == 0o600, "only its owner reads it"
    unfilled = setup(folder, env)
    assert unfilled.returncode == 1 and ".env: set BOT_PASSWORD" in unfilled.stderr
    assert not (tmp_path / "calls").exists(), "nothing started before the secrets are set"


def test_setup_generates_synapse_registers_the_bot_and_names_it_in_the_config(tmp_path):
    folder, env = stack(tmp_path)
    setup(folder, env)
    fill_env(folder)
    done = setup(folder, env)
    assert done.returncode == 0, done.stderr
    calls = (tmp_path / "calls").read_text()
    assert "synapse generate" in calls and "up -d synapse" in calls
    assert (tmp_path / "password-given").read_text() == "correct horse battery"
    assert "correct horse" not in calls, "the password never is a command-line argument"
    assert "--exists-ok" in calls, "a second run does not fail on the existing account"

    config = load_config(
        folder / "config" / "config.toml",
        {"BOT_PASSWORD": "x", "BOT_PICKLE_KEY": "k" * 32, "WIKI_TOKEN": "y"},
    )
    assert config.matrix.user_id == "@knowledge-bot:chat.example.com"
    assert list(config.invites.allowed_servers) == ["chat.example.com"]

    (tmp_path / "calls").unlink()
    again = setup(folder, env)
    assert again.returncode == 0, again.stderr
    assert "generate" not in (tmp_path / "calls").read_text(), "Synapse's config is kept"
