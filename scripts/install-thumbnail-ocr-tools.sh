#!/usr/bin/env bash
# Installs the Debian tools the thumbnail and OCR modules use, test and benchmark against, when
# any is missing:
#   tesseract-ocr (English data included)  the OCR module's engine
#   poppler-utils                          pdftoppm, pdftotext, pdfinfo, pdfunite: PDF pages
#   ffmpeg                                 video frames; the tests' WebP and MP4 producer
#   libvips-tools                          vipsthumbnail: the thumbnail benchmark's reference
#   libimage-exiftool-perl                 exiftool: sets EXIF orientations in tests
#   img2pdf, ghostscript                   scanned-page and text-layer PDFs in tests
#   fonts-dejavu-core                      the font the tests draw text with
set -euo pipefail
need=()
for pair in tesseract:tesseract-ocr pdftoppm:poppler-utils ffmpeg:ffmpeg vipsthumbnail:libvips-tools \
  exiftool:libimage-exiftool-perl img2pdf:img2pdf gs:ghostscript; do
  command -v "${pair%%:*}" >/dev/null 2>&1 || need+=("${pair#*:}")
done
[ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || need+=(fonts-dejavu-core)
if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
tesseract --version 2>&1 | sed -n 1p
