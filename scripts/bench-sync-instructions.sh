#!/usr/bin/env bash
# User-space instructions of a first `homeindexd sync` over N small files (default 10,000 of
# 1-4 KiB, plain names, on tmpfs), counted by valgrind's callgrind, for each BINARY given (main
# and a change, say), ROUNDS times each (default 2), alternated.
#
# Why: the wall time of bench-sync.sh moves by 10% from run to run on a shared 2-core VM, so a
# change worth 1-3% of the sync cannot be told from noise there. An instruction count can: with
# one P (GOMAXPROCS=1), no garbage collector (GOGC=off) and no asynchronous preemption (which
# callgrind cannot follow), the same binary counts the same within 0.3% from run to run.
# GODEBUG=cpu.rdtscp=off makes the runtime read the clock with RDTSC: valgrind 3.19 cannot
# decode RDTSCP, which Go uses on CPUs that have it, and the binary died of SIGILL at once. It
# counts user space only: system calls, the kernel's file system work and the collector are
# not in it, so a change there is measured with bench-sync.sh (bytes written, system CPU).
# The run takes about 45 s per binary at 10k files.
#
# Usage: scripts/bench-sync-instructions.sh BINARY [BINARY...]   (absolute or relative paths)
#   BENCH_INSTR_N (10000), BENCH_INSTR_ROUNDS (2), BENCH_INSTR_KEEP=DIR keeps the callgrind
#   profiles there (callgrind_annotate --auto=no FILE shows where the instructions go).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: $0 BINARY [BINARY...]" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "valgrind is needed (apt-get install valgrind)" >&2; exit 2; }
n=${BENCH_INSTR_N:-10000}
rounds=${BENCH_INSTR_ROUNDS:-2}
bins=()
for b in "$@"; do bins+=("$(realpath "$b")"); done
work=$(mktemp -d "${TMPDIR:-/dev/shm}/bench-instr.XXXXXX")
trap 'rm -rf "$work"' EXIT
keep=${BENCH_INSTR_KEEP:-$work}
mkdir -p "$keep"
echo "== generating $n files of 1024-4096 bytes in $work"
python3 scripts/gen-sync-tree.py "$work/files" "$n" 1024 4096 plain
for r in $(seq "$rounds"); do
  for i in "${!bins[@]}"; do
    b=${bins[$i]}
    out=$work/run
    rm -rf "$out"
    mkdir -p "$out"
    prof=$keep/callgrind.$i.$r.out
    GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off GOMAXPROCS=1 GOGC=off \
      INDEX_DIRECTORY=$work/files METADATA_DIRECTORY=$out/metadata STATE_DIRECTORY=$out/state \
      LOG_FORMAT=json LOGGING_LEVEL=warn \
      valgrind --tool=callgrind --callgrind-out-file="$prof" "$b" sync >/dev/null 2>"$prof.log" ||
      { cat "$prof.log" >&2; exit 1; }
    ir=$(sed -n 's/.*refs: *\([0-9,]*\).*/\1/p' "$prof.log" | tr -d ,)
    docs=$(find "$out/metadata/by-id" -name document.json | wc -l)
    [ "$docs" = "$n" ] || { echo "$b wrote $docs documents, want $n" >&2; exit 1; }
    printf 'round %d, %s: %d M instructions (%d per file)\n' "$r" "$b" "$((ir / 1000000))" "$((ir / n))"
  done
done
