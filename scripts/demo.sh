#!/usr/bin/env bash
# make demo: builds homeindexd, makes a sample files tree with an archive drive in a temp dir,
# runs one sync with the embedded search backend, prints the drive markers and a few searches,
# and removes everything it made. Needs only Go.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-bin}
[ -x "$BIN/homeindexd" ] || go build -o "$BIN/" ./cmd/homeindexd
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
files=$work/files
mkdir -p "$files/photos/2024" "$files/docs" "$files/archive/usb-2019/scans" "$files/archive/old-laptop"
printf 'Quarterly report: revenue up, costs down.\n' > "$files/docs/report.txt"
printf 'Shopping list: apples, bread, coffee.\n' > "$files/docs/list.md"
cp "$files/docs/report.txt" "$files/archive/usb-2019/scans/report-copy.txt"   # a duplicate
printf '\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89' > "$files/photos/2024/pixel.png"
printf 'holiday notes from the lake\n' > "$files/archive/usb-2019/notes.txt"
# old-laptop is an empty mount point: an absent drive.
export INDEX_DIRECTORY=$files METADATA_DIRECTORY=$work/metadata STATE_DIRECTORY=$work/state LOG_FORMAT=console LOGGING_LEVEL=warn
echo "== sync of a sample tree in $files"
"$BIN/homeindexd" sync
echo
echo "== drive markers in $files/archive"
for m in "$files"/archive/*-status-*; do printf '%s: %s\n' "$(basename "$m")" "$(cat "$m")"; done
echo
echo "== homeindexd search report"
"$BIN/homeindexd" search report
echo
echo "== homeindexd search --filter 'has_archive_paths = true' --sort size:desc"
"$BIN/homeindexd" search --filter 'has_archive_paths = true' --sort size:desc
echo
echo "== a second sync reads nothing unchanged"
"$BIN/homeindexd" sync | head -1
echo
echo "== metadata directory"
(cd "$work/metadata" && find . -maxdepth 4 | sort | head -30)
