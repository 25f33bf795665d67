#!/usr/bin/env bash
# The soak (not in CI): bash tests/fault/soak.sh [MINUTES]   (default 10)
# The simulator (tools/sim) writes to every store while the console (ASan+UBSan, LeakSanitizer)
# switches views and systems; prints RSS over time and the leaks found at quit.
# Uses the stack of RD_STACK_DIR when set; otherwise starts a private one on RD_PORT_BASE.
set -uo pipefail
cd "$(dirname "$0")/../.."
export TZ=UTC LANG=C.UTF-8 LC_ALL=C.UTF-8
if [ -z "${RD_STACK_DIR:-}" ] || [ ! -f "$RD_STACK_DIR/env" ]; then
    [ -n "${RD_PORT_BASE:-}" ] || { echo "soak.sh: set RD_STACK_DIR or RD_PORT_BASE" >&2; exit 2; }
    OWN=$(mktemp -d /tmp/rdsoak-stack.XXXXXX); chmod 755 "$OWN"
    trap 'bash tests/stack/stack.sh stop "$OWN" >/dev/null 2>&1; rm -rf "$OWN"' EXIT INT TERM
    bash tests/stack/stack.sh start "$OWN" || exit 1
    export RD_STACK_DIR=$OWN
fi
# shellcheck disable=SC1091
. "$RD_STACK_DIR/env"
/usr/bin/python3 tests/fault/soak.py "${1:-10}"
status=$?
# the simulator's rows stay in the stores: put the known dataset back
/usr/bin/python3 tests/stack/fixtures.py --env-file "$RD_STACK_DIR/env" reload all >/dev/null || status=1
exit $status
