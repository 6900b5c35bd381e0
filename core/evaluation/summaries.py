"""Key-fact coverage of summaries over labelled room logs (`knowledge-eval summaries`).

A log (`tests/data/summaries/*.json`) holds a room's messages, the key facts a person
who missed the room must learn, each with the messages that together state it whole,
and the chatter that must stay out. A fact is covered when one point of the summary (a
bullet) links to every message of one of its alternatives: a line without what it
answers does not count. Noise is any chatter message a summary links to.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from core.i18n.language import speaking
from core.summaries.draft import SummaryLine
from core.summaries.summarizer import Summarizer

ROOM = "!log:example.org"
LINK = re.compile(r"\(https://matrix\.to/#/" + re.escape(ROOM) + r"/([^)\s?]+)")


class LogError(ValueError):
    """A labelled log that cannot be used, with where it is wrong."""


@dataclass(frozen=True)
class KeyFact:
    fact: str
    kind: str
    alternatives: tuple[frozenset[str], ...]


@dataclass(frozen=True)
class LabelledLog:
    name: str
    language: str
    timezone: str
    lines: tuple[SummaryLine, ...]
    facts: tuple[KeyFact, ...]
    noise: frozenset[str]


@dataclass
class LogScore:
    name: str
    facts: int
    covered: list[str] = field(default_factory=list)
    missed: list[str] = field(default_factory=list)
    noise: list[str] = field(default_factory=list)

    @property
    def coverage(self) -> float:
        return len(self.covered) / self.facts if self.facts else 1.0


def build_link(message_id: str) -> str:
    return f"https://matrix.to/#/{ROOM}/{message_id}"


def read_log(path: Path) -> LabelledLog:
    """A labelled log from its JSON file; its messages become the summary's lines."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        zone = ZoneInfo(raw["timezone"])
        ids = [m["id"] for m in raw["messages"]]
        roots = {m.get("thread_root") for m in raw["messages"]} - {None}
        lines = tuple(
            SummaryLine(
                number, m["sender"].split(":")[0].lstrip("@"), m["text"],
                datetime.fromisoformat(m["time"]).replace(tzinfo=zone).timestamp(),
                build_link(m["id"]), m["id"], reply_to=m.get("reply_to"),
                thread_root=m.get("thread_root"),
            )
            for number, m in enumerate(raw["messages"], start=1)
        )  # fmt: skip
        facts = tuple(
            KeyFact(f["fact"], f["kind"], tuple(frozenset(a) for a in f["messages"]))
            for f in raw["key_facts"]
        )
        noise = frozenset(raw["noise"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise LogError(f"{path}: {exc}") from exc
    known = set(ids)
    for fact in facts:
        if not fact.alternatives or any(not a <= known for a in fact.alternatives):
            raise LogError(f"{path}: the fact {fact.fact!r} names no or unknown messages")
    if not noise <= known or not roots <= known:
        raise LogError(f"{path}: noise or a thread names an unknown message")
    return LabelledLog(path.stem, raw.get("language", "en"), raw["timezone"], lines, facts, noise)


def read_logs(paths: Sequence[Path]) -> list[LabelledLog]:
    """The logs in the given files and folders (every `*.json` of a folder)."""
    files = [
        p for path in paths for p in (sorted(path.glob("*.json")) if path.is_dir() else [path])
    ]
    if not files:
        raise LogError("no labelled log was found")
    return [read_log(path) for path in files]


def parse_points(markdown: str) -> list[frozenset[str]]:
    """The messages each bullet of a summary links to."""
    return [
        frozenset(LINK.findall(line))
        for line in markdown.splitlines()
        if line.lstrip().startswith("- ")
    ]


def score_summary(log: LabelledLog, markdown: str) -> LogScore:
    """Which key facts a summary states whole, and which chatter it lets in."""
    points = parse_points(markdown)
    score = LogScore(log.name, len(log.facts))
    for fact in log.facts:
        whole = any(alternative <= point for alternative in fact.alternatives for point in points)
        (score.covered if whole else score.missed).append(fact.fact)
    linked = frozenset().union(*points) if points else frozenset()
    score.noise = sorted(linked & log.noise)
    return score


def build_summaries_table(scores: dict[str, list[LogScore]]) -> str:
    """Coverage and noise per log and in total, one column pair per path."""
    paths = list(scores)
    names = [score.name for score in scores[paths[0]]]
    width = max(len(name) for name in [*names, "total"]) + 2
    header = "log".ljust(width) + "".join(f"{path:>24}" for path in paths)
    out = [header, "".ljust(width) + "".join(f"{'facts':>16}{'noise':>8}" for _ in paths)]
    for index, name in enumerate(names):
        row = name.ljust(width)
        for path in paths:
            s = scores[path][index]
            row += f"{len(s.covered):>5}/{s.facts:<3}({s.coverage:4.0%}){len(s.noise):>8}"
        out.append(row)
    total = "total".ljust(width)
    for path in paths:
        covered = sum(len(s.covered) for s in scores[path])
        facts = sum(s.facts for s in scores[path])
        noise = sum(len(s.noise) for s in scores[path])
        total += f"{covered:>5}/{facts:<3}({covered / facts:4.0%}){noise:>8}"
    out.append(total)
    return "\n".join(out)


def build_misses(scores: dict[str, list[LogScore]]) -> str:
    """What each path left out or let in, for the reader of the report."""
    out = []
    for path, logs in scores.items():
        for score in logs:
            out += [f"{path} · {score.name}: missed {fact}" for fact in score.missed]
            out += [f"{path} · {score.name}: noise {message}" for message in score.noise]
    return "\n".join(out)


async def measure_summaries(
    logs: Sequence[LabelledLog], summarizers: dict[str, Summarizer], part_tokens: int
) -> dict[str, list[LogScore]]:
    """Each log summarised by each path (e.g. without and with a model), scored."""
    scores: dict[str, list[LogScore]] = {}
    for path, summarizer in summarizers.items():
        scores[path] = []
        for log in logs:
            with speaking(log.language):
                result = await summarizer.summarize(
                    log.lines, f"**{log.name}**", timezone=log.timezone, part_tokens=part_tokens
                )
            scores[path].append(score_summary(log, result.markdown))
    return scores
