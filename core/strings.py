"""Every sentence the bot says to people, in one place so that wording stays consistent.

The bot's own notices (errors, warnings) start with NOTICE_PREFIX; the bot leaves
messages with that prefix out of the conversation context it gives the LLM.
"""

NOTICE_PREFIX = "⚠️ "

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
COMMANDS_OFF = NOTICE_PREFIX + "Commands are turned off in this room. {help_hint}"
HELP_HINT = "Send `{prefix}help` to see what I can do here."

HELP_HEADER = "**What I can do in this room**"
HELP_ASK_MENTION = "- Mention me with a question and I answer in a thread, from your documents."
HELP_ASK_ANY = "- Write a question here and I answer in a thread, from your documents."
HELP_FOLLOW_UP = "- Reply in my thread to ask a follow-up question."
HELP_COMMANDS_OFF = "- Commands are turned off in this room."
HELP_COMMAND_LINE = "- `{prefix}{name}`: {description}"

COMMAND_DESCRIPTIONS = {
    "help": "show this help",
}

CONFIG_REJECTED = (
    NOTICE_PREFIX + "The config edit was not applied; I keep running with the previous config.\n\n"
    "{problems}"
)
CONFIG_NEEDS_RESTART = (
    NOTICE_PREFIX + "These settings cannot change while I run; restart me to apply them: {keys}"
)

SEARCH_ONLY_INTRO = (
    "No language model is connected, so here are the passages that best match "
    "your question (search-only mode):"
)
NOTHING_FOUND = "I found nothing about this in the documents I can share in this room."
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
LLM_FAILED = (
    NOTICE_PREFIX + "Sorry, the language model did not answer in time, so I cannot answer "
    "now. Please try again in a moment."
)
SUPPORT_BADGES = {
    "low": "✅ _well supported by its sources_",
    "medium": "⚠️ _partly supported by its sources_",
    "high": "❗ _poorly supported by its sources: check them_",
}
