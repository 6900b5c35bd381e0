#!/usr/bin/env bash
# Installs espeak-ng, which speaks the voice tests' questions into real audio (Debian's
# package), when it is not there yet. Safe to run again.
set -euo pipefail
if command -v espeak-ng >/dev/null; then
  exit 0
fi
echo "Installing espeak-ng for the voice tests…" >&2
if [ "$(id -u)" -ne 0 ]; then
  echo "espeak-ng is missing; install it as root: apt-get install -y espeak-ng" >&2
  exit 1
fi
apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq espeak-ng >/dev/null
