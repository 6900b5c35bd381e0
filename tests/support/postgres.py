"""A throw-away PostgreSQL server for the tests: initdb in a temporary folder, started on a
free loopback port, one fresh database per test. The server comes from the Debian package
that `deploy/setup-postgres.sh` installs (the README's test command runs it)."""

from __future__ import annotations

import asyncio
import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

import asyncpg

from bot.dev.synapse import free_port

USER = "knowledge"


def find_bin(name: str) -> str:
    found = shutil.which(name) or next(
        iter(sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True)), None
    )
    if found is None:
        raise RuntimeError(
            f"PostgreSQL's {name} is not installed; run deploy/setup-postgres.sh "
            "(tests/run.sh does)"
        )
    return found


class PostgresServer:
    def __init__(self) -> None:
        # Under /tmp, not pytest's private folder: the `postgres` user must reach it.
        self.folder = Path(tempfile.mkdtemp(prefix="knowledge-pg-"))
        self.port = free_port()
        self._process: subprocess.Popen | None = None
        # PostgreSQL refuses to run as root: as root, the server runs as `postgres`.
        self._as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []

    @property
    def url(self) -> str:
        return f"postgresql://{USER}@127.0.0.1:{self.port}/postgres"

    def url_of(self, database: str) -> str:
        return f"postgresql://{USER}@127.0.0.1:{self.port}/{database}"

    def start(self) -> PostgresServer:
        data, sockets = self.folder / "data", self.folder / "sockets"
        sockets.mkdir(parents=True)
        if self._as_user:
            shutil.chown(self.folder, "postgres")
            shutil.chown(sockets, "postgres")
        subprocess.run(
            [
                *self._as_user,
                find_bin("initdb"),
                "-D",
                str(data),
                "-U",
                USER,
                "--auth=trust",
                "--no-sync",
                "-E",
                "UTF8",
                "--locale=C.UTF-8",
            ],
            check=True,
            capture_output=True,
        )
        self._process = subprocess.Popen(
            [
                *self._as_user,
                find_bin("postgres"),
                "-D",
                str(data),
                "-p",
                str(self.port),
                "-k",
                str(sockets),
                "-h",
                "127.0.0.1",
                "-c",
                "fsync=off",
                "-c",
                "synchronous_commit=off",
                "-c",
                "full_page_writes=off",
                "-c",
                "max_connections=300",
            ],
            stdout=subprocess.DEVNULL,
            stderr=(self.folder / "server.log").open("wb"),
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError((self.folder / "server.log").read_text()[-2000:])
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", self.port)) == 0:
                    return self
            time.sleep(0.1)
        raise RuntimeError("PostgreSQL did not start in 30 s")

    async def create_database(self) -> str:
        """A fresh, empty database; returns its URL."""
        name = f"test_{uuid.uuid4().hex[:12]}"
        connection = await self._connect()
        try:
            await connection.execute(f"CREATE DATABASE {name}")
        finally:
            await connection.close()
        return self.url_of(name)

    async def _connect(self) -> asyncpg.Connection:
        for _ in range(100):  # the server may still be finishing its start
            try:
                return await asyncpg.connect(self.url)
            except (OSError, asyncpg.CannotConnectNowError):
                await asyncio.sleep(0.1)
        return await asyncpg.connect(self.url)

    def stop(self) -> None:
        if self._process is not None:
            self._process.terminate()
            try:
                self._process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self._process.kill()
        shutil.rmtree(self.folder, ignore_errors=True)
