"""The typed settings that the TOML config file is validated into.

Every model forbids unknown keys, so a typo is an error that names the key rather
than a setting silently ignored. Values that depend on the outside world (environment
variables for secrets, the config file's folder for relative paths) come through the
validation context, never from globals.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import (
    Field,
    PrivateAttr,
    SecretStr,
    ValidationInfo,
    field_validator,
    model_validator,
)

from core.config.chat_api import AssistantSettings, ChatApiSettings, check_assistants
from core.config.feedback import FeedbackSettings
from core.config.files import FileSettings
from core.config.guardrails import GuardrailSettings
from core.config.knowledge import (
    CollectionSettings,
    IngestApiSettings,
    KnowledgeSettings,
    RetrievalSettings,
    SourceSettings,
    check_collections,
    check_embedding_model,
)
from core.config.llm import LlmSettings
from core.config.memory import MemorySettings
from core.config.ops import OpsSettings
from core.config.pipeline import PipelineSettings
from core.config.predetermined import PredeterminedAnswer
from core.config.prompts import PromptSettings
from core.config.rights import RightsSettings
from core.config.secrets import context_of, env_var_checker, existing_file, resolve_one_secret
from core.config.speech import SpeechSettings
from core.config.storage import StorageSettings
from core.config.strict import Strict
from core.config.summaries import SummarySettings, check_schedule
from core.config.users import check_user_id, check_user_ids
from core.i18n.language import check_language_code

MIN_PICKLE_KEY_LENGTH = 16


def read_token_file(path: Path) -> str:
    """The token a token file holds: its first line, trimmed ("" when it cannot be read,
    or while it is being written)."""
    try:
        return path.read_text().strip().partition("\n")[0].strip()
    except OSError:
        return ""


class MatrixSettings(Strict):
    """The homeserver and the bot's account; these cannot change while the bot runs."""

    homeserver: str
    user_id: str
    password: SecretStr | None = None
    password_env: str | None = None
    access_token: SecretStr | None = None
    access_token_env: str | None = None
    # A file holding the access token (homeservers without password login: a MAS
    # compatibility token, a personal access token); read again when it changes, so a
    # replaced token is taken without a restart (same device only).
    access_token_file: Path | None = None
    device_name: str = "knowledge-bot"
    # Act only on messages from devices their owner cross-signed, and share room keys
    # only with those (as Element does since MSC4153); off, so that command-line clients
    # and bridges that do not cross-sign keep working.
    verified_devices_only: bool = False
    display_name: str | None = None
    encryption: bool = True
    # The passphrase that locks the encryption keys in the store (nio's pickle key).
    pickle_key: SecretStr | None = None
    pickle_key_env: str | None = None

    _password: SecretStr | None = PrivateAttr(default=None)
    _access_token: SecretStr | None = PrivateAttr(default=None)
    _token_path: Path | None = PrivateAttr(default=None)
    _pickle_key: SecretStr | None = PrivateAttr(default=None)

    @field_validator("homeserver")
    @classmethod
    def _homeserver_is_url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError("must be a URL starting with http:// or https://")
        return value.rstrip("/")

    @field_validator("user_id")
    @classmethod
    def _user_id_shape(cls, value: str) -> str:
        return check_user_id(value)

    _check_env = field_validator("password_env", "access_token_env", "pickle_key_env")(
        env_var_checker("matrix")
    )

    @model_validator(mode="after")
    def _one_credential(self, info: ValidationInfo) -> MatrixSettings:
        if self.access_token_file is not None:
            keys = ("password", "password_env", "access_token", "access_token_env")
            others = [key for key in keys if getattr(self, key) is not None]
            if others:
                raise ValueError(f"give access_token_file or {', '.join(others)}, not both")
            self._token_path = existing_file(self.access_token_file, info, "token file")
            token = read_token_file(self._token_path)
            if not token:
                raise ValueError(f"access_token_file: {self._token_path} is empty")
            self._access_token = SecretStr(token)
            return self
        name, secret = resolve_one_secret(
            info,
            {
                "password": (self.password, self.password_env),
                "access_token": (self.access_token, self.access_token_env),
            },
        )
        if name == "password":
            self._password = secret
        else:
            self._access_token = secret
        return self

    @model_validator(mode="after")
    def _at_most_one_pickle_key(self, info: ValidationInfo) -> MatrixSettings:
        if self.pickle_key is None and self.pickle_key_env is None:
            return self
        _, key = resolve_one_secret(info, {"pickle_key": (self.pickle_key, self.pickle_key_env)})
        value = key.get_secret_value()
        # An unset variable is reported by its own check (or not needed by this tool).
        unset_variable = self.pickle_key is None and not value
        # A short passphrase is as guessable as nio's default one.
        if not unset_variable and len(value) < MIN_PICKLE_KEY_LENGTH:
            raise ValueError(f"the pickle key must be at least {MIN_PICKLE_KEY_LENGTH} characters")
        self._pickle_key = key
        return self

    def login_password(self) -> str | None:
        return self._password.get_secret_value() if self._password else None

    def token_file(self) -> Path | None:
        """The token file, as a path from the config's folder; None when not used."""
        return self._token_path

    def login_token(self) -> str | None:
        """The access token: as configured, or what the token file holds now."""
        if self._token_path is not None:
            return read_token_file(self._token_path) or None
        return self._access_token.get_secret_value() if self._access_token else None

    def store_pickle_key(self) -> str | None:
        """The configured pickle key, or None to use the one kept in the data folder."""
        return (self._pickle_key.get_secret_value() if self._pickle_key else "") or None


class BotSettings(Strict):
    data_dir: Path = Field(default=Path("data"), validate_default=True)
    command_prefix: str = Field(default="!", min_length=1, max_length=3, pattern=r"^\S+$")
    ignore_users: tuple[str, ...] = ()
    placeholder_after_seconds: float = Field(default=3.0, ge=0)
    recent_messages: int = Field(default=20, ge=0, le=200)
    admin_room: str | None = None
    log_level: str = Field(default="INFO", pattern=r"^(DEBUG|INFO|WARNING|ERROR)$")
    # "text", or "json" for one JSON object per line (for log collectors).
    log_format: str = Field(default="text", pattern=r"^(text|json)$")
    # On shutdown, answers in flight get this long to finish; the rest get a notice and
    # are answered after the restart.
    shutdown_grace_seconds: float = Field(default=10.0, ge=0, le=600)
    # Messages answered at the same time; more wait in the inbox, in order of arrival.
    answer_workers: int = Field(default=8, ge=1, le=256)
    # One process per account syncs and answers; a standby takes over within about this
    # long after it dies (a clean stop hands over at once).
    lease_seconds: float = Field(default=15.0, ge=2, le=300)
    # Seconds an answered message's id (no text) stays in the inbox: an edit of it that
    # newly mentions the bot is no new question within this window.
    edit_window_seconds: float = Field(default=172_800, ge=1, le=366 * 86400)

    @field_validator("data_dir")
    @classmethod
    def _relative_to_config(cls, value: Path, info: ValidationInfo) -> Path:
        base = context_of(info).get("base_dir")
        return value if value.is_absolute() or base is None else Path(base) / value

    @field_validator("ignore_users")
    @classmethod
    def _user_ids(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return check_user_ids(value)


class InviteSettings(Strict):
    """Who may invite the bot into a room: exact user ids, or every user of a server."""

    allowed_users: tuple[str, ...] = ()
    allowed_servers: tuple[str, ...] = ()

    @field_validator("allowed_users")
    @classmethod
    def _user_ids(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return check_user_ids(value)


def _check_timezone(value: str | None) -> str | None:
    if value is None:
        return value
    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError, OSError) as exc:  # OSError: a name too long
        raise ValueError(f"{value[:60]!r} is not a time zone like Europe/Paris") from exc
    return value


def _check_language(value: str | None) -> str | None:
    return None if value is None else check_language_code(value)


class RoomSettings(Strict):
    """How the bot behaves in one room."""

    answer_without_mention: bool = False
    commands_enabled: bool = True
    public_only: bool = False
    general_answers: bool = False
    history: bool = True
    timezone: str = "UTC"
    # Summaries on a schedule: "" (off), "every 1d", or "cron: 0 18 * * 1-5".
    summary_schedule: str = ""
    # Voice messages, when [speech] is set: transcribed and kept as the room's history
    # ("silent"), also posted as a notice in a thread on the voice message ("reply"), or
    # not at all ("off"). A voice message addressed to the bot is answered in any case.
    transcribe: Literal["off", "reply", "silent"] = "silent"
    # The language the bot speaks here (ISO 639-1: "de", "fr", "es" have translations)
    # and answers in; unset: each asker's own language, as detected in their message.
    language: str | None = None

    _timezone = field_validator("timezone")(_check_timezone)
    _language = field_validator("language")(_check_language)
    _schedule = field_validator("summary_schedule")(check_schedule)


class RoomOverride(Strict):
    """A `[rooms."<room id>"]` section: only the keys it sets replace the defaults."""

    answer_without_mention: bool | None = None
    commands_enabled: bool | None = None
    public_only: bool | None = None
    general_answers: bool | None = None
    history: bool | None = None
    timezone: str | None = None
    summary_schedule: str | None = None
    transcribe: Literal["off", "reply", "silent"] | None = None
    language: str | None = None

    _timezone = field_validator("timezone")(_check_timezone)
    _language = field_validator("language")(_check_language)
    _schedule = field_validator("summary_schedule")(check_schedule)


class Settings(Strict):
    matrix: MatrixSettings
    # Defaults are validated like written sections, so that the context applies to them.
    bot: BotSettings = Field(default_factory=dict, validate_default=True)
    invites: InviteSettings = Field(default_factory=dict, validate_default=True)
    room_defaults: RoomSettings = Field(default_factory=dict, validate_default=True)
    rooms: dict[str, RoomOverride] = Field(default_factory=dict)
    knowledge: KnowledgeSettings = Field(default_factory=dict, validate_default=True)
    retrieval: RetrievalSettings = Field(default_factory=dict, validate_default=True)
    ingest_api: IngestApiSettings = Field(default_factory=dict, validate_default=True)
    rights: RightsSettings = Field(default_factory=dict, validate_default=True)
    llm: LlmSettings = Field(default_factory=dict, validate_default=True)
    prompts: PromptSettings = Field(default_factory=dict, validate_default=True)
    pipeline: PipelineSettings = Field(default_factory=dict, validate_default=True)
    guardrails: GuardrailSettings = Field(default_factory=dict, validate_default=True)
    memory: MemorySettings = Field(default_factory=dict, validate_default=True)
    feedback: FeedbackSettings = Field(default_factory=dict, validate_default=True)
    summaries: SummarySettings = Field(default_factory=dict, validate_default=True)
    files: FileSettings = Field(default_factory=dict, validate_default=True)
    speech: SpeechSettings = Field(default_factory=dict, validate_default=True)
    ops: OpsSettings = Field(default_factory=dict, validate_default=True)
    storage: StorageSettings = Field(default_factory=dict, validate_default=True)
    predetermined: tuple[PredeterminedAnswer, ...] = ()
    sources: dict[str, SourceSettings] = Field(default_factory=dict)
    # Validated when left out too: a crawled source needs its collection.
    collections: dict[str, CollectionSettings] = Field(default_factory=dict, validate_default=True)
    chat_api: ChatApiSettings = Field(default_factory=dict, validate_default=True)
    assistants: dict[str, AssistantSettings] = Field(default_factory=dict)

    @field_validator("collections")
    @classmethod
    def _collections_have_sources(
        cls, value: dict[str, CollectionSettings], info: ValidationInfo
    ) -> dict[str, CollectionSettings]:
        return check_collections(value, info.data.get("sources", {}))

    @field_validator("assistants")
    @classmethod
    def _assistants_have_collections(
        cls, value: dict[str, AssistantSettings], info: ValidationInfo
    ) -> dict[str, AssistantSettings]:
        return check_assistants(value, set(info.data.get("collections", {})))

    @model_validator(mode="after")
    def _summaries_have_a_collection(self) -> Settings:
        scheduled = self.room_defaults.summary_schedule or any(
            room.summary_schedule for room in self.rooms.values()
        )
        collection = self.summaries.collection
        if collection is not None and collection not in self.collections:
            raise ValueError(f"summaries.collection: {collection!r} is not a [collections] entry")
        if scheduled and collection is None:
            raise ValueError("summaries.collection: scheduled summaries need a collection")
        files = self.files.collection
        if files is not None and files not in self.collections:
            raise ValueError(f"files.collection: {files!r} is not a [collections] entry")
        return self

    @model_validator(mode="after")
    def _embedding_models_known(self) -> Settings:
        endpoints = self.knowledge.embedding_endpoints
        named = {"knowledge.embedding_model": self.knowledge.embedding_model}
        for name, collection in self.collections.items():
            if collection.embedding_model is not None:
                named[f"collections.{name}.embedding_model"] = collection.embedding_model
        for key, model in named.items():
            try:
                check_embedding_model(model, endpoints)
            except ValueError as exc:
                raise ValueError(f"{key}: {exc}") from None
        return self

    def room_files_collection(self) -> str | None:
        """Where files shared in rooms are kept; None: they are not."""
        if not self.files.rooms:
            return None
        return self.files.collection or self.summaries.collection

    def language_of(self, collection: str) -> str:
        """A collection's language; English for one not (or no longer) configured."""
        found = self.collections.get(collection)
        return found.language if found else "en"

    def embedding_model_of(self, collection: str) -> str:
        """The model of a collection: its own, or the default of [knowledge]."""
        return self.collections[collection].embedding_model or self.knowledge.embedding_model

    def room(self, room_id: str) -> RoomSettings:
        """The effective settings of a room: its own section over the defaults."""
        override = self.rooms.get(room_id)
        if override is None:
            return self.room_defaults
        return self.room_defaults.model_copy(update=override.model_dump(exclude_none=True))


RESTART_ONLY_SECTIONS = (
    "matrix", "knowledge", "ingest_api", "chat_api", "llm", "ops", "storage", "speech",
)  # fmt: skip
RESTART_ONLY_KEYS = (
    ("bot", "data_dir"),
    ("bot", "answer_workers"),
    ("bot", "lease_seconds"),
    ("summaries", "job_store"),
    ("summaries", "job_store_password_env"),
)
