#!/usr/bin/python3
"""bench_latency: key press to repainted screen, the console in a pty (TERM=xterm-256color,
120x40) on the bench Attune database, REDRIVE_LATENCY_TRACE (µs per key, written by the
console at each paint). ~300 navigation keys (j/k, PgDn/PgUp, view switches) at a steady
pace; then again with two more systems whose stores (PostgreSQL, Redis) point at a TCP
listener that accepts and never answers (stalled sources).
SPEC §9: p99 ≤ 5 ms, also while a source is stalled for 10 s.
"""
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B  # noqa: E402

PGDN, PGUP = "\x1b[6~", "\x1b[5~"


def keys(n):
    cycle = (["2"] + ["j"] * 12 + [PGDN, "j", "j", PGDN, "k", "k", PGUP] + ["k"] * 6 + [PGUP] +
             ["3"] + ["j"] * 8 + ["k"] * 4 + ["1"] + ["2", "j"])
    out = []
    while len(out) < n:
        out.extend(cycle)
    return out[:n]


def run(label, home, stalled_port, n_keys, pace):
    conf = B.bench_config(home, stalled_port=stalled_port)
    trace = os.path.join(home, "latency-%s.txt" % label)
    c = B.Console(conf, home, extra_env={"REDRIVE_LATENCY_TRACE": trace})
    try:
        c.wait_for("redrive bench")
        c.wait_for("Executions by status")
        c.pump(1.0)
        t0 = time.perf_counter()
        ext = []       # outside view: key sent -> first byte of the repaint in the pty
        for i, k in enumerate(keys(n_keys)):
            ts = time.perf_counter()
            c.child.send(k)
            first = None
            # steady pace; keep draining the pty (pyte off: only bytes are counted here)
            while time.perf_counter() < t0 + (i + 1) * pace:
                if c.pump(0.001, feed=False) and first is None:
                    first = time.perf_counter()
            ext.append((first - ts) * 1000 if first is not None else None)
        c.pump(0.5, feed=False)
        dur = time.perf_counter() - t0
    finally:
        c.close()
    vals = []
    if os.path.exists(trace):
        for line in open(trace):
            line = line.strip()
            if line:
                try:
                    vals.append(float(line) / 1000.0)
                except ValueError:
                    pass
    return vals, dur, ext


def main():
    B.need_env("RD_PG_HOST")
    B.ensure_bench_attune()
    n_keys = max(30, int(os.environ.get("BENCH_KEYS", "300")))
    pace = float(os.environ.get("BENCH_PACE", "0.04"))     # 300 keys × 40 ms = 12 s (> 10 s stall)
    bench = "latency"
    for label, stalled in (("normal", False), ("stalled", True)):
        lst = B.StalledListener() if stalled else None
        with tempfile.TemporaryDirectory() as home:
            try:
                vals, dur, ext = run(label, home, lst.port if lst else None, n_keys, pace)
            finally:
                if lst:
                    lst.close()
        B.note("%s: %d keys sent over %.1f s, %d key-to-paint samples" % (label, n_keys, dur, len(vals)))
        t = "<= 5 ms (p99)" if label else "-"
        B.fig(bench, "%s: keys traced" % label, len(vals), "keys", "%d sent" % n_keys)
        B.fig(bench, "%s: key-to-paint p50" % label, B.pct(vals, 50), "ms")
        B.fig(bench, "%s: key-to-paint p95" % label, B.pct(vals, 95), "ms")
        B.fig(bench, "%s: key-to-paint p99" % label, B.pct(vals, 99), "ms", t)
        B.fig(bench, "%s: key-to-paint max" % label, max(vals) if vals else float("nan"), "ms")
        quiet = sum(1 for v in ext if v is None)     # keys that changed nothing on screen (e.g. k at the top)
        ext = [v for v in ext if v is not None]
        B.fig(bench, "%s: keys with no output within the pace slot" % label, quiet, "keys")
        B.fig(bench, "%s: pty key->first byte p50" % label, B.pct(ext, 50), "ms")
        B.fig(bench, "%s: pty key->first byte p99" % label, B.pct(ext, 99), "ms", t)
        B.fig(bench, "%s: pty key->first byte max" % label, max(ext) if ext else float("nan"), "ms")
        slow = [i for i, v in enumerate(vals) if v > 5.0]
        if slow:
            ks = keys(n_keys)
            B.note("%s: traces > 5 ms at key #%s" % (label, ", ".join(
                "%d %r (%.0f ms)" % (i, ks[i] if i < len(ks) else "?", vals[i]) for i in slow[:8])))


if __name__ == "__main__":
    main()
