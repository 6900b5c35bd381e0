#!/usr/bin/env bash
# Starts llama.cpp's OpenAI-compatible server (llama-cpp-python, built with the Gemma 3
# 270M GGUF by deploy/setup-llama.sh, which this runs first) with flags the bot works
# with; then, in another shell:
#   LLM_URL=http://127.0.0.1:8080/v1 LLM_MODEL=any deploy/local.sh
# --chat_format gemma: the GGUF carries no chat template (llama-2's would be guessed).
# --n_ctx 1024: the model's window. /v1/models does not say it, so the bot sends no
#   max_tokens with an answer (docs/concepts/answers.md, "The context window"); a small window ends a
#   runaway answer of this base model within seconds on 2 cores.
# --interrupt_requests False: the bot's answer runs beside its pre-step; by default the
#   server would cut one off when the other arrives.
# LLAMA_PORT, LLAMA_HOST and LLAMA_CTX change the port, the address and the window;
# other arguments go to the server.
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/setup-llama.sh
exec .venv-llama/bin/python -m llama_cpp.server \
  --model .venv-llama/gemma3-270m-q4_k_m.gguf --chat_format gemma \
  --n_ctx "${LLAMA_CTX:-1024}" --interrupt_requests False \
  --host "${LLAMA_HOST:-127.0.0.1}" --port "${LLAMA_PORT:-8080}" "$@"
