"""Where the stores keep their state: SQLite files in the data folder, or PostgreSQL."""

from __future__ import annotations

from urllib.parse import urlsplit

from pydantic import PrivateAttr, SecretStr, ValidationInfo, field_validator, model_validator

from core.config.secrets import env_var_checker, secret_from_env
from core.config.strict import Strict

POSTGRES_SCHEMES = ("postgresql://", "postgres://")


class StorageSettings(Strict):
    """[restart] Empty `url`: one SQLite file per store in `bot.data_dir` (one process).
    A PostgreSQL URL (`postgresql://user@host:5432/db`): every store in that database,
    shared by the bot and the API processes; the password comes from `password_env`."""

    url: str = ""
    """Where the bot keeps its state: the inbox and sync position, the catalog of documents and its
    keyword index, the ingestion queue, memories and room history, feedback and answer traces,
    summary marks and evaluation runs. Empty: one SQLite file per store in bot.data_dir (one
    process). A PostgreSQL URL puts every store in that database, shared by the bot and
    knowledge-api processes; the password comes from the environment variable named by
    password_env. Either way the tables are created and upgraded in place when a process starts."""
    password_env: str | None = None
    """The environment variable that holds the PostgreSQL password (never in url)."""
    text_search_config: str = "english"
    """PostgreSQL's text search configuration for keyword search (`english`, `german`, `simple`,
    …). Changing it applies to documents indexed after the change."""

    _password: SecretStr | None = PrivateAttr(default=None)

    @field_validator("url")
    @classmethod
    def _postgres_url(cls, value: str) -> str:
        if value and not value.startswith(POSTGRES_SCHEMES):
            raise ValueError("must be empty (SQLite in bot.data_dir) or a postgresql:// URL")
        if urlsplit(value).password is not None:
            raise ValueError("put the password in an environment variable (password_env)")
        return value

    @field_validator("text_search_config")
    @classmethod
    def _identifier(cls, value: str) -> str:
        if not value.isidentifier():
            raise ValueError("must be the name of a PostgreSQL text search configuration")
        return value

    _check_env = field_validator("password_env")(env_var_checker("storage"))

    @model_validator(mode="after")
    def _password_from_env(self, info: ValidationInfo) -> StorageSettings:
        self._password = secret_from_env(info, self.password_env)
        return self

    @property
    def shared(self) -> bool:
        return bool(self.url)

    def password(self) -> str | None:
        return self._password.get_secret_value() if self._password else None
