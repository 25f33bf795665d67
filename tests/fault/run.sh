#!/usr/bin/env bash
# The long fault run: bash tests/fault/run.sh [CYCLES [SERVICES]]   (CYCLES per service, default 100)
# SERVICES: comma-separated subset of postgresql,redis,rabbitmq,sqs,core-attune1,...; with
# "extras" among them the in-flight actions, the storm and the signals run as in a full run
# Uses the stack of RD_STACK_DIR when set; otherwise starts a private one on RD_PORT_BASE
# (stopped at the end). Prints a table of figures; exit 1 on any failure.
set -uo pipefail
cd "$(dirname "$0")/../.."
export TZ=UTC LANG=C.UTF-8 LC_ALL=C.UTF-8
OWN=""
if [ -z "${RD_STACK_DIR:-}" ] || [ ! -f "$RD_STACK_DIR/env" ]; then
    [ -n "${RD_PORT_BASE:-}" ] || { echo "run.sh: set RD_STACK_DIR or RD_PORT_BASE" >&2; exit 2; }
    OWN=$(mktemp -d /tmp/rdfault-stack.XXXXXX); chmod 755 "$OWN"
    # a failed run keeps the stack's files (the services' logs) and says where
    trap 'st=$?; bash tests/stack/stack.sh stop "$OWN" >/dev/null 2>&1
          if [ $st = 0 ]; then rm -rf "$OWN"; else echo "run.sh: the stack files are kept in $OWN" >&2; fi' EXIT INT TERM
    bash tests/stack/stack.sh start "$OWN" || exit 1
    export RD_STACK_DIR=$OWN
fi
# shellcheck disable=SC1091
. "$RD_STACK_DIR/env"
/usr/bin/python3 tests/fault/run.py "${1:-100}" "${2:-}"
