"""The bearer token of an Authorization header, as the three HTTP servers read it."""

from __future__ import annotations

import pytest

from core.bearer import parse_bearer

HEADERS = {
    "the usual form": ("Bearer kb-123", "kb-123"),
    "the scheme in lower case": ("bearer kb-123", "kb-123"),
    "spaces around the token": ("Bearer  kb-123 ", "kb-123"),
    "another scheme": ("Basic a2I6MTIz", ""),
    "no token": ("Bearer", ""),
    "no header": ("", ""),
}


@pytest.mark.parametrize("header,token", HEADERS.values(), ids=HEADERS.keys())
def test_parse_bearer(header, token):
    assert parse_bearer(header) == token
