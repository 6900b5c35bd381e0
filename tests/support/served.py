"""Waiting for a server process the tests started to answer over HTTP."""

from __future__ import annotations

import subprocess
import time
import urllib.request


def wait_until_answering(url: str, process: subprocess.Popen, name: str, seconds: float) -> None:
    """Return once `url` answers; fail if the process ends or `seconds` pass first."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            urllib.request.urlopen(url, timeout=1)
            return
        except OSError:
            assert process.poll() is None, f"{name} exited"
            assert time.monotonic() < deadline, f"{name} did not start"
            time.sleep(0.2)
