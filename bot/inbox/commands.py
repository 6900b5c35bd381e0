"""The `!commands`, and the pure builders of their replies."""

from __future__ import annotations

import re
from dataclasses import dataclass

from core import strings
from core.config import RoomSettings, Settings

COMMANDS: tuple[str, ...] = tuple(strings.COMMAND_DESCRIPTIONS)


@dataclass(frozen=True)
class Abilities:
    """What the bot can do beyond answering, as its config says now."""

    files: bool = False  # files shared in rooms are kept ([files])
    voice: bool = False  # voice messages are transcribed ([speech] url or local)
    search_only: bool = False  # no language model: passages instead of answers


def decide_abilities(settings: Settings) -> Abilities:
    return Abilities(
        files=settings.room_files_collection() is not None,
        voice=settings.speech.enabled,
        search_only=not settings.llm.url,
    )


def build_help(
    room: RoomSettings, prefix: str, is_direct: bool, abilities: Abilities = Abilities()
) -> str:
    """The help text for one room: how to ask there, what else the bot does, and the
    commands it allows."""
    ask_freely = room.answer_without_mention or is_direct
    lines = [
        strings.HELP_HEADER,
        strings.HELP_ASK_ANY if ask_freely else strings.HELP_ASK_MENTION,
        strings.HELP_FOLLOW_UP,
        strings.HELP_REMEMBER,
        strings.HELP_VOTE,
    ]
    if abilities.search_only:
        lines.append(strings.HELP_SEARCH_ONLY)
    if abilities.files:
        lines.append(strings.HELP_FILES)
    if abilities.voice:
        lines.append(strings.HELP_VOICE)
    if room.commands_enabled:
        lines += [
            strings.HELP_COMMAND_LINE.format(
                prefix=prefix, name=name, description=description.format(prefix=prefix)
            )
            for name, description in strings.COMMAND_DESCRIPTIONS.items()
        ]
    else:
        lines.append(strings.HELP_COMMANDS_OFF)
    return "\n".join(lines)


def build_command_reply(
    name: str,
    room: RoomSettings,
    prefix: str,
    is_direct: bool,
    abilities: Abilities = Abilities(),
) -> str:
    """The reply to a command addressed to the bot: help, or why it cannot run."""
    if name == "help":
        return build_help(room, prefix, is_direct, abilities)
    hint = strings.HELP_HINT.format(prefix=prefix)
    if name in COMMANDS and not room.commands_enabled:
        return strings.COMMANDS_OFF.format(prefix=prefix, name=name, help_hint=hint)
    return strings.UNKNOWN_COMMAND.format(prefix=prefix, name=name, help_hint=hint)


def build_command_explanation(settings: Settings, room_id: str, name: str) -> str:
    """Why the command `name`, said to the bot in `room_id`, does not run there (as the
    config says now)."""
    room, prefix = settings.room(room_id), settings.bot.command_prefix
    return build_command_reply(name, room, prefix, False, decide_abilities(settings))


# "summarize this", "sum it up", "tl;dr?" (and the same in the languages the bot
# speaks): a reply to a file asking for its summary. Whole messages only, so that a
# question that merely contains the word is answered as a question.
SUMMARY_REQUESTS = (
    # English
    r"(please\s+)?(summari[sz]e|sum\s+up|sum\s+(?:it|this)\s+up|tl;?dr)"
    r"(\s+(this|it|that|the\s+(file|document)))?(\s+up)?(\s+please)?",
    # German: "fass das zusammen", "bitte zusammenfassen", "Zusammenfassung?"
    r"(bitte\s+)?(fass(e|t|en\s+sie)?\s+(das|es|dies|die\s+datei|das\s+dokument)\s+"
    r"(bitte\s+)?zusammen|zusammenfassen|zusammenfassung)(\s+bitte)?",
    # French: "résume ça", "résumez-le", "un résumé, s'il te plaît"
    r"(r[ée]sume[rz]?(-le|-la|-moi)?(\s+(ça|ca|ce\s+(fichier|document)))?|(un\s+)?r[ée]sum[ée])"
    r"(,?\s+s'il\s+(te|vous)\s+pla[iî]t|\s+stp|\s+svp)?",
    # Spanish: "resúmelo", "resume esto", "un resumen, por favor"
    r"(por\s+favor,?\s+)?(res[uú]me(lo|la|n)?(\s+(esto|eso|el\s+(archivo|documento)))?"
    r"|(haz\s+)?un\s+resumen|resumen)(,?\s+por\s+favor)?",
)
SUMMARY_REQUEST = re.compile(
    r"^\W*(" + "|".join(f"(?:{pattern})" for pattern in SUMMARY_REQUESTS) + r")\W*$",
    re.IGNORECASE,
)


def decide_summary_request(text: str) -> bool:
    """Whether a question replying to a file asks for its summary."""
    return bool(SUMMARY_REQUEST.match(text.strip()))


def decide_summary_command(text: str, prefix: str) -> bool:
    """Whether a message is the `!summarize` command (with a range or not)."""
    words = text.strip().split(maxsplit=1)
    return bool(words) and words[0].lower() == f"{prefix}summarize"
