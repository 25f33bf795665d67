#!/usr/bin/python3
"""bench_fleet: the console with the demo's five systems (scripts/demo-config.sh on the local
stack), each polled by its own background session. Idle CPU % of one core (/proc/PID/stat)
and RSS over BENCH_FLEET_S (30 s) each:
  - one system alone (the demo's attune, a one-system config): the single-console baseline;
  - the fleet view on screen (every system at its own poll rate);
  - one system opened from the fleet (Enter; the other four at 1/5 of their rate).
Target (issue 13): within the single-console targets times the number of systems:
CPU <= 5 x 0.3 % of a core, RSS <= 5 x 16 MB.
"""
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B  # noqa: E402

N = 5


def demo_config(home, only=None):
    text = subprocess.run(["bash", os.path.join(B.ROOT, "scripts", "demo-config.sh"),
                           os.path.join(os.environ["RD_STACK_DIR"], "env")],
                          check=True, capture_output=True, text=True).stdout
    if only:   # keep one [system] section
        parts = text.split("\n[system ")
        text = "\n".join([parts[0]] + ["[system " + p for p in parts[1:] if p.startswith('"%s"' % only)])
    path = os.path.join(home, "config")
    with open(path, "w") as f:
        f.write(text)
    return path


def measure(c, secs):
    pid = c.child.pid
    t0, w0 = B.proc_cpu_ticks(pid), time.perf_counter()
    c.pump(secs, feed=False)
    t1, w1 = B.proc_cpu_ticks(pid), time.perf_counter()
    return 100.0 * (t1 - t0) / float(B.CLK_TCK) / (w1 - w0), B.proc_rss_kib(pid) / 1024.0


def main():
    B.need_env("RD_STACK_DIR", "RD_PG_HOST")
    secs = float(os.environ.get("BENCH_FLEET_S", "30"))
    bench = "fleet"
    with tempfile.TemporaryDirectory() as home:
        c = B.Console(demo_config(home, only="attune"), home)
        try:
            c.wait_for("Executions by status")
            c.pump(3.0)
            cpu1, rss1 = measure(c, secs)
        finally:
            c.close()
    with tempfile.TemporaryDirectory() as home:
        c = B.Console(demo_config(home), home)
        try:
            c.wait_for("Fleet  %d systems" % N)
            c.pump(5.0)                       # every system answered, first paints done
            cpu_f, rss_f = measure(c, secs)
            c.child.send("\r")                # open the worst system; the others slow down
            c.wait_for("Overview")
            c.pump(3.0)
            cpu_o, rss_o = measure(c, secs)
        finally:
            c.close()
    B.note("one system: CPU %.2f %%, RSS %.1f MiB; fleet view: CPU %.2f %%, RSS %.1f MiB; "
           "one opened from the fleet: CPU %.2f %%, RSS %.1f MiB (%.0f s each)"
           % (cpu1, rss1, cpu_f, rss_f, cpu_o, rss_o, secs))
    B.fig(bench, "CPU of one core, one system alone (poll 2s)", cpu1, "%", "<= 0.3 %")
    B.fig(bench, "CPU of one core, fleet view, %d systems" % N, cpu_f, "%", "<= %.1f %%" % (0.3 * N))
    B.fig(bench, "CPU of one core, one system open, %d in the background" % (N - 1), cpu_o, "%",
          "<= %.1f %%" % (0.3 * N))
    B.fig(bench, "RSS, one system alone", rss1, "MiB", "<= 16 MB")
    B.fig(bench, "RSS, fleet view, %d systems" % N, rss_f, "MiB", "<= %d MB" % (16 * N))
    B.fig(bench, "RSS, one system open, %d in the background" % (N - 1), rss_o, "MiB", "<= %d MB" % (16 * N))


if __name__ == "__main__":
    main()
