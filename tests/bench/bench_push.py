#!/usr/bin/python3
"""bench_push: write-to-screen latency with push and with polling (issue 25), and what push
costs PostgreSQL with 50 consoles.

Write-to-screen: the console in a pty (120x40) on its executions view; the bench writes one
row (a new execution, Attune; a new task hash, Alakai) and times from just before the
commit to the first output after which the screen shows it (pyte). Writes are spaced at
random (BENCH_PUSH_GAP, 0.6-1.2 s) so they do not lock to the poll's phase.
- Attune with push (the store's execution_created notification; poll 2 s, the safety net at
  10 s), and with `push = false` (the poll, 2 s);
- Alakai (Redis keyspace notifications: the changed key is read at once) on the stack's
  Redis, db 6, prefix bench-push.
Target (issue 25): p99 <= 300 ms with push.

50 consoles: BENCH_CONSOLES rd-source-watch processes (the console's PostgreSQL source on its
loop) at poll 2 s while the writers (BENCH_PUSH_WRITERS sessions, default 4) make 100 status
changes per second, one commit and one notification each; PostgreSQL CPU over BENCH_PUSH_S
(bench_pg_many's measure: the postmaster and its children), with push on and with
push = false. Target: <= 5 % of one core with push. Beside it, a diagnostic: as many plain
sessions that only LISTEN (no query at all) under the same writes, what PostgreSQL's
delivery of the notifications alone costs.

The bench database is bench_attune (benchlib); the notify triggers of
tests/stack/schema/attune_era2.sql are added to it when it lacks them.
"""
import os
import random
import re
import select
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B  # noqa: E402
from bench_pg_many import pg_cpu_s  # noqa: E402

BENCH = "push"


def ensure_triggers(db):
    """The notify triggers of the era-2 test schema (Attune's own), on the bench database."""
    c = B._connect(db)
    cur = c.cursor()
    cur.execute("SELECT count(*) FROM pg_trigger WHERE tgname = 'execution_created_notify'")
    if cur.fetchone()[0] == 0:
        ddl = open(os.path.join(B.ROOT, "tests", "stack", "schema", "attune_era2.sql")).read()
        m = re.search(r"CREATE OR REPLACE FUNCTION notify_execution_created.*?"
                      r"EXECUTE FUNCTION notify_execution_status_changed\(\);", ddl, re.S)
        cur.execute("SET search_path = public")
        cur.execute(m.group(0))
    c.close()


def gap():
    lo, hi = (float(x) for x in os.environ.get("BENCH_PUSH_GAP", "0.6,1.2").split(","))
    return random.uniform(lo, hi)


def measure(console, n, write):
    """n writes; write(i) makes row i and returns its marker. Latencies in ms."""
    out = []
    for i in range(n):
        console.pump(gap())
        t0 = time.perf_counter()
        mark = write(i)
        try:
            t1 = console.wait_for(mark, 15)
        except AssertionError:
            t1 = time.perf_counter()                 # never shown within 15 s: counted so
        out.append(1000.0 * (t1 - t0))
    return out


def attune_console(home, push):
    db = B.attune_db()
    conf = B.write_config(os.path.join(home, "config-%s" % push), [
        ("bench", {"profile": "attune-era2", "poll": "2s", "push": push,
                   "store": B.pg_dsn(db).replace("redrive-bench", "redrive")})])
    c = B.Console(conf, home, args=["--system", "bench"])
    c.wait_for("Executions by status", 20)
    c.child.send("2")                                # the executions view
    c.pump(1.0)
    return c


def attune_latency(home, push, n, first_id):
    db = B.attune_db()
    w = B._connect(db)
    cur = w.cursor()

    def write(i):
        mark = "bp%d" % (first_id + i)
        cur.execute("INSERT INTO execution (id, action, action_ref, status, created, updated)"
                    " VALUES (%s, 1, %s, 'failed', now(), now())", (first_id + i, mark))
        return mark

    c = attune_console(home, push)
    try:
        lat = measure(c, n, write)
    finally:
        c.close()
        cur.execute("DELETE FROM execution WHERE id >= %s", (first_id,))
        w.close()
    return lat


def alakai_latency(home, n):
    import json
    import redis
    url = os.environ["RD_REDIS_URL"].rsplit("/", 1)[0] + "/6"
    r = redis.Redis.from_url(url)
    r.flushdb()
    conf = B.write_config(os.path.join(home, "config-alakai"), [
        ("alakai", {"profile": "alakai", "poll": "2s", "store": url, "prefix": "bench-push"})])
    c = B.Console(conf, home, args=["--system", "alakai"])
    c.wait_for("Executions by status", 20)
    c.child.send("2")
    c.pump(1.0)

    def write(i):
        task = "bp-%04d" % i
        now = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
        r.hset("bench-push:" + task, "1", json.dumps({
            "status": "failed", "attempt": 1, "dispatchedAt": now, "resolvedAt": now,
            "errorCode": "BENCH", "errorMessage": "bench push",
            "taskSnapshot": {"taskId": task, "type": "render"}}))
        return task

    try:
        lat = measure(c, n, write)
    finally:
        c.close()
        r.flushdb()
    return lat


def latency_figs(label, lat, target="-"):
    B.fig(BENCH, "%s: writes" % label, len(lat), "writes")
    B.fig(BENCH, "%s: write-to-screen p50" % label, "%.1f" % B.pct(lat, 50), "ms")
    B.fig(BENCH, "%s: write-to-screen p99" % label, "%.1f" % B.pct(lat, 99), "ms", target)
    B.fig(BENCH, "%s: write-to-screen max" % label, "%.1f" % max(lat), "ms")


def under_writes(secs, rate=100.0):
    """The writers (BENCH_PUSH_WRITERS sessions, default 4, one commit per status change,
    so that one slow commit on a loaded machine does not hold the rate) make `rate` status
    changes a second; after a 6 s warm-up, PostgreSQL CPU in % of one core over secs and
    the changes a second reached."""
    stop = threading.Event()
    changes = [0]
    lock = threading.Lock()
    writers = int(os.environ.get("BENCH_PUSH_WRITERS", "4"))

    def writer():
        c = B._connect(B.attune_db())
        cur = c.cursor()
        cur.execute("SELECT max(id) FROM execution")
        top = cur.fetchone()[0]
        t = time.perf_counter()
        while not stop.is_set():
            cur.execute("UPDATE execution SET status = CASE WHEN status = 'running' THEN "
                        "'scheduled'::execution_status_enum ELSE 'running' END WHERE id = %s",
                        (top - random.randrange(200),))
            with lock:
                changes[0] += 1
            t += writers / rate
            time.sleep(max(0.0, t - time.perf_counter()))
        c.close()

    ths = [threading.Thread(target=writer) for _ in range(writers)]
    try:
        for th in ths:
            th.start()
        # warm-up: the steady state (consoles run for hours); 15 s covers the busy-store
        # check of push (src/sources/pg_push.h: two 5 s windows over PG_PUSH_BUSY_RATE)
        time.sleep(float(os.environ.get("BENCH_PUSH_WARMUP", "15")))
        t0, w0, c0 = pg_cpu_s(), time.perf_counter(), changes[0]
        time.sleep(secs)
        el = time.perf_counter() - w0
        return 100.0 * (pg_cpu_s() - t0) / el, (changes[0] - c0) / el
    finally:
        stop.set()
        for th in ths:
            th.join()


def consoles_cpu(n, secs, push):
    """n sources (rd-source-watch) at poll 2 s under the writers: (PostgreSQL CPU in % of
    one core, changes a second, sources that failed to start)."""
    watch = B.watch_binary()
    home = tempfile.mkdtemp(prefix="rd-push-")
    conf = B.write_config(os.path.join(home, "config"), [
        ("many", {"profile": "attune-era2", "poll": "2s", "push": push,
                  "store": B.pg_dsn(B.attune_db()).replace("redrive-bench", "redrive")})])
    env = dict(B.base_env(home), REDRIVE_PROFILES=os.path.join(B.ROOT, "profiles"))
    ps = [subprocess.Popen([watch, conf], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True, env=env) for _ in range(n)]
    errs = 0
    try:
        for p in ps:
            errs += p.stdout.readline().strip() != "ready"
        cpu, per_s = under_writes(secs)
    finally:
        for p in ps:
            try:
                p.stdin.write("quit\n")
                p.stdin.flush()
            except OSError:
                pass
        for p in ps:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
    return cpu, per_s, errs


def listeners_cpu(n, secs):
    """Diagnostic: n plain sessions that only LISTEN on Attune's channels (and read what
    arrives), no query at all, under the writers: what delivering the notifications alone
    costs PostgreSQL. (CPU %, changes a second, notifications read a second.)"""
    import psycopg2
    conns = []
    for _ in range(n):
        c = psycopg2.connect(B.pg_dsn(B.attune_db()))
        c.autocommit = True
        c.cursor().execute("LISTEN execution_created; LISTEN execution_status_changed")
        conns.append(c)
    stop = threading.Event()
    got = [0]

    def reader():
        while not stop.is_set():
            for c in select.select(conns, [], [], 0.2)[0]:
                c.poll()
                got[0] += len(c.notifies)
                c.notifies.clear()

    th = threading.Thread(target=reader)
    th.start()
    try:
        w0, g0 = time.perf_counter(), got[0]
        cpu, per_s = under_writes(secs)
        return cpu, per_s, (got[0] - g0) / (time.perf_counter() - w0)
    finally:
        stop.set()
        th.join()
        for c in conns:
            c.close()


def main():
    B.need_env("RD_PG_HOST", "RD_STACK_DIR", "RD_REDIS_URL")
    db, n_exec, _, _ = B.ensure_bench_attune()
    ensure_triggers(db)
    n = int(os.environ.get("BENCH_PUSH_N", "40"))
    home = tempfile.mkdtemp(prefix="rd-bench-push-")
    B.fig(BENCH, "executions", n_exec, "rows")
    latency_figs("attune push", attune_latency(home, "true", n, 50_000_000), "<= 300 ms")
    latency_figs("attune poll 2s (push = false)", attune_latency(home, "false", n, 50_100_000))
    latency_figs("alakai keyspace notifications", alakai_latency(home, n))
    consoles = int(os.environ.get("BENCH_CONSOLES", "50"))
    secs = float(os.environ.get("BENCH_PUSH_S", "20"))
    base, per_s, _ = consoles_cpu(0, secs, "true")     # the writers alone (their triggers too)
    B.fig(BENCH, "PostgreSQL CPU, no consoles, store taking %.0f status changes/s" % per_s,
          "%.2f" % base, "% core")
    for push, target in (("true", "<= 5 %"), ("false", "-")):
        cpu, per_s, errs = consoles_cpu(consoles, secs, push)
        label = "%d consoles, push %s, store taking %.0f status changes/s" % (
            consoles, "on" if push == "true" else "off (poll 2s)", per_s)
        B.fig(BENCH, "PostgreSQL CPU, " + label, "%.2f" % cpu, "% core")
        B.fig(BENCH, "PostgreSQL CPU of the consoles (less the writer alone), " + label,
              "%.2f" % (cpu - base), "% core", target)
        B.fig(BENCH, "sources that failed to start (push %s)" % push, errs, "sources", "0")
    cpu, per_s, notes = listeners_cpu(consoles, secs)
    label = "%d sessions that only LISTEN (no query), store taking %.0f status changes/s" % (
        consoles, per_s)
    B.fig(BENCH, "diagnostic: notifications delivered, " + label, "%.0f" % notes, "per s")
    B.fig(BENCH, "diagnostic: PostgreSQL CPU less the writers alone, " + label,
          "%.2f" % (cpu - base), "% core")


if __name__ == "__main__":
    main()
