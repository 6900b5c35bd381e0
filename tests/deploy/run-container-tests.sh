#!/usr/bin/env bash
# The container tests (tests/deploy/test_container.py, test_stack.py): builds the bot's image (cached
# after the first build) and runs them against a real Synapse and the scripted model.
# Not part of tests/run.sh: the first build takes about ten minutes.
#
#   tests/deploy/run-container-tests.sh
#
# Needs podman (or docker with a running daemon). On a machine that can pull no image,
# set BASE to a local Debian bookworm image (docs/getting-started/containers.md); on these
# development machines the script makes one with debootstrap when none is there.
# Everything deploy/build-image.sh reads (CA_BUNDLE, WHEELS, PIP_CONF, ...) applies.
set -euo pipefail
cd "$(dirname "$0")/../.."
deploy/setup-venv.sh
deploy/setup-deploy-tools.sh
tag=${KNOWLEDGE_BOT_IMAGE:-knowledge-bot:test}
if [ -n "${SANDBOX_CONTAINERS:-}" ]; then
  # The sandbox of the development machines (../shared/ENVIRONMENT.md, "Containers"):
  # runc, no rlimits, cgroupfs, no registry to pull from.
  conf=$(mktemp --suffix=.conf)
  printf '[containers]\ndefault_ulimits = []\n[engine]\ncgroup_manager = "cgroupfs"\nruntime = "runc"\n' > "$conf"
  export CONTAINERS_CONF=$conf
  if ! podman image exists localhost/debian:bookworm-min; then
    rootfs=$(mktemp -d)
    debootstrap --variant=minbase bookworm "$rootfs" >/dev/null
    tar -C "$rootfs" -c . | podman import - localhost/debian:bookworm-min
    rm -rf "$rootfs"
  fi
  export BASE=${BASE:-localhost/debian:bookworm-min}
  export CA_BUNDLE=${CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}
  export WHEELS=${WHEELS:-/opt/wheels} TORCH_INDEX_URL=${TORCH_INDEX_URL-}
fi
deploy/build-image.sh "$tag"
export KNOWLEDGE_BOT_IMAGE=$tag HF_HUB_OFFLINE=1
exec .venv/bin/python -m pytest -p no:cacheprovider tests/deploy/test_container.py \
  tests/deploy/test_stack.py "$@"
