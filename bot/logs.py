"""Logging: text or JSON lines, each line carrying the answer id of the question being
handled, so that one question can be followed through the log. Message bodies are never
logged at INFO; secrets and key material never are, at any level: the libraries that
would print them are kept at WARNING (`core.privacy.QUIET_LOGGERS`)."""

from __future__ import annotations

import json
import logging
import time
from contextvars import ContextVar

from core.privacy import LibraryContentFilter, quiet_libraries

# The answer id of the question the current task handles ("" outside one).
ANSWER_ID: ContextVar[str] = ContextVar("answer_id", default="")


class AnswerIdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        answer_id = ANSWER_ID.get()
        # Attributes a format string can name: %(answer_id)s, %(answer_ref)s.
        setattr(record, "answer_id", answer_id)  # noqa: B010
        setattr(record, "answer_ref", f" [{answer_id}]" if answer_id else "")  # noqa: B010
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if answer_id := getattr(record, "answer_id", ""):
            line["answer_id"] = answer_id
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False)


def setup_logging(level: str = "INFO", log_format: str = "text") -> None:
    handler = logging.StreamHandler()
    handler.addFilter(AnswerIdFilter())
    handler.addFilter(LibraryContentFilter())
    handler.setFormatter(
        JsonFormatter()
        if log_format == "json"
        else logging.Formatter("%(asctime)s %(levelname)s %(name)s%(answer_ref)s: %(message)s")
    )
    logging.getLogger().handlers[:] = [handler]
    apply_log_level(level)


def apply_log_level(level: str) -> None:
    """Set the bot's level and quiet the libraries, keeping the handlers in place (the
    bot started in-process, as the tests do, logs to the handlers they installed)."""
    logging.getLogger().setLevel(level)
    # The scheduler logs every job run at INFO; keep the bot's own lines readable.
    quiet_libraries("apscheduler.executors")
    # nio warns "Error validating response" for every error the homeserver answers (each
    # retry of a refused token: one line every few seconds); the bot logs each failure
    # itself, with what it means.
    logging.getLogger("nio.responses").setLevel(
        max(logging.ERROR, logging.getLogger().getEffectiveLevel())
    )
