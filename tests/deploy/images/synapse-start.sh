#!/bin/sh
set -eu
if [ "${1:-}" = generate ]; then
  python -m synapse.app.homeserver --server-name "$SYNAPSE_SERVER_NAME" \
    --config-path /data/homeserver.yaml --data-directory /data --generate-config \
    --report-stats="${SYNAPSE_REPORT_STATS:-no}"
  # Listen on the stack's network, as the official image does.
  python - <<'EOF'
import yaml
path = "/data/homeserver.yaml"
with open(path) as file:
    config = yaml.safe_load(file)
for listener in config["listeners"]:
    listener["bind_addresses"] = ["0.0.0.0"]
with open(path, "w") as file:
    yaml.safe_dump(config, file, sort_keys=False)
EOF
  exit 0
fi
[ $# -gt 0 ] && exec "$@"
exec python -m synapse.app.homeserver -c "${SYNAPSE_CONFIG_PATH:-/data/homeserver.yaml}"
