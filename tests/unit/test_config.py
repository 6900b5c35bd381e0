"""Config errors name the file, the key and the reason; secrets never show."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.runtime.config_watch import build_applied
from core.config import ConfigError, decide_restart_only_changes, load_config, parse_config
from core.config.chat_api import AssistantSettings
from core.config.knowledge import CollectionSettings, SourceSettings
from core.config.llm import LlmSettings
from core.config.rights import ReaderMapping, RightsSettings, SigningKey

ROOT = Path(__file__).resolve().parents[2]
MATRIX = """
[matrix]
homeserver = "http://127.0.0.1:8008"
user_id = "@bot:example.org"
password_env = "BOT_PASSWORD"
"""
ENV = {"BOT_PASSWORD": "s3cret-value"}


def parse(text: str, env: dict[str, str] = ENV):
    return parse_config(text, origin="bot.toml", env=env, base_dir=Path("/srv/bot"))


ERRORS = {
    "unknown key": (
        MATRIX + "[bot]\nplaceholder_after = 3",
        "bot.toml: bot.placeholder_after: unknown key",
    ),
    "unknown section": (MATRIX + "[telemetry]\nurl = 'x'", "bot.toml: telemetry: unknown key"),
    "wrong type": (
        MATRIX + "[bot]\nrecent_messages = 'ten'",
        "bot.toml: bot.recent_messages: Input should be a valid integer",
    ),
    "out of range": (
        MATRIX + "[bot]\nplaceholder_after_seconds = -1",
        "bot.toml: bot.placeholder_after_seconds: Input should be greater than or equal to 0",
    ),
    "missing section": ("[bot]\n", "bot.toml: matrix: required key is missing"),
    "missing key": (
        '[matrix]\nhomeserver = "http://x"\npassword = "p"',
        "bot.toml: matrix.user_id: required key is missing",
    ),
    "missing secret": (
        MATRIX,
        "bot.toml: matrix.password_env: the environment variable BOT_PASSWORD is not set or empty",
    ),
    "no credential": (
        MATRIX.replace('password_env = "BOT_PASSWORD"', ""),
        "bot.toml: matrix: give exactly one of password",
    ),
    "two credentials": (MATRIX + 'access_token = "t"', "(found password_env, access_token)"),
    "bad user id": (
        MATRIX.replace("@bot:example.org", "bot"),
        "bot.toml: matrix.user_id: 'bot' is not a Matrix user id",
    ),
    "bad url": (
        MATRIX.replace("http://127.0.0.1:8008", "localhost:8008"),
        "bot.toml: matrix.homeserver: must be a URL",
    ),
    "bad room override": (
        MATRIX + '[rooms."!abc"]\nanswer_without_mention = "yes please"',
        "bot.toml: rooms.!abc.answer_without_mention: Input should be a valid boolean",
    ),
    "unknown room key": (
        MATRIX + '[rooms."!abc"]\nanswer_everything = true',
        "bot.toml: rooms.!abc.answer_everything: unknown key",
    ),
    "bad allow-list entry": (
        MATRIX + "[invites]\nallowed_users = ['alice']",
        "bot.toml: invites.allowed_users: 'alice' is not a Matrix user id",
    ),
    "not TOML": (MATRIX + "[bot\n", "bot.toml: not valid TOML"),
    "collection of an unknown source": (
        MATRIX + "[collections.docs]\nsource = 'wiki'",
        "bot.toml: collections: docs.source: 'wiki' is not a [sources] entry",
    ),
    "bad collection name": (
        MATRIX + "[sources.wiki]\ntoken = 't'\n[collections.'Bad Name']\nsource = 'wiki'",
        "must match",
    ),
    "source without a token": (
        MATRIX + "[sources.wiki]\n",
        "bot.toml: sources.wiki: give exactly one of token or token_env",
    ),
    "llm without a model": (
        MATRIX + "[llm]\nurl = 'http://vllm:8000/v1'",
        "bot.toml: llm: model is required when url is set",
    ),
    "llm key variable missing": (
        MATRIX + "[llm]\nurl = 'http://v/v1'\nmodel = 'm'\napi_key_env = 'NO_SUCH_KEY'",
        "bot.toml: llm.api_key_env: the environment variable NO_SUCH_KEY is not set",
    ),
    "two pickle keys": (
        MATRIX + 'pickle_key = "a-long-enough-passphrase"\npickle_key_env = "BOT_PASSWORD"',
        "bot.toml: matrix: give exactly one of pickle_key or pickle_key_env",
    ),
    "short pickle key": (
        MATRIX + 'pickle_key = "short"',
        "bot.toml: matrix: the pickle key must be at least 16 characters",
    ),
    "storage that is not PostgreSQL": (
        MATRIX + '[storage]\nurl = "mysql://db/bot"',
        "bot.toml: storage.url: must be empty (SQLite in bot.data_dir) or a postgresql:// URL",
    ),
    "storage password in the URL": (
        MATRIX + '[storage]\nurl = "postgresql://bot:hunter2@db/bot"',
        "storage.url: put the password in an environment variable (password_env)",
    ),
    "storage password variable unset": (
        MATRIX + '[storage]\nurl = "postgresql://bot@db/bot"\npassword_env = "NO_DB_PASSWORD"',
        "storage.password_env: the environment variable NO_DB_PASSWORD is not set",
    ),
    "overlap too large": (
        MATRIX
        + "[sources.wiki]\ntoken = 't'\n[collections.docs]\nsource = 'wiki'\nchunk_tokens = 64\nchunk_overlap = 40",
        "chunk_overlap must be at most half",
    ),
    "speech both ways": (
        MATRIX + '[speech]\nurl = "http://whisper:8000/v1"\nlocal = true',
        "bot.toml: speech: set url (an endpoint) or local = true (a model run here), not both",
    ),
    "speech model folder without a model": (
        MATRIX + '[speech]\nlocal = true\nmodel_dir = "/nonexistent/whisper"',
        "bot.toml: speech.model_dir: /nonexistent/whisper holds no Whisper model in CTranslate2's format",
    ),
}


@pytest.mark.parametrize("text,expected", ERRORS.values(), ids=ERRORS.keys())
def test_config_errors_name_the_key(text, expected):
    env = {} if "missing secret" in expected or "environment" in expected else ENV
    with pytest.raises(ConfigError) as caught:
        parse(text, env)
    assert any(expected in problem for problem in caught.value.problems), caught.value.problems


def test_all_problems_are_reported_at_once():
    with pytest.raises(ConfigError) as caught:
        parse(MATRIX + "[bot]\nfoo = 1\nbar = 2")
    assert len(caught.value.problems) == 2


def test_defaults_room_overrides_and_relative_data_dir():
    settings = parse(
        MATRIX
        + '[room_defaults]\ncommands_enabled = false\n[rooms."!abc"]\nanswer_without_mention = true'
    )
    assert settings.bot.data_dir == Path("/srv/bot/data")
    assert (
        settings.room("!abc").answer_without_mention and not settings.room("!abc").commands_enabled
    )
    assert not settings.room("!other").answer_without_mention


def test_secrets_are_resolved_but_never_shown():
    settings = parse(MATRIX)
    assert settings.matrix.login_password() == "s3cret-value"
    assert "s3cret-value" not in repr(settings) + str(settings.model_dump())


def test_the_pickle_key_comes_from_its_variable_and_is_never_shown():
    key = "a passphrase of thirty-two chars"
    settings = parse(MATRIX + 'pickle_key_env = "BOT_PICKLE_KEY"', {**ENV, "BOT_PICKLE_KEY": key})
    assert settings.matrix.store_pickle_key() == key
    assert key not in repr(settings) + str(settings.model_dump())
    assert parse(MATRIX).matrix.store_pickle_key() is None
    # The ingestion tools skip the bot's secrets: an unset variable is no error there.
    skipped = parse_config(
        MATRIX + 'pickle_key_env = "BOT_PICKLE_KEY"',
        origin="bot.toml",
        env={},
        base_dir=Path("/srv/bot"),
        skip_secrets=frozenset({"matrix"}),
    )
    assert skipped.matrix.store_pickle_key() is None


def test_the_storage_password_comes_from_its_variable_and_is_never_shown():
    env = {**ENV, "DB_PASSWORD": "db-s3cret"}
    text = MATRIX + '[storage]\nurl = "postgresql://bot@db:5432/bot"\npassword_env = "DB_PASSWORD"'
    storage = parse(text, env).storage
    assert storage.shared and storage.password() == "db-s3cret"
    assert "db-s3cret" not in repr(storage) + str(storage.model_dump())
    assert not parse(MATRIX).storage.shared, "SQLite in the data folder by default"


def test_missing_file_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="cannot be read"):
        load_config(tmp_path / "absent.toml", ENV)


def test_the_example_config_is_valid_and_documents_every_key():
    example = ROOT / "config.example.toml"
    settings = load_config(example, {"BOT_PASSWORD": "x", "WIKI_TOKEN": "y"})
    text = example.read_text()
    models = [
        type(getattr(settings, section))
        for section in (
            "matrix",
            "bot",
            "invites",
            "room_defaults",
            "knowledge",
            "retrieval",
            "ingest_api",
            "llm",
            "rights",
            "pipeline",
            "guardrails",
            "memory",
            "feedback",
            "summaries",
            "ops",
            "storage",
            "chat_api",
        )
    ]
    models += [
        AssistantSettings,
        SourceSettings,
        CollectionSettings,
        RightsSettings,
        SigningKey,
        ReaderMapping,
    ]
    models += [LlmSettings]
    for model in models:
        for key in model.model_fields:
            documented = f"{key} =" in text or f".{key}]" in text
            assert documented, f"config.example.toml does not document {model.__name__}.{key}"


def test_restart_only_keys_are_named_and_keep_running_values():
    old = parse(MATRIX)
    new = parse(
        MATRIX.replace("8008", "9009") + "[bot]\ndata_dir = '/elsewhere'\nrecent_messages = 5"
    )
    assert decide_restart_only_changes(old, new) == ["matrix.homeserver", "bot.data_dir"]
    applied, restart = build_applied(old, new)
    assert restart == ["matrix.homeserver", "bot.data_dir"]
    assert applied.matrix.homeserver == old.matrix.homeserver
    assert applied.bot.data_dir == old.bot.data_dir and applied.bot.recent_messages == 5


def test_several_processes_refuse_to_start_without_a_shared_database(tmp_path):
    """deploy/compose/scale.yaml sets KNOWLEDGE_BOT_PROCESSES=several for each process."""
    text = '[matrix]\nhomeserver = "http://h"\nuser_id = "@b:h"\npassword = "p"\n'
    several = {"KNOWLEDGE_BOT_PROCESSES": "several"}
    with pytest.raises(ConfigError, match=r"storage\.url: several processes share this bot"):
        parse_config(text, origin="bot.toml", env=several, base_dir=tmp_path)
    shared = text + '[storage]\nurl = "postgresql://bot@postgres/bot"\n'
    assert parse_config(shared, origin="bot.toml", env=several, base_dir=tmp_path).storage.url
    assert parse_config(text, origin="bot.toml", env={}, base_dir=tmp_path)
