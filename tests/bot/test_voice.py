"""Voice messages on a fake account, with a scripted transcriber."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from core import strings
from core.speech import SpeechError
from tests.bot.harness import eventually, running_bot
from tests.bot.scenes import ALICE, content_of, direct_chat, invites, replies, written

ANN, BEN = "@ann:fake.test", "@ben:fake.test"
SPEECH = '[speech]\nurl = "http://127.0.0.1:1/v1"\n'


@dataclass
class Transcripts:
    """Hears each recording as its bytes spell (once `go` is set, when given)."""

    heard: list[str] = field(default_factory=list)
    go: asyncio.Event | None = None
    # The endpoint fails, as a transcription server that is down does.
    fail: bool = False

    async def transcribe(self, audio: bytes, name: str, media_type: str) -> str:
        self.heard.append(name)
        if self.go is not None:
            await self.go.wait()
        if self.fail:
            raise SpeechError("the transcription endpoint answered 503")
        return audio.decode()


def speak(bot, room: str, sender: str, words: str, n: int) -> dict:
    url = f"mxc://fake.test/voice-{n}"
    bot.account.media[url] = words.encode()
    return bot.account.say(
        room,
        sender,
        "Voice message",
        msgtype="m.audio",
        url=url,
        info={"mimetype": "audio/ogg"},
        **{"org.matrix.msc3245.voice": {}},
    )


async def test_voice_in_a_room_is_the_rooms_conversation_and_posted_when_asked(tmp_path):
    config = SPEECH + '[rooms."!loud"]\ntranscribe = "reply"\n'
    transcripts = Transcripts()
    async with running_bot(tmp_path, config, transcriber=transcripts) as bot:
        bot.account.add_room("!quiet", [ANN, BEN])
        bot.account.add_room("!loud", [ANN, BEN])
        quiet = speak(bot, "!quiet", ANN, "the release moves to Thursday", 1)
        loud = speak(bot, "!loud", ANN, "the budget review is on Friday", 2)

        async def transcribed() -> bool | None:
            pending = [e.source["event_id"] for e in await bot.state.pending_events()]
            return True if len(transcripts.heard) == 2 and pending == [] else None

        await eventually(transcribed)  # both heard, and done in the inbox
        await bot.reply_to(bot.ask("!quiet", BEN, "when is the release?"))
        recent = [line.text for line in bot.answerer.requests[0].recent]
        assert "the release moves to Thursday" in recent

        posted = await bot.account.wait_for(
            lambda: next(
                (w for w in bot.account.messages() if "Transcript:" in w.content.get("body", "")),
                None,
            )
        )
        assert (
            posted.room_id == "!loud" and "the budget review is on Friday" in posted.content["body"]
        )
        assert posted.content["m.relates_to"]["event_id"] == loud["event_id"]
        in_quiet = [w for w in bot.account.messages() if w.room_id == "!quiet"]
        assert all("Transcript:" not in w.content.get("body", "") for w in in_quiet)
        assert quiet["event_id"]


async def test_a_voice_message_taken_back_while_transcribed_leaves_no_transcript(tmp_path):
    transcripts = Transcripts(go=asyncio.Event())
    config = SPEECH + '[room_defaults]\ntranscribe = "reply"\n'
    async with running_bot(tmp_path, config, transcriber=transcripts) as bot:
        bot.account.add_room("!r", [ANN, BEN])
        voice = speak(bot, "!r", ANN, "the door code is 4711", 1)

        async def heard() -> bool | None:
            return True if transcripts.heard else None

        await eventually(heard)  # being transcribed when it is taken back
        bot.account.add_event("!r", ANN, "m.room.redaction", {}, redacts=voice["event_id"])

        async def pending() -> list[str]:
            return [e.source["event_id"] for e in await bot.state.pending_events()]

        async def followed() -> bool | None:
            return True if await bot.state.was_redacted(voice["event_id"]) else None

        await eventually(followed)
        transcripts.go.set()

        async def transcribed() -> bool | None:
            return True if voice["event_id"] not in await pending() else None

        await eventually(transcribed)
        assert transcripts.heard == ["Voice message"]
        await bot.reply_to(bot.ask("!r", BEN, "what is the door code?"))
        assert all("4711" not in line.text for line in bot.answerer.requests[0].recent)
        bodies = [w.content.get("body", "") for w in bot.account.messages()]
        assert all("4711" not in body for body in bodies), bodies


async def test_a_spoken_question_is_answered_in_the_language_it_was_spoken_in(tmp_path):
    from core.i18n.detection import LanguageFinder

    transcripts = Transcripts()
    async with running_bot(
        tmp_path, SPEECH, transcriber=transcripts, languages=LanguageFinder()
    ) as bot:
        bot.account.add_room("!r", [ANN, BEN])
        answer = await bot.reply_to(bot.ask("!r", ANN, "Wie viele Urlaubstage habe ich?"))
        # A voice message replying to the bot's answer is a question to it.
        bot.account.media["mxc://fake.test/voice-1"] = "¿Y cuántos días me quedan?".encode()
        bot.account.say(
            "!r",
            ANN,
            "Voice message",
            msgtype="m.audio",
            url="mxc://fake.test/voice-1",
            info={"mimetype": "audio/ogg"},
            **{
                "org.matrix.msc3245.voice": {},
                "m.relates_to": {"m.in_reply_to": {"event_id": answer.event_id}},
            },
        )

        async def both_asked() -> bool | None:
            return True if len(bot.answerer.requests) == 2 else None

        await eventually(both_asked)
        # The voice message's body is "Voice message": its language is the transcript's.
        assert [(r.text, r.language) for r in bot.answerer.requests] == [
            ("Wie viele Urlaubstage habe ich?", "de"),
            ("¿Y cuántos días me quedan?", "es"),
        ]


async def test_a_voice_message_redacted_after_its_transcript_was_posted_takes_it_down(tmp_path):
    from core import strings

    transcripts = Transcripts()
    config = SPEECH + '[room_defaults]\ntranscribe = "reply"\n'
    async with running_bot(tmp_path, config, transcriber=transcripts) as bot:
        bot.account.add_room("!r", [ANN, BEN])
        voice = speak(bot, "!r", ANN, "the door code is 4711", 1)
        posted = await bot.account.wait_for(
            lambda: next((w for w in bot.account.messages() if "4711" in w.content["body"]), None)
        )
        bot.account.add_event("!r", ANN, "m.room.redaction", {}, redacts=voice["event_id"])
        taken = await bot.account.wait_for(
            lambda: next((w for w in bot.account.written if w.kind == "redaction"), None)
        )
        assert (taken.room_id, taken.event_id) == ("!r", posted.event_id)
        assert taken.content["reason"] == strings.TRANSCRIPT_TAKEN_BACK
        await bot.reply_to(bot.ask("!r", BEN, "what is the door code?"))
        assert all("4711" not in line.text for line in bot.answerer.requests[0].recent)


async def test_a_voice_message_in_a_direct_chat_is_transcribed_and_answered(tmp_path):
    transcripts = Transcripts()
    config = invites(ALICE, extra=SPEECH + '[room_defaults]\ntranscribe = "reply"\n')
    async with running_bot(tmp_path, config, transcriber=transcripts) as bot:
        direct = await direct_chat(bot, "!dm", ALICE)

        def voice_message(n: int, words: str) -> str:
            url = f"mxc://fake.test/voice-{n}"
            bot.account.media[url] = words.encode()
            return bot.account.say(
                direct,
                ALICE,
                "Voice message",
                msgtype="m.audio",
                url=url,
                filename="voice.wav",
                info={"mimetype": "audio/wav"},
                **{"org.matrix.msc3245.voice": {}},
            )["event_id"]

        voice = voice_message(1, "How are trains booked?")

        def transcript(w) -> bool:
            return "Transcript:" in w.content.get("body", "")

        # The transcript is answered as the question, in reply to the voice message.
        answer = await written(bot, lambda w: "Answer to:" in content_of(w).get("body", ""))
        assert content_of(answer)["body"] == "Answer to: How are trains booked?"
        answered = [w.event_id for w in replies(bot, voice) if not transcript(w)]
        relates = answer.content.get("m.relates_to", {})
        assert answer.event_id in answered or relates.get("event_id") in answered
        [posted] = [w for w in replies(bot, voice) if transcript(w)]
        assert "How are trains booked?" in posted.content["body"]
        assert transcripts.heard == ["voice.wav"]

        transcripts.fail = True
        failing = voice_message(2, "And hotels?")
        notice = await written(bot, lambda w: w in replies(bot, failing))
        assert notice.content["body"] == strings.VOICE_FAILED
        assert len(bot.answerer.requests) == 1, "nothing heard, nothing asked"
