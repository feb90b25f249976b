#!/usr/bin/env bash
# Initial and unchanged `homeindexd sync` over N small files (1-4 KiB, default 100,000): wall
# time, user CPU and peak RSS (/usr/bin/time), and whether the sync re-indexed what it had just
# indexed (the "search index disagreed" warning). Usage: scripts/bench-sync.sh [BINARY] [N]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${2:-100000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bin=${1:-}
if [ -z "$bin" ]; then
  go build -o "$work/homeindexd" ./cmd/homeindexd
  bin=$work/homeindexd
fi
python3 - "$work/files" "$n" <<'PY'
import os, random, sys
root, n = sys.argv[1], int(sys.argv[2])
rnd = random.Random(1)
for i in range(n):
    d = os.path.join(root, "d%03d" % (i // 1000))
    if i % 1000 == 0:
        os.makedirs(d, exist_ok=True)
    size = rnd.randint(1024, 4096)
    head = ("file %d " % i).encode()
    with open(os.path.join(d, "f%06d.txt" % i), "wb") as f:
        f.write(head + bytes(rnd.getrandbits(8) % 26 + 97 for _ in range(size - len(head))))
PY
export INDEX_DIRECTORY=$work/files METADATA_DIRECTORY=$work/metadata STATE_DIRECTORY=$work/state LOG_FORMAT=json LOGGING_LEVEL=info
for pass in initial unchanged; do
  /usr/bin/time -f "$pass sync of $n files: %e s wall, %U s user, %M KB peak RSS" "$bin" sync >/dev/null 2>"$work/log" || { cat "$work/log"; exit 1; }
  tail -n1 "$work/log"
  echo "  re-index warnings: $(grep -c 'search index disagreed' "$work/log" || true)"
done
