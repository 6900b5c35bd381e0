"""The ports the tests and the local demo listen on: never one the kernel may hand to an
outgoing connection in the meantime, never the same one twice."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import pytest

from bot.dev.synapse import free_port


@pytest.mark.skipif(sys.platform != "linux", reason="the ephemeral range is read from /proc")
def test_a_port_is_outside_the_ephemeral_range_and_free_to_listen_on():
    low, high = map(int, Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    port = free_port()
    assert 1024 <= port < low or high < port <= 65535
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))
        sock.listen()


def test_no_port_is_handed_out_twice():
    ports = [free_port() for _ in range(200)]
    assert len(set(ports)) == len(ports)
