#!/bin/sh
# OCR in the image (scanned PDF pages and images, core/knowledge/parse/ocr.py): Debian's
# tesseract and one language pack per argument (tesseract's codes: eng deu fra spa ita…;
# the build argument OCR_LANGUAGES). A CA bundle given as the build secret `ca_bundle` is
# trusted by apt for HTTPS mirrors (a TLS-inspecting proxy).
set -eu
if [ -s /run/secrets/ca_bundle ]; then
  echo "Acquire::https::CaInfo \"/run/secrets/ca_bundle\";" > /etc/apt/apt.conf.d/99build-ca
fi
packages="tesseract-ocr"
for language in "$@"; do
  packages="$packages tesseract-ocr-$language"
done
apt-get update
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $packages
rm -rf /var/lib/apt/lists/* /etc/apt/apt.conf.d/99build-ca
