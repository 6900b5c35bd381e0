"""What the bot says when it found nothing: a neutral sentence that fits wherever it
is said (a room, a direct chat, the chat API), with why the search was narrower only
where it was: some documents are checked at their source for each reader, and here
they are searched for all readers at once, or for public ones only."""

from __future__ import annotations

from core import strings
from core.config import Settings
from core.requests import Request
from core.rights.checker import decide_checked_collections


def build_nothing_found(request: Request, settings: Settings) -> str:
    """The "nothing found" notice for this request."""
    if not decide_checked_collections(settings):
        return strings.NOTHING_FOUND
    if request.open_room:
        return f"{strings.NOTHING_FOUND} {strings.NOTHING_FOUND_PUBLIC_ONLY}"
    if not request.is_direct and len(request.readers) > 1:
        return f"{strings.NOTHING_FOUND} {strings.NOTHING_FOUND_SHARED}"
    return strings.NOTHING_FOUND
