#!/bin/sh
set -eu
if [ "${1:-}" = generate ]; then
  python -m synapse.app.homeserver --server-name "$SYNAPSE_SERVER_NAME" \
    --config-path /data/homeserver.yaml --data-directory /data --generate-config \
    --report-stats="${SYNAPSE_REPORT_STATS:-no}"
  # Listen on the stack's network, as the official image does.
  sed -i "s/bind_addresses: \['::1', '127.0.0.1'\]/bind_addresses: ['0.0.0.0']/" /data/homeserver.yaml
  exit 0
fi
[ $# -gt 0 ] && exec "$@"
exec python -m synapse.app.homeserver -c "${SYNAPSE_CONFIG_PATH:-/data/homeserver.yaml}"
