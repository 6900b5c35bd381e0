"""Settings of the language model behind an OpenAI-compatible endpoint (vLLM in production)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, PrivateAttr, SecretStr, ValidationInfo, field_validator, model_validator

from core.config.secrets import context_of, env_var_checker
from core.config.strict import Strict

# The kinds of call the bot makes to the model.
LlmTask = Literal["answer", "prestep", "support", "summary", "catchup", "judge"]


class MaxTokens(Strict):
    """The most tokens each structured reply may take (sent as max_tokens): a small model
    that never closes its JSON object stops there instead of writing until the timeout.
    A reasoning model spends these on its thoughts first: raise them for one."""

    prestep: int = Field(default=400, ge=16, le=100_000)
    """The pre-step's verdict on a question."""
    support: int = Field(default=200, ge=16, le=100_000)
    """The support check's verdict on an answer."""
    summary_support: int = Field(default=600, ge=16, le=100_000)
    """The summary's check: one verdict per point."""
    summary: int = Field(default=1500, ge=16, le=100_000)
    """A summary (or one part of a long range, and their merge)."""
    catchup: int = Field(default=1500, ge=16, le=100_000)
    """A catch-up's TL;DR."""
    judge: int = Field(default=200, ge=16, le=100_000)
    """The evaluation judge's verdict."""

    def of(self, name: str) -> int:
        """The bound of a structured call by its name (a task, or "summary_support")."""
        bound = getattr(self, name, None)
        return bound if isinstance(bound, int) else self.prestep


class LlmTaskSettings(Strict):
    """Another model or endpoint for one task (a small fast one for the pre-step and the
    checks, say); what is unset comes from [llm]."""

    url: str | None = Field(default=None, pattern=r"^https?://")
    """The task's endpoint; unset: [llm] url."""
    model: str | None = None
    """The task's model; unset: [llm] model."""
    api_key_env: str | None = None
    """The environment variable with the task's API key; unset: [llm] api_key_env."""
    timeout_seconds: float | None = Field(default=None, gt=0, le=600)
    """Seconds per call of the task; unset: [llm] timeout_seconds."""
    context_window: int | None = Field(default=None, ge=256, le=10_000_000)
    """The task model's context window in tokens; unset: [llm] context_window."""

    _api_key: SecretStr | None = PrivateAttr(default=None)
    _check_env = field_validator("api_key_env")(env_var_checker("llm.tasks"))

    @model_validator(mode="after")
    def _key(self, info: ValidationInfo) -> LlmTaskSettings:
        if self.api_key_env:
            self._api_key = SecretStr(context_of(info).get("env", {}).get(self.api_key_env, ""))
        return self


class LlmSettings(Strict):
    """No `url` means no language model: the bot answers in search-only mode."""

    url: str | None = Field(default=None, pattern=r"^https?://")
    """The endpoint's base URL, and the model it serves."""
    model: str = ""
    """The endpoint's base URL, and the model it serves."""
    api_key_env: str | None = None
    """The environment variable holding the API key, if the endpoint wants one."""
    timeout_seconds: float = Field(default=60, gt=0, le=600)
    """Seconds per call, calls at once, and retries (with backoff) after a failure."""
    max_concurrency: int = Field(default=8, ge=1, le=256)
    """Seconds per call, calls at once, and retries (with backoff) after a failure."""
    max_retries: int = Field(default=2, ge=0, le=10)
    """Seconds per call, calls at once, and retries (with backoff) after a failure."""
    reasoning_opens_in_prompt: bool | None = None
    """The model's chat template opens its reasoning tag in the prompt (newer DeepSeek-R1
    templates): replies hold only `</think>`. Unset: found out, the first streamed answer being
    shown only once whole; false: answers stream from the first."""
    context_window: int | None = Field(default=None, ge=256, le=10_000_000)
    """The model's context window in tokens; unset: what the endpoint says (vLLM's /v1/models),
    else what a refusal for length names."""
    answer_tokens: int = Field(default=2048, ge=16, le=100_000)
    """Tokens kept free for an answer (sent as max_tokens); at most a quarter of the window."""
    # The bound of each structured reply (`[llm.max_tokens]`); answers take answer_tokens.
    max_tokens: MaxTokens = Field(default_factory=MaxTokens)
    request_fields: dict[LlmTask, dict[str, Any]] = Field(default_factory=dict)
    """Extra request fields per task, passed through to the endpoint (vLLM's chat_template_kwargs,
    Ollama's options, ...)."""
    # Another model or endpoint per task (`[llm.tasks.prestep]`, ...).
    tasks: dict[LlmTask, LlmTaskSettings] = Field(default_factory=dict)

    _api_key: SecretStr | None = PrivateAttr(default=None)
    _check_env = field_validator("api_key_env")(env_var_checker("llm"))

    @model_validator(mode="after")
    def _model_and_key(self, info: ValidationInfo) -> LlmSettings:
        if self.url and not self.model:
            raise ValueError("model is required when url is set")
        if self.api_key_env:
            self._api_key = SecretStr(context_of(info).get("env", {}).get(self.api_key_env, ""))
        return self

    def api_key(self) -> str | None:
        return self._api_key.get_secret_value() if self._api_key else None

    def for_task(self, task: LlmTask) -> LlmSettings:
        """The settings a task's calls go by: [llm], with what `[llm.tasks.<task>]` sets."""
        override = self.tasks.get(task)
        if override is None:
            return self
        changed = {
            key: value
            for key, value in override.model_dump().items()
            if value is not None and key != "api_key_env"
        }
        merged = self.model_copy(update={**changed, "tasks": {}})
        if override.api_key_env:
            merged._api_key = override._api_key
        return merged
