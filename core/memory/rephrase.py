"""Whether a rephrased question keeps the meaning of the original.

chrF alone does not separate a distortion from a faithful rewrite ("on Tuesday?" ->
"on Thursday?" scores high, a correct stand-alone rewrite of "and its license?" scores
low), so a provenance check decides with it: every content word of the original
survives (spelling fixes allowed), every new content word comes from the conversation,
and negation is unchanged. Without the conversation, chrF must also stay high.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from nltk.stem.snowball import SnowballStemmer
from sacrebleu.metrics import CHRF
from spacy.lang.en.stop_words import STOP_WORDS

# Stop words that change what is asked: numbers, order, comparison, time.
MEANINGFUL = frozenset(
    "one two three four five six seven eight nine ten eleven twelve fifteen twenty forty "
    "fifty sixty hundred first last next before after above below more less most least "
    "same always never every all none only part full few many much who what when where why "
    "how which whose".split()
)
NEGATIONS = frozenset("not no never without none nobody nothing neither nor cannot".split())
# Words whose near neighbours are other words, never spelling fixes.
NO_FUZZY = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday january february march april "
    "may june july august september october november december".split()
)
# Contractions typed without the apostrophe.
CONTRACTIONS = {
    w.replace("'", ""): w
    for w in "what's where's who's how's it's that's there's i'm i've i'll i'd you're "
    "we're they're don't doesn't didn't isn't aren't wasn't weren't can't couldn't won't "
    "wouldn't shouldn't hasn't haven't hadn't".split()
}
WORD = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?")
STEMMER = SnowballStemmer("english")
_CHRF = CHRF()


@dataclass(frozen=True)
class RephraseCheck:
    accepted: bool
    reason: str
    chrf: float


def _words(text: str) -> list[str]:
    words = WORD.findall(text.lower().replace("’", "'"))
    return [CONTRACTIONS.get(w, w) for w in words]


def count_negations(text: str) -> int:
    return sum(1 for w in _words(text) if w in NEGATIONS or w.endswith("n't"))


@lru_cache(maxsize=4096)
def _stem(word: str) -> str:
    return STEMMER.stem(word.removesuffix("'s"))


def _carries_meaning(word: str) -> bool:
    if word in NEGATIONS or word.endswith("n't"):
        return False
    return word.split("'")[0] not in STOP_WORDS or word in MEANINGFUL


def content_stems(text: str) -> set[str]:
    """Stems of the words that carry meaning: not stop words, negations counted apart."""
    return {_stem(w) for w in _words(text) if _carries_meaning(w)}


def _chrf(hypothesis: str, reference: str) -> float:
    # Case and punctuation are what a spelling fix changes most; they do not change meaning.
    return _CHRF.sentence_score(" ".join(_words(hypothesis)), [" ".join(_words(reference))]).score


def edit_distance(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, char_a in enumerate(a, start=1):
        current = [i]
        for j, char_b in enumerate(b, start=1):
            current.append(
                min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char_a != char_b))
            )
        previous = current
    return previous[-1]


def _spelling_fix(a: str, b: str) -> bool:
    """A typo's distance: one edit in a short word, two in a long one."""
    if a in NO_FUZZY or b in NO_FUZZY or not (a.isalpha() and b.isalpha()):
        return False
    if min(len(a), len(b)) < 3:
        return False
    if a.startswith(b) or b.startswith(a):  # one family: own, owner
        return True
    return edit_distance(a, b) <= (1 if max(len(a), len(b)) < 9 else 2)


def _names_or_numbers(text: str) -> set[str]:
    """Stems of the capitalised words (past the first) and numbers: what a rewrite must
    not invent."""
    found = set()
    for index, match in enumerate(re.finditer(r"[\w'’-]+", text)):
        word = match.group()
        if word[0].isdigit() or (index > 0 and word[0].isupper() and word.lower() != "i"):
            found |= {_stem(w) for w in _words(word)}
    return found


def _unmatched(words: set[str], others: set[str]) -> set[str]:
    """Words with no equal and no spelling variant among `others`."""
    return {w for w in words if w not in others and not any(_spelling_fix(w, o) for o in others)}


def check_rephrasing(
    original: str, rephrased: str, conversation: str = "", markers: frozenset[str] = frozenset()
) -> RephraseCheck:
    """Keep `rephrased` only if it means what `original` asked; `conversation` is the
    text the rewrite could draw on (empty when memory was not used). With a
    conversation, follow-up `markers` ("again", "also") may go: the rewrite spells out
    what they pointed to."""
    chrf = _chrf(rephrased, original)
    if not rephrased.strip():
        return RephraseCheck(False, "empty rephrasing", chrf)
    if count_negations(original) != count_negations(rephrased):
        return RephraseCheck(False, "negation changed", chrf)
    old, new = content_stems(original), content_stems(rephrased)
    kept = old - {_stem(marker) for marker in markers} if conversation else old
    if dropped := _unmatched(kept, new):
        return RephraseCheck(False, f"dropped {sorted(dropped)}", chrf)
    allowed = old | content_stems(conversation)
    added = _unmatched(new, allowed)
    # Without a conversation one plain word may come with a rewrite ("travel expenses");
    # a name, a number or more words change what is asked.
    tolerated = 0 if conversation else 1
    if added & _names_or_numbers(rephrased) or len(added) > tolerated:
        return RephraseCheck(False, f"added {sorted(added)}", chrf)
    return RephraseCheck(
        True, f"kept the meaning (added {sorted(added)})" if added else "kept the meaning", chrf
    )


def decide_rephrasing(
    original: str,
    rephrased: str,
    conversation: str,
    min_chrf: float,
    markers: frozenset[str] = frozenset(),
) -> tuple[str, RephraseCheck]:
    """The question to use: the rephrasing when it passes, else the original. A rephrasing
    that only changes case or punctuation keeps the original, so that the search already
    running for it is used."""
    if _words(rephrased) == _words(original):
        return original, RephraseCheck(True, "the same words", 100.0)
    check = check_rephrasing(original, rephrased, conversation, markers)
    if check.accepted and not conversation and check.chrf < min_chrf:
        check = RephraseCheck(False, f"chrF {check.chrf:.1f} below {min_chrf}", check.chrf)
    return (rephrased if check.accepted else original), check
