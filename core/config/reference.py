"""The configuration reference, generated from the settings models: every key with its
type, default, whether it applies live or needs a restart, and its description (the
docstring under each field).

    python -m core.config.reference > docs/reference/configuration.md

tests/docs/test_config_reference.py fails when the committed page differs from what this
prints, or when a key is in the models and not in config.example.toml (or the reverse).
"""

from __future__ import annotations

import re
import sys
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, SecretStr
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from core.config.model import RESTART_ONLY_KEYS, RESTART_ONLY_SECTIONS, Settings

COMMAND = "python -m core.config.reference > docs/reference/configuration.md"
# How a table of named entries (`dict[str, Model]`) is written in a key's path.
ENTRY_NAMES = {
    "rooms": '"<room id>"',
    "sources": "<name>",
    "collections": "<name>",
    "assistants": "<name>",
    "embedding_endpoints": "<name>",
    "tasks": "<task>",
}


@dataclass(frozen=True)
class Key:
    """One key of the config file."""

    section: str  # the TOML table it is written in, e.g. `sources.<name>.readers`
    name: str
    field: FieldInfo
    restart: bool

    @property
    def path(self) -> str:
        return f"{self.section}.{self.name}"


def _models_in(annotation: object) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [model for arg in typing.get_args(annotation) for model in _models_in(arg)]


def _is_table(annotation: object) -> bool:
    """A `dict[str, Model]`: named entries, each a table of its own."""
    return typing.get_origin(annotation) is dict and bool(_models_in(annotation))


def _is_array_of_tables(annotation: object) -> bool:
    return typing.get_origin(annotation) is tuple and bool(_models_in(annotation))


def _applies_on_restart(section: str, name: str) -> bool:
    top = section.split(".", 1)[0].removesuffix("[]")
    return top in RESTART_ONLY_SECTIONS or (top, name) in RESTART_ONLY_KEYS


def walk(model: type[BaseModel] = Settings, section: str = "") -> Iterator[Key]:
    """Every key under `model`, depth first, in the order the models declare them."""
    for name, field in model.model_fields.items():
        annotation = field.annotation
        models = _models_in(annotation)
        if not models or (typing.get_origin(annotation) is dict and not _is_table(annotation)):
            yield Key(section, name, field, _applies_on_restart(section or name, name))
            continue
        if _is_table(annotation):
            inner = f"{section}.{name}" if section else name
            inner = f"{inner}.{ENTRY_NAMES.get(name, '<name>')}"
        elif _is_array_of_tables(annotation):
            inner = f"{section}.{name}[]" if section else f"{name}[]"
        else:
            inner = f"{section}.{name}" if section else name
        yield from walk(models[0], inner)


def sections(model: type[BaseModel] = Settings, section: str = "") -> Iterator[tuple[str, str]]:
    """Every table with the docstring of its model, in the order of `walk`."""
    for name, field in model.model_fields.items():
        models = _models_in(field.annotation)
        if not models:
            continue
        inner = f"{section}.{name}" if section else name
        if _is_table(field.annotation):
            inner = f"{inner}.{ENTRY_NAMES.get(name, '<name>')}"
        elif _is_array_of_tables(field.annotation):
            inner = f"{inner}[]"
        yield inner, " ".join(LINE_HYPHEN.sub("-", models[0].__doc__ or "").split())
        yield from sections(models[0], inner)


def describe_type(annotation: Any) -> str:
    """A key's type in words of TOML."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        kinds = [describe_type(arg) for arg in args if arg is not type(None)]
        optional = " (optional)" if type(None) in args else ""
        return " or ".join(kinds) + optional
    if origin is Literal:
        return " \\| ".join(f'`"{arg}"`' if isinstance(arg, str) else f"`{arg}`" for arg in args)
    if origin is tuple:
        return f"array of {describe_type(args[0])}" if args else "array"
    if origin is dict:
        return "table"
    names = {
        str: "string",
        int: "integer",
        float: "number",
        bool: "boolean",
        Path: "path",
        SecretStr: "string (secret)",
    }
    return names.get(annotation, getattr(annotation, "__name__", str(annotation)))


def describe_default(field: FieldInfo) -> str:
    if field.is_required():
        return "required"
    value = field.get_default(call_default_factory=True)
    if value is None or value is PydanticUndefined:
        return "unset"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, str | Path):
        return f'`"{value}"`'
    if isinstance(value, tuple | list):
        return "`[" + ", ".join(f'"{v}"' if isinstance(v, str) else str(v) for v in value) + "]`"
    if isinstance(value, dict):
        return "`{}`" if not value else f"`{value}`"
    return f"`{value}`"


# A word hyphenated across two lines of a docstring ("all-\n    MiniLM"): one word.
LINE_HYPHEN = re.compile(r"(?<=\w)-\s*\n\s*(?=\w)")


def _cell(text: str) -> str:
    return " ".join(LINE_HYPHEN.sub("-", text).split()).replace("|", "\\|")


def render() -> str:
    """The reference page, in Markdown."""
    keys = list(walk())
    missing = [key.path for key in keys if not (key.field.description or "").strip()]
    if missing:
        raise ValueError(f"keys without a description (a docstring under the field): {missing}")
    docs = dict(sections())
    lines = [
        "# Configuration keys",
        "",
        "<!-- Generated from the settings models (core/config/) by",
        f"     {COMMAND}",
        "     Do not edit: change the models' docstrings and run it again. -->",
        "",
        "Every key of the config file, from the settings models under `core/config/`. Each",
        "section is a TOML table; `<name>` stands for a name you choose. *Applies* says",
        "whether an edit takes effect while the bot runs (*live*) or at the next start",
        "(*restart*). [Configuration](../operations/configuration.md) explains live edits;",
        "`config.example.toml` shows every key with an example value.",
    ]
    # A section's keys together, where it first comes: a model that declares keys after
    # a table of its own ([rights]: signing_keys, then issuer) had two headings.
    by_section: dict[str, list[Key]] = {}
    for key in keys:
        by_section.setdefault(key.section, []).append(key)
    current = None
    for key in (key for found in by_section.values() for key in found):
        if key.section != current:
            current = key.section
            heading = f"[[{current[:-2]}]]" if current.endswith("[]") else f"[{current}]"
            if not current:
                heading = "Top level"
            lines += ["", f"## `{heading}`" if current else f"## {heading}", ""]
            if docs.get(current):
                lines += [docs[current], ""]
            lines += ["| key | type | default | applies | description |"]
            lines += ["| --- | --- | --- | --- | --- |"]
        applies = "restart" if key.restart else "live"
        lines.append(
            f"| `{key.name}` | {_cell(describe_type(key.field.annotation))} "
            f"| {_cell(describe_default(key.field))} | {applies} "
            f"| {_cell(key.field.description or '')} |"
        )
    return "\n".join(lines) + "\n"


def example_keys(text: str) -> set[str]:
    """The keys config.example.toml names, set or commented out, as paths of `walk`
    (`sources.<name>.token`); a key under a free-form table (`request_fields`) names
    that table."""
    found: set[str] = set()
    # A commented-out header holds the commented-out keys under it; a key that is set
    # belongs to the last header that is set.
    section: list[str] = []
    shown: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        commented = line.startswith("#")
        if commented and not re.match(r"#\s?[\[A-Za-z0-9_\"-]", line):
            continue  # prose, or a comment in a commented-out block ("# # ...")
        line = line.lstrip("#").strip()
        header = re.fullmatch(r"\[\[?([A-Za-z0-9_.\"<>@:!' -]+?)\]\]?(\s*#.*)?", line)
        if header:
            shown = _split_path(header.group(1))
            if not commented:
                section = shown
            continue
        key = re.match(r"([A-Za-z0-9_\"-]+)\s*=", line)
        if not key:
            continue
        found.add(_model_path([*(shown if commented else section), key.group(1).strip('"')]))
    return found


def _split_path(dotted: str) -> list[str]:
    return [part.strip('"') for part in re.findall(r'"[^"]*"|[^.]+', dotted)]


def _model_path(parts: list[str]) -> str:
    """The path of `walk` for the parts of an example key. An unknown key keeps its name,
    so that the comparison reports it."""
    model: type[BaseModel] | None = Settings
    out: list[str] = []
    index = 0
    while index < len(parts):
        part = parts[index]
        field = model.model_fields.get(part) if model is not None else None
        if field is None:
            return ".".join([*out, *parts[index:]])
        annotation = field.annotation
        models = _models_in(annotation)
        if typing.get_origin(annotation) is dict and not models:
            return ".".join([*out, part])  # any key below it is the table's own
        if not models:
            return ".".join([*out, *parts[index:]])
        if _is_table(annotation):
            out += [part, ENTRY_NAMES.get(part, "<name>")]
            index += 2
        elif _is_array_of_tables(annotation):
            out.append(f"{part}[]")
            index += 1
        else:
            out.append(part)
            index += 1
        model = models[0]
    return ".".join(out)


def main() -> None:
    sys.stdout.write(render())


if __name__ == "__main__":
    main()
