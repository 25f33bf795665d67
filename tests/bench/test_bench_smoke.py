"""Smoke run of the benchmarks at SCALE=0.001 (1,000 executions, 100 Alakai tasks, short
windows): each bench runs end to end and prints its figures. Asserts on the output shape
and that the figures are real measurements (finite, positive numbers), never on timings.
Needs the stack env (scripts/test.sh sources it); without it the tests fail."""
import math
import os
import re
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))



@pytest.fixture(autouse=True)
def stack_env():
    if not os.environ.get("RD_PG_HOST"):
        pytest.fail("needs the local stack env (tests/stack/stack.sh start DIR; . DIR/env)")


SMOKE_ENV = {"SCALE": "0.001", "BENCH_RUNS": "3", "BENCH_KEYS": "40", "BENCH_PACE": "0.02",
             "BENCH_IDLE_S": "2", "BENCH_STARTS": "2", "BENCH_MANY_S": "3", "BENCH_CONSOLES": "5",
             "BENCH_STEADY_S": "2", "BENCH_FLEET_S": "2", "BENCH_SQS_S": "3", "BENCH_SQS_STALL_S": "3",
             "BENCH_PUSH_N": "3", "BENCH_PUSH_S": "2", "BENCH_INCIDENT": "300"}

EXPECT = {
    "pg": ["refresh: server time, all queries", "naive dashboard: server time", "snapshot --json max RSS"]
    + ["groups (%s), last hour with a 20000-failure incident, bound %d (server)" % (s, b)
       for s in ("bench schema", "Attune's own indexes") for b in (200000, 10000)]
    + ["groups (%s), bound %d: rows examined by the execution scans" % (s, b)
       for s in ("bench schema", "Attune's own indexes") for b in (200000, 10000)]
    + ["refresh query counts, exact live counts (%s), %s (server)" % (s, p)
       for s in ("bench schema", "Attune's own indexes") for p in ("planned each time", "plan kept")],
    "redis": ["snapshot wall, N tasks (full sweep)", "max RSS at N", "steady refresh / sweep (commands)",
              "sweep wall / Redis CPU, unbudgeted (N)", "budgeted sweep: measured share of one Redis core",
              "snapshot process CPU / Redis CPU (N)"],
    "latency": ["normal: key-to-paint p99", "stalled: key-to-paint p99",
                "normal: in-console trace p99", "stalled: in-console trace p99"],
    "idle": ["CPU of one core, idle at poll 2s", "CPU of one core, idle at poll 2s (schedstat)",
             "wake-ups per second", "bytes written to the terminal", "console RSS after idle"],
    "start": ["exec -> first paint (median of 2)", "CPU from exec to the first paint (median)",
              "CPU before main() (median)", "shared libraries mapped at the first paint"],
    "pg_many": ["PostgreSQL CPU, 5 consoles (profile + change probe, store unchanged) @2s",
                "PostgreSQL CPU, 5 consoles (named statements, no probe) @2s",
                "PostgreSQL CPU, 5 consoles (every query planned each time, no probe) @2s",
                "PostgreSQL CPU, 5 redrive sources (rd-source-watch), store unchanged @2s"],
    "fleet": ["RSS, one system alone", "RSS, fleet view, 5 systems", "RSS, one system open, 4 in the background",
              "CPU of one core, fleet view, 5 systems"],
    "push": ["attune push: write-to-screen p99", "attune poll 2s (push = false): write-to-screen p99",
             "alakai keyspace notifications: write-to-screen p99"],
    "batch": ["whole-set selection of 100 (the store, off the loop), wall",
              "retries sent while the keys were sent", "during a 100-item batch: key-to-paint p99",
              "during a 100-item batch: in-console trace p99"],
    "select": ["retry --group ID --since 1h --select-only, fresh rows (wall)",
               "snapshot --view executions --group ID (groups + first page), settled rows (wall)",
               "group page [query by_status], 2001 rows, fresh rows (server)"],
    "standout": ["[query groups_window] the hour's baseline (server)",
                 "[query groups_window] rows examined", "[query groups] with the worker column (server)",
                 "snapshot --view groups --json (groups, baseline, lists in C) (wall)"],
    "sqs": ["SQS requests per poll per queue", "requests other than GetQueueAttributes",
            "answering: key-to-paint p99", "stalled: key-to-paint p99",
            "SQS requests held during the stall"],
}
# Figures whose ideal is zero (an idle console): a finite number >= 0. Every other one > 0.
# (Derived differences such as "sweep time (snapshot N - snapshot empty)" are printed but
# not listed: at smoke scale they are noise around zero and may be negative.)
ZERO_OK = {"CPU of one core, idle at poll 2s", "CPU of one core, idle at poll 2s (schedstat)",
           "wake-ups per second", "bytes written to the terminal",
           "PostgreSQL CPU, 5 redrive sources (rd-source-watch), store unchanged @2s",
           "CPU of one core, fleet view, 5 systems", "requests other than GetQueueAttributes"}
FIG = re.compile(r"^FIG\t(\w+)\t([^\t]+)\t([^\t]+)\t([^\t]+)\t([^\t]+)$")


@pytest.mark.parametrize("bench", sorted(EXPECT))
def test_bench_runs_and_prints_figures(bench):
    env = dict(os.environ, **SMOKE_ENV)
    if bench == "batch":
        # 100 items at 20/s (5 s): with a window in flight 100/s would end before the keys do
        env["BENCH_RATE"] = "20"
    p = subprocess.run([sys.executable, os.path.join(HERE, "bench_%s.py" % bench)], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
    out = p.stdout.decode(errors="replace")
    assert p.returncode == 0, out
    figs = {}
    for line in out.splitlines():
        if line.startswith("FIG"):
            m = FIG.match(line)
            assert m, line
            assert m.group(1) == bench, line
            figs[m.group(2)] = m.group(3)
    for metric in EXPECT[bench]:
        assert metric in figs, (metric, out)
        assert is_measurement(figs[metric], zero_ok=metric in ZERO_OK), (metric, figs[metric], out)
    if bench == "sqs":
        # GetQueueAttributes only, one per queue per poll; every key answered, stalled or not
        assert figs["SQS requests per poll per queue"] == "1.000", out
        assert figs["requests other than GetQueueAttributes"] == "0", out
        for label in ("answering", "stalled"):
            assert figs["%s: keys never answered" % label] == "0", out
    if bench == "pg":
        # the groups' cost gate on both index sets: at a bound of 10,000 below the 20,000
        # failures, the reads examine the bound and the smoke store's own few failures
        # (1,000 executions), never the hour's whole 21,000 rows
        for store in ("bench schema", "Attune's own indexes"):
            rows = int(figs["groups (%s), bound 10000: rows examined by the execution scans" % store])
            assert 10000 <= rows <= 11000, (store, rows, out)
    if bench == "batch":
        # every key answered while the batch went on (put away), and the batch outlasted them
        assert figs["during a 100-item batch: keys never answered"] == "0", out
        assert int(figs["retries sent while the keys were sent"]) < 100, out
    if bench == "pg_many":
        assert figs["redrive sources that failed to start"] == "0", out
    if bench == "latency":
        # every key sent is answered and traced
        for label in ("normal", "stalled"):
            sent = int(figs["%s: keys sent" % label])
            assert sent == int(SMOKE_ENV["BENCH_KEYS"]), out
            assert figs["%s: keys never answered" % label] == "0", out
            assert int(figs["%s: keys traced in the console" % label]) == sent, out


def is_measurement(text, zero_ok=False):
    """A finite number > 0 (>= 0 with zero_ok): nan, inf, empty or negative is none."""
    if not re.match(r"^[0-9]+(\.[0-9]+)?$", text):
        return False
    v = float(text)
    return math.isfinite(v) and (v > 0 or (zero_ok and v == 0))


def test_is_measurement_rejects_non_figures():
    for bad in ("nan", "NaN", "inf", "-inf", "", " ", "-1.5", "-0", "0", "0.000", "1e400", "x"):
        assert not is_measurement(bad), bad
    for bad in ("nan", "inf", "", "-1", "-0"):
        assert not is_measurement(bad, zero_ok=True), bad
    for good in ("0.001", "3", "12.5", "1740"):
        assert is_measurement(good), good
    assert is_measurement("0", zero_ok=True) and is_measurement("0.000", zero_ok=True)


def test_run_sh_prints_the_table():
    env = dict(os.environ, BENCHES="start", **SMOKE_ENV)
    p = subprocess.run(["bash", os.path.join(HERE, "run.sh")], env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=120)
    out = p.stdout.decode(errors="replace")
    assert p.returncode == 0, out
    assert "## figures" in out
    assert re.search(r"^bench +\| metric +\| +value \| unit", out, re.M), out
    assert re.search(r"^start +\| exec -> first paint", out, re.M), out
