#!/bin/sh
# Python 3.11 for a base image that has none (a Debian bookworm base: its python3 is
# 3.11); a python:3.11 base already has it and nothing is installed. With `venv`, the
# build stage also gets python3-venv. A CA bundle given as the build secret `ca_bundle`
# is trusted by apt for HTTPS mirrors (a TLS-inspecting proxy).
set -eu
if command -v python3 >/dev/null 2>&1 && { [ "${1:-}" != venv ] || python3 -m venv --help >/dev/null 2>&1; }; then
  exit 0
fi
if [ -s /run/secrets/ca_bundle ]; then
  echo "Acquire::https::CaInfo \"/run/secrets/ca_bundle\";" > /etc/apt/apt.conf.d/99build-ca
fi
packages="python3"
[ "${1:-}" = venv ] && packages="python3 python3-venv"
apt-get update
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $packages
rm -rf /var/lib/apt/lists/* /etc/apt/apt.conf.d/99build-ca
