"""A vote counts in the answer's own room: a reaction names its target by event id alone,
so one sent elsewhere on that id must not rate the answer (nor make the bot ask there
what was wrong)."""

from __future__ import annotations

from tests.bot.harness import eventually, running_bot

ANN, MALLORY = "@ann:fake.test", "@mallory:fake.test"


def _react(bot, room: str, sender: str, target: str, key: str) -> None:
    relates = {"rel_type": "m.annotation", "event_id": target, "key": key}
    bot.account.add_event(room, sender, "m.reaction", {"m.relates_to": relates})


async def test_a_reaction_in_another_room_on_an_answers_id_is_no_vote(tmp_path):
    async with running_bot(tmp_path, feedback=True) as bot:
        assert bot.feedback is not None
        bot.account.add_room("!team", [ANN])
        bot.account.add_room("!other", [MALLORY])
        answer = await bot.reply_to(bot.ask("!team", ANN, "who approves travel?"))
        answer_id = await eventually(lambda: bot.feedback.answer_of_event(answer.event_id))
        _react(bot, "!other", MALLORY, answer.event_id, "👎")
        _react(bot, "!team", ANN, answer.event_id, "👍")
        # Taken in order: once Ann's vote is in, Mallory's was decided before it.
        assert await eventually(lambda: bot.feedback.vote_of(answer_id, ANN)) == "up"
        assert await bot.feedback.vote_of(answer_id, MALLORY) is None
        asked = [w for w in bot.account.messages() if w.room_id == "!other"]
        assert asked == [], "nothing is asked in the other room"
