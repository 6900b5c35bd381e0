"""Points the room's own replies make (pure): a message and the reply that settles,
corrects or completes it belong to one point, whatever their wording.

A Matrix reply says which message it answers, in any language: "Korrektur: schon um
7:30" replying to the appointment, "firman el lunes" replying to "they have not signed
yet". The reply joins the point that holds the message it answers (a value corrected
later stands beside the first one), or the two become a point of their own. A question
or a state of things the room never takes up again, a reply pair nothing else in the
room speaks of, and a reply that names nothing the room names are talk beside the work
(core/summaries/sidetracks.py) and stay out.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from core.summaries.cues import OPEN_ANSWER
from core.summaries.draft import SummaryLine
from core.summaries.exchanges import POINT_LINES
from core.summaries.salience import Pick
from core.summaries.sidetracks import decide_sidetrack
from core.summaries.wording import decide_said
from core.summaries.words import count_words

# Words a reply or the message it answers has at least, for the pair to be a point of
# its own ("ok", "👍" settle nothing a reader needs quoted).
PAIR_WORDS = 3


def decide_reply_points(
    lines: Sequence[SummaryLine], picks: Sequence[Pick], chatter: frozenset[int]
) -> list[Pick]:
    """The points without the questions beside the work, with each reply beside the
    message it answers: added to the point that holds that message when it has room,
    else a point of the two."""
    out = [
        pick
        for pick in picks
        if not decide_beside_the_work(
            lines,
            pick,
            {i for other in picks if other.listed and other != pick for i in other.lines},
        )
    ]
    by_event = {line.event_id: i for i, line in enumerate(lines) if line.event_id}
    for index, line in enumerate(lines):
        answered = by_event.get(line.reply_to or "")
        if answered is None or answered >= index or {index, answered} & chatter:
            continue
        holders = [n for n, pick in enumerate(out) if answered in pick.lines]
        if any(index in out[n].lines for n in holders):
            continue
        roomy = [n for n in holders if len(out[n].lines) < POINT_LINES]
        if roomy and not decide_sidetrack(lines, (index,), figures=1):
            kept = out[roomy[0]]
            out[roomy[0]] = Pick(kept.said, tuple(sorted((*kept.lines, index))), kept.main)
            continue
        if max(count_words(lines[i].text) for i in (answered, index)) < PAIR_WORDS:
            continue
        if decide_sidetrack(lines, (answered, index)):
            continue
        said = decide_said(line.text) or decide_said(lines[answered].text) or "answered"
        out.append(Pick(said, (answered, index), index))
    return out


def decide_beside_the_work(
    lines: Sequence[SummaryLine], pick: Pick, work: Collection[int] = ()
) -> bool:
    """A question, or a state of things, the room never takes up again ("who watched
    the final?"). One that an answer leaves open ("not sure, I'll ask") is work however
    rare its words, and so is one with a figure in it, or one that names something a
    line of the `work` names (the decisions, actions and questions kept: "do we keep
    the old export API?" beside "Dana reviews the export fixes"); removing what the
    wording found wants more than adding."""
    if pick.said not in ("question", "answered", "status"):
        return False
    if any(OPEN_ANSWER.search(lines[i].text) for i in pick.lines):
        return False
    return decide_sidetrack(lines, pick.lines, figures=1, work=work)
