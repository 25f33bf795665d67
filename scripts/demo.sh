#!/usr/bin/env bash
# The demo: set up, build, start the real local stack with the traffic simulator,
# write a config with every system, open the console on it; stop everything on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=/usr/bin/python3

bash scripts/setup.sh

DEMO=${REDRIVE_DEMO_DIR:-/tmp/redrive-demo}
mkdir -p "$DEMO"; chmod 755 "$DEMO"
export RD_PORT_BASE=${RD_PORT_BASE:-24400}
SIM_PID=
# Runs once, whatever ends the demo: quitting the console, ^C, or the terminal going away
# (an SSH session closed: SIGHUP, and every write to the terminal fails from then on, so
# nothing here may stop at a failed echo). The stack stop takes its RabbitMQ, epmd included.
CLEANED=0
cleanup() {
  [ "$CLEANED" = 1 ] && return 0
  CLEANED=1
  trap '' HUP INT TERM PIPE
  set +e
  [ -n "$SIM_PID" ] && kill "$SIM_PID" 2>/dev/null
  echo "demo: stopping the local stack" 2>/dev/null
  bash tests/stack/stack.sh stop "$DEMO" </dev/null >/dev/null 2>&1
  return 0
}
trap cleanup EXIT
trap 'cleanup; exit 129' HUP
trap 'cleanup; exit 130' INT
trap 'cleanup; exit 143' TERM

echo "demo: starting PostgreSQL, Redis, RabbitMQ, the SQS emulator and the core servers in $DEMO"
bash tests/stack/stack.sh start "$DEMO"
# shellcheck disable=SC1091
. "$DEMO/env"

"$PY" tools/sim/sim.py --env-file "$DEMO/env" --rate "${SIM_RATE:-5}" --seed "${SIM_SEED:-7}" \
  >"$DEMO/sim.log" 2>&1 &
SIM_PID=$!

mkdir -p "$DEMO/home/.config/redrive" "$DEMO/home/.local/state"
CONFIG="$DEMO/home/.config/redrive/config"
bash scripts/demo-config.sh "$DEMO/env" >"$CONFIG"
chmod 600 "$CONFIG"

export XDG_CONFIG_HOME="$DEMO/home/.config" XDG_STATE_HOME="$DEMO/home/.local/state"
echo "demo: config at $CONFIG; journal under $XDG_STATE_HOME/redrive"
if [ -t 0 ] && [ -t 1 ]; then
  "$ROOT/build/src/cli/redrive" --config "$CONFIG" "$@" || true
else
  echo "demo: not a terminal; printing a snapshot of every system instead"
  for s in attune attune-era1 tasker alakai openagents; do
    "$ROOT/build/src/cli/redrive" --config "$CONFIG" --system "$s" snapshot || true
  done
fi
