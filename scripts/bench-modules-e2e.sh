#!/usr/bin/env bash
# End to end through the text and media modules: a demo-like tree scaled to N files (default
# 10,000: plain text, Markdown, HTML, small PDFs, DOCX letters and EXIF-tagged JPEGs), one
# private redis-server, `homeindexd run` and one worker of each module. Reports files/s from
# the daemon's start until every document has passed both modules, and each process's CPU
# seconds, so the daemon's share of the CPU the whole pipeline used.
# Usage: scripts/bench-modules-e2e.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-10000}
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
go build -o "$work/bin/" ./cmd/homeindexd ./cmd/text-module ./cmd/media-module

# The tree: every file has its own content (so its own document).
python3 - "$work/files" "$n" <<'PY'
import os, random, subprocess, sys, zlib
root, n = sys.argv[1], int(sys.argv[2])
rnd = random.Random(7)
words = "harbour quokka ledger river meadow lantern copper orchard violin glacier".split()
def sentence(i):
    return " ".join(rnd.choice(words) for _ in range(40)) + " item%d" % i

def pdf(text):
    # A one-page PDF with a text layer (Helvetica), written by hand.
    stream = ("BT /F1 11 Tf 50 750 Td (%s) Tj ET" % text.replace("(", "").replace(")", "")).encode()
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
            b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    out = bytearray(b"%PDF-1.4\n")
    offs = []
    for k, o in enumerate(objs, 1):
        offs.append(len(out))
        out += b"%d 0 obj\n" % k + o + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    for o in offs:
        out += b"%010d 00000 n \n" % o
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
    return bytes(out)

try:
    import docx
except ImportError:
    docx = None

jpeg_dir = os.path.join(root, "photos")
os.makedirs(jpeg_dir, exist_ok=True)
tmpl = os.path.join(root, "..", "template.jpg")
subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=320x240",
                "-frames:v", "1", tmpl], check=True)
subprocess.run(["exiftool", "-q", "-overwrite_original", "-Make=Canon", "-Model=Canon EOS 5D Mark IV",
                "-DateTimeOriginal=2019:07:14 15:04:05", "-GPSLatitude=48.8584", "-GPSLatitudeRef=N",
                "-GPSLongitude=2.2945", "-GPSLongitudeRef=E", tmpl], check=True)
jpeg = open(tmpl, "rb").read()
for i in range(n):
    d = os.path.join(root, "d%03d" % (i // 500))
    os.makedirs(d, exist_ok=True)
    kind = i % 10
    if kind < 4:
        open(os.path.join(d, "note%06d.txt" % i), "w").write(sentence(i) + "\n")
    elif kind == 4:
        open(os.path.join(d, "readme%06d.md" % i), "w").write("# Note %d\n\n%s\n" % (i, sentence(i)))
    elif kind == 5:
        open(os.path.join(d, "page%06d.html" % i), "w").write(
            "<html><head><title>Page %d</title><script>var s=1;</script></head><body><p>%s</p></body></html>" % (i, sentence(i)))
    elif kind == 6:
        open(os.path.join(d, "report%06d.pdf" % i), "wb").write(pdf(sentence(i)))
    elif kind == 7 and docx is not None:
        doc = docx.Document()
        doc.add_paragraph(sentence(i))
        doc.save(os.path.join(d, "letter%06d.docx" % i))
    else:
        # Bytes after the JPEG's end marker make each photo its own content; readers ignore them.
        open(os.path.join(jpeg_dir, "photo%06d.jpg" % i), "wb").write(jpeg + b"unique %d" % i)
PY
files=$(find "$work/files" -type f | wc -l)

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
redis_port=$(free_port)
redis-server --port "$redis_port" --bind 127.0.0.1 --dir "$work" --save '' --appendonly no --daemonize no >"$work/redis.log" 2>&1 &
redis=$!
pids+=("$redis")
until redis-cli -p "$redis_port" ping >/dev/null 2>&1; do sleep 0.1; done

export INDEX_DIRECTORY=$work/files METADATA_DIRECTORY=$work/metadata STATE_DIRECTORY=$work/state
export REDIS_HOST=127.0.0.1:$redis_port HTTP_ADDR=127.0.0.1:$(free_port) LOG_FORMAT=json LOGGING_LEVEL=warn
export MODULES='- name: text
  uid: "bench-t"
- name: media
  uid: "bench-m"
'
start=$(date +%s.%N)
"$work/bin/homeindexd" run 2>"$work/daemon.log" &
daemon=$!
pids+=("$daemon")
FILES_DIRECTORY=$INDEX_DIRECTORY MODULE_NAME=text MODULE_UID=bench-t "$work/bin/text-module" 2>"$work/text.log" &
text=$!
pids+=("$text")
FILES_DIRECTORY=$INDEX_DIRECTORY MODULE_NAME=media MODULE_UID=bench-m "$work/bin/media-module" 2>"$work/media.log" &
media=$!
pids+=("$media")

# Done when every document has passed both modules (nothing waiting anywhere).
while :; do
  kill -0 "$daemon" || { echo "homeindexd exited"; tail "$work/daemon.log"; exit 1; }
  if "$work/bin/homeindexd" status --json 2>/dev/null | python3 -c '
import json, sys
st = json.load(sys.stdin)
live = st["documents"]["live"]
busy = sum(m["waiting"] + m["queued"] + m["retrying"] + m["in_flight"] + m["merging"] + m.get("recovering", 0) for m in st["modules"])
last = st["modules"][-1]
sys.exit(0 if live >= int(sys.argv[1]) and busy == 0 and last["done"] + last["parked"] >= live and st["index"]["outbox_pending"] == 0 else 1)
' "$files" 2>/dev/null; then break; fi
  sleep 0.5
done
end=$(date +%s.%N)
cpu() { awk '{printf "%.2f", ($14 + $15) / 100}' "/proc/$1/stat"; }
d=$(cpu "$daemon") t=$(cpu "$text") m=$(cpu "$media") r=$(cpu "$redis")
python3 - "$files" "$start" "$end" "$d" "$t" "$m" "$r" <<'PY'
import sys
n, start, end = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
d, t, m, r = map(float, sys.argv[4:8])
total = d + t + m + r
print("%d files through text and media, initial sync included: %.1f s, %.0f files/s" % (n, end - start, n / (end - start)))
print("CPU s: homeindexd %.1f, text-module %.1f, media-module %.1f, redis-server %.1f; daemon's share %.0f%%" % (d, t, m, r, 100 * d / total))
PY
"$work/bin/homeindexd" status --json | python3 -c '
import json, sys
for m in json.load(sys.stdin)["modules"]:
    print("%s: %d done, %d parked" % (m["name"], m["done"], m["parked"]))'
