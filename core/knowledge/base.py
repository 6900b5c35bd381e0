"""The knowledge base of one process: catalog, Chroma, models, indexer, queue and retriever."""

from __future__ import annotations

from collections.abc import Callable

from core.config import Settings
from core.knowledge.catalog import Catalog
from core.knowledge.embedding import Embedders
from core.knowledge.indexer import Indexer
from core.knowledge.queue import IngestQueue
from core.knowledge.retrieval import Retriever
from core.knowledge.text_tools import SentenceSplitter
from core.knowledge.vectors import VectorStore


class KnowledgeBase:
    """Opened once per process; storage settings are read at start (they need a restart)."""

    def __init__(
        self, settings: Callable[[], Settings], embedders: Embedders | None = None
    ) -> None:
        start = settings()
        data_dir = start.bot.data_dir
        self.catalog = Catalog(data_dir / "knowledge.sqlite3")
        self.vectors = VectorStore(start.knowledge.chroma_url, data_dir)
        self.embedders = embedders or Embedders(start.knowledge.embedding_batch_size)
        self.indexer = Indexer(
            self.catalog, self.vectors, self.embedders, SentenceSplitter(), settings
        )
        self.queue = IngestQueue(self.catalog, self.indexer)
        self.retriever = Retriever(self.catalog, self.vectors, self.embedders, settings)

    def close(self) -> None:
        self.catalog.close()
