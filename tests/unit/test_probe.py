"""The container's health check finds /health where the config's [ops] serves it."""

from __future__ import annotations

import pytest

from bot.runtime.probe import decide_health_url

CASES = {
    "defaults": ("", "http://127.0.0.1:9100/health"),
    "another port": ("[ops]\nport = 9200\n", "http://127.0.0.1:9200/health"),
    "every interface, asked on the loopback": (
        '[ops]\nhost = "0.0.0.0"\nport = 9100\n',
        "http://127.0.0.1:9100/health",
    ),
    "an address of its own": ('[ops]\nhost = "10.0.0.5"\n', "http://10.0.0.5:9100/health"),
    "IPv6 loopback": ('[ops]\nhost = "::1"\n', "http://[::1]:9100/health"),
}


@pytest.mark.parametrize("config,url", CASES.values(), ids=CASES.keys())
def test_the_probe_asks_where_ops_serves(config, url):
    assert decide_health_url(config) == url
