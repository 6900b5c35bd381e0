"""Building the content of the notices the bot sends: Markdown to HTML, threads, edits."""

from __future__ import annotations

from typing import Any

from markdown_it import MarkdownIt

ANSWER_ID_KEY = "org.knowledgebot.answer_id"

# Raw HTML is off: answers quote documents and other people, whose text must render as
# text, never as markup.
_MARKDOWN = MarkdownIt("commonmark", {"html": False}).enable("table")


def render_html(markdown_text: str) -> str:
    return _MARKDOWN.render(markdown_text).strip()


def _formatted(markdown_text: str) -> dict[str, Any]:
    return {
        "msgtype": "m.notice",
        "body": markdown_text,
        "format": "org.matrix.custom.html",
        "formatted_body": render_html(markdown_text),
    }


def build_room_notice(markdown_text: str) -> dict[str, Any]:
    """A notice in the room's main timeline, for admins' reports."""
    return {**_formatted(markdown_text), "m.mentions": {}}


def build_notice(
    markdown_text: str,
    *,
    thread_root: str,
    reply_to: str,
    notify: str | None = None,
    answer_id: str | None = None,
) -> dict[str, Any]:
    """A notice in the thread `thread_root`, replying to the message `reply_to`."""
    content = _formatted(markdown_text)
    content["m.relates_to"] = {
        "rel_type": "m.thread",
        "event_id": thread_root,
        "is_falling_back": False,
        "m.in_reply_to": {"event_id": reply_to},
    }
    content["m.mentions"] = {"user_ids": [notify]} if notify else {}
    if answer_id:
        content[ANSWER_ID_KEY] = answer_id
    return content


def build_edit(
    original_event_id: str,
    markdown_text: str,
    *,
    answer_id: str | None = None,
    notify: str | None = None,
) -> dict[str, Any]:
    """An `m.replace` edit that turns an earlier notice (the placeholder) into this text.
    `notify` is mentioned by the edit itself, so that the asker is notified once, when
    the answer is complete (a notice notifies nobody under default push rules)."""
    mentions = {"user_ids": [notify]} if notify else {}
    new_content = _formatted(markdown_text)
    new_content["m.mentions"] = mentions
    if answer_id:
        new_content[ANSWER_ID_KEY] = answer_id
    content = _formatted(markdown_text)
    content["body"] = "* " + content["body"]
    content["formatted_body"] = "* " + content["formatted_body"]
    content["m.new_content"] = new_content
    content["m.relates_to"] = {"rel_type": "m.replace", "event_id": original_event_id}
    content["m.mentions"] = mentions
    if answer_id:
        content[ANSWER_ID_KEY] = answer_id
    return content
