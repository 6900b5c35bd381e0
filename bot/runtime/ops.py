"""The operations endpoint: /health for orchestrators, /metrics for Prometheus, /crawls
for the crawled sources' runs (unauthenticated like the others: counts and times only;
serve it on an address only operators reach)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

import aiohttp
from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST

from core.config import Settings
from core.health import Check, decide_health
from core.knowledge_base.base import KnowledgeBase
from core.knowledge_base.crawl.report import crawl_status
from core.metrics import Metrics
from core.supervise import ServiceUnavailable, build_listen_error

log = logging.getLogger(__name__)
CHECK_TIMEOUT_SECONDS = 3


class OpsServer:
    def __init__(
        self,
        settings: Callable[[], Settings],
        metrics: Metrics,
        sync: Callable[[], Check],
        kb: KnowledgeBase | None,
        failing_loops: Callable[[], dict[str, str]] = dict,
        standby: Callable[[], bool] = lambda: False,
    ) -> None:
        self.settings = settings
        self.metrics = metrics
        self.sync = sync
        self.kb = kb
        self.failing_loops = failing_loops
        self.standby = standby
        self._chroma_probe: asyncio.Future[None] | None = None

    def build_app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/health", self.health)
        app.router.add_get("/metrics", self.exposition)
        app.router.add_get("/crawls", self.crawls)
        return app

    async def run(self) -> None:
        ops = self.settings().ops
        runner = web.AppRunner(self.build_app(), access_log=None)
        await runner.setup()
        try:
            await web.TCPSite(runner, ops.host, ops.port).start()
        except OSError as exc:
            # The bot is more use without its health endpoint than not running at all:
            # the supervisor reports this once and tries again, while the bot answers.
            await runner.cleanup()
            raise ServiceUnavailable(
                build_listen_error("health endpoint", ops.host, ops.port, "ops.port", exc)
            ) from None
        log.info("health and metrics on http://%s:%d", ops.host, ops.port)
        try:
            await asyncio.Event().wait()
        finally:
            await runner.cleanup()

    async def exposition(self, request: web.Request) -> web.Response:
        await self.metrics.refresh()
        return web.Response(
            body=self.metrics.exposition(), headers={"Content-Type": CONTENT_TYPE_LATEST}
        )

    async def crawls(self, request: web.Request) -> web.Response:
        """The same JSON as the ingestion API's GET /api/v1/crawls."""
        if self.kb is None:
            return web.json_response({"crawls": []})
        return web.json_response(await crawl_status(self.kb.crawls, self.settings()))

    async def health(self, request: web.Request) -> web.Response:
        sync, chroma, llm = await asyncio.gather(self._sync(), self._chroma(), self._llm())
        checks: dict[str, Check] = {"sync": sync, "chroma": chroma, "llm": llm}
        failing = self.failing_loops()
        checks |= {f"loop: {name}": "failing" for name in failing}
        status, body = decide_health(checks)
        if failing:
            # Why each one fails, in words fit for admins (a port in use, a reference).
            body["problems"] = {f"loop: {name}": reason for name, reason in failing.items()}
        return web.json_response(body, status=status)

    async def _sync(self) -> Check:
        return "standby" if self.standby() else self.sync()

    async def _chroma(self) -> Check:
        if self.kb is None:
            return "not used"
        # A heartbeat to a Chroma that hangs ties up its thread until Chroma answers: the
        # next probes wait on the same one instead of each tying up another.
        if self._chroma_probe is None or self._chroma_probe.done():
            self._chroma_probe = asyncio.ensure_future(asyncio.to_thread(self.kb.vectors.heartbeat))
            # Its failure is the finding of whichever probe waited for it, or of none.
            self._chroma_probe.add_done_callback(lambda f: f.cancelled() or f.exception())
        try:
            async with asyncio.timeout(CHECK_TIMEOUT_SECONDS):
                await asyncio.shield(self._chroma_probe)
        except Exception:  # any failure to answer is the finding
            return "failing"
        return "ok"

    async def _llm(self) -> Check:
        url = self.settings().llm.url
        if not url:
            return "not used"
        timeout = aiohttp.ClientTimeout(total=CHECK_TIMEOUT_SECONDS)
        try:
            async with aiohttp.ClientSession(timeout=timeout) as http:
                async with http.get(f"{url.rstrip('/')}/models") as response:
                    return "ok" if response.status == 200 else "failing"
        except (aiohttp.ClientError, TimeoutError):
            return "failing"
