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
    kind: str = ""  # of room: incident, planning, support, hiring…


@dataclass
class LogScore:
    name: str
    facts: int
    language: str = ""
    kind: str = ""
    # Of the log's messages, how many the summary quotes: coverage bought by quoting
    # most of the room is no summary, so the report says both.
    messages: int = 0
    quoted: int = 0
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
                number,
                m["sender"].split(":")[0].lstrip("@"),
                m["text"],
                datetime.fromisoformat(m["time"]).replace(tzinfo=zone).timestamp(),
                build_link(m["id"]),
                m["id"],
                reply_to=m.get("reply_to"),
                thread_root=m.get("thread_root"),
            )
            for number, m in enumerate(raw["messages"], start=1)
        )
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
    return LabelledLog(
        path.stem,
        raw.get("language", "en"),
        raw["timezone"],
        lines,
        facts,
        noise,
        str(raw.get("kind", "")),
    )


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
    score = LogScore(log.name, len(log.facts), log.language, log.kind, len(log.lines))
    for fact in log.facts:
        whole = any(alternative <= point for alternative in fact.alternatives for point in points)
        (score.covered if whole else score.missed).append(fact.fact)
    linked = frozenset().union(*points) if points else frozenset()
    score.noise = sorted(linked & log.noise)
    score.quoted = len(linked)
    return score


def build_summaries_table(scores: dict[str, list[LogScore]]) -> str:
    """Coverage, noise and the share of the messages quoted, per log and in total, one
    group of columns per path; then per language and per kind of room, when the logs
    have several."""
    paths = list(scores)
    names = [score.name for score in scores[paths[0]]]
    kinds = [score.kind for score in scores[paths[0]]]
    width = max(len(name) for name in [*names, *kinds, "total"]) + 2
    header = "log".ljust(width) + "".join(f"{path:>32}" for path in paths)
    out = [
        header,
        "".ljust(width) + "".join(f"{'facts':>16}{'noise':>8}{'quoted':>8}" for _ in paths),
    ]
    for name in names:
        out.append(
            _row(
                name,
                width,
                {path: [s for s in logs if s.name == name] for path, logs in scores.items()},
            )
        )
    out.append(_row("total", width, {path: logs for path, logs in scores.items()}))
    for label, key in (("language", "language"), ("kind of room", "kind")):
        groups = sorted({getattr(score, key) for score in scores[paths[0]]} - {""})
        if len(groups) > 1:
            out += ["", f"by {label}"]
            for group in groups:
                chosen = {
                    path: [score for score in logs if getattr(score, key) == group]
                    for path, logs in scores.items()
                }
                out.append(_row(group, width, chosen))
    return "\n".join(out)


def _row(label: str, width: int, scores: dict[str, list[LogScore]]) -> str:
    """One line of the table: the scores of each path added up."""
    row = label.ljust(width)
    for logs in scores.values():
        covered = sum(len(s.covered) for s in logs)
        facts = sum(s.facts for s in logs)
        noise = sum(len(s.noise) for s in logs)
        share = covered / facts if facts else 1.0
        messages = sum(s.messages for s in logs)
        quoted = sum(s.quoted for s in logs) / messages if messages else 0.0
        row += f"{covered:>5}/{facts:<3}({share:4.0%}){noise:>8}{quoted:>8.0%}"
    return row


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
