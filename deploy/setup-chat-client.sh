#!/usr/bin/env bash
# Creates .venv-chat-client with `llm` (Simon Willison's command-line chat client, from
# PyPI): a chat client nobody here wrote, which the tests point at the chat API as a
# person would (tests/chat_api/test_chat_client.py). About 15 s the first time.
# Safe to run again: it does nothing once it is there.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
venv=.venv-chat-client
if [ ! -x $venv/bin/llm ]; then
  "$python" -m venv $venv
  $venv/bin/python -m pip install --quiet "llm==0.36" 2> >(grep -v "^WARNING: Location" >&2)
fi
