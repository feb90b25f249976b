#!/usr/bin/env bash
# Installs Debian's chromium when /usr/bin/chromium is missing: test/e2e/page_*_test.go opens the
# status page in it headless (driven over --remote-debugging-pipe, no driver needed).
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq chromium >/dev/null
/usr/bin/chromium --version
