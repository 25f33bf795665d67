"""Smoke run of the benchmarks at SCALE=0.001 (1,000 executions, 100 Alakai tasks, short
windows): each bench runs end to end and prints its figures. Asserts on the output shape,
never on timings. Needs the stack env (scripts/test.sh sources it)."""
import os
import re
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

pytestmark = pytest.mark.skipif(not os.environ.get("RD_PG_HOST"), reason="needs the local stack env")

SMOKE_ENV = {"SCALE": "0.001", "BENCH_RUNS": "3", "BENCH_KEYS": "40", "BENCH_PACE": "0.02",
             "BENCH_IDLE_S": "2", "BENCH_STARTS": "2", "BENCH_MANY_S": "3", "BENCH_CONSOLES": "5",
             "BENCH_STEADY_S": "2"}

EXPECT = {
    "pg": ["refresh: server time, all queries", "naive dashboard: server time", "snapshot --json max RSS"],
    "redis": ["sweep time (snapshot N - snapshot empty)", "max RSS at N", "steady refresh / sweep (commands)"],
    "latency": ["normal: key-to-paint p99", "stalled: key-to-paint p99"],
    "idle": ["CPU of one core, idle at poll 2s", "bytes written to the terminal"],
    "start": ["exec -> first paint (median of 2)"],
    "pg_many": ["PostgreSQL CPU, 5 consoles (profile) @2s"],
}
FIG = re.compile(r"^FIG\t(\w+)\t([^\t]+)\t([^\t]+)\t([^\t]+)\t([^\t]+)$")


@pytest.mark.parametrize("bench", sorted(EXPECT))
def test_bench_runs_and_prints_figures(bench):
    env = dict(os.environ, **SMOKE_ENV)
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
        assert re.match(r"^-?[0-9.]+$|^nan$", figs[metric]), (metric, figs[metric])


def test_run_sh_prints_the_table():
    env = dict(os.environ, BENCHES="start", **SMOKE_ENV)
    p = subprocess.run(["bash", os.path.join(HERE, "run.sh")], env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=120)
    out = p.stdout.decode(errors="replace")
    assert p.returncode == 0, out
    assert "## figures" in out
    assert re.search(r"^bench +\| metric +\| +value \| unit", out, re.M), out
    assert re.search(r"^start +\| exec -> first paint", out, re.M), out
