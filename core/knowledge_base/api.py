"""The ingestion REST API: source applications put and delete documents in their collections.

Each application authenticates with its own token from `[sources.<name>]` and may only
touch collections whose `source` is that application. Every refusal is a precise 4xx
with a JSON body `{"error": {"code", "message"}}` and changes nothing.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hmac
import logging
import unicodedata
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from aiohttp import web
from aiohttp.typedefs import Handler
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from core.bearer import parse_bearer
from core.config import Settings
from core.knowledge.documents import (
    FIRST_YEAR,
    LAST_YEAR,
    Document,
    UnreadableJson,
    id_problem,
    load_json,
    parse_document_dates,
)
from core.knowledge.parse.extraction import BINARY_KINDS, Extracted, Unreadable
from core.knowledge_base.base import KnowledgeBase
from core.knowledge_base.crawl.report import crawl_status
from core.knowledge_base.openapi import build_openapi

log = logging.getLogger(__name__)

PREFIX = "/api/v1"
WAIT_SECONDS = 60
SOURCE_KEY = web.AppKey("source", str)


# Embeddings and overrides of the text direction: they can make a title read as another.
BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


class DocumentBody(BaseModel):
    """A document as a source application sends it."""

    model_config = ConfigDict(extra="forbid")

    title: str = Field(min_length=1, max_length=1000)
    content: str | None = Field(
        default=None, description="the text: required for markdown, text and html"
    )
    format: Literal["markdown", "text", "html", "pdf", "docx", "image"] = "markdown"
    content_base64: str | None = Field(
        default=None,
        description="the file itself, base64-encoded (pdf, docx and image: PNG or JPEG, "
        "instead of content); its text is read by the server, a PDF's with its pages, "
        "scanned pages and images by OCR",
    )
    url: str = Field(default="", max_length=4000)
    language: str = Field(default="", max_length=35)
    version: str = Field(default="", max_length=200, description="version or update time")
    date: str = Field(
        default="",
        max_length=40,
        description="ISO 8601 date or time the content is about (a meeting's day, the start "
        "of the period a summary covers), in the years "
        f"{FIRST_YEAR} to {LAST_YEAR}; questions that name a time keep it only when its "
        "range meets theirs",
    )
    date_end: str = Field(default="", max_length=40, description="the end of that period")

    @field_validator("title", "url", "language", "version")
    @classmethod
    def _one_printable_line(cls, value: str) -> str:
        # A title or link with a line break or control character could break the list
        # of sources under an answer (or hide text in it).
        if any(
            unicodedata.category(char) in ("Cc", "Zl", "Zp") or char in BIDI_CONTROLS
            for char in value
        ):
            raise ValueError("must be one line without control characters")
        return value

    @field_validator("title")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        # A title of spaces is cited as an empty link under an answer.
        if not value.strip():
            raise ValueError("must not be blank")
        return value

    @field_validator("url")
    @classmethod
    def _web_link(cls, value: str) -> str:
        if value and not value.startswith(("https://", "http://")):
            raise ValueError("must be an http:// or https:// link, or empty")
        return value

    @model_validator(mode="after")
    def _content_as_its_format_needs(self) -> DocumentBody:
        if self.format in BINARY_KINDS:
            if self.content_base64 is None or self.content:
                raise PydanticCustomError(
                    "content", f"a {self.format} file is sent as content_base64, not content"
                )
        elif self.content_base64 is not None:
            raise PydanticCustomError(
                "content", "content_base64 is for pdf, docx and image files; send text as content"
            )
        elif self.content is None:
            raise PydanticCustomError("content", "content: Field required")
        return self

    @model_validator(mode="after")
    def _dates_read(self) -> DocumentBody:
        try:
            parse_document_dates(self.date, self.date_end)
        except ValueError as exc:
            # The message names the field (`date …`, `date_end …`): said as it is, not
            # as a problem of the whole body.
            raise PydanticCustomError("dates", "{problem}", {"problem": str(exc)}) from None
        return self


def error(status: int, code: str, message: str) -> web.Response:
    return web.json_response({"error": {"code": code, "message": message}}, status=status)


@web.middleware
async def json_refusals(request: web.Request, handler: Handler) -> web.StreamResponse:
    """aiohttp's own refusals (no such route, another method) in this API's shape, which
    a client reads as it reads every other one, instead of a line of plain text."""
    try:
        return await handler(request)
    except web.HTTPMethodNotAllowed as exc:
        allowed = sorted(exc.allowed_methods - {"HEAD"})
        response = error(
            405,
            "method_not_allowed",
            f"{request.method} is not allowed here: {', '.join(allowed[:-1])} or {allowed[-1]}"
            if len(allowed) > 1
            else f"{request.method} is not allowed here: {''.join(allowed)}",
        )
        response.headers["Allow"] = ", ".join(sorted(exc.allowed_methods))  # HTTP's due
        return response
    except web.HTTPNotFound:
        return error(
            404,
            "not_found",
            f"{request.method} {request.path} is not a route of this API (see "
            f"{PREFIX}/openapi.json)",
        )


class IngestApi:
    def __init__(self, kb: KnowledgeBase, settings: Callable[[], Settings]) -> None:
        self.kb = kb
        self.settings = settings

    def build_app(self) -> web.Application:
        settings = self.settings()
        # Room for the JSON around the content, and for a file's base64 (4/3 of its
        # size); the content itself is checked exactly.
        max_bytes = max(
            settings.knowledge.max_document_bytes * 2, settings.files.max_bytes * 4 // 3
        )
        app = web.Application(client_max_size=max_bytes + 64_000, middlewares=[json_refusals])
        app.add_routes(
            [
                web.get(f"{PREFIX}/openapi.json", self.openapi),
                web.get(f"{PREFIX}/jwks.json", self.jwks),
                web.get(f"{PREFIX}/collections", self.authenticated(self.list_collections)),
                web.get(f"{PREFIX}/crawls", self.authenticated(self.list_crawls)),
                web.put(
                    f"{PREFIX}/collections/{{collection}}/documents/{{doc_id:.*}}",
                    self.authenticated(self.put_document),
                ),
                web.delete(
                    f"{PREFIX}/collections/{{collection}}/documents/{{doc_id:.*}}",
                    self.authenticated(self.delete_document),
                ),
                web.get(
                    f"{PREFIX}/collections/{{collection}}/documents/{{doc_id:.*}}",
                    self.authenticated(self.document_status),
                ),
            ]
        )
        return app

    def authenticated(
        self, handler: Callable[[web.Request, str], Awaitable[web.Response]]
    ) -> Callable[[web.Request], Awaitable[web.Response]]:
        async def check(request: web.Request) -> web.Response:
            token = parse_bearer(request.headers.get("Authorization", ""))
            source = self._source_of(token)
            if source is None:
                response = error(
                    401,
                    "unauthenticated",
                    "this token is not one of the applications' tokens ([sources] in the "
                    "bot's config)"
                    if token
                    else "send Authorization: Bearer <token>",
                )
                response.headers["WWW-Authenticate"] = "Bearer"
                return response
            return await handler(request, source)

        return check

    def _source_of(self, token: str) -> str | None:
        if not token:
            return None
        found = None
        # aiohttp reads header bytes that are not UTF-8 as lone surrogates: compare the
        # bytes as sent (a plain encode() would raise and answer 500).
        sent = token.encode("utf-8", "surrogateescape")
        for name, source in self.settings().sources.items():
            expected = source.api_token()
            if not expected:  # a crawled source without a token never authenticates
                continue
            # Compare with every token, so that timing tells nothing about which matched.
            if hmac.compare_digest(expected.encode(), sent):
                found = name
        return found

    def _owned_collection(self, request: web.Request, source: str) -> web.Response | str:
        name = request.match_info["collection"]
        problem = id_problem(name, "collection name")
        if problem:
            return error(400, "invalid_collection", problem)
        collection = self.settings().collections.get(name)
        if collection is None:
            return error(404, "unknown_collection", f"there is no collection {name!r}")
        if collection.source != source:
            return error(403, "forbidden", f"collection {name!r} belongs to another application")
        return name

    async def openapi(self, request: web.Request) -> web.Response:
        return web.json_response(build_openapi(DocumentBody.model_json_schema()))

    async def jwks(self, request: web.Request) -> web.Response:
        """The bot's public keys, for applications to verify reader tokens with."""
        signer = self.kb.rights.signer
        return web.json_response(signer.jwks() if signer else {"keys": []})

    async def list_collections(self, request: web.Request, source: str) -> web.Response:
        sizes = await self.kb.catalog.collection_sizes()
        collections = self.settings().collections
        own = [name for name, c in collections.items() if c.source == source]
        listed = [
            {
                "name": name,
                "source": source,
                "public": collections[name].public,
                "documents": sizes.get(name, (0, 0))[0],
                "chunks": sizes.get(name, (0, 0))[1],
            }
            for name in own
        ]
        return web.json_response(
            {
                "collections": listed,
                # Its own: another application's backlog is not its business.
                "queued_jobs": await self.kb.jobs.queue_depth(own),
            }
        )

    async def list_crawls(self, request: web.Request, source: str) -> web.Response:
        """The crawled sources' runs (any application's token may read them: they hold
        counts and times, no page text)."""
        return web.json_response(await crawl_status(self.kb.crawls, self.settings()))

    def _document_of(self, request: web.Request, source: str) -> web.Response | tuple[str, str]:
        """The path's (collection, document id), or the refusal of either."""
        owned = self._owned_collection(request, source)
        if isinstance(owned, web.Response):
            return owned
        doc_id = request.match_info["doc_id"]
        problem = id_problem(doc_id)
        if problem:
            return error(400, "invalid_id", problem)
        return owned, doc_id

    async def _json_body(self, request: web.Request) -> Any:
        """The body as JSON, or the refusal that says why it cannot be read."""
        try:
            raw = await request.read()
        except web.HTTPRequestEntityTooLarge:
            return self._too_large()
        try:
            text = raw.decode(request.charset or "utf-8")
        except LookupError:
            return error(400, "invalid_json", f"unknown charset {request.charset!r}")
        except UnicodeDecodeError as exc:
            return error(400, "invalid_json", f"the body is not {exc.encoding} text")
        try:
            return load_json(text)
        except UnreadableJson as exc:
            return error(400, "invalid_json", str(exc))

    async def put_document(self, request: web.Request, source: str) -> web.Response:
        path = self._document_of(request, source)
        if isinstance(path, web.Response):
            return path
        owned, doc_id = path
        raw = await self._json_body(request)
        if isinstance(raw, web.Response):
            return raw
        try:
            body = DocumentBody.model_validate(raw)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc']))}: {e['msg']}" if e["loc"] else e["msg"]
                for e in exc.errors()
            )
            return error(400, "invalid_document", problems)
        if len((body.content or "").encode()) > self.settings().knowledge.max_document_bytes:
            return self._too_large()
        fields = body.model_dump(exclude={"content_base64"})
        if body.content_base64 is not None:
            read = await self._read_file(body, owned)
            if isinstance(read, web.Response):
                return read
            fields.update(content=read.content, format=read.format)
        document = Document(collection=owned, id=doc_id, **fields)
        pending = await self.kb.jobs.latest_job(owned, doc_id)
        if await self.kb.indexer.decide(document) == "unchanged" and not (
            pending and pending.state == "queued"
        ):
            return web.json_response(await self._status(owned, doc_id), status=200)
        job_id = await self.kb.queue.submit_put(document)
        return await self._accepted(request, job_id, owned, doc_id)

    async def _read_file(self, body: DocumentBody, collection: str) -> web.Response | Extracted:
        """The text of a PDF or Word file or an image sent base64-encoded, or the refusal
        saying why there is none. OCR reads in the document's language and the
        collection's."""
        assert body.content_base64 is not None and body.format in BINARY_KINDS
        try:
            # Line breaks and spaces allowed: `base64` and `openssl base64` wrap lines.
            data = base64.b64decode("".join(body.content_base64.split()), validate=True)
        except (binascii.Error, ValueError):
            return error(400, "invalid_document", "content_base64: not valid base64")
        limit = self.settings().files.max_bytes
        if len(data) > limit:
            return error(413, "too_large", f"the file is over the limit of {limit} bytes")
        try:
            languages = (body.language, self.settings().language_of(collection))
            read = await self.kb.extractor.extract(
                data, body.format, tuple(code for code in languages if code)
            )
        except Unreadable as exc:
            return error(
                400, "unreadable_document", f"the {body.format} file cannot be read: {exc}"
            )
        if len(read.content.encode()) > self.settings().knowledge.max_document_bytes:
            return self._too_large()
        return read

    async def delete_document(self, request: web.Request, source: str) -> web.Response:
        path = self._document_of(request, source)
        if isinstance(path, web.Response):
            return path
        owned, doc_id = path
        job_id = await self.kb.queue.submit_delete(owned, doc_id)
        return await self._accepted(request, job_id, owned, doc_id)

    async def document_status(self, request: web.Request, source: str) -> web.Response:
        path = self._document_of(request, source)
        if isinstance(path, web.Response):
            return path
        return web.json_response(await self._status(*path))

    async def _accepted(
        self, request: web.Request, job_id: int, collection: str, doc_id: str
    ) -> web.Response:
        """202 with the job queued, or with `?wait=true` the final status once indexed."""
        if request.query.get("wait", "").lower() not in ("1", "true", "yes"):
            return web.json_response(await self._status(collection, doc_id), status=202)
        try:
            async with asyncio.timeout(WAIT_SECONDS):
                await self.kb.queue.wait(job_id)
        except TimeoutError:
            return web.json_response(await self._status(collection, doc_id), status=202)
        status = await self._status(collection, doc_id)
        return web.json_response(status, status=500 if status["state"] == "failed" else 200)

    async def _status(self, collection: str, doc_id: str) -> dict[str, Any]:
        job = await self.kb.jobs.latest_job(collection, doc_id)
        record = await self.kb.catalog.document(collection, doc_id)
        status: dict[str, Any] = {"collection": collection, "id": doc_id}
        if job and job.state == "queued":
            status["state"] = "queued"
        elif job and job.state == "failed":
            status.update(state="failed", error=job.error)
        else:
            status["state"] = "indexed" if record else "absent"
        if record:
            status.update(
                indexed={
                    "title": record.title,
                    "chunks": record.chunk_count,
                    "content_hash": record.content_hash,
                    "version": record.version,
                    "updated_at": record.updated_at,
                }
            )
        return status

    def _too_large(self) -> web.Response:
        limit = self.settings().knowledge.max_document_bytes
        return error(413, "too_large", f"the document is over the limit of {limit} bytes")


async def start_ingest_api(api: IngestApi, host: str, port: int) -> web.AppRunner:
    runner = web.AppRunner(api.build_app(), access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
    except OSError:
        await runner.cleanup()
        raise
    log.info("ingestion API on http://%s:%s%s", host, port, PREFIX)
    return runner
