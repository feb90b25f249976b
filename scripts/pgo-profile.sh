#!/usr/bin/env bash
# Writes cmd/homeindexd/default.pgo, the CPU profile that `go build` uses to optimize homeindexd
# (profile-guided optimization: it inlines the calls this profile finds hot and devirtualizes
# the interface calls it sees go to one type). `go build ./cmd/homeindexd` picks the file up by
# itself (-pgo=auto), in `make build`, the Dockerfile and the end-to-end tests alike.
#
# The profile is the daemon's two heavy workloads, each run by homeindexd built without a
# profile (-pgo=off), so the new profile does not describe code the old one already reshaped:
#   - a first `homeindexd sync` over PGO_FILES files (default 100,000 of 1-4 KiB; PGO_NAMES
#     plain or library, as in bench-sync.sh), which writes the catalog, the metadata directory
#     and the index;
#   - 10k files through the module pipeline with 4 Go SDK no-op workers (the daemon's part of a
#     module hop: dispatch, merge, document writes, index upserts).
# The two are merged as they are (pprof sums samples), so each weighs what its CPU weighs.
# Refresh it after a change that moves the hot paths; a stale profile costs only some of the
# gain (the compiler ignores what no longer matches). docs/decisions.md has the figures.
#
# Usage: scripts/pgo-profile.sh   (about 3 minutes on the project's 2-core VM)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${PGO_FILES:-100000}
names=${PGO_NAMES:-plain}
work=$(mktemp -d "${TMPDIR:-/tmp}/pgo-profile.XXXXXX")
trap 'rm -rf "$work"' EXIT
go build -pgo=off -o "$work/homeindexd" ./cmd/homeindexd
echo "== first sync of $n files"
python3 scripts/gen-sync-tree.py "$work/files" "$n" 1024 4096 "$names"
INDEX_DIRECTORY=$work/files METADATA_DIRECTORY=$work/out/metadata STATE_DIRECTORY=$work/out/state \
  LOG_FORMAT=json LOGGING_LEVEL=warn HOMEINDEXD_CPUPROFILE=$work/sync.pprof "$work/homeindexd" sync >/dev/null
echo "== 10k files through 4 SDK workers"
PIPELINE_CPUPROFILE=$work/pipeline.pprof go test -pgo=off -run '^$' -bench 'PipelineEndToEndSDK10k/workers=4' \
  -benchtime 1x -count 1 ./internal/app >/dev/null
[ -z "${PGO_KEEP:-}" ] || cp "$work/sync.pprof" "$work/pipeline.pprof" "$PGO_KEEP"
go tool pprof -proto "$work/sync.pprof" "$work/pipeline.pprof" >"$work/merged.pprof"
mv "$work/merged.pprof" cmd/homeindexd/default.pgo
ls -l cmd/homeindexd/default.pgo
