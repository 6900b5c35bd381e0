"""Every sentence the bot says to people, in one place so that wording stays consistent.

The bot's own notices (errors, warnings) start with NOTICE_PREFIX; the bot leaves
messages with that prefix out of the conversation context it gives the LLM.

Each message is read in the language of the event being handled: `strings.X` looks X up
in that language's catalog (core/i18n). After an edit here, `python -m core.extract_strings`
updates the catalogs, and tests/unit/test_i18n.py fails until every translation is written.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from core.i18n import language as i18n
from core.i18n.catalogs import translate

NOTICE_PREFIX = "⚠️ "
# Not sentences: the same in every language (the bot knows its notices by the prefix).
UNTRANSLATED = frozenset({"NOTICE_PREFIX"})

PLACEHOLDER = "⏳ Working on it…"

INVITE_REFUSED = (
    "Sorry, I only join rooms when invited by people my administrators allow. "
    "Please ask them to add you to my invite allow-list."
)

NO_KNOWLEDGE_YET = (
    "I understood your question as:\n\n> {question}\n\n"
    "No knowledge collection is connected to me yet, so I cannot answer from documents."
)

ANSWER_FAILED = (
    NOTICE_PREFIX + "Sorry, something went wrong while I was answering. "
    "Please try again later. (reference `{reference}`)"
)

UNKNOWN_COMMAND = NOTICE_PREFIX + "I don't know the command `{prefix}{name}`. {help_hint}"
TURNED_OFF = NOTICE_PREFIX + "I can't do that here: it is turned off in my configuration."
COMMANDS_OFF = NOTICE_PREFIX + "Commands are turned off in this room. {help_hint}"
HELP_HINT = "Send `{prefix}help` to see what I can do here."

HELP_HEADER = "**What I can do in this room**"
HELP_ASK_MENTION = "- Mention me with a question and I answer in a thread, from your documents."
HELP_ASK_ANY = "- Write a question here and I answer in a thread, from your documents."
HELP_FOLLOW_UP = "- Reply in my thread to ask a follow-up question."
HELP_REMEMBER = (
    "- Say “remember that …” to me and I keep it for this room's questions "
    "(“remember that I …”: about you)."
)
HELP_VOTE = "- React 👍 or 👎 to an answer to tell me whether it helped."
HELP_COMMANDS_OFF = "- Commands are turned off in this room."
HELP_SEARCH_ONLY = (
    "- No language model is connected: I answer with the passages that best match your "
    "question (search-only mode)."
)
HELP_FILES = (
    "- Share a PDF, Word, Markdown, HTML or text file here and I read it: reply to it with "
    "a question, or with “summarize this”."
)
HELP_VOICE = "- Send a voice message in my thread or our direct chat and I answer it as a question."
HELP_COMMAND_LINE = "- `{prefix}{name}`: {description}"

COMMAND_DESCRIPTIONS = {
    "help": "show this help",
    "summarize": "summarise this room since my last summary (or a thread, in the thread); "
    "`{prefix}summarize last 3 days`, `{prefix}summarize since Monday`",
    "catchup": "what you missed in your rooms since you last read them, sent to our direct "
    "chat; `{prefix}catchup since Monday`; every day: `{prefix}catchup every weekday 9:00`, "
    "`{prefix}catchup off`",
    "decisions": "the decisions my summaries found in this room; `{prefix}decisions budget` "
    "those about the budget",
    "actions": "the action items my summaries found here; `{prefix}actions mine`, "
    "`{prefix}actions open` (no deadline passed)",
    "memory": "list what I remember in this room",
    "forget": "forget a memory of this room: `{prefix}forget <number>` or `{prefix}forget all`",
    "feedback": "for administrators, in the admin room: votes on answers, the worst ones, "
    "and an export",
    "sources": "the document collections I answer from in this room",
}

CONFIG_REJECTED = (
    NOTICE_PREFIX + "The config edit was not applied; I keep running with the previous config.\n\n"
    "{problems}"
)
CONFIG_APPLIED = "✅ The config edit is applied."
CONFIG_VALID_AGAIN = (
    "✅ The config file is valid again. It matches the config I run with, so nothing changed."
)
CONFIG_RESTART_NOT_NEEDED = (
    "✅ The config file matches the settings I run with again: no restart is needed any more."
)
TOKEN_TAKEN = "✅ I took the new access token (the same device: its keys are kept)."
TOKEN_NOT_TAKEN = NOTICE_PREFIX + "I did not take the new access token: {problem}."
SERVICE_FAILING = (
    NOTICE_PREFIX + "The {service} is not running: {reason}. I keep trying to start it; "
    "/health names it until it runs."
)
RIGHTS_NO_SIGNING_KEYS = (
    NOTICE_PREFIX + "I never show the documents of {collections}: they are not public, and "
    "with no `[[rights.signing_keys]]` configured I cannot ask their applications who may "
    "read them. config.example.toml shows how to make a key."
)
RIGHTS_NO_URL = (
    NOTICE_PREFIX + "I never show the documents of {collections}: they are not public, and "
    "their source names no `rights_url` where I can ask who may read them."
)
CONFIG_NEEDS_RESTART = (
    NOTICE_PREFIX + "These settings cannot change while I run; restart me to apply them: {keys}"
)

SEARCH_ONLY_INTRO = (
    "No language model is connected, so here are the passages that best match "
    "your question (search-only mode):"
)
SEARCH_ONLY_MEMORIES = "What this room asked me to remember:"
NOTHING_FOUND = "I found nothing about this in the documents I searched."
NOTHING_FOUND_SHARED = "In a room, I use only the documents that everyone in it may open."
NOTHING_FOUND_PUBLIC_ONLY = "Here I use only documents that anyone may open."
# In a Matrix room with commands on (bot/features/answers/answering.py): what to try next.
NOTHING_FOUND_NEXT = (
    "Try other words, or send `{prefix}sources` to see which document collections I "
    "answer from here."
)
SOURCES_CONSULTED = "**Sources consulted** (the answer cites none of them)"
ENCRYPTED_LEFT_OUT = (
    "Sources from encrypted rooms were left out: this room is not encrypted, so the "
    "homeserver could read them here."
)
SOURCES_UNCHECKED = (
    "_Some sources could not be checked with the applications that own them, so I left them out._"
)

GREETING_REPLY = "Hello! Ask me a question about your documents, or send `{prefix}help`."
TOXIC_DECLINED = (
    "I won't answer that. Please keep questions respectful; I'm happy to help with "
    "anything about your documents."
)
COMMENT_ACK = (
    "Thanks for the feedback! React with 👍 or 👎 on my answers to rate them, "
    "or ask again in other words if something was wrong."
)
OUT_OF_SCOPE = "That is outside what I can answer. I answer from these collections:\n{collections}"
# Only for a time-out (LlmTimedOut): core/pipeline/failures.py names every other failure.
LLM_FAILED = (
    NOTICE_PREFIX + "Sorry, the language model did not answer in time, so I cannot answer "
    "now. Please try again in a moment."
)
LLM_UNAVAILABLE = (
    NOTICE_PREFIX + "Sorry, the language model is not available right now, so I cannot "
    "answer. Please try again in a moment; if it lasts, tell the bot's admins."
)
LLM_REFUSED = (
    NOTICE_PREFIX + "Sorry, the language model refused the request, so I cannot answer. "
    "The bot's admins can see why in its log."
)
LLM_TOO_LONG = (
    NOTICE_PREFIX + "Sorry, your question and its sources are too long for the language "
    "model, even shortened. Please ask a shorter or narrower question."
)
LLM_SERVER_ERROR = (
    NOTICE_PREFIX + "Sorry, the language model's server failed on this request, so I cannot "
    "answer. Please try again in a moment; if it lasts, tell the bot's admins."
)
LLM_CUT_OFF = (
    NOTICE_PREFIX + "Sorry, the language model's reply was cut off at its length limit "
    "before it was complete, so I cannot answer. The bot's admins can see why in its log."
)
LLM_INVALID = (
    NOTICE_PREFIX + "Sorry, the language model's reply was not in the form I need, so I "
    "cannot answer. Please try again in a moment; if it lasts, tell the bot's admins."
)
LLM_FILTERED = (
    NOTICE_PREFIX + "Sorry, the language model's content filter stopped its reply, so I "
    "cannot answer this."
)
LLM_STOPPED = (
    NOTICE_PREFIX + "Sorry, the language model stopped before writing its answer, so I "
    "cannot answer. Please try again in a moment."
)
LLM_EMPTY = (
    NOTICE_PREFIX + "Sorry, the language model gave an empty answer, so I cannot answer. "
    "Please try again in a moment."
)
LLM_ERROR = (
    NOTICE_PREFIX + "Sorry, the language model gave no usable answer, so I cannot answer. "
    "Please try again in a moment."
)
# Under a failure notice: the passages search found for the question, as search-only
# mode shows them, so that the asker is never left with nothing.
LLM_FALLBACK_INTRO = (
    "Here are the passages that best match your question, found by search alone "
    "(quoted, not an answer from the model):"
)
SUPPORT_BADGES = {
    "low": "✅ _well supported by its sources_",
    "medium": "⚠️ _partly supported by its sources_",
    "high": "❗ _poorly supported by its sources: check them_",
}

TOO_LONG = (
    "That message is too long for me ({limit} characters at most). Please ask a shorter question."
)
RATE_LIMITED = {
    "user": "You are asking faster than I can keep up with. Please wait a minute and ask again.",
    "room": "This room is asking faster than I can keep up with. Please wait a minute.",
}
INJECTION_DECLINED = (
    "I can't follow instructions that try to change how I work or reveal my setup. "
    "Ask me a question about your documents instead."
)
REMEMBERED = {
    "room": "Noted: I'll remember this for this room. (`{prefix}memory` lists what I remember.)",
    "user": "Noted: I'll remember this about you in this room. (`{prefix}memory` lists it.)",
}
FILE_NOT_SUMMARIZED = NOTICE_PREFIX + "I can't summarise that file: I hold no text of it."
SOURCES_HEADER = "**What I answer from in this room**"
SOURCES_PUBLIC = "- `{name}`{about} (public)"
SOURCES_RESTRICTED = (
    "- restricted collections of {source} ({count}): each document is used only when "
    "{source} confirms that everyone who reads the answer may open it"
)
SOURCES_NONE = "- no document collection"
SOURCES_PUBLIC_ONLY = (
    "Only public documents are used here: the room is set so, anyone may join it, or it has "
    "more readers than rights are checked for."
)
SOURCES_ROOM_FILES = "- the files shared in this room"
SOURCES_ROOM_SUMMARIES = "- the summaries of this room's discussion"
SOURCES_ROOM_HISTORY = "- this room's discussion"

MEMORY_HEADER = "**What I remember in this room**"
MEMORY_LINE = "{number}. {text}{whose}"
MEMORY_OF_USER = " _(about {user})_"
MEMORY_EMPTY = "I remember nothing in this room yet. Say “remember that …” to tell me something."
MEMORY_FOOTER = "Send `{prefix}forget <number>` to remove one, or `{prefix}forget all`."
FORGOTTEN = "Forgotten: {count} of this room's memories."
FORGOTTEN_ONE = "Forgotten: “{text}”."
FORGET_USAGE = (
    NOTICE_PREFIX + "Tell me which memory to forget: `{prefix}forget <number>` "
    "(see `{prefix}memory`) or `{prefix}forget all`."
)
FORGET_UNKNOWN = NOTICE_PREFIX + "There is no memory number {number} here; see `{prefix}memory`."
HISTORY_TITLE = "Earlier discussion in this room ({when})"

FEEDBACK_ASK = (
    "Thanks for rating this answer. What was wrong with it? Reply here in this thread and "
    "I'll pass it on with your 👎 (a question to me is answered as a question instead)."
)
FEEDBACK_THANKS = (
    "Thank you, I've noted that as your comment on the 👎. To ask me something instead, "
    "mention me or end with a question mark."
)
FEEDBACK_REFUSED = (
    NOTICE_PREFIX + "`feedback` is for the bot's administrators (`feedback.admins` in its "
    "config), in the admin room (`bot.admin_room`) only."
)
FEEDBACK_USAGE = (
    NOTICE_PREFIX + "Use `{prefix}feedback` (votes per room and the worst answers), "
    "`{prefix}feedback worst [how many]`, or `{prefix}feedback export [days]`."
)
FEEDBACK_HEADER = "**Feedback on answers**"
FEEDBACK_NONE = "No votes in the last 30 days."
FEEDBACK_WORST_HEADER = "**Worst-rated answers** (votes of the last {days} days)"
FEEDBACK_NO_WORST = "No answer got a 👎."
FEEDBACK_EXPORTED = "Exported {count} rated answers as JSON lines: `{name}`."

SUMMARY_HEADING = "**Summary of {what}, {start} – {end}** ({count} messages)"
UNREADABLE_MESSAGES = (
    "_{count} messages of this time could not be read (encrypted, and their keys were "
    "never shared with me: sent before I joined, perhaps), so they are not in this._"
)
SUMMARY_THIS_ROOM = "this room"
SUMMARY_THIS_THREAD = "this thread"
SUMMARY_IN_THIS_ROOM = "in this room"
SUMMARY_IN_THIS_THREAD = "in this thread"
# The label of a link to the message a line of a summary, catch-up or ledger comes from.
MESSAGE_LINK = "message"
SUMMARY_TLDR = "TL;DR"
SUMMARY_DECISIONS = "Decisions"
SUMMARY_ACTIONS = "Action items"
SUMMARY_QUESTIONS = "Open questions"
SUMMARY_NO_DECISION = "No decision."
SUMMARY_NO_ACTION = "No action item."
SUMMARY_NO_QUESTION = "No open question."
SUMMARY_DUE = "by {due}"
# After a model's summary whose check left points out (core/summaries/support.py).
SUMMARY_POINTS_DROPPED = (
    "_Points left out because the messages they cite do not say them: {count}._"
)
SUMMARY_EXTRACTIVE = (
    "_No language model is connected: these are the discussion's own messages, decisions, "
    "action items and open questions first._"
)
SUMMARY_ALSO_DISCUSSED = "Also discussed"
SUMMARY_NOTHING = "There is nothing to summarise {what} between {start} and {end}."
SUMMARY_RANGE_UNREADABLE = (
    NOTICE_PREFIX + "I could not read “{args}” as a time. Try `{prefix}summarize`, "
    "`{prefix}summarize today`, `{prefix}summarize last 3 days` or "
    "`{prefix}summarize since Monday`."
)
SUMMARY_PROGRESS = "⏳ Summarising {count} messages in {parts} parts…"

INTERRUPTED = (
    NOTICE_PREFIX + "I'm restarting and could not finish this answer. I'll answer it as "
    "soon as I'm back."
)

# The readers of a room changed while an answer was written for the earlier ones.
AUDIENCE_CHANGED = (
    NOTICE_PREFIX + "Someone new can read this room now, so I took back what I was "
    "writing and I'm answering again for everyone here."
)
AUDIENCE_UNSTABLE = (
    NOTICE_PREFIX + "The people in this room kept changing while I was answering. "
    "Please ask again in a moment."
)
TAKEN_BACK = "Written for the room's earlier readers"
FEEDBACK_HIDDEN_ENCRYPTED = (
    "{number}. 👎 {down} · 👍 {up}: answer `{answer_id}` in {room} "
    "(asked in an encrypted room and this room is not encrypted: question and sources hidden)."
)
FEEDBACK_NO_QUESTION = "(question removed: redacted, or past the room's retention)"
FEEDBACK_HIDDEN = (
    "{number}. 👎 {down} · 👍 {up}: answer `{answer_id}` in {room} "
    "(not everyone in this room could read that answer: question and sources hidden)."
)
CONFIG_RELOAD_FAILED = (
    NOTICE_PREFIX + "A config edit could not be applied (reference {reference}); the running "
    "config stays in force. The log has the details."
)

# Chroma (the document search) cannot be reached.
SEARCH_UNAVAILABLE = (
    NOTICE_PREFIX + "I cannot search the documents right now. Please ask again in a few minutes."
)
SEARCH_PARTLY_UNAVAILABLE = (
    "_The documents could not be searched right now: this answer comes only from what this "
    "room asked me to remember._"
)

# After a restart, the bot's unfinished reply could not be edited into the answer.
REPLY_MOVED = "↪️ My answer to this is in a newer message: {link}"

# The model's answer stream stopped before the model finished it; {partial} is what it
# wrote until then, quoted. Not an answer: no sources, no votes, no support check.
LLM_INCOMPLETE = (
    NOTICE_PREFIX + "Sorry, the language model stopped before finishing its answer. This is "
    "what it wrote until then, unchecked and without its sources; please ask again in a "
    "moment for a whole answer.\n\n{partial}\n\n_(incomplete)_"
)

# Catch-up (`!catchup`).
CATCHUP_HEADING = "**What you missed** ({since})"
CATCHUP_SINCE_READ = "since you last read each room"
CATCHUP_NOTHING = "Nothing new in our shared rooms."
CATCHUP_COUNT = "{count} new messages"
CATCHUP_COUNT_ONE = "1 new message"
CATCHUP_FOR_YOU = "For you"
CATCHUP_REST = "Also"
CATCHUP_MORE = "- … and {count} more"
CATCHUP_SENT = "I sent your catch-up to our direct chat: {link}"
OPEN_LINK = "open it"
ROOM_UPGRADED = "This room was upgraded. I continue in the new room: {link}"
UNVERIFIED_DEVICE = (
    NOTICE_PREFIX + "I do not answer messages from a device its owner has not verified "
    "(cross-signed): verify it from one of your other sessions, then ask again."
)
CATCHUP_NOT_DELIVERED = (
    NOTICE_PREFIX + "I could not send your catch-up: I could not open a private chat with "
    "you ({reason}). Allow invites from me, or start a direct chat with me, then ask again."
)
PRIVATE_CHAT_BLOCKED = "the account's settings block invites from me"
PRIVATE_CHAT_REFUSED = "the homeserver refused the invite"
DIGEST_PAUSED_NOTE = (
    "Your scheduled catch-up is paused for the same reason; it runs again once a "
    "catch-up reaches you."
)
DIGEST_RESUMED = "Your paused scheduled catch-up runs again."
DIGEST_PAUSED_REPORT = (
    NOTICE_PREFIX + "The scheduled catch-up of {user} is paused: I could not open a "
    "private chat with them ({reason})."
)
CATCHUP_SENT_ENCRYPTED = (
    "I sent your catch-up to our encrypted chat, {link}: it covers encrypted rooms, and this "
    "chat is not encrypted."
)
CATCHUP_RANGE_UNREADABLE = (
    NOTICE_PREFIX + "I could not read {args!r} as a time. Try `{prefix}catchup` (since you "
    "last read each room) or `{prefix}catchup since Monday`."
)

# The ledger (`!decisions`, `!actions`).
LEDGER_DECISIONS = "**Decisions in this room**"
LEDGER_ACTIONS = "**Action items in this room**"
LEDGER_NONE = (
    "None yet. I note decisions and action items when I summarise the room "
    "(`{prefix}summarize`, or on its schedule)."
)
LEDGER_OWNER = "for {owner}"
LEDGER_SOURCE_TITLE = {
    "decision": "Decision in this room ({when})",
    "action": "Action item in this room ({when})",
}
LEDGER_DUE = "due {due}"
LEDGER_DUE_ON = "due {due} ({day})"
LEDGER_SAID = "said {day}"
# The room's ledger has entries, but none that the command asked for.
LEDGER_NONE_OPEN = (
    "No action item here is open: every one is past its deadline ({count} in all: "
    "`{prefix}actions` lists them)."
)
LEDGER_NONE_MINE = "No action item here is yours ({count} in all: `{prefix}actions` lists them)."
LEDGER_NONE_MATCHING = {
    "decision": (
        "No decision here holds those words ({count} in all: `{prefix}decisions` lists them)."
    ),
    "action": (
        "No action item here holds those words ({count} in all: `{prefix}actions` lists them)."
    ),
}
DIGEST_HEADING = "**Your catch-up** ({when})"
DIGEST_SET = (
    "Your catch-up comes {schedule} ({timezone}) in our direct chat, when there is something "
    "new. `{prefix}catchup off` stops it."
)
DIGEST_EVERY_SECONDS = "every {seconds} s"
# An interval in the unit it was written in (`every 4h`: "every 4 h").
DIGEST_EVERY_UNIT = {
    "d": "every {count} d",
    "h": "every {count} h",
    "min": "every {count} min",
}
DIGEST_EVERY_DAYS = {
    "day": "every day at {time}",
    "weekday": "every weekday at {time}",
    "weekend": "every weekend at {time}",
}
DIGEST_EVERY_WEEKDAY = "every {day} at {time}"
DIGEST_OFF = "Your scheduled catch-up is off."
DIGEST_NONE = "You had no scheduled catch-up."
DIGEST_UNREADABLE = (
    NOTICE_PREFIX + "I could not read {args!r} as a schedule. Try "
    "`{prefix}catchup every weekday 9:00`, `{prefix}catchup every monday 8am` or "
    "`{prefix}catchup every 4h`."
)

# The status of an ingestion job that failed for a reason inside the bot (its log has it).
INGEST_JOB_FAILED = (
    "the document could not be indexed because of a problem in the bot (reference "
    "{reference}: its administrator finds the details in the bot's log)"
)


# Files shared in rooms (bot/features/files).
FILE_TITLE = "{name} (shared by {sender}, {when})"
FILE_UNREADABLE = "I could not read “{name}”: {reason}."
FILE_STILL_READING = "I am still reading “{name}”: ask again in a moment."
FILE_NOT_KEPT_HERE = (
    "I cannot answer from “{name}”: files shared in rooms are not kept here (the bot's "
    "admins can turn this on with [files])."
)
FILE_SHARED_EARLIER = (
    "I do not have “{name}”: it was shared before I kept this room's files. Share it "
    "again, then ask me."
)
FILE_NOT_DOWNLOADED = "it could not be downloaded from the homeserver (share it again)"
FILE_ENCRYPTED_ROOM_ONLY = (
    "this room is encrypted, and the admins keep the text of encrypted rooms out of the "
    "knowledge (summaries.encrypted_rooms)"
)
FILE_FAILED = "reading it failed (the admins can find why in the log)"
FILE_KIND_UNREAD = (
    "the bot reads PDF, Word (.docx), Markdown, HTML and text files, and PNG and JPEG images, only"
)
# Why a file has no text (core/knowledge/parse/extraction.py's Unreadable names one of these).
FILE_NOT_UTF8 = "it is not UTF-8 text"
FILE_EMPTY = "it is empty"
FILE_PASSWORD = "it is protected by a password"
FILE_TOO_MANY_PAGES = "it has {count} pages, more than the {max_pages} the bot reads"
FILE_NOT_A_PDF = "it is damaged or not a PDF"
FILE_SCANNED = "it has no text layer (a scan, perhaps), and the bot reads no images"
FILE_NOT_A_DOCX = "it is damaged or not a Word document"
FILE_NO_TEXT = "it has no text"
FILE_TOO_LARGE = "it is {size} bytes, over the limit of {limit} bytes"
FILE_TEXT_TOO_LARGE = "its text is over the limit of {limit} bytes"
# Its download passed the limit (the message did not say its size, or said less).
FILE_DOWNLOAD_TOO_LARGE = "it is over the limit of {limit} bytes, so its download was stopped"
FILE_TOO_SLOW = "reading it took longer than the {seconds} s the bot gives a file"
FILE_CRASHED = "it could not be read"
FILE_TOO_MUCH_MEMORY = "it needs more memory to read than the bot gives a file"
# Scans and images, read by OCR (core/knowledge/parse/ocr.py).
FILE_TOO_MANY_SCANS = (
    "it has {count} pages without a text layer (scans), more than the {max_pages} the bot "
    "reads by OCR"
)
FILE_SCAN_NO_TEXT = "it has no text layer, and no text could be read on its scanned pages"
FILE_NO_OCR = "it is a scan or an image, and this bot has no OCR installed to read it"
IMAGE_NO_TEXT = (
    "I found no text in it (I read the text in images, such as screenshots and photos of "
    "a whiteboard, not what they show)"
)
IMAGE_DAMAGED = "it is damaged or not a PNG or JPEG image"
IMAGE_TOO_MANY_PIXELS = "it has {pixels} pixels, more than the {limit} the bot reads"
# After a cited page ("p. 3, read from a scan"): the page's text was read by OCR.
PAGE_READ_FROM_SCAN = "read from a scan"
# The question an image sent to the bot without a caption asks.
IMAGE_QUESTION = "What does this say, and what does it mean?"

# Voice messages (bot/features/voice).
VOICE_TRANSCRIPT = "🎤 *Transcript:* {text}"
VOICE_FAILED = (
    "I could not transcribe this voice message (the speech model failed). "
    "Please try again, or type your question."
)
# The reason of the bot's redaction of a transcript whose voice message was redacted.
TRANSCRIPT_TAKEN_BACK = "Its voice message was deleted"
FILE_SUMMARY_HEADING = "Summary of “{name}”"
FILE_SUMMARY_EXTRACTIVE = (
    "_No language model is connected: these are the file's own passages that say most, "
    "in its words._"
)
FILE_NOT_FOR_ALL = (
    "“{name}” was shared before some of the people reading this joined, and this room "
    "does not show them earlier messages: I will not summarise it here."
)
SOURCES_HEADING = "**Sources**"


class _Spoken(types.ModuleType):
    """This module, read in the language of the event being handled (core/i18n): every
    message above is the English text and the gettext message id of its translations."""

    def __getattribute__(self, name: str) -> Any:
        value = super().__getattribute__(name)
        if not name.isupper() or name in UNTRANSLATED:
            return value
        language = i18n.current_language()
        if language == i18n.ENGLISH:
            return value
        if isinstance(value, str):
            return translate(value, language)
        if isinstance(value, dict):
            return {key: translate(text, language) for key, text in value.items()}
        return value


sys.modules[__name__].__class__ = _Spoken
