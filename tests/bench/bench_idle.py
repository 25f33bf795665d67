#!/usr/bin/python3
"""bench_idle: the console idle (no keys, no data changes) at poll 2s on the bench Attune
database: CPU % of one core from /proc/PID/stat (utime + stime) and the bytes written to
the terminal after the first full paint (pty output counted), over BENCH_IDLE_S (30 s).
SPEC §9: ≤ 0.3 % of a core at a 2 s refresh; ~0 bytes written when nothing changed.
Issue 12: ≤ 0.05 %, read from /proc/PID/task/*/schedstat (ns: the utime+stime figure counts
10 ms ticks, 3 of them in 30 s are 0.10 %), and the wake-ups per second (voluntary context
switches: each one a sleep of the loop ended by a timer or a socket).
"""
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B  # noqa: E402


def main():
    B.need_env("RD_PG_HOST")
    B.ensure_bench_attune()
    secs = float(os.environ.get("BENCH_IDLE_S", "30"))
    bench = "idle"
    with tempfile.TemporaryDirectory() as home:
        conf = B.bench_config(home, poll="2s")
        c = B.Console(conf, home)
        try:
            c.wait_for("redrive bench")
            c.wait_for("Executions by status")
            c.pump(3.0)                      # first refresh settled
            pid = c.child.pid
            b0, t0, w0 = c.nbytes, B.proc_cpu_ticks(pid), time.perf_counter()
            ns0, sl0 = B.proc_sched(pid)
            rss0 = B.proc_rss_kib(pid)
            c.pump(secs, feed=False)
            b1, t1, w1 = c.nbytes, B.proc_cpu_ticks(pid), time.perf_counter()
            ns1, sl1 = B.proc_sched(pid)
            rss1 = B.proc_rss_kib(pid)
            uss1 = B.proc_uss_kib(pid)
        finally:
            c.close()
    el = w1 - w0
    cpu = (t1 - t0) / float(B.CLK_TCK)
    B.note("idle %.1f s: %d ticks (%.3f s CPU), %.3f ms CPU by schedstat, %d wake-ups, %d bytes to the "
           "terminal, RSS %d -> %d KiB" % (el, t1 - t0, cpu, (ns1 - ns0) / 1e6, sl1 - sl0, b1 - b0, rss0, rss1))
    B.fig(bench, "idle window", el, "s")
    B.fig(bench, "CPU of one core, idle at poll 2s (schedstat)", 100.0 * (ns1 - ns0) / 1e9 / el, "%",
          "<= 0.05 %")
    B.fig(bench, "CPU of one core, idle at poll 2s", 100.0 * cpu / el, "%", "<= 0.3 %")
    B.fig(bench, "wake-ups per second", (sl1 - sl0) / el, "/s")
    B.fig(bench, "bytes written to the terminal", b1 - b0, "bytes", "~0")
    B.fig(bench, "bytes per refresh (per 2 s)", (b1 - b0) / (el / 2.0), "bytes")
    B.fig(bench, "console RSS after idle", rss1 / 1024.0, "MiB", "<= 16 MB")
    B.fig(bench, "console USS after idle", uss1 / 1024.0, "MiB", "<= 8 MiB")


if __name__ == "__main__":
    main()
