#!/usr/bin/env bash
# Set up, build, start the real local stack, run the test suites, stop the stack.
#   bash scripts/test.sh           everything (CI): every meson suite, every pytest test, in
#                                  two lanes on two stacks (the side lane: the tests with
#                                  their own stacks and builds, beside the main lane)
#   bash scripts/test.sh --quick   the edit-test loop: the C unit tests, the headless screen
#                                  tests and one stack smoke test (pytest -m "headless or smoke")
# Each part's time is printed, and pytest's 25 slowest tests. Last line: "N passed, N failed"
# (a skipped test counts as failed: nothing may be skipped). Exit status non-zero on any failure.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=/usr/bin/python3     # Debian's interpreter: the python3-* packages live there

QUICK=0
case "${1:-}" in
  --quick) QUICK=1 ;;
  "") ;;
  *) echo "usage: scripts/test.sh [--quick]" >&2; echo "0 passed, 1 failed"; exit 2 ;;
esac

T0=$SECONDS
TIMES=()
lap() { TIMES+=("$1 $(( SECONDS - LAP )) s"); echo "test: $1 took $(( SECONDS - LAP )) s" >&2; LAP=$SECONDS; }
LAP=$SECONDS

bash scripts/setup.sh || { echo "0 passed, 1 failed"; exit 1; }
lap setup

export TZ=UTC LANG=C.UTF-8 LC_ALL=C.UTF-8
# Two stacks for the whole run: the main lane's and the side lane's (the tests that start
# their own stacks, build their own trees or kill services: package, fault, the stack's
# lifecycle, the demo's exit), so the two lanes run at once without sharing a service.
# The quick lane has one.
BASE=${RD_PORT_BASE:-25400}
STACK=$(mktemp -d /tmp/redrive-stack.XXXXXX)
STACK2=
[ "$QUICK" -eq 0 ] && STACK2=$(mktemp -d /tmp/redrive-stack2.XXXXXX)
chmod 755 "$STACK" ${STACK2:+"$STACK2"}
export RD_STACK_DIR=$STACK
STOPPED=0
SIDE_PID=
cleanup() {
  [ -n "$SIDE_PID" ] && kill "$SIDE_PID" 2>/dev/null
  if [ "$STOPPED" -eq 0 ]; then
    bash tests/stack/stack.sh stop "$STACK" >/dev/null 2>&1
    [ -n "$STACK2" ] && bash tests/stack/stack.sh stop "$STACK2" >/dev/null 2>&1
  fi
  rm -rf "$STACK" ${STACK2:+"$STACK2"}
}
trap cleanup EXIT INT TERM

passed=0; failed=0
if [ -n "$STACK2" ]; then
  RD_PORT_BASE=$((BASE + 100)) bash tests/stack/stack.sh start "$STACK2" >"$STACK/stack2.log" 2>&1 &
  S2=$!
fi
if ! RD_PORT_BASE=$BASE bash tests/stack/stack.sh start "$STACK"; then
  echo "test: the local stack did not start" >&2
  failed=$((failed + 1))
else
  # shellcheck disable=SC1091
  . "$STACK/env"
fi
SIDE=(tests/package tests/fault tests/stack/test_stack.py tests/stack/test_demo_exit.py)
if [ -n "$STACK2" ]; then
  if ! wait "$S2"; then
    cat "$STACK/stack2.log" >&2
    echo "test: the side lane's stack did not start" >&2
    failed=$((failed + 1))
  fi
  # the side lane starts now and runs beside the C suites and the main lane
  (
    # shellcheck disable=SC1091
    . "$STACK2/env"
    export RD_STACK_DIR=$STACK2
    t=$SECONDS
    "$PY" -m pytest -q -p no:cacheprovider --durations=10 --junitxml="$STACK/pytest-side.xml" \
      "${SIDE[@]}" >"$STACK/pytest-side.out" 2>&1
    echo "test: pytest side lane took $(( SECONDS - t )) s" >>"$STACK/pytest-side.out"
  ) &
  SIDE_PID=$!
fi
lap "stack start"

# C suites (unit, fuzz replay, io, integration registered with meson); --quick: unit only
SUITE=()
[ "$QUICK" -eq 1 ] && SUITE=(--suite unit)
meson test -C build --print-errorlogs --num-processes 2 "${SUITE[@]}" >"$STACK/meson-test.out" 2>&1
tail -n 25 "$STACK/meson-test.out"
read -r mp mf < <("$PY" - build/meson-logs/testlog.json <<'PYEOF'
import json, sys
p = f = 0
try:
    for line in open(sys.argv[1]):
        r = json.loads(line)
        if r.get("result") in ("OK", "EXPECTEDFAIL"): p += 1
        elif r.get("result") == "SKIP": f += 1   # a skipped test is not a pass
        else: f += 1
except FileNotFoundError:
    f = 1
print(p, f)
PYEOF
)
passed=$((passed + mp)); failed=$((failed + mf))
lap "meson test"

# Python suites (stack, core server, simulator, integration, terminal tests); the markers
# (pytest.ini, set from each file by conftest.py) pick the quick lane.
MARK=()
[ "$QUICK" -eq 1 ] && MARK=(-m "headless or smoke")
IGNORE=()
[ -n "$STACK2" ] && for f in "${SIDE[@]}"; do IGNORE+=(--ignore="$f"); done
"$PY" -m pytest -q -p no:cacheprovider --durations=25 --junitxml="$STACK/pytest.xml" "${MARK[@]}" \
  "${IGNORE[@]}" tests 2>&1 | tail -n 70
count_xml() {
  "$PY" - "$1" <<'PYEOF'
import sys, xml.etree.ElementTree as ET
try:
    root = ET.parse(sys.argv[1]).getroot()
except Exception:
    print(0, 1); sys.exit()
suites = [root] if root.tag == "testsuite" else list(root)
t = sum(int(s.get("tests", 0)) for s in suites)
bad = sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) + int(s.get("skipped", 0)) for s in suites)
print(t - bad, bad)
PYEOF
}
read -r pp pf < <(count_xml "$STACK/pytest.xml")
passed=$((passed + pp)); failed=$((failed + pf))
lap "pytest main lane"
if [ -n "$SIDE_PID" ]; then
  wait "$SIDE_PID"
  SIDE_PID=
  echo "== the side lane (${SIDE[*]}) =="
  tail -n 30 "$STACK/pytest-side.out"
  read -r pp pf < <(count_xml "$STACK/pytest-side.xml")
  passed=$((passed + pp)); failed=$((failed + pf))
  lap "pytest side lane (after the main lane)"
fi

bash tests/stack/stack.sh stop "$STACK" >/dev/null 2>&1 &&   # here, to be timed
  { [ -z "$STACK2" ] || bash tests/stack/stack.sh stop "$STACK2" >/dev/null 2>&1; } && STOPPED=1
lap "stack stop"

load=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)
echo "times: $(IFS=,; echo "${TIMES[*]}" | sed 's/,/, /g'); total $(( SECONDS - T0 )) s (load ${load:-?})"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
