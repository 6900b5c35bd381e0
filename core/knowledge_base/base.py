"""The knowledge base of one process: catalog, Chroma, models, indexer, queue, retriever,
the crawler's state and the rights checker (its cache is emptied when a document changes)."""

from __future__ import annotations

from collections.abc import Callable

import aiohttp

from core.config import Settings
from core.knowledge.ingest.indexer import Indexer
from core.knowledge.ingest.jobs import JobStore, SqlJobStore
from core.knowledge.ingest.queue import IngestQueue
from core.knowledge.parse.extractor import Extractor
from core.knowledge.parse.text_tools import SentenceSplitter
from core.knowledge.search.catalog import Catalog, SqlCatalog
from core.knowledge.search.embedding import Embedders
from core.knowledge.search.retrieval import Retriever
from core.knowledge.search.vectors import VectorStore
from core.knowledge_base.crawl.store import SqlCrawlStore
from core.rights.cache import DecisionCache
from core.rights.checker import RightsChecker
from core.storage.opening import Storage


class KnowledgeBase:
    """Opened once per process; storage settings are read at start (they need a restart)."""

    def __init__(
        self,
        settings: Callable[[], Settings],
        catalog: Catalog,
        jobs: JobStore,
        crawls: SqlCrawlStore,
        embedders: Embedders | None = None,
    ) -> None:
        start = settings()
        data_dir = start.bot.data_dir
        self.catalog = catalog
        self.jobs = jobs
        self.crawls = crawls
        self._own_storage: Storage | None = None
        self.vectors = VectorStore(start.knowledge.chroma_url, data_dir)
        self.embedders = embedders or Embedders(start.knowledge.embedding_batch_size)
        self.embedders.use_endpoints(lambda: settings().knowledge.embedding_endpoints)
        # Models given by the caller are the caller's to close (tests share them).
        self._own_embedders = embedders is None
        self.decisions = DecisionCache()
        self.indexer = Indexer(
            self.catalog,
            self.vectors,
            self.embedders,
            SentenceSplitter(),
            settings,
            on_change=self.decisions.drop_document,
        )
        self.queue = IngestQueue(self.jobs, self.indexer)
        self.extractor = Extractor(
            lambda: settings().files, lambda: settings().knowledge.max_document_bytes
        )
        self.retriever = Retriever(self.catalog, self.vectors, self.embedders, settings)
        self._http: aiohttp.ClientSession | None = None
        self.rights = RightsChecker(settings, self.decisions, self.http)

    def http(self) -> aiohttp.ClientSession:
        """The HTTP client for source applications, made on first use (it needs a loop)."""
        if self._http is None or self._http.closed:
            self._http = aiohttp.ClientSession()
        return self._http

    async def close_http(self) -> None:
        if self._http is not None:
            await self._http.close()

    @classmethod
    async def open(
        cls,
        settings: Callable[[], Settings],
        embedders: Embedders | None = None,
        storage: Storage | None = None,
    ) -> KnowledgeBase:
        """The knowledge base on the process's storage, or on storage of its own (closed
        with it) when none is given."""
        start = settings()
        own = None
        if storage is None:
            storage = own = Storage(start.storage, start.bot.data_dir)
        db = await storage.database("catalog")
        # The languages as the process starts: a collection's changed `language` is
        # indexed again at the next start, so its chunks never mix two languages' stems
        # (a collection added meanwhile takes its language from the live config).
        started = {name: collection.language for name, collection in start.collections.items()}
        catalog = await SqlCatalog.open(
            db,
            lambda name: started.get(name) or settings().language_of(name),
            start.storage.text_search_config,
        )
        jobs, crawls = await SqlJobStore.open(db), await SqlCrawlStore.open(db)
        kb = cls(settings, catalog, jobs, crawls, embedders)
        kb._own_storage = own
        return kb

    async def close(self) -> None:
        await self.close_http()
        if self._own_embedders:
            self.embedders.close()
        if self._own_storage is not None:
            await self._own_storage.close()
