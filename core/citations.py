"""Citation markers, read by a small grammar: a marker may only point to a source that was
given; the rest are removed.

The model is asked to cite with `[1]`, `[2]` or `[1, 3]`; models cite in their own styles
too, and those are read the same way. A marker is a bracket pair (`[]`, `[[]]`, `【】`, `［］`,
`〔〕`, `{}`, `{{}}`, `｛｝`, `<>`, `<sup></sup>`, `()`, `（）`) around content of this form:

    content := [mark] item (separator item)* ["^"]     mark := "^" | "†" | "#"
    item    := [word] number [range] [[":" number] "†" tail]    range := "-" | "–" | "to" …
    word    := up to 12 letters of any script, then "." ":" "#" or spaces
    separator := "," | ";" | "、" | "&" | "and" (und, et, y, и, 和…)

So `【4:0†source】` cites 4, `[^1]` is a footnote, `[Sources 1-3]` cites 1, 2 and 3. Superscript
digits after punctuation (`edible.³`) and a line holding only a citation word and numbers
(`SOURCES: 2, 4`, which goes) are markers too. A marker is a citation by these rules:

- Marked (a citation word such as Source, S, ref, doc, cite, Quelle, fuente, источник, 来源,
  but not S in parentheses or a line, where `(S3)` is more likely Amazon's; a footnote caret; a
  `†`): always. Numbers of sources not given are removed.
- Bare numbers outside parentheses: when every number is between 1 and the larger of the
  number of sources and PLAUSIBLE (`[7]` of three sources is an invented citation and goes;
  `[2024]`, `[0, 1]` and `[0]` are not citations and stay), unless a mathematical operator
  comes before it (`x ∈ [2, 4]`).
- Another word outside parentheses (`[Step 2]`, `[v2]`): only when every number is a source.
- In parentheses, only marked ones and bare numbers at the end of a clause: after a word and a
  space, directly before punctuation or the end of the line, every number a source given, and
  no other bare `(n)` refused earlier on the line (`(1) rinse, (2) soak` enumerate; `(see 3.2)`,
  `(v2)`, `(page 4)` and `(2024)` stay).
- Never: a bracket directly after a letter, digit, `_`, `)` or `]` (indexing, as in `x[1] = 5`,
  `A[2][3]`, but `[1][2]` chains citations), a footnote caret and `【】` excepted, and a word of
  two letters or more that no operator, call or member follows (`France[1].`, Perplexity's
  style: so `arr[2] is` outside a code span reads as a citation); a `[n]` that is
  a link's text (`[1](…)`); anything in a code span or fenced code block.

Markers are renumbered in the order they first appear, so the answer cites 1, 2, 3… and the
source list under it holds exactly the cited sources. Given a `key` (the document a chunk
belongs to), markers of two chunks of one document become one number, so that the list names
each document once. Footnote definitions (`[^1]: …` lines) go: the source list replaces them.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

Item = TypeVar("Item")
Bracket = tuple[str, str, int]  # its opening, its content, where it ends

PLAUSIBLE = 20  # a bare number up to this is a citation (to a source that may not be given)
PAIRS = {"[[": "]]", "{{": "}}", "<sup>": "</sup>", "[": "]", "【": "】", "［": "］", "〔": "〕"}
PAIRS |= {"{": "}", "｛": "｝", "<": ">", "(": ")", "（": "）"}
PARENS, LINKS, NEVER_INDEXING = ("(", "（"), ("[", "[["), ("【", "〔")
BRACKETS = re.escape("".join(b for b in (*PAIRS, *PAIRS.values()) if len(b) == 1))
INSIDE = re.compile(rf"[^{BRACKETS}\n]{{1,80}}")
S = r"[^\S\n]"  # a space, not a line break
AND = r"and|und|et|y|e|и|och|en|og|ja|ve|i|oraz"
# A word is never a connector: ", and 2" would read two ways, and a line of them fails in
# 2^n ways (a few hundred characters of model output held the event loop for minutes).
WORD = rf"(?!(?:{AND}){S})[^\W\d_]{{1,12}}\.?(?:{S}*[:#])?{S}*"
TO = rf"{S}*(?:[-–—~〜]|to\b|bis\b){S}*(?:{WORD})?"
TAIL = r"(?::\d+)?†[^†,;\n]*"
ITEM = rf"(?:{WORD})?\d{{1,6}}(?:{TO}\d{{1,6}})?(?:{TAIL})?"
SEPARATOR = rf"(?:{S}*[,;、，；]{S}*(?:(?:{AND}){S}+|&{S}*)?|{S}+(?:{AND}){S}+|{S}*[&和与及]{S}*)"
NUMBERS = rf"{ITEM}(?:{SEPARATOR}{ITEM})*"
CONTENT = re.compile(rf"{S}*(?P<mark>[\^†#])?{S}*{NUMBERS}\^?{S}*", re.IGNORECASE)
SPAN = re.compile(rf"(\d+)(?:{TO}(\d+))?", re.IGNORECASE)
WORDS = re.compile(r"[^\W\d_]+")
CONNECTOR = re.compile(rf"{AND}|to|bis", re.IGNORECASE)
CITE_WORD = re.compile(
    r"s|srcs?|sources?|refs?|r[eé]f[eé]rences?|docs?|documents?|cite|citations?|footnotes?|fn"
    r"|quellen?|fuentes?|fontes?|bronn?e?n?|źródł[oa]|kilder?|källa|källor|lähteet|lähde|kaynak"
    r"|источник[иа]?|ссылк[аи]|джерело|来源|來源|出典|出处|出處|出所|参考|參考|引用|文献|資料|资料"
    r"|출처|참고|مصدر|المصدر|מקור|πηγή|πηγές|nguồn|sumber",
    re.IGNORECASE,
)
SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹˒⁻", "0123456789,-")
TOKEN = re.compile(
    r"(?P<fence>^[ \t]*(?:`{3,}|~{3,}))|(?P<definition>^\[\^\d+\]:[^\n]*\n?)|(?P<code>`+)"
    rf"|(?P<line>^(?=[^\n]{{0,200}}(?:\n|\Z))"  # a line of citations is a short line
    rf"[ \t]*(?P<numbers>(?=[^\W\d_]){NUMBERS})[ \t]*(?:\n|\Z))"
    r"|(?P<superscript>(?<=[.,;:!?。])[⁰¹²³⁴⁵⁶⁷⁸⁹]+(?:[˒,⁻][⁰¹²³⁴⁵⁶⁷⁸⁹]+)*)"
    rf"|(?P<open>{'|'.join(map(re.escape, PAIRS))})",
    re.MULTILINE | re.IGNORECASE,
)
# A last line that may still become a line of citations ("SOURCES: 2, 4"), for a stream.
LINE_SO_FAR = re.compile(rf"[ \t]*(?:{WORD}(?:\d(?:[^\W_]|[\s.:#,;、，；&\-–—~〜]|†.*)*)?)?")
INDEXED = re.compile(r"[A-Za-z0-9_)\]]")
PROSE_BEFORE = re.compile(r"(?<![\w.])[^\W\d_]{2,}\Z")
OPERAND_AFTER = re.compile(r"[^\S\n]*(?:[=+\-*/%<>()]|\.\w)")
UNDECIDED = re.compile(r"[^\S\n]*\.?")
CLAUSE_END = frozenset(("", *".,;:!?\n。，；：！？"))
PARAGRAPH_END = re.compile(r"\n[ \t]*\n")


def parse_marker_numbers(inside: str, largest: int) -> list[int]:
    """The numbers a marker's content names, ranges spelled out (up to `largest`: a range
    is never longer than the sources given)."""
    numbers: list[int] = []
    for first, last in _spans(inside):
        numbers += range(first, min(last, max(first, largest)) + 1)
    return numbers


def _spans(inside: str) -> list[tuple[int, int]]:
    """The (first, last) number of each item: `【4:0†source】` names 4, `[1-3]` 1 to 3."""
    spans = SPAN.findall(re.sub(rf"(?<=\d){TAIL}", "", inside))
    return [(int(first), int(last or first)) for first, last in spans]


def _bracket_at(text: str, start: int, stream: bool) -> Bracket | None:
    """The bracket opened at `start`: its opening, content and end, if it closes (for a
    `stream`, with an end of -1 if it may yet close as the text goes on)."""
    for opening, closing in PAIRS.items():
        if text.startswith(opening, start):
            inside = INSIDE.match(text, start + len(opening))
            if inside and text.startswith(closing, inside.end()):
                return opening, inside.group(), inside.end() + len(closing)
            rest = inside.end() if inside else start + len(opening)
            if stream and len(text) - rest < len(closing) and closing.startswith(text[rest:]):
                return opening, "", -1
    return None


def _judge(text: str, at: int, bracket: Bracket, count: int, chained: bool, taint: bool) -> str:
    """Whether the bracket at `at` is a citation ("cite"), not one (""), or a bare (n) that is
    not, which makes the rest of its line enumerate ("refuse"): a bracket `chained` to a
    citation is no index; on a line with a `taint`, no bare (n) is a citation."""
    opening, inside, end = bracket
    grammar = CONTENT.fullmatch(inside)
    if grammar is None or (opening in LINKS and text.startswith("(", end)):
        return ""  # not a marker, or a link's text
    before, spans = text[at - 1] if at else "\n", _spans(inside)
    words = [w for w in WORDS.findall(inside.split("†")[0]) if not CONNECTOR.fullmatch(w)]
    exempt = chained or grammar["mark"] == "^" or opening in NEVER_INDEXING
    if not exempt and INDEXED.match(before) and not _after_prose(text, at, end):
        return ""  # indexing, as in arr[2]
    cited = [w for w in words if CITE_WORD.fullmatch(w) and (len(w) > 1 or opening not in PARENS)]
    if grammar["mark"] in ("^", "†") or "†" in inside or cited:
        return "cite"  # marked: in parentheses, S is no citation word ("Amazon (S3)")
    operand = at
    while operand > 0 and text[operand - 1] in " \t":
        operand -= 1
    if operand and unicodedata.category(text[operand - 1]) == "Sm":
        return ""  # an operand, as in x ∈ [2, 4]
    if opening in PARENS:
        clause = before in " \t" and at > 1 and not text[at - 2].isspace()
        clause = clause and not (words or taint) and text[end : end + 1] in CLAUSE_END
        return "cite" if clause and _within(spans, count) else "" if words else "refuse"
    return "cite" if _within(spans, count if words else max(count, PLAUSIBLE)) else ""


def _after_prose(text: str, at: int, end: int) -> bool:
    """A bracket right after a word of two letters or more that no operator, call or
    member follows: a citation written without a space, as in `France[1].` (Perplexity's
    style), not an index (`x[1] = 5`, `A[2][3]`, `rows[2].name`)."""
    return bool(PROSE_BEFORE.search(text, 0, at)) and not OPERAND_AFTER.match(text, end)


def _within(spans: list[tuple[int, int]], largest: int) -> bool:
    return all(1 <= first <= last <= largest for first, last in spans)


def _render(text: str, count: int, cite: Callable[[list[int]], list[int]], stream: bool) -> str:
    """The text with its markers rewritten; for a `stream`, up to the first thing that the
    text still to come may change (a marker not yet closed, or one it might continue)."""
    out: list[str] = []
    done = at = 0
    end = len(text)
    last_line = text.rfind("\n") + 1
    if stream and len(text) - last_line <= 80 and LINE_SO_FAR.fullmatch(text, last_line):
        end = last_line
    chained = refused = -1  # where the last citation ends; where a bare (n) was refused
    while (found := TOKEN.search(text, at)) and found.start() < end:
        start, at = found.start(), found.end()
        if found["fence"]:
            run = found["fence"].strip()
            closing = re.compile(rf"^[ \t]*{re.escape(run[0])}{{{len(run)},}}", re.MULTILINE)
            line_end = text.find("\n", at)
            close = closing.search(text, line_end) if line_end >= 0 else None
            at = close.end() if close else len(text)
        elif found["code"]:
            close = re.compile(rf"(?<!`){found['code']}(?!`)").search(text, at)
            paragraph = PARAGRAPH_END.search(text, at)
            if close and (not paragraph or close.start() < paragraph.start()):
                at = close.end()
                if stream and at == len(text):
                    end = start
            elif stream and not paragraph:
                end = start
        elif found["definition"] or found["line"]:
            words = WORDS.findall(found["numbers"] or "")
            if found["line"] and not (
                words and len(words[0]) > 1 and CITE_WORD.fullmatch(words[0])
            ):
                at = start + 1
                continue
            cite(parse_marker_numbers(found["numbers"] or "", count))
            out.append(text[done:start])
            done = at
        else:
            if found["superscript"]:
                bracket: Bracket | None = ("", found[0].translate(SUPERSCRIPTS), at)
            else:
                bracket = _bracket_at(text, start, stream)
            # For a stream, a marker at the end may yet be chained, called or indexed into.
            if stream and bracket and (bracket[2] == -1 or UNDECIDED.fullmatch(text, bracket[2])):
                end = start
            if bracket is None or start >= end:
                at = start + 1
                continue
            _, inside, at = bracket
            taint = refused >= 0 and "\n" not in text[refused:start]
            verdict = _judge(text, start, bracket, count, start == chained, taint)
            refused = start if verdict == "refuse" else refused
            if verdict != "cite":
                continue
            numbers = cite(parse_marker_numbers(inside, count))
            leading = text[done:start]
            if not numbers and leading[-1:] in (" ", "\t"):
                leading = leading[:-1]
            out += [leading, "".join(f"[{n}]" for n in numbers)]
            done = chained = at
    out.append(text[done:end])
    return "".join(out).rstrip()


def build_cited_text(
    text: str,
    sources: Sequence[Item],
    key: Callable[[Item], Hashable] | None = None,
    on_cite: Callable[[Item], None] | None = None,
    stream: bool = False,
) -> tuple[str, list[Item]]:
    """The text with valid markers renumbered and invalid ones removed, and the cited
    sources (the first cited item of each `key`); `on_cite` sees every cited item (the
    pages of a document that were cited, say). A `stream`'s text is cut before anything
    that what is still to come may change (see build_streamed_text)."""
    order: dict[Hashable, int] = {}
    first: dict[Hashable, Item] = {}

    def cite(given: list[int]) -> list[int]:
        numbers = []
        for number in given:
            if 1 <= number <= len(sources):
                item = sources[number - 1]
                if on_cite is not None:
                    on_cite(item)
                name = key(item) if key else number
                first.setdefault(name, item)
                numbers.append(order.setdefault(name, len(order) + 1))
        return list(dict.fromkeys(numbers))

    cited_text = _render(text, len(sources), cite, stream)
    return cited_text, [first[name] for name in sorted(order, key=order.__getitem__)]


def build_streamed_text(
    text: str, sources: Sequence[Item], key: Callable[[Item], Hashable] | None = None
) -> str:
    """The cited text of a stream so far: markers already renumbered as in the final
    text, a marker not yet closed held back. Each call's text continues the last's as
    long as the model writes on."""
    return build_cited_text(text, sources, key, stream=True)[0]
