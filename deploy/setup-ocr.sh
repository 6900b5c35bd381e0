#!/usr/bin/env bash
# Installs OCR for scanned PDF pages and images (core/knowledge/parse/ocr.py): Debian's
# tesseract with the language packs of the languages the bot speaks (English, German,
# French, Spanish), when tesseract is not there yet. Safe to run again. Another language:
# apt-get install tesseract-ocr-<code> (ita, nld, por…: `apt-cache search tesseract-ocr-`).
set -euo pipefail
PACKAGES="tesseract-ocr tesseract-ocr-eng tesseract-ocr-deu tesseract-ocr-fra tesseract-ocr-spa"
if command -v tesseract >/dev/null && tesseract --list-langs 2>/dev/null | grep -qx eng; then
  exit 0
fi
echo "Installing tesseract for the OCR tests…" >&2
if [ "$(id -u)" -ne 0 ]; then
  echo "tesseract is missing; install it as root: apt-get install -y $PACKAGES" >&2
  exit 1
fi
# shellcheck disable=SC2086
apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $PACKAGES >/dev/null
