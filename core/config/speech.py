"""`[speech]`: an OpenAI-compatible transcription endpoint (`/v1/audio/transcriptions`:
vLLM serving Whisper, speaches, faster-whisper-server). No `url`: voice is ignored."""

from __future__ import annotations

from pydantic import Field, PrivateAttr, SecretStr, ValidationInfo, field_validator, model_validator

from core.config.secrets import context_of, env_var_checker
from core.config.strict import Strict


class SpeechSettings(Strict):
    url: str | None = Field(default=None, pattern=r"^https?://")
    """An OpenAI-compatible transcription endpoint (POST /audio/transcriptions under this URL: vLLM
    serving Whisper, speaches, faster-whisper-server). Unset: voice messages are ignored. See
    room_defaults.transcribe."""
    model: str = "whisper-1"
    """The transcription model the endpoint serves, sent with every request."""
    api_key_env: str | None = None
    """The environment variable with the endpoint's API key, if it needs one."""
    timeout_seconds: float = Field(default=120, gt=0, le=3600)
    """The environment variable with the endpoint's API key, if it needs one."""
    max_bytes: int = Field(default=25_000_000, ge=1_000)
    """A voice message over this size is not transcribed (whoever asked is told)."""

    _api_key: SecretStr | None = PrivateAttr(default=None)
    _check_env = field_validator("api_key_env")(env_var_checker("speech"))

    @model_validator(mode="after")
    def _key(self, info: ValidationInfo) -> SpeechSettings:
        if self.api_key_env:
            self._api_key = SecretStr(context_of(info).get("env", {}).get(self.api_key_env, ""))
        return self

    def api_key(self) -> str | None:
        return self._api_key.get_secret_value() if self._api_key else None
