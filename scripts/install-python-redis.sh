#!/usr/bin/env bash
# Installs Debian's python3-redis when /usr/bin/python3 cannot import redis: the end-to-end
# suite runs a module written for the upstream Python runtime (test/e2e/testdata) with it.
set -euo pipefail
if [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import redis' 2>/dev/null; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq python3 python3-redis >/dev/null
/usr/bin/python3 -c 'import redis; print("python3-redis", redis.__version__)'
