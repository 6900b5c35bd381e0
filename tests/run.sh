#!/usr/bin/env bash
# Sets up everything the tests need and runs the whole suite: lint, unit tables, and the
# end-to-end tests against a real Synapse that the tests install and start themselves.
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/setup-venv.sh
deploy/setup-postgres.sh
deploy/setup-ocr.sh
deploy/setup-speech.sh
deploy/setup-corpus.sh
deploy/setup-llama.sh
deploy/setup-chat-client.sh
deploy/setup-deploy-tools.sh
export HF_HUB_OFFLINE=1
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy
# Synapse for the end-to-end tests, installed once before the workers start (each worker
# starts its own homeserver from it; see tests/conftest.py).
.venv/bin/python -c 'import os, pathlib, bot.dev.synapse as s; s.ensure_synapse_venv(pathlib.Path(os.environ.get("SYNAPSE_VENV", ".venv-synapse")))'
# The tests run in TEST_WORKERS processes (pytest-xdist): most of their time is spent
# waiting on a homeserver, a model or a subprocess, so more workers than cores pays.
# Work stealing, since a few tests take a minute: handed out in fixed shares, one of them
# came last and the run took 8.6 minutes instead of 6.8. TEST_WORKERS=0: one process.
exec .venv/bin/python -m pytest -n "${TEST_WORKERS:-4}" --dist worksteal "$@"
