#!/usr/bin/env bash
# First-time setup of the compose stack, safe to run again (each step is skipped when
# already done):
#   1. .env from env.example, then stop so that it can be filled in;
#   2. Synapse's config, generated in its volume for SERVER_NAME;
#   3. Synapse started, and the bot's account registered on it (the password from .env,
#      passed on standard input, never on a command line);
#   4. config/config.toml given the bot's user id on SERVER_NAME.
# Then: docker compose up -d
# With an existing homeserver, skip this script: register the bot's account there and
# set [matrix] in config/config.toml (docs/getting-started/compose.md).
set -euo pipefail
cd "$(dirname "$0")"
docker=${DOCKER:-docker}

if [ ! -f .env ]; then
  cp env.example .env
  chmod 600 .env
  echo "Wrote .env from env.example: set SERVER_NAME, BOT_PASSWORD, BOT_PICKLE_KEY and the" >&2
  echo "tokens in it (openssl rand -base64 32 makes a good key), then run $0 again." >&2
  exit 1
fi
# Read as docker compose reads it (KEY=value, optional quotes), not sourced as shell.
env_value() {
  sed -n "s/^$1=//p" .env | tail -n 1 | sed -e 's/^"\(.*\)"$/\1/' -e "s/^'\(.*\)'$/\1/"
}
for name in SERVER_NAME BOT_PASSWORD BOT_PICKLE_KEY; do
  value=$(env_value "$name")
  if [ -z "$value" ] || [ "$value" = change-me ]; then
    echo ".env: set $name (it is empty or still change-me)." >&2
    exit 1
  fi
done
SERVER_NAME=$(env_value SERVER_NAME)
BOT_PASSWORD=$(env_value BOT_PASSWORD)

if ! "$docker" compose run --rm --no-deps --entrypoint test synapse -f /data/homeserver.yaml; then
  echo "Generating Synapse's config for $SERVER_NAME…"
  "$docker" compose run --rm --no-deps synapse generate
fi

"$docker" compose up -d synapse
echo -n "Waiting for Synapse"
for attempt in $(seq 60); do
  if "$docker" compose exec -T synapse curl -fsS http://localhost:8008/health >/dev/null 2>&1; then
    break
  fi
  if [ "$attempt" = 60 ]; then
    echo; echo "Synapse did not answer in 2 minutes: docker compose logs synapse" >&2; exit 1
  fi
  echo -n "."
  sleep 2
done
echo

printf '%s' "$BOT_PASSWORD" |
  "$docker" compose exec -T synapse register_new_matrix_user -c /data/homeserver.yaml \
    -u knowledge-bot --no-admin --exists-ok --password-file /dev/stdin http://localhost:8008

sed -i "s/^user_id = \"@knowledge-bot:[^\"]*\"/user_id = \"@knowledge-bot:$SERVER_NAME\"/" \
  config/config.toml
sed -i "s/^allowed_servers = \[\"[^\"]*\"\]/allowed_servers = [\"$SERVER_NAME\"]/" \
  config/config.toml
echo "config/config.toml: the bot is @knowledge-bot:$SERVER_NAME. Add your collections and"
echo "sources there, then: docker compose up -d"
