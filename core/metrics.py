"""Prometheus metrics of one process, in a registry of its own (no global state).

The pipeline's answers carry a trace; `observe_answer` turns a trace into metrics, so
that the pipeline itself stays free of metric calls.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from core.llm.tokens import estimate_tokens
from core.requests import FALLBACK_REASON, Answer
from core.trace import AnswerStep, PrestepStep, RightsStep

STEP_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()

        def counter(name: str, text: str, *labels: str) -> Counter:
            return Counter(f"bot_{name}", text, labels, registry=self.registry)

        self.answers = counter("answers_total", "Replies to questions, by kind", "kind")
        self.refusals = counter("refusals_total", "Questions declined, by reason", "reason")
        self.failures = counter("failures_total", "Questions answered by an error notice", "cause")
        self.llm_calls = counter("llm_calls_total", "Calls to the language model", "purpose")
        self.llm_tokens = counter(
            "llm_prompt_tokens_total", "Prompt tokens (reported, or estimated)", "purpose"
        )
        self.rights_checks = counter("rights_checks_total", "Rights checks of retrieved passages")
        self.rights_denied = counter("rights_denied_total", "Passages the readers may not see")
        self.summaries = counter("summaries_written_total", "Summaries made, by trigger", "trigger")
        self.feedback = counter("feedback_total", "Votes on answers", "vote")
        self.steps = Histogram(
            "bot_step_seconds",
            "Latency of each pipeline step",
            ["step"],
            buckets=STEP_BUCKETS,
            registry=self.registry,
        )
        self.queue = Gauge(
            "bot_ingestion_queue_depth", "Documents waiting to be indexed", registry=self.registry
        )
        self._queue_depth: Callable[[], Awaitable[int]] | None = None

    def watch_queue(self, depth: Callable[[], Awaitable[int]]) -> None:
        self._queue_depth = depth

    async def refresh(self) -> None:
        """Read the gauges kept in the stores (asynchronously), before an exposition."""
        if self._queue_depth is not None:
            self.queue.set(await self._queue_depth())

    def observe_answer(self, answer: Answer) -> None:
        self.answers.labels(answer.kind).inc()
        if answer.kind == "refusal":
            self.refusals.labels(answer.reason or "unknown").inc()
        # The model failed and the passages found were shown under the notice: a failure
        # of its cause all the same (as when nothing was found to show).
        if answer.reason.startswith(FALLBACK_REASON):
            self.failures.labels(answer.reason.removeprefix(FALLBACK_REASON)).inc()
        for step in answer.trace:
            self.steps.labels(step.name).observe(step.seconds)
            if isinstance(step, PrestepStep):
                self.llm_calls.labels(step.name).inc()
                self.llm_tokens.labels(step.name).inc(step.tokens)
            elif isinstance(step, AnswerStep):
                self.llm_calls.labels(step.name).inc()
                self.llm_tokens.labels(step.name).inc(
                    sum(estimate_tokens(m["content"]) for m in step.prompt)
                )
            elif isinstance(step, RightsStep):
                self.rights_checks.inc()
                self.rights_denied.inc(len(step.denied))

    def exposition(self) -> bytes:
        return generate_latest(self.registry)
