"""Restricted collections the config leaves unshowable (pure): documents that are not
public are shown only to readers their application allows, which the bot asks at the
source's `rights_url` with a reader token it signs. Without the URL, or without a key
to sign with, they are never shown (fail closed), and an admin who just added such a
collection saw "✅ applied" and answers that found nothing: this says why."""

from __future__ import annotations

from core import strings
from core.config import Settings
from core.rights.checker import decide_checked_collections


def decide_unshown_collections(settings: Settings) -> dict[str, list[str]]:
    """The checked collections (not public, not rooms' own) that are never shown, by why:
    "no_rights_url" (their source names none), "no_signing_keys" (none configured)."""
    gaps: dict[str, list[str]] = {}
    for name in decide_checked_collections(settings):
        source = settings.sources.get(settings.collections[name].source)
        if source is None:
            continue  # the config's own check names a missing source
        if source.rights_url is None:
            gaps.setdefault("no_rights_url", []).append(name)
        elif not settings.rights.signing_keys:
            gaps.setdefault("no_signing_keys", []).append(name)
    return gaps


def build_unshown_notices(settings: Settings) -> list[str]:
    """The admin room's notices for `decide_unshown_collections`, one per reason."""
    gaps = decide_unshown_collections(settings)
    templates = {
        "no_rights_url": strings.RIGHTS_NO_URL,
        "no_signing_keys": strings.RIGHTS_NO_SIGNING_KEYS,
    }
    return [
        templates[why].format(collections=", ".join(f"`{name}`" for name in names))
        for why, names in gaps.items()
    ]
