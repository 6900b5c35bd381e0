"""`python -m bot --config config.toml`: run the bot until Ctrl-C or SIGTERM."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

from bot.logs import setup_logging
from core.config import ConfigError, load_config


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bot", description=__doc__)
    parser.add_argument(
        "--config",
        type=Path,
        default=Path(os.environ.get("BOT_CONFIG", "config.toml")),
        help="the TOML config file (default: $BOT_CONFIG or ./config.toml)",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    setup_logging()
    try:
        # Checked before the app and its libraries are imported (torch, Chroma, matrix-nio:
        # five seconds on two cores), so that a broken config is reported at once.
        load_config(args.config, os.environ)
        from bot.matrix.types import MatrixError
        from bot.runtime.app import BotApp, run_until_signalled
        from core.storage.database import StorageError

        app = BotApp(args.config, os.environ, handle_signals=True)
    except ConfigError as exc:
        print(f"The config is not valid; the bot did not start.\n{exc}", file=sys.stderr)
        return 2
    setup_logging(app.settings.current.bot.log_level, app.settings.current.bot.log_format)
    try:
        asyncio.run(run_until_signalled(app))
    except MatrixError as exc:
        print(f"The bot could not start on the homeserver: {exc}", file=sys.stderr)
        return 1
    except StorageError as exc:
        print(f"The bot's storage could not be opened: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
