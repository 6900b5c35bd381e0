"""Asking source applications which retrieved documents every reader may see.

Protocol (also in docs/integrations/rights-protocol.md): one POST per application and
batch of readers to its `rights_url`, body
`{"tokens": [jwt, ...], "documents": [{"collection", "id"}, ...]}`; the answer is
`{"results": [{"allowed": [{"collection", "id"}, ...]}, ...]}`, one result per token, in
order. Anything else (a timeout, an error status, an unreadable answer, a
missing result or id) denies, and the outcome says that some sources were not checked.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass

import aiohttp

from core.config import Settings
from core.config.rights import RightsSettings
from core.knowledge.documents import Hit
from core.rights.cache import DecisionCache, DocumentKey
from core.rights.readers import Audience, map_reader
from core.rights.tokens import KeyProblem, TokenSigner

log = logging.getLogger(__name__)


def decide_checked_collections(settings: Settings) -> list[str]:
    """The collections whose documents their source application checks for each reader:
    neither public nor where rooms keep their files and summaries."""
    rooms = {settings.files.collection, settings.summaries.collection}
    return sorted(
        name for name, c in settings.collections.items() if not c.public and name not in rooms
    )


@dataclass(frozen=True)
class RightsOutcome:
    allowed: list[Hit]
    unchecked: bool


def _key(hit: Hit) -> DocumentKey:
    return (hit.collection, hit.document_id)


def _document_key(item: object) -> DocumentKey | None:
    """A `{"collection", "id"}` item of `allowed`, or None when it is anything else."""
    if not isinstance(item, dict):
        return None
    collection, doc_id = item.get("collection"), item.get("id")
    if not isinstance(collection, str) or not isinstance(doc_id, str):
        return None
    return collection, doc_id


def parse_results(body: object, tokens: int) -> list[set[DocumentKey]] | None:
    """The allowed documents per token, or None when the answer does not follow the protocol.

    One malformed item makes the whole answer unusable: dropping it would deny its
    document silently, without telling the readers that some sources were not checked."""
    if not isinstance(body, dict) or not isinstance(body.get("results"), list):
        return None
    results = body["results"]
    if len(results) != tokens:
        return None
    allowed = []
    for result in results:
        items = result.get("allowed") if isinstance(result, dict) else None
        if not isinstance(items, list):
            return None
        keys = [_document_key(item) for item in items]
        if None in keys:
            return None
        allowed.append({key for key in keys if key is not None})
    return allowed


# How often the signing key files are looked at for a change.
KEY_FILES_LOOK_SECONDS = 1.0


def _file_stamps(rights: RightsSettings) -> tuple[object, ...]:
    """What tells a key file that changed (or went) from the one read before."""
    stamps: list[object] = []
    for key in rights.signing_keys:
        try:
            found = os.stat(key.private_key_file)
        except OSError:
            stamps.append(None)
        else:
            stamps.append((found.st_ino, found.st_mtime_ns, found.st_ctime_ns, found.st_size))
    return tuple(stamps)


class RightsChecker:
    def __init__(
        self,
        settings: Callable[[], Settings],
        cache: DecisionCache,
        http: Callable[[], aiohttp.ClientSession],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings
        self.clock = clock
        self.cache = cache
        self.http = http
        self._signer: TokenSigner | None = None
        self._signed_with: tuple[RightsSettings, tuple[object, ...]] | None = None
        self._stamped: tuple[RightsSettings | None, tuple[object, ...], float] = (None, (), 0.0)
        self.signer  # noqa: B018 (the keys are read, and their problems logged, at start)

    @property
    def signer(self) -> TokenSigner | None:
        """The signer of the [rights] section in force: a live edit of it (a new key, a
        rotation, another issuer) applies to the next token. A section whose keys cannot
        be read leaves no signer: only public documents are shown (fails closed)."""
        rights = self.settings().rights
        # The files too: a key rotated by writing over its file, config unchanged (looked
        # at once a second at most: this is asked for every check).
        now = self.clock()
        if rights is not self._stamped[0] or now - self._stamped[2] >= KEY_FILES_LOOK_SECONDS:
            self._stamped = (rights, _file_stamps(rights), now)
        signed_with = (rights, self._stamped[1])
        if signed_with != self._signed_with:
            self._signer = None  # until the new section's keys are read
            self._signed_with = signed_with
            try:
                self._signer = TokenSigner(rights)
            except KeyProblem as exc:
                checked = decide_checked_collections(self.settings())
                if checked:
                    # Rooms' own knowledge (files, summaries) is not checked at a source:
                    # its room decides, so it is still answered from.
                    log.warning(
                        "reader tokens cannot be signed (%s): documents of %s are not shown "
                        "(their applications check each reader); public documents and "
                        "rooms' own files and summaries are",
                        exc,
                        ", ".join(checked),
                    )
        return self._signer

    async def filter(self, hits: list[Hit], audience: Audience) -> RightsOutcome:
        """The hits every reader may see, in their order. Fails closed."""
        free = [h for h in hits if h.public or h.room]
        checked = [h for h in hits if not (h.public or h.room)]
        decisions: dict[DocumentKey, bool] = {}
        unchecked = False
        if checked and not audience.public_only:
            by_source: dict[str, list[Hit]] = {}
            for hit in checked:
                by_source.setdefault(hit.source, []).append(hit)
            answers = await asyncio.gather(
                *(self._check_source(name, group, audience) for name, group in by_source.items())
            )
            for source_decisions, source_unchecked in answers:
                decisions.update(source_decisions)
                unchecked = unchecked or source_unchecked
        allowed = [h for h in hits if h in free or decisions.get(_key(h), False)]
        return RightsOutcome(allowed, unchecked)

    async def _check_source(
        self, name: str, hits: list[Hit], audience: Audience
    ) -> tuple[dict[DocumentKey, bool], bool]:
        source = self.settings().sources.get(name)
        documents = list(dict.fromkeys(_key(h) for h in hits))
        mapped = [
            map_reader(reader, source.readers) if source else None for reader in audience.readers
        ]
        subjects = [subject for subject in mapped if subject is not None]
        if source is None or len(subjects) < len(mapped):
            return {}, False  # someone has no identity there: public documents only
        signer = self.signer
        if source.rights_url is None or signer is None:
            return {}, True
        ttl = self.settings().rights.cache_seconds
        revisions = {_key(hit): hit.revision for hit in hits}
        verdict = {doc: True for doc in documents}
        to_ask: list[str] = []
        for subject in dict.fromkeys(subjects):
            cached = [self.cache.get(name, subject, doc, revisions[doc]) for doc in documents]
            if None in cached:
                to_ask.append(subject)
            for doc, known in zip(documents, cached, strict=True):
                if known is False:
                    verdict[doc] = False
        size = self.settings().rights.readers_per_request
        batches = [to_ask[start : start + size] for start in range(0, len(to_ask), size)]
        # Batches go out together, so that a large room waits one timeout at most.
        answers = await asyncio.gather(
            *(self._ask(name, source.rights_url, batch, documents) for batch in batches)
        )
        if any(results is None for results in answers):
            return {}, True
        for batch, results in zip(batches, answers, strict=True):
            for subject, allowed in zip(batch, results or [], strict=True):
                for doc in documents:
                    self.cache.put(name, subject, doc, revisions[doc], doc in allowed, ttl)
                    verdict[doc] = verdict[doc] and doc in allowed
        return verdict, False

    async def _ask(
        self, name: str, url: str, subjects: list[str], documents: list[DocumentKey]
    ) -> list[set[DocumentKey]] | None:
        signer = self.signer
        if signer is None:
            return None  # the keys went in a live edit meanwhile: unchecked
        body = {
            "tokens": [signer.sign(name, subject) for subject in subjects],
            "documents": [{"collection": c, "id": d} for c, d in documents],
        }
        timeout = aiohttp.ClientTimeout(total=self.settings().rights.check_timeout_seconds)
        try:
            async with self.http().post(url, json=body, timeout=timeout) as response:
                if response.status != 200:
                    log.warning("rights check at %s answered HTTP %s", name, response.status)
                    return None
                results = parse_results(await response.json(content_type=None), len(subjects))
        except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
            log.warning("rights check at %s failed: %s", name, type(exc).__name__)
            return None
        if results is None:
            log.warning("rights check at %s gave an answer outside the protocol", name)
        return results
