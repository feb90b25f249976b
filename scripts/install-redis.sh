#!/usr/bin/env bash
# Installs redis-server from Debian's packages when it is missing (tests start their own
# servers on free loopback ports; they never use a shared one).
set -euo pipefail
if command -v redis-server >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq redis-server >/dev/null
command -v redis-server
