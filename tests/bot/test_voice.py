"""Voice messages on a fake account, with a scripted transcriber."""

from __future__ import annotations

from dataclasses import dataclass, field

from tests.bot.harness import eventually, running_bot

ANN, BEN = "@ann:fake.test", "@ben:fake.test"
SPEECH = '[speech]\nurl = "http://127.0.0.1:1/v1"\n'


@dataclass
class Transcripts:
    """Hears each recording as its bytes spell."""

    heard: list[str] = field(default_factory=list)

    async def transcribe(self, audio: bytes, name: str, media_type: str) -> str:
        self.heard.append(name)
        return audio.decode()


def speak(bot, room: str, sender: str, words: str, n: int) -> dict:
    url = f"mxc://fake.test/voice-{n}"
    bot.account.media[url] = words.encode()
    return bot.account.say(room, sender, "Voice message", msgtype="m.audio", url=url,
                           info={"mimetype": "audio/ogg"},
                           **{"org.matrix.msc3245.voice": {}})  # fmt: skip


async def test_voice_in_a_room_is_the_rooms_conversation_and_posted_when_asked(tmp_path):
    config = SPEECH + '[rooms."!loud"]\ntranscribe = "reply"\n'
    async with running_bot(tmp_path, config, transcriber=Transcripts()) as bot:
        bot.account.add_room("!quiet", [ANN, BEN])
        bot.account.add_room("!loud", [ANN, BEN])
        quiet = speak(bot, "!quiet", ANN, "the release moves to Thursday", 1)
        loud = speak(bot, "!loud", ANN, "the budget review is on Friday", 2)

        async def transcribed() -> bool | None:
            pending = [e.source["event_id"] for e in await bot.state.pending_events()]
            return True if pending == [] and bot.answerer.requests == [] else None

        await eventually(transcribed)  # both voice messages are done in the inbox
        await bot.reply_to(bot.ask("!quiet", BEN, "when is the release?"))
        recent = [line.text for line in bot.answerer.requests[0].recent]
        assert "the release moves to Thursday" in recent

        posted = await bot.account.wait_for(
            lambda: next((w for w in bot.account.messages()
                          if "Transcript:" in w.content.get("body", "")), None)
        )  # fmt: skip
        assert (
            posted.room_id == "!loud" and "the budget review is on Friday" in posted.content["body"]
        )
        assert posted.content["m.relates_to"]["event_id"] == loud["event_id"]
        in_quiet = [w for w in bot.account.messages() if w.room_id == "!quiet"]
        assert all("Transcript:" not in w.content.get("body", "") for w in in_quiet)
        assert quiet["event_id"]
