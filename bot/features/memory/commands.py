"""`!memory` and `!forget`: the pure builders of their replies."""

from __future__ import annotations

from core import strings
from core.memory.store import Memory


def build_memory_list(memories: list[Memory], prefix: str) -> str:
    """Numbered as `!forget` takes them: 1 is the oldest."""
    if not memories:
        return strings.MEMORY_EMPTY
    lines = [strings.MEMORY_HEADER]
    for number, memory in enumerate(memories, start=1):
        whose = strings.MEMORY_OF_USER.format(user=memory.user) if memory.user else ""
        lines.append(strings.MEMORY_LINE.format(number=number, text=memory.text, whose=whose))
    lines.append(strings.MEMORY_FOOTER.format(prefix=prefix))
    return "\n".join(lines)


def build_forgotten(forgotten: list[Memory]) -> str:
    """What was forgotten: the memory itself when one, else how many."""
    if len(forgotten) == 1:
        return strings.FORGOTTEN_ONE.format(text=forgotten[0].text)
    return strings.FORGOTTEN.format(count=len(forgotten))


def decide_forget(args: str, memories: list[Memory], prefix: str) -> list[int] | str:
    """The ids of the memories to forget, or the reply that explains why none can be."""
    wanted = args.strip().lower()
    if wanted == "all":
        return [memory.id for memory in memories]
    if not wanted.isdigit():
        return strings.FORGET_USAGE.format(prefix=prefix)
    number = int(wanted)
    if not 1 <= number <= len(memories):
        return strings.FORGET_UNKNOWN.format(number=number, prefix=prefix)
    return [memories[number - 1].id]
