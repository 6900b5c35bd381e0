#!/usr/bin/env bash
# Runs the bot locally: a Synapse homeserver on loopback, a bot account, a demo user and
# room, and the bot. Data lives in .local/; a second run reuses it. Ctrl-C stops all.
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/setup-venv.sh
export HF_HUB_OFFLINE=1
exec .venv/bin/python -m bot.dev.local
