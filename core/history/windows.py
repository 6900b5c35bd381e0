"""Which windows of a room's dialog are ready to embed as its history."""

from __future__ import annotations

from dataclasses import dataclass

from core.history.line_store import HistoryLine


@dataclass(frozen=True)
class WindowPlan:
    windows: list[list[HistoryLine]]
    next_start: int  # the seq of the first line of the next window
    carried: int  # how many lines from next_start on are already in a window


def decide_windows(
    lines: list[HistoryLine],
    size: int,
    overlap: int,
    *,
    carried: int,
    now: float,
    idle_seconds: float,
) -> WindowPlan:
    """Full windows of `size` lines, each sharing `overlap` lines with the previous one.

    `lines` start at the room's mark, their first `carried` already embedded. Lines left
    over become a shorter window once the room has been quiet for `idle_seconds`, so
    that a short discussion is remembered too.
    """
    step = size - overlap
    windows, start = [], 0
    while len(lines) - start >= size:
        windows.append(lines[start : start + size])
        start += step
        carried = overlap
    rest = lines[start:]
    if len(rest) > carried and now - rest[-1].ts >= idle_seconds:
        windows.append(rest)
        start = max(start, len(lines) - overlap)
        carried = len(lines) - start
    if start < len(lines):
        return WindowPlan(windows, lines[start].seq, carried)
    return WindowPlan(windows, lines[-1].seq + 1 if lines else 0, 0)


def build_window_text(lines: list[HistoryLine]) -> str:
    return "\n".join(f"{line.sender}: {line.text}" for line in lines)
