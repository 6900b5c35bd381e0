"""The container's health check: asks this process's /health where the config says
[ops] serves it (the image's HEALTHCHECK runs `python -m bot.runtime.probe`).

Standard library only and no config validation, so that it answers within the check's
timeout even on a busy host; the bot itself reports a config it cannot use.
"""

from __future__ import annotations

import os
import sys
import tomllib
import urllib.request
from pathlib import Path

DEFAULT_PORT = 9100


def decide_health_url(config_text: str) -> str:
    """The URL of /health as the config's [ops] section sets it (a wildcard address is
    asked on the loopback)."""
    ops = tomllib.loads(config_text).get("ops", {})
    host = str(ops.get("host", "127.0.0.1"))
    host = "127.0.0.1" if host in ("0.0.0.0", "", "::") else host
    host = f"[{host}]" if ":" in host else host
    return f"http://{host}:{int(ops.get('port', DEFAULT_PORT))}/health"


def main() -> int:
    path = Path(os.environ.get("BOT_CONFIG", "/config/config.toml"))
    try:
        url = decide_health_url(path.read_text(encoding="utf-8"))
        with urllib.request.urlopen(url, timeout=4) as response:
            return 0 if response.status == 200 else 1
    except (OSError, ValueError, tomllib.TOMLDecodeError) as exc:
        print(f"unhealthy: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
