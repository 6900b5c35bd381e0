#!/bin/sh
# pip install, with what an organisation's network needs given as build secrets and
# build arguments, never kept in a layer:
# - the secret `ca_bundle`: the CA bundle of a TLS-inspecting proxy (PIP_CERT);
# - the secret `pip_conf`: a pip.conf (an index with credentials, say);
# - the build arguments PIP_INDEX_URL / PIP_EXTRA_INDEX_URL (no credentials in them:
#   build arguments are kept in the image's history);
# - the build context `wheels`: a folder of wheels tried first (--find-links).
set -eu
if [ -s /run/secrets/ca_bundle ]; then
  export PIP_CERT=/run/secrets/ca_bundle SSL_CERT_FILE=/run/secrets/ca_bundle
fi
if [ -s /run/secrets/pip_conf ]; then
  export PIP_CONFIG_FILE=/run/secrets/pip_conf
fi
if [ -n "$(ls -A /wheels 2>/dev/null)" ]; then
  export PIP_FIND_LINKS=/wheels
fi
exec pip install "$@"
