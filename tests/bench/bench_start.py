#!/usr/bin/python3
"""bench_start: exec to the first full paint (first appearance of the top bar text
"redrive bench" in the pty output), and to the first data on screen (the overview's
status counts), median of BENCH_STARTS (10), against the local stack.
SPEC §9 / issue 12: start to first paint ≤ 50 ms at any store size.
Also the CPU time redrive had used when its first frame was painted (REDRIVE_START_TRACE:
the process's own clock, from exec, dynamic linking included): on a loaded machine the wall
figure mostly measures the wait for a core; the CPU figure is what the start itself costs.
It includes what the child of pexpect's fork did before exec (Python's copy-on-write faults,
~20 ms here); the trace's phases (main_cpu_ms: exec, dynamic loader and libc up to main();
set-up; terminal; frame) and the count of libraries mapped at the frame are printed too.
"""
import os
import select
import signal
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B  # noqa: E402


class SpawnedConsole(B.Console):
    """The console in a pty started with posix_spawn (vfork + exec: no Python code runs in
    the child, so neither the wall nor the CPU figure includes a fork of this Python
    process and its copy-on-write faults — pexpect's spawn cost ~170 ms wall and ~20 ms of
    the child's CPU here). Same screen and byte counting as B.Console."""

    def __init__(self, conf, home, cols=120, rows=40, extra_env=None):
        import fcntl
        import pty
        import struct
        import termios
        import pyte
        sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))   # tests/
        import lib.pyte_rep  # noqa: F401
        env = B.base_env(home)
        env.update(extra_env or {})
        self.screen = pyte.Screen(cols, rows)
        self.stream = pyte.ByteStream(self.screen)
        self.nbytes = 0
        self.fd, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        binp = B.binary()
        acts = [(os.POSIX_SPAWN_DUP2, slave, 0), (os.POSIX_SPAWN_DUP2, slave, 1), (os.POSIX_SPAWN_DUP2, slave, 2)]
        self.t_spawn = time.perf_counter()
        self.pid = os.posix_spawn(binp, [binp, "--config", conf], env, file_actions=acts, setsid=True)
        os.close(slave)

    def pump(self, secs=0.05, feed=True):
        end = time.perf_counter() + secs
        got = 0
        while True:
            left = end - time.perf_counter()
            if left <= 0:
                break
            r, _, _ = select.select([self.fd], [], [], min(left, 0.05))
            if not r:
                continue
            try:
                data = os.read(self.fd, 65536)
            except OSError:
                break
            got += len(data)
            self.nbytes += len(data)
            if feed:
                self.stream.feed(data)
        return got

    def close(self):
        try:
            os.write(self.fd, b"Q")
            self.pump(0.3)
        except OSError:
            pass
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(self.pid, 0)
        os.close(self.fd)


def main():
    B.need_env("RD_PG_HOST")
    B.ensure_bench_attune()
    n = max(2, int(os.environ.get("BENCH_STARTS", "10")))
    bench = "start"
    paint, data, cpu, phases, libs = [], [], [], {}, []
    with tempfile.TemporaryDirectory() as home:
        conf = B.bench_config(home)
        for _ in range(n):
            trace = os.path.join(home, "start.trace")
            if os.path.exists(trace):
                os.unlink(trace)
            c = SpawnedConsole(conf, home, extra_env={"REDRIVE_START_TRACE": trace})
            try:
                t = c.wait_for("redrive bench")
                paint.append((t - c.t_spawn) * 1000)
                for _ in range(100):   # written just after the frame
                    if os.path.exists(trace):
                        break
                    c.pump(0.01)
                with open(trace) as f:
                    lines = f.read().splitlines()
                libs.append(sum(1 for x in lines if x.startswith("lib ")))
                for k, v in (x.split(" ", 1) for x in lines if not x.startswith("lib ")):
                    phases.setdefault(k, []).append(float(v))
                cpu.append(phases["first_paint_cpu_ms"][-1])
                t = c.wait_for("completed")
                data.append((t - c.t_spawn) * 1000)
            finally:
                c.close()
    B.note("first paint ms: %s" % " ".join("%.0f" % x for x in paint))
    B.note("first data  ms: %s" % " ".join("%.0f" % x for x in data))
    B.note("CPU at paint ms: %s" % " ".join("%.1f" % x for x in cpu))
    for k in ("main_cpu_ms", "setup_cpu_ms", "terminal_cpu_ms", "frame_cpu_ms"):
        B.note("%s: median %.2f" % (k, B.median(phases[k]) if k in phases else float("nan")))
    B.fig(bench, "exec -> first paint (median of %d)" % n, B.median(paint), "ms", "<= 50 ms")
    B.fig(bench, "CPU from exec to the first paint (median)",
          B.median(cpu) if cpu else float("nan"), "ms")
    B.fig(bench, "CPU before main() (median)", B.median(phases.get("main_cpu_ms", [float("nan")])), "ms")
    B.fig(bench, "shared libraries mapped at the first paint", max(libs), "libraries", "no TLS / store libraries")
    B.fig(bench, "exec -> first paint (max)", max(paint), "ms")
    B.fig(bench, "exec -> status counts on screen (median)", B.median(data), "ms")


if __name__ == "__main__":
    main()
