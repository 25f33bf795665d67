#!/usr/bin/python3
"""bench_pg_many: 50 consoles polling one PostgreSQL every 2 s. 50 loops (threads, one
connection each) run the refresh batch of profiles/attune-era2.profile in one round trip
every 2 s against the bench database for BENCH_MANY_S (20 s); PostgreSQL's CPU is the sum
of the CPU of the postmaster and all its children (/proc, schedstat) over the window. The same
for the naive dashboard (count(*) GROUP BY status + OFFSET N/2 page) with fewer loops.
Twice for the profile: without the change probe (every query runs every time) and with it
(the probe statement first, every query wrapped in its guard, in one transaction, as
src/sources/pg_changes.c sends them; the store does not change during the bench, so after
the first refresh the server skips them, and runs everything every 30 s, changes_max_age),
the latter with the console's role at the default log_min_messages and at `fatal` (the
probe then ends the transaction when nothing changed: the rest is skipped unbound). Then
the same with the real source: BENCH_CONSOLES rd-source-watch processes at poll 2s.
SPEC §9: 50 consoles polling one PostgreSQL every 2 s cost it ≤ 10 % of one core.
"""
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B  # noqa: E402

PROBE_MAX_AGE_S = 30.0     # changes_max_age: everything runs anyway this often
WARMUP = 6                 # refreshes per console before the measured window


def pg_pids():
    with open(os.path.join(os.environ["RD_STACK_DIR"], "pg", "data", "postmaster.pid")) as f:
        pm = int(f.readline())
    pids = [pm]
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/stat" % d) as f:
                    s = f.read()
                if int(s[s.rindex(")") + 2:].split()[1]) == pm:
                    pids.append(int(d))
            except (OSError, ValueError):
                pass
    return pids


def pg_cpu_s():
    """PostgreSQL's CPU so far, in seconds: the postmaster and its live children from their
    threads' schedstat (ns: at the smoke bench's size a window costs less than one 10 ms
    tick), plus the children already reaped (the postmaster's cutime + cstime, in ticks)."""
    pids = pg_pids()
    with open("/proc/%d/stat" % pids[0]) as f:        # reaped children (parallel workers, ...)
        s = f.read()
    fl = s[s.rindex(")") + 2:].split()
    t = (int(fl[13]) + int(fl[14])) / B.CLK_TCK
    for p in pids:
        try:
            t += B.proc_sched(p)[0] / 1e9
        except OSError:
            pass
    return t


def loops(n, stmts, secs, period=2.0, console=False):
    import psycopg2
    if stmts.get("redrive"):
        return sources(n, secs, period)
    db = B.attune_db()
    conns = []
    for i in range(n):
        c = psycopg2.connect(B.pg_dsn(db, console=console))
        c.autocommit = True
        k = c.cursor()
        prep = stmts["prepare"](i) if callable(stmts["prepare"]) else stmts["prepare"]
        for name, sql in prep:
            k.execute("PREPARE %s AS %s" % (name, sql))
        conns.append(c)
    lat, errs = [], []
    states_of = [None] * n
    full_at_of = [0.0] * n

    # Consoles live for hours: measure the steady state, not a new session's first queries
    # (catalog caches, plan caches: a prepared statement with parameters is planned for
    # its values 5 times before its plan is cached).
    for i, c in enumerate(conns):
        k = c.cursor()
        for _ in range(WARMUP):
            if stmts.get("probe"):
                k.execute("EXECUTE p_probe(%s, %s, %s, '')", (states_of[i], states_of[i] is None, "b%d" % i))
                skip, states_of[i], _ = k.fetchone()
                if skip.endswith(":,"):
                    full_at_of[i] = time.perf_counter()
            k.execute(stmts["batch"])
    stop = time.perf_counter() + secs

    def run(i, c):
        k = c.cursor()
        nxt = time.perf_counter() + period * i / n       # spread like independent consoles
        states, full_at = states_of[i], full_at_of[i]
        while True:
            time.sleep(max(0.0, nxt - time.perf_counter()))
            if time.perf_counter() >= stop:
                return
            t0 = time.perf_counter()
            try:
                if stmts.get("probe"):
                    # the console sends the probe and the guarded queries in one pipeline
                    # with one sync (one round trip, one transaction); a multi-statement
                    # string is the same here. A forced run (every changes_max_age): the
                    # probe alone first, for its states (the server's work is the same).
                    force = states is None or t0 - full_at >= PROBE_MAX_AGE_S
                    if force:
                        k.execute("EXECUTE p_probe(%s, true, %s, '')", (states, "b%d" % i))
                        skip, states, _ = k.fetchone()
                        full_at = t0
                        k.execute(stmts["batch"])
                    else:
                        try:
                            k.execute(k.mogrify("EXECUTE p_probe(%s, false, %s, %s); ",
                                                (states, "b%d" % i, stmts["group"])).decode()
                                      + stmts["batch"])
                        except psycopg2.Error as e:
                            if B.UNCHANGED not in str(e):
                                raise
                else:
                    k.execute(stmts["batch"])
            except Exception as e:   # noqa: BLE001
                errs.append(str(e))
                return
            lat.append((time.perf_counter() - t0) * 1000)
            nxt += period

    th = [threading.Thread(target=run, args=(i, c)) for i, c in enumerate(conns)]
    t0, w0 = pg_cpu_s(), time.perf_counter()
    for t in th:
        t.start()
    for t in th:
        t.join()
    t1, w1 = pg_cpu_s(), time.perf_counter()
    for c in conns:
        c.close()
    return 100.0 * (t1 - t0) / (w1 - w0), lat, errs


def sources(n, secs, period):
    """n real PostgreSQL sources (rd-source-watch, the console's source on its loop) at
    poll `period`: PostgreSQL CPU over `secs` after WARMUP polls."""
    watch = B.watch_binary()
    if not watch:
        return 0.0, [], ["no rd-source-watch (ninja -C build-bench tests/integration/rd-source-watch)"]
    import tempfile
    home = tempfile.mkdtemp(prefix="rd-pgmany-")
    conf = B.write_config(os.path.join(home, "config"), [
        ("many", {"profile": "attune-era2", "poll": "%gs" % period, "page_size": "100",
                  "store": B.pg_dsn(B.attune_db()).replace("redrive-bench", "redrive")})])
    env = dict(B.base_env(home), REDRIVE_PROFILES=os.path.join(B.ROOT, "profiles"))
    ps = [subprocess.Popen([watch, conf], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True, env=env) for _ in range(n)]
    errs = []
    try:
        for p in ps:
            line = p.stdout.readline().strip()
            if line != "ready":
                errs.append("rd-source-watch: %r" % line)
        time.sleep(period * WARMUP)
        t0, w0 = pg_cpu_s(), time.perf_counter()
        time.sleep(secs)
        cpu = 100.0 * (pg_cpu_s() - t0) / (time.perf_counter() - w0)
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
    return cpu, [0.0] * int(n * secs / period), errs


def quiet_role(on):
    """The console's role as docs/profiles.md advises for many consoles: its errors not
    logged (log_min_messages = fatal), so the probe may end an unchanged refresh early."""
    c = B._connect("postgres")
    c.cursor().execute("ALTER ROLE redrive_ro IN DATABASE %s %s" % (
        B.attune_db(), "SET log_min_messages = fatal" if on else "RESET log_min_messages"))
    c.close()


def main():
    B.need_env("RD_PG_HOST", "RD_STACK_DIR")
    db, n, nw, _ = B.ensure_bench_attune()
    secs = float(os.environ.get("BENCH_MANY_S", "20"))
    consoles = int(os.environ.get("BENCH_CONSOLES", "50"))
    bench = "pg_many"
    q = B.profile_queries("attune-era2")
    prof = {"prepare": [("p_counts", q["counts"]), ("p_workers", q["workers"]), ("p_failing", q["failing"]),
                        ("p_execs", q["executions"])],
            "batch": "SET plan_cache_mode = force_custom_plan; EXECUTE p_counts; EXECUTE p_workers; "
                     "EXECUTE p_failing; EXECUTE p_execs(NULL, NULL, NULL, NULL, '101', '101', NULL)"}
    # as redrive runs them now: the parameterless queries as named statements (cached plans),
    # the first executions page too, its parameters written in (first_page_plan = cached);
    # deeper or filtered pages stay unnamed (custom plans)
    page1 = B.inline_params(q["executions"], [None, None, None, None, "101", "101", None])
    guarded = lambda i: [("p_probe", B.probe_sql(q["changes"]))] + [  # noqa: E731
        ("p_" + name, B.guard_sql(qn, sql, "b%d" % i))
        for name, qn, sql in (("counts", "counts", q["counts"]), ("workers", "workers", q["workers"]),
                              ("failing", "failing", q["failing"]), ("execs", "executions", page1))]
    named = "EXECUTE p_counts; EXECUTE p_workers; EXECUTE p_failing; EXECUTE p_execs"
    plain = {"prepare": prof["prepare"][:3] + [("p_execs", page1)], "batch": named}
    probed = {"prepare": guarded, "probe": True, "batch": named,
              "group": "counts,workers,failing,executions"}
    naive = {"prepare": [],
             "batch": "SELECT status, count(*) FROM attune.execution GROUP BY status; "
                      "SELECT * FROM attune.execution ORDER BY created DESC OFFSET %d LIMIT 100" % (n // 2)}
    base_t0, base_w0 = pg_cpu_s(), time.perf_counter()
    time.sleep(min(5.0, secs / 4))
    idle = 100.0 * (pg_cpu_s() - base_t0) / (time.perf_counter() - base_w0)
    cpu, lat, errs = loops(consoles, prof, secs, console=True)
    B.note("profile, every query planned every time (before issue 12): %d consoles, %d refreshes in %.0f s, %d errors%s" %
           (consoles, len(lat), secs, len(errs), (": " + errs[0][:200]) if errs else ""))
    ncpu_, nlat_, nerrs_ = loops(consoles, plain, secs, console=True)
    B.note("profile, named statements, no probe: %d consoles, %d refreshes, %d errors%s" %
           (consoles, len(nlat_), len(nerrs_), (": " + nerrs_[0][:200]) if nerrs_ else ""))
    pcpu, plat, perrs = loops(consoles, probed, secs, console=True)
    B.note("profile + change probe: %d consoles, %d refreshes in %.0f s, %d errors%s" %
           (consoles, len(plat), secs, len(perrs), (": " + perrs[0][:200]) if perrs else ""))
    quiet_role(True)
    try:
        qcpu, qlat, qerrs = loops(consoles, probed, secs, console=True)
        B.note("profile + change probe, role log_min_messages=fatal: %d consoles, %d refreshes, %d errors%s" %
               (consoles, len(qlat), len(qerrs), (": " + qerrs[0][:200]) if qerrs else ""))
        rqcpu, _, rqerrs = loops(consoles, {"redrive": True}, secs)
        B.note("redrive sources, role log_min_messages=fatal: %d, %d errors%s" %
               (consoles, len(rqerrs), (": " + rqerrs[0][:200]) if rqerrs else ""))
    finally:
        quiet_role(False)
    rcpu, _, rerrs = loops(consoles, {"redrive": True}, secs)
    B.note("redrive sources: %d, %d errors%s" % (consoles, len(rerrs), (": " + rerrs[0][:200]) if rerrs else ""))
    n_naive = max(1, consoles // 10)
    ncpu, nlat, nerrs = loops(n_naive, naive, secs)
    B.note("naive: %d consoles, %d refreshes, %d errors" % (n_naive, len(nlat), len(nerrs)))
    B.fig(bench, "PostgreSQL CPU, no consoles (baseline)", idle, "% core")
    B.fig(bench, "PostgreSQL CPU, %d redrive sources (rd-source-watch), store unchanged @2s" % consoles,
          rcpu, "% core", "<= 5 %")
    B.fig(bench, "PostgreSQL CPU, %d redrive sources, role log_min_messages=fatal, store unchanged @2s" % consoles,
          rqcpu, "% core", "<= 5 %")
    B.fig(bench, "redrive sources that failed to start", len(rerrs) + len(rqerrs), "sources", "0")
    B.fig(bench, "PostgreSQL CPU, %d consoles (profile + change probe, store unchanged) @2s" % consoles,
          pcpu, "% core", "<= 5 %")
    B.fig(bench, "PostgreSQL CPU, %d consoles (probe, role log_min_messages=fatal) @2s" % consoles,
          qcpu, "% core", "<= 5 %")
    B.fig(bench, "PostgreSQL CPU, %d consoles (named statements, no probe) @2s" % consoles, ncpu_, "% core")
    B.fig(bench, "PostgreSQL CPU, %d consoles (every query planned each time, no probe) @2s" % consoles,
          cpu, "% core")
    B.fig(bench, "refresh p50 with the probe", B.pct(plat, 50), "ms")
    B.fig(bench, "refresh round trip p50 under load", B.pct(lat, 50), "ms")
    B.fig(bench, "refresh round trip p99 under load", B.pct(lat, 99), "ms")
    B.fig(bench, "refreshes done / expected", "%d / %d" % (len(lat), int(consoles * secs / 2)), "refreshes")
    B.fig(bench, "PostgreSQL CPU, %d naive dashboards @2s" % n_naive, ncpu, "% core")
    B.fig(bench, "PostgreSQL CPU per console: naive / profile",
          (ncpu / n_naive) / (cpu / consoles) if cpu > 0 else 0.0, "x")


if __name__ == "__main__":
    main()
