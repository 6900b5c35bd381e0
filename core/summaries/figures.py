"""Figures in chat lines (pure): the numbers a message says, as strings and as values,
the figures that name something ("1Gi", "KW52"), and whether a line is a bare figure
("dann 78") that answers a question asked before it."""

from __future__ import annotations

import re

from core.summaries.wording import decide_asks
from core.summaries.words import count_words

# Words a bare figure has at most ("dann 78").
BARE_WORDS = 3
# A figure: "10", "1.5", "4,9:1", "6A4FF0", "KW52".
NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
THOUSANDS = re.compile(r"[1-9]\d{0,2}(?:[.,]\d{3})+")  # "0.125" is a decimal
# Digits a number has at most to be read as a value (a pasted hash or id is none).
VALUE_DIGITS = 15
VOTE = re.compile(r"(?<!\w)[+-]1(?!\w)")
FIGURE = re.compile(r"[^\W_]+(?:[.,:/-][^\W_]+)*")


def build_numbers(text: str) -> frozenset[str]:
    return frozenset(NUMBER.findall(text))


def build_values(text: str) -> list[float]:
    """The numbers a message says, as values: "3,100" and "3.100" are thousands, "1.5"
    and "4,9" decimals."""
    values = []
    for number in NUMBER.findall(text):
        if sum(c.isdigit() for c in number) > VALUE_DIGITS:
            continue
        if THOUSANDS.fullmatch(number):
            number = re.sub(r"[.,]", "", number)
        # "4,9:1" is read by its first term; "1.2.3" by its first two parts
        whole, _, fraction = number.split(":")[0].replace(",", ".").partition(".")
        values.append(float(f"{whole}.{fraction.split('.')[0] or 0}"))
    return values


def build_marks(text: str) -> frozenset[str]:
    """The figures of a message that name something: whole figures ("1Gi", "#6A4FF0",
    "4,9:1") and numbers of two characters or more ("1.5", "10"); a lone digit is in
    too many lines to say they speak of the same thing."""
    whole = frozenset(w.lower() for w in FIGURE.findall(text) if any(c.isdigit() for c in w))
    return whole | frozenset(n for n in NUMBER.findall(text) if len(n) >= 2)


def decide_bare_figure(text: str) -> bool:
    """Whether a line says a figure and next to nothing else ("3", "dann 78", "o zaman
    9", "1284"): alone it means nothing; it answers a question asked before it."""
    said = VOTE.sub("", text)  # "+1" agrees; it is no figure
    return bool(build_numbers(said)) and count_words(text) <= BARE_WORDS and not decide_asks(text)
