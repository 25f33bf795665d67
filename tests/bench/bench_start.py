#!/usr/bin/python3
"""bench_start: exec to the first full paint (first appearance of the top bar text
"redrive bench" in the pty output), and to the first data on screen (the overview's
status counts), median of BENCH_STARTS (10), against the local stack.
SPEC §9 / issue 12: start to first paint ≤ 50 ms at any store size.
Also the CPU time redrive had used when the first paint was seen (/proc/PID/schedstat,
ns): on a loaded machine the wall figure mostly measures the wait for a core; the CPU
figure is what the start itself costs (exec, dynamic linking, curses, the first frame).
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
            c = B.Console(conf, home)
            try:
                t = c.wait_for("redrive bench")
                paint.append((t - c.t_spawn) * 1000)
                try:
                    with open("/proc/%d/schedstat" % c.child.pid) as f:
                        cpu.append(int(f.read().split()[0]) / 1e6)
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
    B.fig(bench, "CPU used by redrive when the first paint was seen (median)",
          B.median(cpu) if cpu else float("nan"), "ms")
    B.fig(bench, "exec -> first paint (max)", max(paint), "ms")
    B.fig(bench, "exec -> status counts on screen (median)", B.median(data), "ms")


if __name__ == "__main__":
    main()
