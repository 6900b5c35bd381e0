#!/usr/bin/env bash
# Installs the evaluation corpus of the retrieval tests: the PostgreSQL 15 documentation
# as HTML (Debian's postgresql-doc-15, PostgreSQL Licence), when it is not there yet.
# Safe to run again. See tests/data/pgdocs/README.md.
set -euo pipefail
if [ -d /usr/share/doc/postgresql-doc-15/html ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "The evaluation corpus is missing; as root: apt-get install -y postgresql-doc-15" >&2
  exit 1
fi
echo "Installing the evaluation corpus (postgresql-doc-15)…" >&2
apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql-doc-15 >/dev/null
