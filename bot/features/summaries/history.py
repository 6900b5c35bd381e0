"""Reading a room's or a thread's messages back from the homeserver, page by page
(matrix-nio decrypts those of encrypted rooms it has keys for). Summaries read what the
bot's own store holds first (lines.py); this reads the rest."""

from __future__ import annotations

from bot.inbox.events import IncomingMessage, parse_latest_edit, parse_message
from bot.inbox.links import build_permalink
from bot.inbox.mentions import BotIdentity, is_mentioned, strip_reply_fallback
from bot.matrix.account import MatrixAccount
from core.ids import RoomID
from core.summaries.draft import SummaryLine

PAGE = 1000  # Synapse caps a page at 1000 events; fewer, larger pages read faster
# The first page when only the newest messages are wanted (the few seconds the bot's own
# store may not hold yet): a quiet room answers it with messages older than the range,
# and one small page is all that is read. Each further page is ten times larger.
PEEK = 20
TEXT = ("m.text", "m.emote")


def decide_said_to_bot(
    message: IncomingMessage, bot: BotIdentity, bot_events: set[str], bot_threads: set[str]
) -> bool:
    """Whether a message read back is said to the bot, as the inbox would have decided
    (bot/inbox/routing.py): it mentions the bot, replies to one of its messages, or is
    in (or starts) a thread the bot speaks in. No part of the room's discussion."""
    return (
        is_mentioned(message, bot)
        or (message.reply_to is not None and message.reply_to in bot_events)
        or bool({message.thread_root, message.event_id} & bot_threads)
    )


async def fetch_lines(
    matrix: MatrixAccount,
    room_id: str,
    start: float,
    end: float,
    *,
    thread_root: str | None = None,
    command_prefix: str = "!",
    max_messages: int = 20_000,
    from_token: str | None = None,
    bot: BotIdentity | None = None,
    unreadable: list[float] | None = None,
    first_page: int = PAGE,
) -> list[SummaryLine]:
    """People's messages between `start` and `end` (timestamps), oldest first, edited
    ones as they read now: not the bot's (its answers and earlier summaries), not
    notices, edits or commands, not redacted ones, not those said to the bot (`bot`, by
    default its id: `decide_said_to_bot`); the newest `max_messages` of them. Read back
    from `from_token` (MatrixAccount.messages_token_before), else from the last sync.
    The times of the range's encrypted messages the bot has no keys for (sent before it
    joined, say) are added to `unreadable`, so that a summary can say they are missing.
    `first_page`: how many events the first page asks for (PEEK for the newest seconds)."""
    bot = bot or BotIdentity(matrix.user_id)
    token = from_token
    found: list[tuple[IncomingMessage, str]] = []
    # The bot's messages, and the threads it speaks in.
    bot_events: set[str] = set()
    bot_threads: set[str] = set()
    reached_start = False
    size = first_page
    while not reached_start and len(found) < max_messages:
        page = await matrix.fetch_messages(room_id, token, None, size)
        size = min(PAGE, size * 10)
        if unreadable is not None:
            unreadable += [ms / 1000 for ms in page.undecrypted_ms if start <= ms / 1000 <= end]
        for source in page.events:
            message = parse_message(source, RoomID(room_id))
            if message is not None and message.sender == matrix.user_id:
                bot_events.add(message.event_id)
                if message.thread_root:
                    bot_threads.add(message.thread_root)
            if message is None or message.timestamp_ms / 1000 > end:
                continue
            if message.timestamp_ms / 1000 < start:
                reached_start = True
                break
            in_thread = thread_root in (message.thread_root, message.event_id)
            # An edited message in its latest form; a redacted one has no body left.
            body = parse_latest_edit(source) or message.body
            text = strip_reply_fallback(body).strip()
            if (
                message.sender == matrix.user_id
                or message.msgtype not in TEXT
                or message.is_edit
                or not text
                or text.startswith(command_prefix)
                or (thread_root is not None and not in_thread)
            ):
                continue
            found.append((message, text))
        reached_start = reached_start or page.end is None
        token = page.end
    # Once all is read: a thread's later messages come before the bot's in it.
    found = [
        (m, text) for m, text in found if not decide_said_to_bot(m, bot, bot_events, bot_threads)
    ]
    # Newest first so far: the cap keeps the newest (a page may have brought more).
    found = found[:max_messages][::-1]
    return [
        SummaryLine(
            number,
            message.sender,
            text,
            message.timestamp_ms / 1000,
            build_permalink(room_id, message.event_id, message.sender),
            message.event_id,
            tuple(sorted(message.mentions.user_ids)),
            message.reply_to,
            message.thread_root,
        )
        for number, (message, text) in enumerate(found, start=1)
    ]
