#!/usr/bin/env bash
# Run every redrive benchmark and print one figures table.
#   . DIR/env (the local stack; e.g. RD_PORT_BASE=31400 bash tests/stack/stack.sh start /tmp/rd-bench)
#   SCALE=1 bash tests/bench/run.sh            # SCALE: fraction of the SPEC §9 sizes (default 1)
#   BENCHES="pg redis" bash tests/bench/run.sh # a subset
# Benchmarks print figures; they never assert timings. Output of each bench: $OUT/<bench>.out
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PY=/usr/bin/python3
export SCALE=${SCALE:-1}
if [ -z "${RD_BIN:-}" ]; then
  if [ -x "$ROOT/build-bench/src/cli/redrive" ]; then RD_BIN=$ROOT/build-bench/src/cli/redrive
  else RD_BIN=$ROOT/build/src/cli/redrive; fi
fi
export RD_BIN
# The benches read the console's traces (REDRIVE_LOOP_TRACE, ...): test hooks a package
# never has. build-bench gets them here; any other binary must have them already.
case $RD_BIN in
"$ROOT/build-bench/"*)
  meson configure "$ROOT/build-bench" -Dtest_hooks=true >/dev/null &&
    ninja -C "$ROOT/build-bench" src/cli/redrive >/dev/null || exit 2 ;;
esac
"$RD_BIN" --version | grep -qx 'test hooks: on' || {
  echo "bench: $RD_BIN has no test hooks (meson configure DIR -Dtest_hooks=true)" >&2; exit 2; }
[ -n "${RD_PG_HOST:-}" ] || { echo "bench: source the stack env first (. DIR/env)" >&2; exit 2; }
OUT=${BENCH_OUT:-$(mktemp -d /tmp/rd-bench-out.XXXXXX)}
mkdir -p "$OUT"
BENCHES=${BENCHES:-"pg redis latency idle start pg_many fleet sqs batch select standout"}
echo "# redrive benchmarks $(date -u +%FT%TZ), SCALE=$SCALE, $(nproc) cores, binary $RD_BIN"
rc=0
for b in $BENCHES; do
  echo "## bench_$b"
  t0=$(date +%s.%N)
  if ! "$PY" "$HERE/bench_$b.py" >"$OUT/$b.out" 2>&1; then
    echo "bench_$b FAILED (see $OUT/$b.out)"; tail -n 5 "$OUT/$b.out"; rc=1
  fi
  grep '^# ' "$OUT/$b.out"
  echo "## bench_$b took $(echo "$(date +%s.%N) - $t0" | bc) s"
done
echo
echo "## figures (SCALE=$SCALE)"
cat "$OUT"/*.out | grep $'^FIG\t' | "$PY" -c '
import sys
rows = [l.rstrip("\n").split("\t")[1:] for l in sys.stdin]
hdr = ["bench", "metric", "value", "unit", "SPEC target"]
w = [max(len(r[i]) for r in rows + [hdr]) for i in range(5)]
fmt = lambda r: " | ".join(c.rjust(w[i]) if i == 2 else c.ljust(w[i]) for i, c in enumerate(r))
print(fmt(hdr)); print("-+-".join("-" * x for x in w))
for r in rows: print(fmt(r))
'
exit $rc
