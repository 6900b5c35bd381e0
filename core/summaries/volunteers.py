"""A volunteer's short reply in any language (pure): "mine", "yo", "ich!", "我来".

"can someone own the summary for legal" … "mine"; "alguien tiene que armar la macro
nueva" … "yo": the one-word reply is who takes the work, though the request asked no
question. Such a reply names its speaker and nothing else: a first-person pronoun, or a
fixed "I'll take it" ("mach ich", "deixa comigo", "我来", "やります"), beside emoji,
punctuation and whom it answers. A closed class like greetings and laughter, not a
list of the rooms it was seen in. "me too", "ich auch" agree with someone; they
volunteer nobody and are no volunteer's reply. Some of these words say something else
alone ("ja" is yes, "yo" an English greeting, "moi" a Finnish one): a reply volunteers
only after a request for someone (core/summaries/points.py).
"""

from __future__ import annotations

import re

from core.summaries.cues import TO_SOMEONE
from core.summaries.greetings import BESIDE, MENTION, build_normal
from core.summaries.wording import QUESTION_MARKS

# The whole reply, its words folded as greetings are (build_normal), emoji and marks
# left out. "ja" is Polish "I" and German or Swedish "yes": after a request for someone,
# either takes the work on.
VOLUNTEER = frozenset(
    " ".join(build_normal(phrase).split())
    for phrase in """me|mine|i|i can|i will|i'll|i'll do it|i'll take it|i can take it|
    i got it|i've got it|i'll go|dibs|
    ich|ich kann|ich mach's|ich machs|ich mach das|ich mache das|mach ich|mache ich|
    übernehm ich|übernehme ich|ich übernehme|nehm ich|
    moi|moi je peux|je peux|je prends|je m'en charge|
    yo|yo puedo|yo lo hago|lo hago yo|yo me lo quedo|me lo quedo|
    io|io posso|lo faccio io|ci penso io|
    eu|eu posso|eu faço|deixa comigo|pode deixar comigo|
    ik|ik kan|doe ik|ik pak het|
    jag|jag kan|jag tar det|
    ja|ja mogę|biorę|biore|
    я|я могу|я возьму|беру|я беру|беру на себя|я можу|я візьму|
    ben|ben yaparım|
    저|저요|제가|제가 할게요|제가 할께요""".replace("\n", "").split("|")
)
# Scripts written without spaces: the reply whole.
WHOLE = re.compile(
    r"^(?:我|我来|我來|我可以|我去|我负责|我負責|私|私が|私がやります|僕|僕が|俺|俺が|"
    r"やります|やりますよ|引き受けます|担当します)$"
)
# Whom a reply answers, before it ("@dana:example.org: ", "Dana: ", "kai, "), as requests
# name whom they ask.
ADDRESSED = re.compile(TO_SOMEONE)


def decide_volunteers(text: str) -> bool:
    """Whether a reply only names its speaker as the one who takes the work ("mine",
    "yo 🙋", "Dana: ich!", "我来"); a question ("me? 😅") volunteers nobody."""
    if any(mark in text for mark in QUESTION_MARKS):
        return False
    reply = MENTION.sub(" ", build_normal(ADDRESSED.sub("", text.strip())))
    words = [w for w in BESIDE.split(reply) if w]
    said = " ".join(words)
    return said in VOLUNTEER or (len(words) == 1 and bool(WHOLE.match(said)))
