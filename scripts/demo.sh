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
go build -o "$BIN/" ./cmd/homeindexd ./cmd/example-module ./cmd/media-module ./cmd/text-module

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

# --- media module demo ---------------------------------------------------------------------
# A JPEG with EXIF (camera, date taken with its offset, GPS) tagged by exiftool and an MP3 with
# ID3 tags written by ffmpeg, both made here (scripts/install-media-tools.sh installs the tools
# when missing); the media module reads them, and media_demo_show filters photos by camera and
# by date.
media_modules_entry='- name: media
  uid: "demo-media-1"
  filterable_attributes: [media.kind, media.camera, media.year, media.date_unix, media.artist, _geo]
  sortable_attributes: [media.date_unix, media.duration]
'
media_demo_files() {
	./scripts/install-media-tools.sh >/dev/null
	mkdir -p "$files/photos/2019" "$files/music"
	ffmpeg -hide_banner -loglevel error -f lavfi -i testsrc=size=320x240 -frames:v 1 "$files/photos/2019/eiffel.jpg"
	exiftool -q -overwrite_original -Make=Canon '-Model=Canon EOS 5D Mark IV' \
		'-DateTimeOriginal=2019:07:14 15:04:05' -OffsetTimeOriginal=+02:00 \
		-GPSLatitude=48.8584 -GPSLatitudeRef=N -GPSLongitude=2.2945 -GPSLongitudeRef=E \
		"$files/photos/2019/eiffel.jpg"
	ffmpeg -hide_banner -loglevel error -f lavfi -i testsrc=size=320x240 -frames:v 1 -vf hflip "$files/photos/2019/harbour.jpg"
	exiftool -q -overwrite_original -Make=Google -Model='Pixel 7' '-DateTimeOriginal=2019:08:02 10:00:00' \
		"$files/photos/2019/harbour.jpg"
	ffmpeg -hide_banner -loglevel error -f lavfi -i sine=frequency=440:duration=2 -c:a libmp3lame \
		-metadata title='So What' -metadata artist='Miles Davis' -metadata album='Kind of Blue' -metadata date=1959 \
		"$files/music/so-what.mp3"
	expected=$((expected + 3))
}
media_demo_start() {
	MODULE_NAME=media MODULE_UID=demo-media-1 FILES_DIRECTORY=$files METADATA_DIRECTORY=$work/metadata \
		TIMEOUT=30 "$BIN/media-module" 2>"$work/media-module.log" &
	media_module=$!
	pids+=("$media_module")
}
media_demo_show() {
	echo
	echo "== media: photos taken with a Canon EOS 5D Mark IV"
	echo "   homeindexd search --filter 'media.camera = \"Canon EOS 5D Mark IV\"'"
	"$BIN/homeindexd" search --filter 'media.camera = "Canon EOS 5D Mark IV"'
	echo
	echo "== media: photos from July 2019 (2019-07-01 ≤ date taken < 2019-08-01, UTC)"
	echo "   homeindexd search --filter 'media.kind = photo AND media.date_unix >= 1561939200 AND media.date_unix < 1564617600'"
	"$BIN/homeindexd" search --filter 'media.kind = photo AND media.date_unix >= 1561939200 AND media.date_unix < 1564617600'
	echo
	echo "== media: photos with a date, newest first (--sort media.date_unix:desc)"
	"$BIN/homeindexd" search --json --filter 'media.kind = photo AND media.date_unix EXISTS' --sort media.date_unix:desc |
		python3 -c 'import json, sys
for l in sys.stdin:
    d = json.loads(l); m = d["media"]
    print("  %-12s %-25s %-22s %s" % (list(d["paths"])[0].split("/")[-1], m.get("date"), m.get("camera"), d.get("_geo", "")))'
	echo
	echo "== media: audio by Miles Davis"
	"$BIN/homeindexd" search --filter 'media.artist = "Miles Davis"'
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
	receipt=$(grep -l quokka "$work"/metadata/by-id/*/ocr/content.json | sed -n 1p)
	receipt=${receipt%/ocr/content.json}
	photo=$(dirname "$(find "$work/metadata/by-id" -path '*/thumbnail/preview.jpg' | sed -n 1p)")
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
media_demo_files

# ---- text module: sample files, process, searches ----
# text_demo_files writes a PDF (printed by headless Chromium), a DOCX (python3-docx) and an
# HTML page into the tree; each holds a word found nowhere else.
text_demo_files() {
	./scripts/install-chromium.sh >/dev/null
	./scripts/install-text-tools.sh >/dev/null
	local src=$work/text-src
	mkdir -p "$src" "$files/docs/text"
	cat >"$src/report.html" <<'HTML'
<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Expedition report</title></head>
<body><h1>Expedition report</h1><p>Page one describes the camp.</p>
<p style="page-break-before:always">Page two: we finally saw a wombat near the river.</p></body></html>
HTML
	chromium --headless=new --no-sandbox --disable-gpu --no-first-run --user-data-dir="$src/profile" \
		--no-pdf-header-footer --print-to-pdf="$files/docs/text/expedition.pdf" "file://$src/report.html" >/dev/null 2>&1
	/usr/bin/python3 - "$files/docs/text/letter.docx" <<'PY'
import sys, docx
d = docx.Document()
d.core_properties.title = "Letter to the museum"
d.core_properties.author = "Demo"
d.add_paragraph("Dear curator, the platypus skeleton arrived safely.")
d.save(sys.argv[1])
PY
	printf '<html><head><title>Garden notes</title><script>var hidden = "nothing";</script></head><body><p>The heron came back to the pond.</p></body></html>\n' \
		>"$files/docs/text/garden.html"
	expected=$((expected + 3))
}

# text_demo_start starts text-module beside the daemon.
text_demo_start() {
	MODULE_NAME=text MODULE_UID=demo-text-1 FILES_DIRECTORY=$files METADATA_DIRECTORY=$work/metadata \
		TIMEOUT=60 "$BIN/text-module" 2>"$work/text-module.log" &
	text_module=$!
	pids+=("$text_module")
}

# text_demo_search shows words found only inside the PDF and only inside the DOCX, and a
# filter on the module's fields.
text_demo_search() {
	echo "== homeindexd search wombat   (only inside the PDF, on its page 2)"
	"$BIN/homeindexd" search wombat
	echo
	echo "== homeindexd search platypus   (only inside the DOCX)"
	"$BIN/homeindexd" search platypus
	echo
	echo "== homeindexd search heron   (visible text of the HTML page)"
	"$BIN/homeindexd" search heron
	echo
	echo "== homeindexd search --filter 'text.format = \"pdf\"' --sort text.pages:desc"
	"$BIN/homeindexd" search --filter 'text.format = "pdf"' --sort text.pages:desc
	[ "$(hits wombat)" = 1 ] && [ "$(hits platypus)" = 1 ] || { echo "demo: the text module's words were not found" >&2; exit 1; }
}
# ---- end of the text module ----
text_demo_files
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
- name: text
  uid: "demo-text-1"
  filterable_attributes: [text.format, text.language, text.pages, text.created_unix]
  sortable_attributes: [text.created_unix, text.pages]
'"$media_modules_entry"$(thumbocr_modules)
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
media_demo_start
text_demo_start
thumbocr_start

echo "== processing"
start=$SECONDS
while :; do
	alive "$daemon" homeindexd
	alive "$module" example-module
	alive "$media_module" media-module
	alive "$text_module" text-module
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
media_demo_show
echo
text_demo_search
echo
thumbocr_show
echo
echo "== stopping everything the demo started"
