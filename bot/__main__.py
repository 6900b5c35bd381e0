"""`python -m bot --config config.toml`: run the bot until Ctrl-C or SIGTERM."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
from pathlib import Path

from bot.app import BotApp
from bot.matrix import MatrixError
from core.config import ConfigError


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bot", description=__doc__)
    parser.add_argument(
        "--config",
        type=Path,
        default=Path(os.environ.get("BOT_CONFIG", "config.toml")),
        help="the TOML config file (default: $BOT_CONFIG or ./config.toml)",
    )
    return parser.parse_args(argv)


async def run_until_stopped(app: BotApp) -> None:
    task = asyncio.create_task(app.run())
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, task.cancel)
    try:
        await task
    except asyncio.CancelledError:
        logging.getLogger("bot").info("stopped")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    try:
        app = BotApp(args.config, os.environ, handle_signals=True)
    except ConfigError as exc:
        print(f"The config is not valid; the bot did not start.\n{exc}", file=sys.stderr)
        return 2
    logging.getLogger().setLevel(app.settings.current.bot.log_level)
    # nio logs every sync at INFO; keep the bot's own lines readable.
    logging.getLogger("nio").setLevel(logging.WARNING)
    try:
        asyncio.run(run_until_stopped(app))
    except MatrixError as exc:
        print(f"Could not connect to the homeserver: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
