"""A local Synapse homeserver from PyPI, in its own virtualenv, on a loopback port.

Used by the local demo (`python -m bot.dev.local`) and by the test suite. The config is
minimal: one client listener, SQLite, no federation, shared-secret registration, and
every rate limit raised so that tests that log in repeatedly never wait on a 429.
"""

from __future__ import annotations

import fcntl
import hashlib
import hmac
import json
import random
import secrets
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import venv
from dataclasses import dataclass, field
from pathlib import Path

SYNAPSE_REQUIREMENT = "matrix-synapse~=1.163"
SERVER_NAME = "localhost"
GENEROUS = {"per_second": 1000, "burst_count": 1000}


def ensure_synapse_venv(venv_dir: Path) -> Path:
    """The Python of a virtualenv holding Synapse, created on first use.

    Several processes may ask at once (the test run's workers, a demo beside the tests):
    one installs while the others wait on a lock file beside the virtualenv, then find it
    there."""
    python = venv_dir / "bin" / "python"
    marker = venv_dir / "bin" / "synapse_homeserver"
    if marker.exists():
        return python
    venv_dir.parent.mkdir(parents=True, exist_ok=True)
    with open(venv_dir.with_name(venv_dir.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not marker.exists():
            print(f"Installing Synapse into {venv_dir} (once)…", file=sys.stderr)
            venv.EnvBuilder(with_pip=True, clear=True).create(venv_dir)
            install = [str(python), "-m", "pip", "install", "--quiet", SYNAPSE_REQUIREMENT]
            result = subprocess.run(install, capture_output=True, text=True)
            if result.returncode != 0:
                raise RuntimeError(f"installing Synapse failed:\n{result.stderr[-3000:]}")
    return python


def free_port() -> int:
    """A loopback port nobody listens on, picked outside the kernel's ephemeral range.

    A port the kernel hands out for `bind(0)` comes from the range it also gives to
    outgoing connections, so between picking it and listening on it any client could
    take it: a CI run lost its health endpoint that way ("address already in use").
    Outside that range (below it, else above it) only a listener can hold a port, and
    each port is handed out once per process; where neither side has room, `bind(0)`.
    """
    low, high = _ephemeral_range()
    spans = [span for span in ((1024, low), (high + 1, 65536)) if span[1] - span[0] >= 1000]
    for _ in range(1000 if spans else 0):
        port = _PICKER.randrange(*_PICKER.choice(spans))
        if port not in _HANDED_OUT and _listenable(port):
            _HANDED_OUT.add(port)
            return port
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# Its own generator: a test that seeds `random` must not make two processes pick alike.
_PICKER = random.SystemRandom()
_HANDED_OUT: set[int] = set()


def _listenable(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _ephemeral_range() -> tuple[int, int]:
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[:2]
        return int(low), int(high)
    except (OSError, ValueError):
        return 32768, 60999  # Linux's default; elsewhere only a guess, checked by binding


def _settings(data_dir: Path, port: int, shared_secret: str) -> dict:
    limits = {
        name: GENEROUS
        for name in (
            "rc_message",
            "rc_registration",
            "rc_joins_per_room",
            "rc_3pid_validation",
            "rc_admin_redaction",
            "rc_room_creation",
            "rc_reports",
            "rc_delayed_event_mgmt",
            "rc_media_create",
        )
    }
    return {
        "server_name": SERVER_NAME,
        "pid_file": str(data_dir / "homeserver.pid"),
        "listeners": [
            {
                "port": port,
                "bind_addresses": ["127.0.0.1"],
                "type": "http",
                "tls": False,
                "x_forwarded": False,
                "resources": [{"names": ["client", "keys"], "compress": False}],
            }
        ],
        "database": {"name": "sqlite3", "args": {"database": str(data_dir / "homeserver.db")}},
        "log_config": str(data_dir / "log.config"),
        "media_store_path": str(data_dir / "media_store"),
        "signing_key_path": str(data_dir / "signing.key"),
        "registration_shared_secret": shared_secret,
        "macaroon_secret_key": shared_secret + "-macaroon",
        "form_secret": shared_secret + "-form",
        "report_stats": False,
        "trusted_key_servers": [],
        "suppress_key_server_warning": True,
        "presence": {"enabled": False},
        "enable_registration": False,
        "rc_login": {"address": GENEROUS, "account": GENEROUS, "failed_attempts": GENEROUS},
        "rc_joins": {"local": GENEROUS, "remote": GENEROUS},
        "rc_invites": {"per_room": GENEROUS, "per_user": GENEROUS, "per_issuer": GENEROUS},
        "rc_presence": {"per_user": GENEROUS},
        **limits,
    }


def _log_config(data_dir: Path) -> dict:
    return {
        "version": 1,
        "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
        "handlers": {
            "file": {
                "class": "logging.FileHandler",
                "filename": str(data_dir / "homeserver.log"),
                "formatter": "plain",
            }
        },
        "root": {"level": "WARNING", "handlers": ["file"]},
        "disable_existing_loggers": False,
    }


@dataclass
class Homeserver:
    url: str
    data_dir: Path
    shared_secret: str
    process: subprocess.Popen = field(repr=False)

    def register(self, localpart: str, password: str, *, admin: bool = False) -> str:
        """Create an account with the shared-secret admin API; returns its user id."""
        return str(self.register_session(localpart, password, admin=admin)["user_id"])

    def register_session(self, localpart: str, password: str, *, admin: bool = False) -> dict:
        """Create an account with the shared-secret admin API, logged in on a new device
        (what works where password login is off): its user_id, access_token and
        device_id. An account that exists gives its user_id only."""
        endpoint = f"{self.url}/_synapse/admin/v1/register"
        with urllib.request.urlopen(endpoint, timeout=10) as response:
            nonce = json.load(response)["nonce"]
        message = "\0".join([nonce, localpart, password, "admin" if admin else "notadmin"])
        mac = hmac.new(self.shared_secret.encode(), message.encode(), hashlib.sha1).hexdigest()
        body = {"nonce": nonce, "username": localpart, "password": password, "admin": admin}
        request = urllib.request.Request(
            endpoint,
            data=json.dumps({**body, "mac": mac}).encode(),
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return dict(json.load(response))
        except urllib.error.HTTPError as exc:
            if exc.code == 400 and b"M_USER_IN_USE" in exc.read():
                return {"user_id": f"@{localpart}:{SERVER_NAME}"}
            raise

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class PortTaken(RuntimeError):
    """Another server answers on the port (it was free when chosen, then taken)."""


def start_homeserver(
    data_dir: Path, python: Path, port: int | None = None, overrides: dict | None = None
) -> Homeserver:
    """Start Synapse with its data in `data_dir` (reused if it exists) and wait until
    ready; `overrides` are settings of homeserver.yaml (password login off, say). A port
    another server took between its choice and the start (two demos starting at once)
    gives way to a free one: the returned `url` says which."""
    data_dir.mkdir(parents=True, exist_ok=True)
    secret_file = data_dir / "shared_secret"
    if not secret_file.exists():
        secret_file.write_text(secrets.token_hex(16))
    shared_secret = secret_file.read_text().strip()
    try:
        return _start(data_dir, python, port or free_port(), shared_secret, overrides)
    except PortTaken:
        return _start(data_dir, python, free_port(), shared_secret, overrides)


def _start(
    data_dir: Path, python: Path, port: int, shared_secret: str, overrides: dict | None
) -> Homeserver:
    config_path = data_dir / "homeserver.yaml"
    # JSON is YAML, so no YAML library is needed to write Synapse's config.
    settings = {**_settings(data_dir, port, shared_secret), **(overrides or {})}
    config_path.write_text(json.dumps(settings, indent=2))
    (data_dir / "log.config").write_text(json.dumps(_log_config(data_dir)))
    app = [str(python), "-m", "synapse.app.homeserver", "--config-path", str(config_path)]
    subprocess.run([*app, "--generate-keys"], check=True, cwd=data_dir, capture_output=True)
    process = subprocess.Popen(
        app, cwd=data_dir, stdout=subprocess.DEVNULL, stderr=open(data_dir / "stderr.log", "w")
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if process.poll() is not None:
            log_tail = (data_dir / "stderr.log").read_text()[-2000:]
            if "Address already in use" in log_tail:
                raise PortTaken(url)
            raise RuntimeError(f"Synapse exited with code {process.returncode}:\n{log_tail}")
        try:
            ours = _answers_with_our_key(url, data_dir)
        except OSError:
            time.sleep(0.2)
            continue
        if ours:
            return Homeserver(url, data_dir, shared_secret, process)
        # Another Synapse on the port: its registrations would refuse our secret (403).
        process.kill()
        process.wait()
        raise PortTaken(url)
    process.kill()
    raise RuntimeError("Synapse did not become ready within 90 s")


def _answers_with_our_key(url: str, data_dir: Path) -> bool:
    """Whether the server at `url` signs with the key in `data_dir` (it is this one, not
    another that took the port: the listener serves the `keys` resource for this);
    raises OSError while nothing answers."""
    _, key_id, _ = (data_dir / "signing.key").read_text().split()
    with urllib.request.urlopen(f"{url}/_matrix/key/v2/server", timeout=2) as response:
        return f"ed25519:{key_id}" in json.load(response).get("verify_keys", {})
