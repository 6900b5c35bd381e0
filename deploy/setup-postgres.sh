#!/usr/bin/env bash
# Installs the PostgreSQL server the tests start themselves (on loopback, in a temporary
# folder): Debian's package, when its initdb is not there yet. Safe to run again.
set -euo pipefail
if command -v initdb >/dev/null || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  exit 0
fi
echo "Installing PostgreSQL for the store tests…" >&2
if [ "$(id -u)" -ne 0 ]; then
  echo "PostgreSQL is missing; install it as root: apt-get install -y postgresql" >&2
  exit 1
fi
apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
