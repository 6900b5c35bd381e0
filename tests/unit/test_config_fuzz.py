"""The config loader under what a hurried edit leaves: files cut anywhere, random bytes,
and extreme values for every key of the example. Nothing but a ConfigError may come
out, and whatever is accepted can be used (a schedule becomes a scheduler trigger)."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from core.config import ConfigError, Settings, load_config
from core.config.summaries import parse_schedule
from core.summaries.schedule import build_trigger

ROOT = Path(__file__).resolve().parents[2]
ENV = {"BOT_PASSWORD": "secret", "WIKI_TOKEN": "wiki-token", "LLM_API_KEY": "key"}
# The example with the sections that an edit could cut away: a room override, a source
# with its token, a collection and a model endpoint.
EXAMPLE = (ROOT / "config.example.toml").read_text().replace(
    "[summaries]\n", '[summaries]\ncollection = "handbook"\n'
) + ('[rooms."!room:example.org"]\nsummary_schedule = "every 6h"\npublic_only = true\n')
KEY_LINE = re.compile(r"^(\w+) = (.+)$", re.M)
EXTREMES = [
    "1e308",
    "-1e308",
    "inf",
    "-inf",
    "nan",
    "9223372036854775808",
    "-1",
    "0",
    "9" * 5000,
    '"every 99999999999d"',
    '"every 9999999999999999999999s"',
    '"cron: 99 99 99 99 99"',
    '""',
    '"\\u0000"',
    '"' + "x" * 100_000 + '"',
    "[]",
    "{}",
    "true",
    "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]"
    "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
]


def load(tmp_path: Path, data: bytes) -> Settings | None:
    """The loader's verdict on the bytes; anything but a ConfigError fails the test."""
    path = tmp_path / "config.toml"
    path.write_bytes(data)
    try:
        settings = load_config(path, ENV)
    except ConfigError as exc:
        assert exc.problems and all(str(path) in problem for problem in exc.problems)
        return None
    for room in (settings.room_defaults, *settings.rooms.values()):
        schedule = parse_schedule(room.summary_schedule or "")
        if schedule is not None:
            build_trigger(schedule)
    return settings


def test_the_example_itself_loads(tmp_path):
    assert load(tmp_path, EXAMPLE.encode()) is not None


def test_a_file_cut_anywhere_is_loaded_or_refused(tmp_path):
    data = EXAMPLE.encode()
    lines = [match.end() for match in re.finditer(rb"\n", data)]
    cuts = sorted({*lines, *random.Random(7).sample(range(len(data)), 300)})
    for cut in cuts:
        load(tmp_path, data[:cut])


def test_random_bytes_and_flipped_bytes_are_refused_not_raised(tmp_path):
    chance = random.Random(11)
    data = EXAMPLE.encode()
    for _ in range(150):
        load(tmp_path, chance.randbytes(chance.randrange(1, 2000)))
        flipped = bytearray(data)
        for _ in range(chance.randrange(1, 20)):
            flipped[chance.randrange(len(flipped))] = chance.randrange(256)
        load(tmp_path, bytes(flipped))


@pytest.mark.parametrize("value", EXTREMES, ids=range(len(EXTREMES)))
def test_extreme_values_of_every_key_are_loaded_or_refused(tmp_path, value):
    for match in KEY_LINE.finditer(EXAMPLE):
        edited = EXAMPLE[: match.start(2)] + value + EXAMPLE[match.end(2) :]
        load(tmp_path, edited.encode())


def test_bytes_that_are_not_utf8_name_the_line(tmp_path):
    path = tmp_path / "config.toml"
    path.write_bytes(EXAMPLE.encode().replace(b'log_level = "INFO"', b'log_level = "\xff"'))
    with pytest.raises(ConfigError) as error:
        load_config(path, ENV)
    [problem] = error.value.problems
    line = EXAMPLE[: EXAMPLE.index('log_level = "INFO"')].count("\n") + 1
    assert f"line {line}: not UTF-8" in problem


@pytest.mark.parametrize("schedule", ["every 99999999999d", "every 400d", "every 5s"])
def test_schedules_out_of_range_name_the_key(tmp_path, schedule):
    edited = EXAMPLE.replace('summary_schedule = "every 6h"', f'summary_schedule = "{schedule}"')
    path = tmp_path / "config.toml"
    path.write_text(edited)
    with pytest.raises(ConfigError) as error:
        load_config(path, ENV)
    assert any("summary_schedule" in problem for problem in error.value.problems)
