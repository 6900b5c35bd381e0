#!/usr/bin/env bash
# Sets up everything the tests need and runs the whole suite: lint, unit tables, and the
# end-to-end tests against a real Synapse that the tests install and start themselves.
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/setup-venv.sh
deploy/setup-postgres.sh
deploy/setup-corpus.sh
deploy/setup-llama.sh
deploy/setup-chat-client.sh
deploy/setup-deploy-tools.sh
export HF_HUB_OFFLINE=1
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy
exec .venv/bin/python -m pytest "$@"
