"""A real Chroma server for tests: `chroma run` on a loopback port and a folder of its
own, started, killed and started again at will (its data survives in the folder)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bot.dev.synapse import free_port
from tests.support.served import wait_until_answering

CHROMA = Path(sys.executable).parent / "chroma"


class ChromaServer:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        """Start it and return once it answers its heartbeat."""
        self.process = subprocess.Popen(
            [
                str(CHROMA),
                "run",
                "--path",
                str(self.path),
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_until_answering(f"{self.url}/api/v2/heartbeat", self.process, "chroma run", 30)

    def kill(self) -> None:
        """Stop it at once, as a crash would."""
        if self.process:
            self.process.kill()
            self.process.wait(timeout=10)
            self.process = None

    def stop(self) -> None:
        if self.process:
            self.process.terminate()
            self.process.wait(timeout=10)
            self.process = None
