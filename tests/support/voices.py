"""Real speech for the voice tests: espeak-ng (Debian's package, installed by
deploy/setup-speech.sh) says a sentence into a WAV file, and PyAV (faster-whisper's
decoder, the `voice` extra) encodes it as Element records voice messages: Opus in an
Ogg file, 48 kHz, mono."""

from __future__ import annotations

import io
import subprocess
import tempfile
from pathlib import Path


def speak_wav(text: str, words_per_minute: int = 160) -> bytes:
    """`text` spoken by espeak-ng's default English voice, as a WAV file (22 kHz mono)."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "said.wav"
        subprocess.run(
            ["espeak-ng", "-v", "en-us", "-s", str(words_per_minute), "-w", str(out), text],
            check=True,
            capture_output=True,
            timeout=60,
        )
        return out.read_bytes()


def to_ogg_opus(wav: bytes) -> bytes:
    """A WAV recording as Element sends a voice message: Ogg/Opus, 48 kHz mono."""
    import av

    out = io.BytesIO()
    with av.open(io.BytesIO(wav)) as source, av.open(out, "w", format="ogg") as target:
        stream = target.add_stream("libopus", rate=48_000)
        stream.layout = "mono"
        resample = av.AudioResampler(format="s16", layout="mono", rate=48_000)
        for frame in source.decode(audio=0):
            for resampled in resample.resample(frame):
                target.mux(stream.encode(resampled))
        for resampled in resample.resample(None):
            target.mux(stream.encode(resampled))
        target.mux(stream.encode(None))
    return out.getvalue()


def speak(text: str) -> bytes:
    """`text` as a voice message's Ogg/Opus recording."""
    return to_ogg_opus(speak_wav(text))


def seconds_of(audio: bytes) -> float:
    """How long a recording plays."""
    import av

    with av.open(io.BytesIO(audio)) as container:
        stream = container.streams.audio[0]
        frames = sum(frame.samples for frame in container.decode(stream))
        return frames / stream.rate
