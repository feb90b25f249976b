#!/usr/bin/env bash
# make demo: the whole pipeline on a sample tree, in about ten seconds. Installs redis-server
# if missing, builds homeindexd and example-module, starts a private redis-server (a free
# loopback port, a temporary directory), homeindexd and example-module on a sample files tree
# with an archive drive, shows progress until every file is processed, prints the drive
# markers, a status summary and searches, then stops everything it started and removes its
# temporary directory. The thumbnail and OCR modules run beside example-module (thumbocr_*
# below): a scanned receipt and a photo get thumbnails, and the receipt's words, which exist
# only in its pixels, are read and searched for.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-bin}
DEADLINE=${DEMO_DEADLINE:-120} # seconds to wait for the processing

./scripts/install-redis.sh
go build -o "$BIN/" ./cmd/homeindexd ./cmd/example-module

work=$(mktemp -d)
pids=()
cleanup() {
	local code=$?
	for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
	for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
	if [ "$code" -ne 0 ] && [ -d "$work" ]; then
		for log in "$work"/*.log; do echo "---- $log (last lines)"; tail -n 20 "$log"; done
	fi
	rm -rf "$work"
	exit "$code"
}
trap cleanup EXIT

# A free loopback port: one nothing answers on (bash's /dev/tcp), retried if taken meanwhile.
free_port() {
	local port
	while :; do
		port=$((20000 + RANDOM % 40000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			echo "$port"
			return
		fi
	done
}

# ---- thumbnail and OCR modules: a scanned receipt and a photo, read and drawn ----
thumbocr_build() { # the tools (tesseract, poppler-utils, ffmpeg) and the two module binaries
	./scripts/install-thumbnail-ocr-tools.sh
	go build -o "$BIN/" ./cmd/thumbnail-module ./cmd/ocr-module
}
thumbocr_files() { # a scan whose words exist only in its pixels, and a photo; prints how many
	go run ./modules/ocr/ocrtest/rendertext -o "$files/archive/usb-2019/scans/receipt.png" \
		"Harbour Cafe, table four." "One quokka biscuit and a pot of tea: four pounds twenty." "Thank you for visiting."
	ffmpeg -v error -f lavfi -i testsrc2=size=2400x1600 -frames:v 1 -q:v 3 "$files/photos/2024/harbour.jpg"
	echo 2
}
thumbocr_modules() { # their MODULES entries
	printf -- '- name: thumbnail\n  uid: "demo-thumbnail-1"\n- name: ocr\n  uid: "demo-ocr-1"\n'
}
thumbocr_start() {
	MODULE_NAME=thumbnail MODULE_UID=demo-thumbnail-1 FILES_DIRECTORY=$files METADATA_DIRECTORY=$work/metadata \
		TIMEOUT=60 "$BIN/thumbnail-module" 2>"$work/thumbnail-module.log" &
	pids+=($!)
	MODULE_NAME=ocr MODULE_UID=demo-ocr-1 FILES_DIRECTORY=$files METADATA_DIRECTORY=$work/metadata \
		TIMEOUT=120 OCR_LANGUAGES=eng "$BIN/ocr-module" 2>"$work/ocr-module.log" &
	pids+=($!)
}
thumbocr_show() {
	local receipt photo
	receipt=$(grep -l quokka "$work"/metadata/by-id/*/ocr/content.json | head -1)
	receipt=${receipt%/ocr/content.json}
	photo=$(dirname "$(find "$work/metadata/by-id" -path '*/thumbnail/preview.jpg' | head -1)")
	echo "== thumbnails: $(find "$work/metadata/by-id" -name small.jpg | wc -l) small.jpg and" \
		"$(find "$work/metadata/by-id" -name preview.jpg | wc -l) preview.jpg in by-id/<id>/thumbnail/"
	ls -l "$photo"
	echo
	echo "== the word quokka exists only in the pixels of scans/receipt.png; the OCR module read it:"
	echo "  $(tr -d '\n' <"$receipt/ocr/content.json" | cut -c1-160)"
	echo
	echo "== homeindexd search quokka"
	"$BIN/homeindexd" search quokka
}
# ---- end of thumbnail and OCR modules ----
thumbocr_build

# The sample tree: regular files, a duplicate, and two drives (usb-2019 plugged in,
# old-laptop an empty mount point: unplugged).
files=$work/files
mkdir -p "$files/photos/2024" "$files/docs" "$files/archive/usb-2019/scans" "$files/archive/old-laptop"
printf 'Quarterly report: revenue up, costs down.\n' >"$files/docs/report.txt"
printf 'Shopping list: apples, bread, coffee.\n' >"$files/docs/list.md"
cp "$files/docs/report.txt" "$files/archive/usb-2019/scans/report-copy.txt" # a duplicate
printf '\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89' >"$files/photos/2024/pixel.png"
printf 'holiday notes from the lake\n' >"$files/archive/usb-2019/notes.txt"
expected=4 # distinct contents
expected=$((expected + $(thumbocr_files)))

echo "== starting a private redis-server, homeindexd and example-module in $work"
redis_port=$(free_port)
redis-server --port "$redis_port" --bind 127.0.0.1 --dir "$work" --appendonly yes --save '' \
	--daemonize no --logfile "$work/redis.log" &
pids+=($!)
for _ in $(seq 100); do
	redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break
	sleep 0.1
done
redis-cli -p "$redis_port" ping >/dev/null

modules='- name: example-module
  uid: "demo-1"
  filterable_attributes: [note]
'$(thumbocr_modules)
export INDEX_DIRECTORY=$files METADATA_DIRECTORY=$work/metadata STATE_DIRECTORY=$work/state
export REDIS_HOST=127.0.0.1:$redis_port MODULES=$modules HTTP_ADDR=127.0.0.1:$(free_port)
export CRON_EXPRESSION='*/5 * * * * *' LOG_FORMAT=json LOGGING_LEVEL=info
"$BIN/homeindexd" run 2>"$work/homeindexd.log" &
daemon=$!
pids+=("$daemon")
alive() { # alive PID NAME: fails the demo if the process has exited
	kill -0 "$1" 2>/dev/null || { echo "demo: $2 exited" >&2; exit 1; }
}

marker() { # marker DRIVE: its state and content, or "none"
	local m
	for m in "$files/archive/$1"-status-*; do
		[ -e "$m" ] && { printf '%s (%s)' "${m##*-status-}" "$(cat "$m")"; return; }
	done
	printf 'none'
}
hits() { "$BIN/homeindexd" search --limit 1 "$@" | awk 'NR == 1 { print $1 }'; } # "N hits" → N

for _ in $(seq 300); do
	[ -e "$files/archive/usb-2019-status-pending" ] && break
	alive "$daemon" homeindexd
	sleep 0.1
done
[ "$(marker usb-2019)" != none ] || { echo "demo: no drive marker after 30 s" >&2; exit 1; }
echo "usb-2019 marker after the first sync: $(marker usb-2019)"

MODULE_NAME=example-module MODULE_UID=demo-1 FILES_DIRECTORY=$files METADATA_DIRECTORY=$work/metadata \
	TIMEOUT=10 "$BIN/example-module" 2>"$work/example-module.log" &
module=$!
pids+=("$module")
thumbocr_start

echo "== processing"
start=$SECONDS
while :; do
	alive "$daemon" homeindexd
	alive "$module" example-module
	total=$(hits) || total=0
	done_=$(hits --filter 'next IS EMPTY') || done_=0
	echo "  $((SECONDS - start))s: ${done_:-0} of ${total:-0} documents processed; usb-2019 $(marker usb-2019)"
	if [ "${total:-0}" -eq "$expected" ] && [ "${done_:-0}" -eq "$expected" ] &&
		[ -e "$files/archive/usb-2019-status-ready" ]; then
		break
	fi
	if [ $((SECONDS - start)) -ge "$DEADLINE" ]; then
		echo "demo: not done after ${DEADLINE}s" >&2
		exit 1
	fi
	sleep 0.5
done

echo
echo "== drive markers in $files/archive"
echo "  usb-2019: $(marker usb-2019)"
echo "  old-laptop: $(marker old-laptop) (an empty mount point is an unplugged drive; nothing was ever seen on it)"
echo
echo "== status"
echo "  documents: $(hits) indexed, $(hits --filter 'next IS EMPTY') through every module," \
	"$(hits --filter 'has_archive_paths = true') on archive drives"
echo "  example-module queue: check $(redis-cli -p "$redis_port" llen example-module:check)," \
	"run $(redis-cli -p "$redis_port" llen example-module:run), parked $(redis-cli -p "$redis_port" hlen example-module:failed)"
echo "  module output: $(find "$work/metadata/by-id" -name content.json | wc -l) content.json," \
	"$(find "$work/metadata/by-id" -name chunks.json | wc -l) chunks.json"
echo "  readiness: $("$BIN/homeindexd" healthcheck)"
echo
echo "== homeindexd search --filter 'note = \"hello\"' report"
"$BIN/homeindexd" search --filter 'note = "hello"' report
echo
echo "== homeindexd search --filter 'has_archive_paths = true' --sort size:desc"
"$BIN/homeindexd" search --filter 'has_archive_paths = true' --sort size:desc
echo
thumbocr_show
echo
echo "== stopping everything the demo started"
