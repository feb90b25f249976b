#!/usr/bin/env bash
# Installs the producers and the reference tool the text module's tests and benchmarks use:
# python3-docx, python3-openpyxl and python3-odf write DOCX, XLSX and ODT fixtures at test time;
# poppler-utils gives pdftotext, the reference of the PDF benchmark; qpdf encrypts PDFs for the
# hostile-input tests. Chromium (the PDF producer)
# comes from install-chromium.sh.
set -euo pipefail
py=/usr/bin/python3
if [ -x "$py" ] && "$py" -c 'import docx, openpyxl, odf' 2>/dev/null && command -v pdftotext >/dev/null && command -v qpdf >/dev/null; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq python3 python3-docx python3-openpyxl python3-odf poppler-utils qpdf >/dev/null
"$py" -c 'import docx, openpyxl, odf; print("python3-docx, python3-openpyxl, python3-odf: ok")'
pdftotext -v 2>&1 | sed -n 1p
