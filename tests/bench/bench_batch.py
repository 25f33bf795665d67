#!/usr/bin/python3
"""bench_batch: key-to-paint while a 20,000-item batch runs (issue 24: SPEC §9's p99 holds
while a whole-set retry goes on and groups compute). The console in a pty (120x40) on the
stack's attune2 database with 20,000 eligible failures of one error and a private reference
core server: `R` on the executions filter selects the whole set (the store, off the loop),
the count is typed, the batch starts at `rate_limit` per second and is put away (escape);
then bench_latency's key cycle (views, j/k, PgDn/PgUp) every BENCH_PACE while it runs, with
`:groups 1h` (the store's groups over the incident) asked once first. Key-to-paint from
outside and the loop's costliest iterations (REDRIVE_LOOP_TRACE) while the keys were sent.
Then (issue 35) the batch is let run to its end: the wall time from the count typed to the
last retry at the core (20,000 at --rate 100 with a window of batch_concurrency = 8 in
flight: target <= 210 s), the achieved rate and the most requests in flight at once, both
measured at the core server (its action log, GET /_coresrv/inflight). BENCH_NO_FINISH=1
aborts the batch after the keys as before. The fixture database is reloaded afterwards.
"""
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "actions"))
import actlib  # noqa: E402
import benchlib as B  # noqa: E402
from bench_latency import figures, keys, read_trace  # noqa: E402

BENCH = "batch"


def seed(n):
    actlib.admin_sql(
        "INSERT INTO execution (action, action_ref, config, env_vars, executor, status, result, created,"
        " updated, retry_count, max_retries, worker, started_at)"
        " SELECT x.action, x.action_ref, x.config, x.env_vars, x.executor, 'failed',"
        " jsonb_build_object('error', format('Benchbatch shard %%s down', g %% 97)),"
        " now() - make_interval(secs => 1 + g * 0.1), now(), 0, 3, x.worker, now()"
        " FROM generate_series(1, %s) g, (SELECT * FROM execution WHERE id = 2) x", (n,))


def config(home, core_url, rate):
    e = os.environ
    return B.write_config(os.path.join(home, "config"), [("attune2", {
        "profile": "attune", "store": e["RD_PG_DSN_ATTUNE2"], "core": core_url, "auth": "bearer",
        "token": "env:RD_CORE_TOKEN", "page_size": 100, "rate_limit": rate, "poll": "2s"})])


def retry_times(core):
    from datetime import datetime, timezone
    return sorted(datetime.strptime(a["time"], "%Y-%m-%dT%H:%M:%S.%fZ")
                  .replace(tzinfo=timezone.utc).timestamp()
                  for a in core.actions() if a["action"] == "retry")


def finish(c, core, n, rate, t_go):
    """The batch to its end: wall from the count typed to the last retry at the core."""
    deadline = time.perf_counter() + max(120, 4 * n / rate)
    done = 0
    while time.perf_counter() < deadline:
        c.pump(2.0)
        done = sum(1 for a in core.actions() if a["action"] == "retry")
        if done >= n:
            break
    wall = time.perf_counter() - t_go
    t = retry_times(core)
    st, body = actlib.http_json("GET", core.url + "/_coresrv/inflight")
    B.fig(BENCH, "%d retries at --rate %g, count typed to the last at the core, wall" % (n, rate),
          wall, "s", "<= %.0f s (20,000 at 100/s: <= 210 s)" % (n / rate * 1.05))
    B.fig(BENCH, "retries that reached the core", done, "requests", "= %d" % n)
    if len(t) > 1:
        B.fig(BENCH, "achieved rate at the core (first to last retry)", (len(t) - 1) / (t[-1] - t[0]),
              "req/s", "~ %g, never above" % rate)
    B.fig(BENCH, "most requests in flight at once, at the core", body.get("max", -1), "requests",
          "<= batch_concurrency (8)")


def main():
    B.need_env("RD_PG_DSN_ATTUNE2", "RD_STACK_DIR")
    n = B.scaled(20000, 100)
    rate = float(os.environ.get("BENCH_RATE", "100"))
    n_keys = max(30, int(os.environ.get("BENCH_KEYS", "300")))
    pace = float(os.environ.get("BENCH_PACE", "0.04"))
    actlib.reload_fixture("attune2")
    with tempfile.TemporaryDirectory() as home:
        core = actlib.CoreServer("attune2", home)
        try:
            seed(n)
            loop = os.path.join(home, "loop.txt")
            lat_trace = os.path.join(home, "latency.txt")
            c = B.Console(config(home, core.url, rate), home,
                          extra_env={"REDRIVE_LOOP_TRACE": loop, "REDRIVE_LATENCY_TRACE": lat_trace})
            try:
                c.wait_for("postgresql ok", secs=20)
                c.child.send(":filter status=failed text=Benchbatch\r")
                c.wait_for("text=Benchbatch")
                t_sel = time.perf_counter()
                c.child.send("R")
                c.wait_for("breakdown: %d eligible" % n, secs=120)
                B.fig(BENCH, "whole-set selection of %d (the store, off the loop), wall" % n,
                      (time.perf_counter() - t_sel) * 1000, "ms")
                c.child.send("y")
                c.pump(0.2)
                c.child.send("%d\r" % n)
                t_go = time.perf_counter()
                c.wait_for("retry: ", secs=20)
                c.child.send("\x1b")
                c.wait_for("goes on in the background")
                c.child.send(":groups 1h\r")
                c.wait_for("Benchbatch shard", secs=20)
                c.child.send("1")
                c.wait_for("Executions by status")
                c.pump(0.5)
                open(lat_trace, "w").close()       # the keys' own lines only
                m0 = time.monotonic()
                lat, late, unanswered, t0 = B.keys_to_paint(c, keys(n_keys), pace)
                m1 = time.monotonic()
                c.pump(0.3, feed=False)
                vals = read_trace(lat_trace)
                c.pump(0.3)
                done = sum(1 for a in core.actions() if a["action"] == "retry")
                B.note("%d keys over %.1f s while the batch ran; %d of %d retries reached the core by then"
                       % (n_keys, time.perf_counter() - t0, done, n))
                B.fig(BENCH, "retries sent while the keys were sent", done, "requests",
                      "< %d (the batch outlasted the keys)" % n)
                if os.environ.get("BENCH_NO_FINISH"):
                    c.child.send(":batch\r")
                    c.child.send("x")                  # abort the rest: resumable, not needed
                    c.pump(1.0)
                else:
                    finish(c, core, n, rate, t_go)
            finally:
                c.close()
            figures(BENCH, "during a %d-item batch" % n, n_keys, pace, lat, late, unanswered, vals,
                    B.read_loop_trace(loop, m0, m1))
        finally:
            core.stop()
            actlib.reload_fixture("attune2")


if __name__ == "__main__":
    main()
