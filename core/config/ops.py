"""Settings of the operations endpoint: /health and /metrics."""

from __future__ import annotations

from pydantic import Field

from core.config.strict import Strict


class OpsSettings(Strict):
    # [restart] Serve /health (sync, Chroma and the model reachable) and /metrics
    # (Prometheus) on this address. In a container, use host = "0.0.0.0".
    enabled: bool = True
    host: str = "127.0.0.1"
    port: int = Field(default=9100, ge=1, le=65535)
