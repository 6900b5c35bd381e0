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
from core.config.mcp import McpSettings, check_mcp
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
    """The homeserver's client URL."""
    user_id: str
    """The bot's account."""
    password: SecretStr | None = None
    """Exactly one credential: password, password_env, access_token, access_token_env or
    access_token_file. The *_env forms name an environment variable that holds the secret, so
    that the secret stays out of this file. Secrets are never logged."""
    password_env: str | None = None
    """Exactly one credential: password, password_env, access_token, access_token_env or
    access_token_file. The *_env forms name an environment variable that holds the secret, so
    that the secret stays out of this file. Secrets are never logged."""
    access_token: SecretStr | None = None
    """Exactly one credential: password, password_env, access_token, access_token_env or
    access_token_file. The *_env forms name an environment variable that holds the secret, so
    that the secret stays out of this file. Secrets are never logged."""
    access_token_env: str | None = None
    """Exactly one credential: password, password_env, access_token, access_token_env or
    access_token_file. The *_env forms name an environment variable that holds the secret, so
    that the secret stays out of this file. Secrets are never logged."""
    access_token_file: Path | None = None
    """A file holding the access token (homeservers without password login: a MAS compatibility
    token, a personal access token); read again when it changes, so a replaced token is taken
    without a restart (same device only)."""
    device_name: str = "knowledge-bot"
    """The name of the bot's device, shown to people in their session lists. The device, its
    encryption keys and the sync position are kept in bot.data_dir, so a restart reuses them."""
    verified_devices_only: bool = False
    """Act only on messages from devices their owner cross-signed, and share room keys only with
    those (as Element does since MSC4153); off, so that command-line clients and bridges that do
    not cross-sign keep working."""
    display_name: str | None = None
    """The display name to set on the bot's profile (leave out to keep the current one). People may
    address the bot by writing this name."""
    encryption: bool = True
    """End-to-end encryption, so that the bot works in encrypted rooms and direct chats."""
    pickle_key: SecretStr | None = None
    """The passphrase that locks the encryption keys in the store (nio's pickle key)."""
    pickle_key_env: str | None = None
    """The environment variable that holds the pickle key (at least 16 characters; `openssl rand
    -base64 32` makes one), or pickle_key inline. Set it in production. Without it, a random key
    is generated into bot.data_dir/pickle-key on the first start, next to the keys it locks, and
    the log warns. Keep the key: keys locked with a lost key cannot be opened, and the bot then
    starts as a new device (with an access token instead of a password it stops instead). Keys
    locked by earlier versions (matrix-nio's default passphrase) or with the generated key are
    locked again with this one on the next start, keeping the device."""

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
    """Where the bot keeps its state: login session, encryption keys, messages in flight. Relative
    paths are relative to this file's folder. The folder and everything in it are made readable
    by the bot's account only (0700 and 0600) at every start."""
    command_prefix: str = Field(default="!", min_length=1, max_length=3, pattern=r"^\S+$")
    """The prefix of commands such as !help."""
    ignore_users: tuple[str, ...] = ()
    """Other bots whose messages are ignored (bots talk to bots in loops otherwise). Notices
    (m.notice) are always ignored, since bots write notices."""
    placeholder_after_seconds: float = Field(default=3.0, ge=0)
    """When answering takes longer than this, the bot posts a short placeholder and edits it into
    the answer when ready. 0 posts the placeholder at once."""
    recent_messages: int = Field(default=20, ge=0, le=200)
    """How many earlier lines of the room or thread come with a question as context."""
    admin_room: str | None = None
    """A room id where the bot reports config problems (leave out for the log only)."""
    log_level: str = Field(default="INFO", pattern=r"^(DEBUG|INFO|WARNING|ERROR)$")
    """DEBUG, INFO, WARNING or ERROR. Message bodies are never logged at INFO. Secrets and key
    material are never logged: the libraries that would print them (matrix-nio, its key store's
    SQL, the HTTP clients) are kept at WARNING whatever this level is."""
    log_format: str = Field(default="text", pattern=r"^(text|json)$")
    """"text", or "json" for one JSON object per line (for log collectors)."""
    shutdown_grace_seconds: float = Field(default=10.0, ge=0, le=600)
    """On shutdown, answers in flight get this long to finish; the rest get a notice and are
    answered after the restart."""
    answer_workers: int = Field(default=8, ge=1, le=256)
    """Messages answered at the same time; more wait in the inbox, in order of arrival."""
    lease_seconds: float = Field(default=15.0, ge=2, le=300)
    """One process per account syncs and answers; a standby takes over within about this long after
    it dies (a clean stop hands over at once)."""
    edit_window_seconds: float = Field(default=172_800, ge=1, le=366 * 86400)
    """Seconds an answered message's id (no text) stays in the inbox: an edit of it that newly
    mentions the bot is no new question within this window."""

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
    """The bot joins rooms it is invited to only if the inviter is listed here by user id, or
    belongs to a listed server. Others' invites are refused with a short explanation."""
    allowed_servers: tuple[str, ...] = ()
    """The bot joins rooms it is invited to only if the inviter is listed here by user id, or
    belongs to a listed server. Others' invites are refused with a short explanation."""

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
    """Answer every message in the room, not only those that address the bot. Direct chats (rooms
    the bot was invited to as direct, with one other person) always are."""
    commands_enabled: bool = True
    """Allow commands other than !help (which always works and lists what the room allows)."""
    public_only: bool = False
    """Answer from public documents only, whoever is in the room."""
    general_answers: bool = False
    """When nothing relevant is found, answer from the model's general knowledge (saying so)
    instead of saying that nothing was found."""
    history: bool = True
    """Keep the room's discussion as history: windows of its messages are embedded in a vector
    collection of this room only, and questions asked here search it. The lines are stored in
    bot.data_dir in plain text, encrypted rooms included: turn it off where that is not wanted."""
    timezone: str = "UTC"
    """The time zone in which "last week" or "since Monday" is read for this room."""
    summary_schedule: str = ""
    """Summaries on a schedule: "" (off), "every 1d", or "cron: 0 18 * * 1-5"."""
    transcribe: Literal["off", "reply", "silent"] = "silent"
    """Voice messages, when [speech] is set: transcribed and kept as the room's history ("silent"),
    also posted as a notice in a thread on the voice message ("reply"), or not at all ("off"). A
    voice message addressed to the bot is answered in any case."""
    language: str | None = None
    """The language the bot speaks here (ISO 639-1: "de", "fr", "es" have translations) and answers
    in; unset: each asker's own language, as detected in their message."""

    _timezone = field_validator("timezone")(_check_timezone)
    _language = field_validator("language")(_check_language)
    _schedule = field_validator("summary_schedule")(check_schedule)


class RoomOverride(Strict):
    """A `[rooms."<room id>"]` section: only the keys it sets replace the defaults."""

    answer_without_mention: bool | None = None
    """Answer every message in the room, not only those that address the bot. Direct chats (rooms
    the bot was invited to as direct, with one other person) always are."""
    commands_enabled: bool | None = None
    """Allow commands other than !help (which always works and lists what the room allows)."""
    public_only: bool | None = None
    """Answer from public documents only, whoever is in the room."""
    general_answers: bool | None = None
    """When nothing relevant is found, answer from the model's general knowledge (saying so)
    instead of saying that nothing was found."""
    history: bool | None = None
    """Keep the room's discussion as history: windows of its messages are embedded in a vector
    collection of this room only, and questions asked here search it. The lines are stored in
    bot.data_dir in plain text, encrypted rooms included: turn it off where that is not wanted."""
    timezone: str | None = None
    """The time zone in which "last week" or "since Monday" is read for this room."""
    summary_schedule: str | None = None
    """Summaries on a schedule (needs summaries.collection): "" (off), "every 1d", "every 6h", or a
    crontab such as "cron: 0 18 * * 1-5". Set it here for every room, or in a room's section for
    that room."""
    transcribe: Literal["off", "reply", "silent"] | None = None
    """Voice messages, when [speech] is set: "silent" transcribes them into the room's conversation
    and history, "reply" also posts the transcript in a thread on each, "off" leaves them alone.
    A voice message addressed to the bot (in a direct chat, a reply to it, in its thread) is
    answered whatever this says."""
    language: str | None = None
    """The language the bot speaks in the room and answers in (ISO 639-1: "de", "fr" and "es" have
    translations of every sentence; others get English sentences and answers in that language).
    Unset: each person is answered in the language their message is written in."""

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
    # After collections, which it names.
    mcp: McpSettings = Field(default_factory=dict, validate_default=True)

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

    @field_validator("mcp")
    @classmethod
    def _mcp_collections_exist(cls, value: McpSettings, info: ValidationInfo) -> McpSettings:
        return check_mcp(value, set(info.data.get("collections", {})))

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
    "matrix",
    "knowledge",
    "ingest_api",
    "chat_api",
    "llm",
    "ops",
    "storage",
    "speech",
)
RESTART_ONLY_KEYS = (
    ("bot", "data_dir"),
    ("bot", "answer_workers"),
    ("bot", "lease_seconds"),
    ("summaries", "job_store"),
    ("summaries", "job_store_password_env"),
    ("mcp", "enabled"),
    ("mcp", "host"),
    ("mcp", "port"),
    ("mcp", "path"),
)
