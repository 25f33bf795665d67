#!/usr/bin/python3
"""bench_start: exec to the first full paint (first appearance of the top bar text
"redrive bench" in the pty output), and to the first data on screen (the overview's
status counts), median of BENCH_STARTS (10), against the local stack.
SPEC §9 / issue 12: start to first paint ≤ 50 ms at any store size.
Also the CPU time redrive had used when its first frame was painted (REDRIVE_START_TRACE:
the process's own clock, from exec, dynamic linking included): on a loaded machine the wall
figure mostly measures the wait for a core; the CPU figure is what the start itself costs.
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B  # noqa: E402


def main():
    B.need_env("RD_PG_HOST")
    B.ensure_bench_attune()
    n = max(2, int(os.environ.get("BENCH_STARTS", "10")))
    bench = "start"
    paint, data, cpu = [], [], []
    with tempfile.TemporaryDirectory() as home:
        conf = B.bench_config(home)
        for _ in range(n):
            trace = os.path.join(home, "start.trace")
            if os.path.exists(trace):
                os.unlink(trace)
            c = B.Console(conf, home, extra_env={"REDRIVE_START_TRACE": trace})
            try:
                t = c.wait_for("redrive bench")
                paint.append((t - c.t_spawn) * 1000)
                try:
                    with open(trace) as f:
                        cpu.append(float(f.read().split()[1]))
                except (OSError, ValueError, IndexError):
                    pass
                t = c.wait_for("completed")
                data.append((t - c.t_spawn) * 1000)
            finally:
                c.close()
    B.note("first paint ms: %s" % " ".join("%.0f" % x for x in paint))
    B.note("first data  ms: %s" % " ".join("%.0f" % x for x in data))
    B.note("CPU at paint ms: %s" % " ".join("%.1f" % x for x in cpu))
    B.fig(bench, "exec -> first paint (median of %d)" % n, B.median(paint), "ms", "<= 50 ms")
    B.fig(bench, "CPU from exec to the first paint (median)",
          B.median(cpu) if cpu else float("nan"), "ms")
    B.fig(bench, "exec -> first paint (max)", max(paint), "ms")
    B.fig(bench, "exec -> status counts on screen (median)", B.median(data), "ms")


if __name__ == "__main__":
    main()
