"""Documents as source applications send them, and the chunks and hits made from them."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any, Literal

# "paged": plain text whose pages are separated by form feeds (a PDF's text, see
# core/knowledge/parse/extraction.py); made by the bot, never sent as such.
DocumentFormat = Literal["markdown", "text", "html", "paged"]
FORMATS: tuple[str, ...] = ("markdown", "text", "html")

MAX_ID_CHARS = 512
# Control characters (C0, DEL, C1) and lone surrogates: invisible or unprintable in logs,
# links and the catalog, and a surrogate cannot even be stored (it is not UTF-8).
UNSAFE_CHARACTERS = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
LONE_SURROGATE = re.compile("[\ud800-\udfff]")
# Dates must stay within what datetime turns into timestamps and back: a bare day's end
# is the next day, and 9999-12-31 has none.
FIRST_YEAR, LAST_YEAR = 1, 9998
# No document field is a number; int() of a long one takes quadratic time, and past
# Python's own limit (4300 digits) raises.
MAX_NUMBER_DIGITS = 100


class UnreadableJson(ValueError):
    """JSON that cannot be read safely; the message says what is wrong, for the sender."""


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_NUMBER_DIGITS:
        raise UnreadableJson(f"a number has more than {MAX_NUMBER_DIGITS} digits")
    return int(text)


def _printable(key: str) -> str:
    return key.encode("utf-8", "backslashreplace").decode()


def _lone_surrogate_at(value: Any) -> str | None:
    """Where a string (or key) of a parsed JSON value holds a lone surrogate, or None.

    JSON may escape one (`"\\ud800"`); Python reads it into a str that no UTF-8 writer
    accepts. Iterative, since the value may nest as deep as the parser allowed."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, str):
            if LONE_SURROGATE.search(item):
                return where or "the body"
        elif isinstance(item, dict):
            for key, inner in item.items():
                path = f"{where}.{_printable(key)}" if where else _printable(key)
                stack += [(f"{where or 'the body'} (a key)", key), (path, inner)]
        elif isinstance(item, list):
            stack += [(f"{where}[{index}]", inner) for index, inner in enumerate(item)]
    return None


def load_json(text: str) -> Any:
    """A JSON value as a document's sender wrote it; UnreadableJson says what is wrong."""
    try:
        value = json.loads(text, parse_int=_bounded_int)
    except RecursionError:
        raise UnreadableJson("the JSON nests arrays or objects too deeply") from None
    except json.JSONDecodeError as exc:
        raise UnreadableJson(f"not valid JSON: {exc}") from None
    where = _lone_surrogate_at(value)
    if where is not None:
        raise UnreadableJson(
            f"{where}: has a lone UTF-16 surrogate escape (\\ud800 to \\udfff without "
            "its pair), which is not a Unicode character"
        )
    return value


def id_problem(value: str, what: str = "document id") -> str | None:
    """Why `value` cannot name a document (or, with `what`, a collection), or None."""
    if not value:
        return f"a {what} cannot be empty"
    if len(value) > MAX_ID_CHARS:
        return f"a {what} has at most {MAX_ID_CHARS} characters"
    unsafe = UNSAFE_CHARACTERS.search(value)
    if unsafe:
        return (
            f"a {what} cannot hold control characters or lone surrogates "
            f"(found U+{ord(unsafe.group()):04X})"
        )
    return None


@dataclass(frozen=True)
class Document:
    collection: str
    id: str
    title: str
    content: str
    format: DocumentFormat = "markdown"
    url: str = ""
    language: str = ""
    version: str = ""
    room: str = ""
    # What the content is about in time (ISO 8601), such as a meeting's day or the period
    # a summary covers: a question with a time expression keeps dated documents only
    # when their range meets its range. Undated documents are never left out.
    date: str = ""
    date_end: str = ""
    # A room's summary written from an encrypted room: only ever posted into encrypted
    # rooms (see core/rights/readers.py).
    encrypted: bool = False

    def dates(self) -> tuple[float, float] | None:
        return parse_document_dates(self.date, self.date_end)

    def content_hash(self) -> str:
        """Changes whenever anything stored with the chunks would change."""
        fields = asdict(self)
        fields.pop("collection")
        fields.pop("id")
        if not fields["encrypted"]:
            fields.pop("encrypted")  # the hashes of earlier releases' documents hold
        return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()[:32]


def _moment(text: str, end: bool, field: str) -> float:
    """A timestamp from ISO 8601; a bare day means all of it (UTC when no zone is given)."""
    try:
        if len(text) == 10:
            moment = datetime.combine(date.fromisoformat(text), datetime.min.time(), UTC)
        else:
            moment = datetime.fromisoformat(text)
    except ValueError:
        # Python's own message ("Invalid isoformat string: 'soon'") names no field.
        raise ValueError(
            f"{field} {text!r} is not an ISO 8601 date or time (2026-11-30, "
            "2026-11-30T14:00:00+01:00)"
        ) from None
    if not FIRST_YEAR <= moment.year <= LAST_YEAR:
        raise ValueError(
            f"{field} {text!r} is out of range: years {FIRST_YEAR} to {LAST_YEAR} are accepted"
        )
    if len(text) == 10:
        return (moment + timedelta(days=1) if end else moment).timestamp()
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def parse_document_dates(start: str, end: str = "") -> tuple[float, float] | None:
    """The range a document's `date` and `date_end` span; ValueError when unreadable."""
    if not start:
        if end:
            raise ValueError("date_end needs a date")
        return None
    first = _moment(start, end=False, field="date")
    last = _moment(end or start, end=True, field="date_end" if end else "date")
    # A bare day as the end lasts until the next day begins: ending exactly where the
    # start begins ("2023-12-31" to "2023-12-30") is before it; a time may end on it.
    if last < first or (len(end) == 10 and last <= first):
        raise ValueError("date_end is before date")
    return first, last


def build_place(title: str, heading: str) -> str:
    """Where a passage is: the document's title and its section path, a first heading
    equal to the title not said twice ("On-call handbook > Rotation")."""
    headings = [part.strip() for part in heading.split(" > ") if part.strip()]
    if headings and " ".join(headings[0].split()).casefold() == " ".join(title.split()).casefold():
        headings = headings[1:]
    return " > ".join([title, *headings]) if title else " > ".join(headings)


@dataclass(frozen=True)
class Chunk:
    position: int
    text: str
    heading: str
    tokens: int

    def embedding_text(self, title: str) -> str:
        """The title and section travel with the passage, so that it is found in context."""
        return "\n".join(part for part in (title, self.heading, self.text) if part)


@dataclass(frozen=True)
class Hit:
    """A retrieved chunk with everything needed to cite it."""

    chunk_id: str
    collection: str
    document_id: str
    source: str
    title: str
    url: str
    heading: str
    text: str
    position: int
    public: bool
    score: float
    room: str = ""
    vector_rank: int | None = None
    keyword_rank: int | None = None
    distance: float | None = None
    # The document's version as the shared catalog knows it (its content hash): rights
    # decisions are kept per version, so a document replaced by any process is asked
    # about again by every process.
    revision: str = ""
    # Of a room's document: written from an encrypted room; None: not known (earlier
    # releases), which counts as encrypted.
    encrypted: bool | None = False


@dataclass(frozen=True)
class SearchFilters:
    """Which chunks a search may return. Room-owned documents (summaries) are left out
    unless their room is listed: the default returns none of them."""

    collections: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    public_only: bool = False
    rooms: tuple[str, ...] = ()
    # Of these rooms, only documents dated from this time on (what every reader saw said
    # in the room); undated ones of such a room are left out.
    rooms_since: tuple[tuple[str, float], ...] = ()
    updated_after: float | None = None
    updated_before: float | None = None
    # Dated documents must meet this range (timestamps, the end excluded, as a document's
    # own end is); undated ones always pass.
    dated_between: tuple[float, float] | None = None
    # Only these documents (collection, id): a question about one shared file.
    documents: tuple[tuple[str, str], ...] = ()
