"""The access token file (`matrix.access_token_file`), watched: a token replaced there
(a MAS compatibility token or a personal access token that was renewed) is taken at
once, for the same device only, without a restart; the encryption store is kept. Until
then, a token the homeserver refused stops every write (bot/matrix/nio_account.py) and
messages wait in the inbox."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path

from bot.matrix.nio_account import NioAccount
from core import strings
from core.config.model import read_token_file

log = logging.getLogger(__name__)

# How often the file is looked at: a token renewed by a script lands within a second.
POLL_SECONDS = 1.0


async def watch_token_file(path: Path, account: NioAccount, report: Callable[[str], None]) -> None:
    """Take each new token written to `path`, until cancelled."""
    last = read_token_file(path)
    while True:
        await asyncio.sleep(POLL_SECONDS)
        token = read_token_file(path)
        if not token or token == last:
            continue
        last = token
        if token == account.client.access_token and not account.token_refused:
            continue  # the one in use, written again (a renewal script that ran early)
        problem = await account.use_token(token)
        if problem is None:
            log.info("took the new access token in %s (device %s)", path, account.client.device_id)
            report(strings.TOKEN_TAKEN)
        else:
            log.error("the new access token in %s was not taken: %s", path, problem)
            report(strings.TOKEN_NOT_TAKEN.format(problem=problem))
