"""Settings of the operations endpoint: /health and /metrics."""

from __future__ import annotations

from pydantic import Field

from core.config.strict import Strict


class OpsSettings(Strict):
    enabled: bool = True
    """Serve /health (sync, Chroma and the model reachable) and /metrics (Prometheus) on this
    address. In a container, use host = "0.0.0.0"."""
    host: str = "127.0.0.1"
    """The address /health and /metrics are served on. In a container, host = "0.0.0.0"."""
    port: int = Field(default=9100, ge=1, le=65535)
    """The port /health and /metrics are served on."""
