"""Whether the bot is healthy, from its checks (pure)."""

from __future__ import annotations

from typing import Literal

# "standby": a process waiting to take over the syncing from the active one.
Check = Literal["ok", "failing", "not used", "standby"]


def decide_health(checks: dict[str, Check]) -> tuple[int, dict]:
    """200 when every check in use passes, 503 otherwise; the body names each check."""
    healthy = all(state != "failing" for state in checks.values())
    return (200 if healthy else 503), {"status": "ok" if healthy else "failing", "checks": checks}
