#!/usr/bin/env bash
# Initial and unchanged `homeindexd sync` over N small files (default 100,000 of 1-4 KiB),
# each pass beside its reference in the same run:
#   - the initial sync against the floor (scripts/syncfloor: walk, xxh64, by-id/<id>/document.json
#     with mkdir, temp file and rename, 2 goroutines, nothing else), run on the same tree before
#     the sync and again after it, the faster run counting; beside it, for information only, the
#     same floor with a syncfs of what it wrote (the sync makes its own output durable as it goes,
#     the floor leaves that to the kernel after it exits);
#   - the unchanged re-sync against a bare walk of the tree (`syncfloor -walk`: WalkDir + Lstat).
# After the initial sync it times the ceiling: the same sync built with -tags benchceiling, whose
# search-index writes do nothing (internal/outbox/ceiling_on.go), on fresh state: the most any
# work on the rest of the sync could gain if the index cost nothing (BENCH_SYNC_CEILING=0 skips it).
# Prints wall time, user CPU and peak RSS (/usr/bin/time) of each, the ratio, and whether the sync
# re-indexed what it had just indexed (the "search index disagreed" warning).
# Then it times the daemon's first sync, the one `docker compose up` starts: `homeindexd run`
# (no modules) on fresh state, until its status says the sync is over and nothing is pending and
# its log that the search index's first load has ended (BENCH_SYNC_DAEMON=0 skips it).
# With BENCH_SYNC_QUERIES=1 it then starts `homeindexd run` (with its own redis-server) and
# times 50 searches with snippets and 50 status requests over HTTP (p50 and p95), once the
# daemon's startup sync has ended, then its resident memory (VmRSS, VmHWM).
# With BENCH_SYNC_FS=ext4 (root, mkfs.ext4 and loop devices needed) the tree, and every run's
# output, live on ext4 file systems in loop images (in BENCH_SYNC_IMAGES, default /dev/shm), one
# made afresh before each run that writes: the file system's own work (directories, inodes, its
# journal) is measured, and neither the device's latency nor what earlier runs deleted (ext4
# walks recently freed inodes one by one when it allocates; on a disk reused by run after run
# that cost swings the same run by 5x). Without it, everything lives in plain directories under
# the work directory (TMPDIR), where tmpfs makes the floor's file creation nearly free.
# BENCH_SYNC_NAMES=library names the files as a library does (photos, music, documents; spaces,
# accents, '&', dashes outside ASCII) instead of d0000/f0000000.txt: work that depends on the
# bytes of a name (JSON escaping, for one) shows only there.
# With BENCH_SYNC_AB=OTHER_BINARY (absolute paths for both) it only compares: the initial sync
# of BINARY and of OTHER_BINARY alternated over BENCH_SYNC_ROUNDS rounds (default 5), with the
# floor once a round, then the medians and the median of the per-round differences (for a change
# against main: build both, BENCH_SYNC_FS=ext4 for the kernel's real work).
# Usage: scripts/bench-sync.sh [BINARY] [N] [MIN_BYTES MAX_BYTES]  (default 1024 4096)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${2:-100000}
lo=${3:-1024} hi=${4:-4096}
names=${BENCH_SYNC_NAMES:-plain}
case $names in
  plain | library) ;;
  *) echo "BENCH_SYNC_NAMES: want plain or library, not $names" >&2; exit 2 ;;
esac
work=${BENCH_SYNC_WORK:-$(mktemp -d)}
mkdir -p "$work"
fs=${BENCH_SYNC_FS:-}
images=${BENCH_SYNC_IMAGES:-/dev/shm}
case $fs in
  "") ;;
  ext4)
    if [ "$(id -u)" != 0 ] || ! command -v mkfs.ext4 >/dev/null; then
      echo "BENCH_SYNC_FS=ext4 needs root and mkfs.ext4 (e2fsprogs)" >&2; exit 2
    fi
    images=$(mktemp -d "$images/bench-sync-images.XXXXXX") ;;
  *) echo "BENCH_SYNC_FS: want ext4 or nothing, not $fs" >&2; exit 2 ;;
esac
# image DIR: the loop image of the file system mounted at DIR.
image() { echo "$images/${1##*/}.img"; }
# fresh DIR: DIR made empty; with BENCH_SYNC_FS=ext4, a new ext4 file system mounted there:
# sparse, 24 KiB and four inodes per file (a document directory, its document.json, a by-path
# link, and room), so its inode tables grow with the tree, not with the image.
fresh() {
  local dir=$1
  release "$dir"
  mkdir -p "$dir"
  [ -n "$fs" ] || return 0
  local img
  img=$(image "$dir")
  truncate -s "$((n * 24 / 1024 + 1024))M" "$img"
  # Inode tables and journal written now, not by a kernel thread during the runs.
  mkfs.ext4 -q -F -N "$((4 * n + 65536))" -E lazy_itable_init=0,lazy_journal_init=0 "$img"
  mount -o loop "$img" "$dir"
}
# release DIR: DIR and what it holds gone (with BENCH_SYNC_FS=ext4, its file system too).
release() {
  local dir=$1
  if [ -n "$fs" ] && mountpoint -q "$dir"; then
    umount "$dir"
    rm -f "$(image "$dir")"
  fi
  rm -rf "$dir"
}
# retire DIR: a run's output set aside. With BENCH_SYNC_FS=ext4 its file system goes (each run
# has its own); without, the directory is only renamed, and removed with the rest at exit: on
# ext4 without a journal (some VMs' root) every new inode steps over each inode deleted in the
# minutes before (the kernel's recently_deleted check), so deleting one run's 200k files would
# slow the next run's creates, whichever program it is (the floor, the sync, the ceiling).
retired=0
retire() {
  local dir=$1
  if [ -n "$fs" ]; then release "$dir"; return; fi
  retired=$((retired + 1))
  mv "$dir" "$work/retired.$retired"
}
daemon= redis=
cleanup() {
  [ -z "$daemon" ] || kill "$daemon" 2>/dev/null || true
  [ -z "$redis" ] || kill "$redis" 2>/dev/null || true
  wait 2>/dev/null || true
  for m in out scratch src; do release "$work/$m" || true; done
  [ -z "$fs" ] || rm -rf "$images"
  rm -rf "$work"
}
trap cleanup EXIT
# settle: with BENCH_SYNC_FS=ext4, every timed run starts from the same kernel state: dirty
# pages written, caches dropped, then the tree read once, so it is in the page cache as on
# tmpfs. Without it a first sync run right after the floor took 16-17 s, and the same sync run
# again 13-14 s (a kernel profile put the difference in page zeroing and inode slab set-up).
settle() {
  sync
  [ -n "$fs" ] || return 0
  echo 3 >/proc/sys/vm/drop_caches
  find "$files" -type f -exec cat {} + >/dev/null
}
# Without BENCH_SYNC_FS, every run's output stays (retired) until the script exits: the tree
# takes N inodes, a floor's output 2N (a directory and a file per document), a sync's 3N (and its
# by-path link). At a million files an A/B of two rounds needs 17M, more than a 256 GB root file
# system's 16.7M: the runs would fail one by one with ENOSPC and leave the disk full. Say so first.
if [ -z "$fs" ]; then
  if [ -n "${BENCH_SYNC_AB:-}" ]; then
    perFile=$((${BENCH_SYNC_ROUNDS:-5} * 8)) # per round a floor, a and b
  else
    perFile=7 # the floor twice and the sync, then the ceiling and the daemon when they run
    [ "${BENCH_SYNC_CEILING:-1}" != 1 ] || perFile=$((perFile + 3))
    [ "${BENCH_SYNC_DAEMON:-1}" != 1 ] || perFile=$((perFile + 3))
  fi
  need=$((n * (1 + perFile)))
  free=$(df --output=iavail "$work" | tail -1 | tr -d ' ')
  if [ "$free" -lt "$need" ]; then
    echo "bench-sync: these runs keep about $need inodes in $work until the end, and its file system has $free free;" \
      "use BENCH_SYNC_FS=ext4, fewer BENCH_SYNC_ROUNDS, or a work directory elsewhere (BENCH_SYNC_WORK)" >&2
    exit 2
  fi
fi
bin=${1:-}
if [ -z "$bin" ]; then
  go build -o "$work/homeindexd" ./cmd/homeindexd
  bin=$work/homeindexd
fi
go build -o "$work/syncfloor" ./scripts/syncfloor
echo "== generating $n files of $lo-$hi bytes, $names names${fs:+, on $fs}"
fresh "$work/src"
files=$work/src/files
python3 scripts/gen-sync-tree.py "$files" "$n" "$lo" "$hi" "$names"
timed() { /usr/bin/time -f "%e %U %S %M" -o "$work/time" "$@"; read -r wall user sys rss <"$work/time"; }
# devWritten DIR: MiB written so far to the loop device under DIR (BENCH_SYNC_FS=ext4 only).
devWritten() { awk '{ printf "%d", $7 / 2048 }' "/sys/block/$(basename "$(findmnt -n -o SOURCE "$1")")/stat"; }
# timedOn DIR CMD...: timed CMD, a run that writes to DIR's file system, then a syncfs of that
# file system outside the run, its time in flushed: the sync makes its output durable as it goes
# (a syncfs behind its rounds), the floor leaves that to the kernel. With BENCH_SYNC_FS=ext4,
# runIO says what the run wrote and what the syncfs still had to: the cost on a real disk.
timedOn() {
  local dir=$1 w0 w1 t0
  shift
  [ -z "$fs" ] || w0=$(devWritten "$dir")
  timed "$@" || return
  [ -z "$fs" ] || w1=$(devWritten "$dir")
  t0=$(date +%s.%N)
  sync -f "$dir"
  flushed=$(awk -v s="$t0" -v e="$(date +%s.%N)" 'BEGIN { printf "%.2f", e - s }')
  runIO=
  [ -z "$fs" ] || runIO="; wrote $((w1 - w0)) MiB during the run and $(($(devWritten "$dir") - w1)) MiB more at a syncfs after it"
}
# timeFloor: one run of the floor on fresh output after settle; its figures in wall, user, sys,
# rss, flushed and runIO.
timeFloor() {
  fresh "$work/scratch"
  settle
  timedOn "$work/scratch" "$work/syncfloor" "$files" "$work/scratch/floor" >/dev/null
  retire "$work/scratch"
}
if [ -n "${BENCH_SYNC_AB:-}" ]; then
  # A/B: the initial sync of BINARY and of BENCH_SYNC_AB, alternated over BENCH_SYNC_ROUNDS
  # rounds (default 5), each run on fresh output after settle, and the floor once a round.
  # One run against another swings by 10% on a shared VM; a change shows in its pairs.
  rounds=${BENCH_SYNC_ROUNDS:-5}
  : >"$work/ab"
  for r in $(seq "$rounds"); do
    timeFloor
    echo "floor $wall $user $rss" >>"$work/ab"
    for which in a b; do
      b=$bin
      [ "$which" = a ] || b=$BENCH_SYNC_AB
      fresh "$work/scratch"
      settle
      INDEX_DIRECTORY=$files METADATA_DIRECTORY=$work/scratch/metadata STATE_DIRECTORY=$work/scratch/state \
        LOG_FORMAT=json LOGGING_LEVEL=warn timed "$b" sync >/dev/null 2>"$work/log" || { cat "$work/log"; exit 1; }
      echo "$which $wall $user $rss" >>"$work/ab"
      printf 'round %d, %s (%s): %s s wall, %s s user, %d KB peak RSS\n' "$r" "$which" "$b" "$wall" "$user" "$rss"
      retire "$work/scratch"
    done
  done
  # Medians of each column, and b against a round by round.
  awk '{ w[$1] = w[$1] " " $2; u[$1] = u[$1] " " $3; m[$1] = m[$1] " " $4 }
    function median(list,   v, n, i, j, t) {
      n = split(list, v, " ")
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] + 0 < v[i] + 0) { t = v[i]; v[i] = v[j]; v[j] = t }
      return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
    }
    $1 == "a" { a = $2 } $1 == "b" { if ($2 < a) shorter++; pairs++; d = d " " (a - $2) }
    END {
      for (k in w) printf "%s: median %.2f s wall, %.2f s user, %d KB peak RSS\n", (k == "a" ? "a (BINARY)" : k == "b" ? "b (BENCH_SYNC_AB)" : k), median(w[k]), median(u[k]), median(m[k])
      printf "medians against the floor: a %.0f%%, b %.0f%%\n", 100 * median(w["floor"]) / median(w["a"]), 100 * median(w["floor"]) / median(w["b"])
      # Paired: the machine drifts over the rounds; a round compares a and b in one stretch.
      printf "b shorter than a in %d of %d rounds; a minus b per round: median %+.2f s\n", shorter, pairs, median(d)
    }' "$work/ab"
  exit 0
fi
go build -tags benchceiling -o "$work/homeindexd-ceiling" ./cmd/homeindexd
timeFloor
floor=$wall
durable=$(awk -v a="$wall" -v b="$flushed" 'BEGIN { printf "%.2f", a + b }')
printf 'floor (syncfloor) of %d files: %s s wall, %s s user, %s s system, %d KB peak RSS; then a syncfs of its output: %s s%s\n' "$n" "$wall" "$user" "$sys" "$rss" "$flushed" "$runIO"
fresh "$work/out"
export INDEX_DIRECTORY=$files METADATA_DIRECTORY=$work/out/metadata STATE_DIRECTORY=$work/out/state LOG_FORMAT=json LOGGING_LEVEL=info
for pass in initial unchanged; do
  settle
  if [ "$pass" = unchanged ]; then
    timed "$work/syncfloor" -walk "$files" >/dev/null
    bare=$wall
    printf 'bare walk (WalkDir + Lstat) of %d files: %s s wall, %d KB peak RSS\n' "$n" "$wall" "$rss"
  fi
  timedOn "$work/out" "$bin" sync >"$work/sync.out" 2>"$work/log" || { cat "$work/log"; exit 1; }
  printf '%s sync of %d files: %s s wall, %s s user, %s s system, %d KB peak RSS%s\n' "$pass" "$n" "$wall" "$user" "$sys" "$rss" "$runIO"
  if [ "$pass" = initial ]; then
    # The floor again, right after the sync; the faster of its two runs is the reference, so
    # neither run's place in the order (after another run's deletions, or a colder cache) helps
    # the sync.
    sync_wall=$wall
    timeFloor
    printf 'floor again, after the sync: %s s wall, %s s user, %s s system, %d KB peak RSS; then a syncfs of its output: %s s%s\n' "$wall" "$user" "$sys" "$rss" "$flushed" "$runIO"
    floor=$(awk -v a="$floor" -v b="$wall" 'BEGIN { print (b < a ? b : a) }')
    durable=$(awk -v a="$durable" -v b="$wall" -v c="$flushed" 'BEGIN { print (b + c < a ? b + c : a) }')
    awk -v f="$floor" -v s="$sync_wall" 'BEGIN { printf "  initial sync vs floor (%.2f s, the faster): %.0f%% (goal >= 50%%)\n", f, 100 * f / s }'
    awk -v f="$durable" -v s="$sync_wall" 'BEGIN { printf "  initial sync vs the floor with its output made durable (%.2f s, the faster; not the goal'"'"'s reference): %.0f%%\n", f, 100 * f / s }'
  else
    awk -v b="$bare" -v s="$wall" 'BEGIN { printf "  unchanged re-sync vs bare walk: %.2fx (goal <= 2x)\n", s / b }'
  fi
  echo "  re-index warnings: $(grep -c 'search index disagreed' "$work/log" || true)"
  [ "$pass" = initial ] && [ "${BENCH_SYNC_CEILING:-1}" = 1 ] || continue
  grep -o 'documents: [0-9]* new' "$work/sync.out" >"$work/new"
  fresh "$work/scratch"
  settle
  METADATA_DIRECTORY=$work/scratch/metadata STATE_DIRECTORY=$work/scratch/state \
    timed "$work/homeindexd-ceiling" sync >"$work/ceiling.out" 2>"$work/ceiling.log" || { cat "$work/ceiling.log"; exit 1; }
  # The ceiling must do all the rest of the sync's work: the same documents, recorded and written.
  if ! grep -qxFf "$work/new" <(grep -o 'documents: [0-9]* new' "$work/ceiling.out"); then
    echo "the ceiling's sync did not record the same documents: $(cat "$work/new")"; exit 1
  fi
  written=$(find "$work/scratch/metadata/by-id" -name document.json | wc -l)
  if [ "documents: $written new" != "$(cat "$work/new")" ]; then
    echo "the ceiling's sync wrote $written document.json files, not as many as $(cat "$work/new")"; exit 1
  fi
  printf 'ceiling (the same sync, its search-index writes left out) of %d files: %s s wall, %s s user, %d KB peak RSS, %d documents written\n' "$n" "$wall" "$user" "$rss" "$written"
  awk -v f="$floor" -v s="$wall" 'BEGIN { printf "  ceiling vs floor: %.0f%%\n", 100 * f / s }'
  retire "$work/scratch"
done
du -sh "$work/out/state" "$work/out/metadata" | sed 's/^/  on disk: /'
du -sh "$work/out/state/catalog.db" "$work/out/state/search.db" | sed 's/^/  on disk: /'
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
if [ "${BENCH_SYNC_DAEMON:-1}" = 1 ]; then
  hport=$(port)
  fresh "$work/scratch"
  settle
  start=$(date +%s.%N)
  METADATA_DIRECTORY=$work/scratch/metadata STATE_DIRECTORY=$work/scratch/state HTTP_ADDR=127.0.0.1:$hport \
    "$bin" run >"$work/first.log" 2>&1 &
  daemon=$!
  # Polled with curl and grep, four times a second: a poll costs the machine next to nothing.
  idle() {
    grep -q '"message":"search index: indexes built after the first sync"' "$work/first.log" &&
      curl -fs "http://127.0.0.1:$hport/api/status" >"$work/status" &&
      grep -q '"sync":{"running":false' "$work/status" &&
      grep -q '"index":{"outbox_pending":0,"index_pending":0}' "$work/status"
  }
  for _ in $(seq 4800); do idle && break; kill -0 "$daemon" 2>/dev/null || break; sleep 0.25; done
  idle || { echo "the daemon's first sync did not end within 20 minutes"; tail -5 "$work/first.log"; exit 1; }
  wall=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.2f", e - s }')
  cpu=$(awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' "/proc/$daemon/stat")
  kill "$daemon"; wait "$daemon" || true; daemon=
  printf "daemon's first sync of %d files (homeindexd run, no modules): searchable after %s s wall, %s s CPU\n" "$n" "$wall" "$cpu"
  awk -v f="$floor" -v s="$wall" 'BEGIN { printf "  daemon'"'"'s first sync vs floor: %.0f%%\n", 100 * f / s }'
  retire "$work/scratch"
fi
[ "${BENCH_SYNC_QUERIES:-}" = 1 ] || exit 0

echo "== search and status over HTTP, homeindexd run over the synced tree"
rport=$(port) hport=$(port)
redis-server --bind 127.0.0.1 --port "$rport" --save '' --appendonly no >"$work/redis.log" 2>&1 &
redis=$!
REDIS_HOST=127.0.0.1:$rport HTTP_ADDR=127.0.0.1:$hport LOGGING_LEVEL=warn "$bin" run >"$work/run.log" 2>&1 &
daemon=$!
for _ in $(seq 600); do curl -fs "http://127.0.0.1:$hport/readyz" >/dev/null && break; sleep 0.5; done
# Measure the settled daemon: its startup sync over the whole tree has ended.
settled() { curl -fs "http://127.0.0.1:$hport/api/status" | python3 -c 'import json, sys; s = json.load(sys.stdin)["sync"]; sys.exit(0 if s["count"] >= 1 and not s["running"] else 1)'; }
for _ in $(seq 1200); do settled && break; sleep 0.5; done
settled || { echo "the daemon's startup sync did not end within 10 minutes"; exit 1; }
p95() { sort -n | awk '{ v[NR] = $1 } END { printf "p50 %.1f ms, p95 %.1f ms (%d requests)\n", 1000 * v[int(NR * 0.5 + 0.5)], 1000 * v[int(NR * 0.95 + 0.5)], NR }'; }
words=(file abc xyz qrs lmn hij def tuv opq ghi)
for i in $(seq 50); do
  curl -fso /dev/null -w '%{time_total}\n' "http://127.0.0.1:$hport/api/search?q=${words[i % 10]}&snippets=3&facets=kind,extension,year"
done | p95 | sed 's/^/  search with snippets: /'
for i in $(seq 50); do
  curl -fso /dev/null -w '%{time_total}\n' "http://127.0.0.1:$hport/api/status"
done | p95 | sed 's/^/  status: /'
# The daemon's memory once settled and searched (its in-memory file table holds every file).
# RssAnon is the process's own; RssFile and RssShmem are index pages the search readers' memory
# map touched (RssShmem on tmpfs), which the kernel can drop and which vary with the queries.
awk '/^VmRSS|^VmHWM|^RssAnon|^RssFile|^RssShmem/ { printf "  daemon %s %d MB\n", $1, $2 / 1024 }' "/proc/$daemon/status"
