#!/usr/bin/env bash
# Set up, build, start the real local stack, run every test suite, stop the stack.
# Last line: "N passed, N failed". Exit status non-zero on any failure.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=/usr/bin/python3     # Debian's interpreter: the python3-* packages live there

bash scripts/setup.sh || { echo "0 passed, 1 failed"; exit 1; }

export TZ=UTC LANG=C.UTF-8 LC_ALL=C.UTF-8
STACK=$(mktemp -d /tmp/redrive-stack.XXXXXX)
chmod 755 "$STACK"
export RD_STACK_DIR=$STACK
cleanup() { bash tests/stack/stack.sh stop "$STACK" >/dev/null 2>&1; rm -rf "$STACK"; }
trap cleanup EXIT INT TERM

passed=0; failed=0
if ! bash tests/stack/stack.sh start "$STACK"; then
  echo "test: the local stack did not start" >&2
  failed=$((failed + 1))
else
  # shellcheck disable=SC1091
  . "$STACK/env"
fi

# C suites (unit, fuzz replay, integration registered with meson)
meson test -C build --print-errorlogs --num-processes 2 >"$STACK/meson-test.out" 2>&1
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

# Python suites (stack, core server, simulator, integration, terminal tests)
"$PY" -m pytest -q -p no:cacheprovider --junitxml="$STACK/pytest.xml" tests 2>&1 | tail -n 40
read -r pp pf < <("$PY" - "$STACK/pytest.xml" <<'PYEOF'
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
)
passed=$((passed + pp)); failed=$((failed + pf))

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
