#!/usr/bin/env bash
# Install what redrive needs on Debian 12 (as root) and build it into ./build.
set -euo pipefail
cd "$(dirname "$0")/.."

PKGS=(build-essential clang meson ninja-build pkg-config
      libncurses-dev libpq-dev libhiredis-dev libcurl4-openssl-dev libcjson-dev libevent-dev
      libssl-dev
      postgresql-15 redis-server rabbitmq-server curl tmux openssl time zsh fish
      dpkg-dev lintian man-db
      python3 python3-psycopg2 python3-redis python3-pytest python3-pyte python3-pexpect)

missing=()
# Node and npm for the SQS emulator: Debian's, unless a node with npm is already there.
command -v npm >/dev/null 2>&1 && command -v node >/dev/null 2>&1 || PKGS+=(nodejs npm)
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: missing packages: ${missing[*]} (run as root to install them)" >&2
    exit 1
  fi
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # The packaged services must not start system-wide: our scripts run private instances.
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d; chmod +x /usr/sbin/policy-rc.d
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The test stack's SQS emulator (local-aws-sqs, pinned by package-lock.json): installed
# here, never at test time.
if [ ! -f tools/sqs-emulator/node_modules/local-aws-sqs/package.json ]; then
  echo "setup: installing the SQS emulator (tools/sqs-emulator)"
  npm ci --prefix tools/sqs-emulator --no-audit --no-fund >/dev/null
fi

BUILD=${BUILD_DIR:-build}
# The tests drive the console through the REDRIVE_* test hooks (src/core/testhook.h): this
# build has them; the package (scripts/package.sh) never does.
if [ ! -f "$BUILD/build.ninja" ]; then
  meson setup "$BUILD" -Dtest_hooks=true >/dev/null
else
  meson configure "$BUILD" -Dtest_hooks=true >/dev/null
fi
ninja -C "$BUILD" >/dev/null
echo "setup: built $BUILD/src/cli/redrive"
