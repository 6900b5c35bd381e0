#!/usr/bin/env bash
# Creates .venv-deploy with podman-compose (PyPI), which the tests use to render the
# compose files as a Compose implementation reads them (tests/deploy/test_compose_render.py)
# and the container tests to bring the stack up. About 10 s the first time; safe to run
# again: it does nothing once it is there.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
venv=.venv-deploy
if [ ! -x $venv/bin/podman-compose ]; then
  "$python" -m venv $venv
  $venv/bin/python -m pip install --quiet "podman-compose==1.6.0" \
    2> >(grep -v "^WARNING: Location" >&2)
fi
