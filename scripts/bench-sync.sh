#!/usr/bin/env bash
# Initial and unchanged `homeindexd sync` over N small files (default 100,000 of 1-4 KiB),
# each pass beside its reference in the same run:
#   - the initial sync against the floor (scripts/syncfloor: walk, xxh64, by-id/<id>/document.json
#     with mkdir, temp file and rename, 2 goroutines, nothing else), run first on the same tree;
#   - the unchanged re-sync against a bare walk of the tree (`syncfloor -walk`: WalkDir + Lstat).
# Prints wall time, user CPU and peak RSS (/usr/bin/time) of each, the ratio, and whether the sync
# re-indexed what it had just indexed (the "search index disagreed" warning).
# Usage: scripts/bench-sync.sh [BINARY] [N] [MIN_KIB MAX_KIB]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${2:-100000}
lo=${3:-1} hi=${4:-4}
work=${BENCH_SYNC_WORK:-$(mktemp -d)}
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
bin=${1:-}
if [ -z "$bin" ]; then
  go build -o "$work/homeindexd" ./cmd/homeindexd
  bin=$work/homeindexd
fi
go build -o "$work/syncfloor" ./scripts/syncfloor
echo "== generating $n files of $lo-$hi KiB"
python3 - "$work/files" "$n" "$lo" "$hi" <<'PY'
import os, random, sys
root, n, lo, hi = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rnd = random.Random(1)
letters = bytes(97 + i % 26 for i in range(256))
for i in range(n):
    d = os.path.join(root, "d%04d" % (i // 1000))
    if i % 1000 == 0:
        os.makedirs(d, exist_ok=True)
    size = rnd.randint(lo * 1024, hi * 1024)
    head = ("file %d " % i).encode()
    with open(os.path.join(d, "f%07d.txt" % i), "wb") as f:
        f.write(head + rnd.randbytes(size - len(head)).translate(letters))
PY
sync
timed() { /usr/bin/time -f "%e %U %M" -o "$work/time" "$@"; read -r wall user rss <"$work/time"; }
timed "$work/syncfloor" "$work/files" "$work/floor" >/dev/null
floor=$wall
printf 'floor (syncfloor) of %d files: %s s wall, %s s user, %d KB peak RSS\n' "$n" "$wall" "$user" "$rss"
rm -rf "$work/floor"
sync
export INDEX_DIRECTORY=$work/files METADATA_DIRECTORY=$work/metadata STATE_DIRECTORY=$work/state LOG_FORMAT=json LOGGING_LEVEL=info
for pass in initial unchanged; do
  if [ "$pass" = unchanged ]; then
    timed "$work/syncfloor" -walk "$work/files" >/dev/null
    bare=$wall
    printf 'bare walk (WalkDir + Lstat) of %d files: %s s wall, %d KB peak RSS\n' "$n" "$wall" "$rss"
  fi
  timed "$bin" sync >/dev/null 2>"$work/log" || { cat "$work/log"; exit 1; }
  printf '%s sync of %d files: %s s wall, %s s user, %d KB peak RSS\n' "$pass" "$n" "$wall" "$user" "$rss"
  if [ "$pass" = initial ]; then
    awk -v f="$floor" -v s="$wall" 'BEGIN { printf "  initial sync vs floor: %.0f%% (goal >= 50%%)\n", 100 * f / s }'
  else
    awk -v b="$bare" -v s="$wall" 'BEGIN { printf "  unchanged re-sync vs bare walk: %.2fx (goal <= 2x)\n", s / b }'
  fi
  echo "  re-index warnings: $(grep -c 'search index disagreed' "$work/log" || true)"
done
du -sh "$work/state" "$work/metadata" | sed 's/^/  on disk: /'
