"""`[speech]`: how voice messages become text. Either an OpenAI-compatible transcription
endpoint (`url`: `/v1/audio/transcriptions`, as vLLM serving Whisper, speaches or
faster-whisper-server answer it), or a Whisper model run by the bot itself (`local`:
faster-whisper, the `voice` extra). Neither: voice is ignored."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from pydantic import Field, PrivateAttr, SecretStr, ValidationInfo, field_validator, model_validator

from core.config.secrets import context_of, env_var_checker
from core.config.strict import Strict

# What `pip install` line brings the local transcriber (pyproject.toml's `voice` extra).
VOICE_EXTRA = "pip install 'matrix-knowledge-bot[voice]'"


class SpeechSettings(Strict):
    url: str | None = Field(default=None, pattern=r"^https?://")
    """An OpenAI-compatible transcription endpoint (POST /audio/transcriptions under this URL: vLLM
    serving Whisper, speaches, faster-whisper-server). Unset, and local off: voice messages are
    ignored. See room_defaults.transcribe."""
    local: bool = False
    """Transcribe in the bot's own process instead of an endpoint: faster-whisper (the `voice`
    extra) with Whisper tiny.en, bundled (English only, about 75 MB, several times faster than
    real time on 2 cores), or the model in model_dir. One voice message at a time, off the event
    loop. Not with url."""
    model_dir: Path | None = None
    """For local: a Whisper model folder in CTranslate2's format, as faster-whisper loads it (such
    as one made by ct2-transformers-converter), relative to the config file's folder. Unset: the
    bundled tiny.en."""
    threads: int = Field(default=0, ge=0, le=256)
    """For local: CPU threads one transcription uses (0: as many as there are cores)."""
    model: str = "whisper-1"
    """For url: the transcription model the endpoint serves, sent with every request."""
    api_key_env: str | None = None
    """For url: the environment variable with the endpoint's API key, if it needs one."""
    timeout_seconds: float = Field(default=120, gt=0, le=3600)
    """Seconds to fetch and transcribe one voice message; over it, whoever asked is told that it
    could not be transcribed. A local model stops at the next stretch of about 30 seconds of
    audio."""
    max_bytes: int = Field(default=25_000_000, ge=1_000)
    """A voice message over this size is not transcribed (whoever asked is told)."""

    _api_key: SecretStr | None = PrivateAttr(default=None)
    _check_env = field_validator("api_key_env")(env_var_checker("speech"))

    @field_validator("model_dir")
    @classmethod
    def _model_folder(cls, value: Path | None, info: ValidationInfo) -> Path | None:
        if value is None:
            return None
        base = context_of(info).get("base_dir")
        path = value if value.is_absolute() or base is None else Path(base) / value
        if not (path / "model.bin").is_file():
            raise ValueError(
                f"{path} holds no Whisper model in CTranslate2's format (no model.bin there)"
            )
        return path

    @model_validator(mode="after")
    def _one_way(self, info: ValidationInfo) -> SpeechSettings:
        if self.url and self.local:
            raise ValueError("set url (an endpoint) or local = true (a model run here), not both")
        if self.model_dir is not None and not self.local:
            raise ValueError("model_dir is the local model's folder: set local = true with it")
        if self.local and importlib.util.find_spec("faster_whisper") is None:
            raise ValueError(f"local transcription needs faster-whisper: {VOICE_EXTRA}")
        if self.api_key_env:
            self._api_key = SecretStr(context_of(info).get("env", {}).get(self.api_key_env, ""))
        return self

    @property
    def enabled(self) -> bool:
        """Whether voice messages are transcribed at all."""
        return bool(self.url) or self.local

    def api_key(self) -> str | None:
        return self._api_key.get_secret_value() if self._api_key else None
