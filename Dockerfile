# The bot's image. Not yet built or tested here (no Docker engine on the dev machines);
# the deployment issue completes it (baked-in models, health check, compose stack).
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY bot ./bot
COPY core ./core
RUN python -m venv /opt/venv \
 && /opt/venv/bin/pip install --no-cache-dir "torch==2.13.0" --index-url https://download.pytorch.org/whl/cpu \
 && /opt/venv/bin/pip install --no-cache-dir .

FROM python:3.11-slim
RUN useradd --create-home --uid 10001 bot
COPY --from=build /opt/venv /opt/venv
USER bot
WORKDIR /home/bot
ENV PATH=/opt/venv/bin:$PATH HF_HUB_OFFLINE=1 BOT_CONFIG=/config/config.toml
VOLUME ["/config", "/data"]
ENTRYPOINT ["python", "-m", "bot"]
