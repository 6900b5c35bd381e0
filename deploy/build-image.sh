#!/usr/bin/env bash
# Builds the bot's image with podman or docker, whichever is there, and says how long it
# took and how big the image is.
#
#   deploy/build-image.sh [TAG]            # default: knowledge-bot:latest
#
# Set in the environment when needed (docs/getting-started/containers.md):
#   BASE=debian:bookworm-slim      the base image (default python:3.11-slim)
#   EXTRAS=voice                   the local speech model ([speech] local = true)
#   CA_BUNDLE=/path/ca.crt         a TLS-inspecting proxy's CA bundle (a build secret)
#   PIP_CONF=/path/pip.conf        a pip.conf, say with an index and its credentials (a secret)
#   PIP_INDEX_URL=… PIP_EXTRA_INDEX_URL=…   indexes without credentials (build arguments)
#   WHEELS=/path/to/wheels         a folder of wheels tried first (the CPU torch wheel)
#   TORCH_INDEX_URL=               empty: torch from the indexes above, not PyTorch's
#   CONTAINER_ENGINE=podman|docker to choose when both are there
set -euo pipefail
cd "$(dirname "$0")/.."
tag=${1:-knowledge-bot:latest}
engine=${CONTAINER_ENGINE:-}
if [ -z "$engine" ]; then
  if command -v podman >/dev/null 2>&1; then engine=podman
  elif command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then engine=docker
  else echo "Neither podman nor a running docker was found." >&2; exit 2; fi
fi
args=(build --tag "$tag" --network=host)
[ -n "${BASE:-}" ] && args+=(--build-arg "BASE=$BASE")
[ -n "${PIP_INDEX_URL:-}" ] && args+=(--build-arg "PIP_INDEX_URL=$PIP_INDEX_URL")
[ -n "${PIP_EXTRA_INDEX_URL:-}" ] && args+=(--build-arg "PIP_EXTRA_INDEX_URL=$PIP_EXTRA_INDEX_URL")
[ -n "${TORCH_INDEX_URL+set}" ] && args+=(--build-arg "TORCH_INDEX_URL=$TORCH_INDEX_URL")
[ -n "${EXTRAS:-}" ] && args+=(--build-arg "EXTRAS=$EXTRAS")
[ -n "${CA_BUNDLE:-}" ] && args+=(--secret "id=ca_bundle,src=$CA_BUNDLE")
[ -n "${PIP_CONF:-}" ] && args+=(--secret "id=pip_conf,src=$PIP_CONF")
[ -n "${WHEELS:-}" ] && args+=(--build-context "wheels=$WHEELS")
if [ "$engine" = podman ]; then
  # Podman's own image format drops HEALTHCHECK; Docker's keeps it.
  args+=(--format docker)
  # Where the sandbox refuses podman's defaults (../shared/ENVIRONMENT.md).
  [ -n "${PODMAN_RUNTIME:-}" ] && args=(--runtime "$PODMAN_RUNTIME" "${args[@]}")
fi
started=$(date +%s)
"$engine" "${args[@]}" .
seconds=$(( $(date +%s) - started ))
size=$("$engine" image inspect "$tag" --format '{{.Size}}')
echo "Built $tag with $engine in ${seconds} s; the image is $(( size / 1024 / 1024 )) MiB."
