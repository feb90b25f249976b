#!/usr/bin/env bash
# Installs setpriv (util-linux) when it is missing: the e2e test of an unreadable directory runs
# the daemon as an unprivileged user with it, since root reads any directory.
set -euo pipefail
if command -v setpriv >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq util-linux >/dev/null
command -v setpriv
