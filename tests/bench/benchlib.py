"""Shared helpers of the redrive benchmarks (tests/bench).

Every bench prints its figures as lines
    FIG<TAB>bench<TAB>metric<TAB>value<TAB>unit<TAB>SPEC target (or "-")
which run.sh gathers into one table. Benchmarks never assert timings (noisy machine):
they print figures; ratios within one run are what to compare.

Environment: the local stack env (tests/stack/stack.sh start DIR && . DIR/env),
SCALE (default 1 = full SPEC §9 sizes), RD_BIN (default build-bench, else build).
"""
import os
import re
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def binary():
    b = os.environ.get("RD_BIN")
    if b:
        return b
    for d in ("build-bench", "build"):
        p = os.path.join(ROOT, d, "src", "cli", "redrive")
        if os.path.exists(p):
            return p
    sys.exit("bench: no redrive binary (set RD_BIN or build build-bench)")


def scale():
    try:
        return float(os.environ.get("SCALE", "1"))
    except ValueError:
        return 1.0


def scaled(n, minimum=1):
    return max(minimum, int(round(n * scale())))


def need_env(*names):
    missing = [n for n in names if not os.environ.get(n)]
    if missing:
        sys.exit("bench: needs the local stack env (missing %s): . DIR/env" % ", ".join(missing))


def _console_options():
    """The session settings the console's PostgreSQL source always adds, read from
    src/sources/pg_conn.h (PG_SESSION_OPTIONS: its string literals joined)."""
    text = open(os.path.join(ROOT, "src", "sources", "pg_conn.h"), encoding="utf-8").read()
    m = re.search(r"#define PG_SESSION_OPTIONS((?:[^\n]*\\\n)*[^\n]*)", text)
    return "".join(re.findall(r'"([^"]*)"', m.group(1)))


CONSOLE_OPTIONS = _console_options()


def console_settings(cur):
    """SETs the console's session settings on an open session (one that had to write first)."""
    for name, value in re.findall(r"-c (\w+)=(\S+)", CONSOLE_OPTIONS):
        if name != "default_transaction_read_only":
            cur.execute("SET %s = %s" % (name, value))


def pg_dsn(db, admin=False, console=False):
    """console=True: a session set up exactly as redrive's source sets its own."""
    need_env("RD_PG_HOST", "RD_PG_PORT")
    dsn = "host=%s port=%s dbname=%s user=%s application_name=redrive-bench" % (
        os.environ["RD_PG_HOST"], os.environ["RD_PG_PORT"], db, "postgres" if admin else "redrive_ro")
    if console:
        dsn += " options='%s'" % CONSOLE_OPTIONS
    return dsn


def redis_url(db):
    need_env("RD_REDIS_PORT")
    return "redis://127.0.0.1:%s/%d" % (os.environ["RD_REDIS_PORT"], db)


def fig(bench, metric, value, unit, target="-"):
    if isinstance(value, float):
        value = ("%.3f" % value) if abs(value) < 10 else ("%.1f" % value)
    print("FIG\t%s\t%s\t%s\t%s\t%s" % (bench, metric, value, unit, target), flush=True)


def note(msg):
    print("# " + msg, flush=True)


def pct(values, p):
    v = sorted(values)
    if not v:
        return float("nan")
    k = (len(v) - 1) * p / 100.0
    lo, hi = int(k), min(int(k) + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


def median(values):
    return statistics.median(values) if values else float("nan")


def profile_queries(name_or_path):
    """[query NAME] sections of a profile file: {name: sql}."""
    path = name_or_path if os.path.sep in name_or_path else os.path.join(ROOT, "profiles", name_or_path + ".profile")
    out, cur, buf = {}, None, []
    for line in open(path, encoding="utf-8"):
        m = re.match(r"^\[(\w+)(?:\s+([\w-]+))?(?:\s+(?:optional|required))?\]\s*$", line)
        if m:
            if cur:
                out[cur] = "".join(buf).strip()
            cur = m.group(2) if m.group(1) == "query" else None
            buf = []
        elif cur:
            buf.append(line)
    if cur:
        out[cur] = "".join(buf).strip()
    return out


def base_env(home):
    """The environment the console / snapshot runs with (pinned like tests/tui)."""
    env = {k: v for k, v in os.environ.items() if k.startswith("RD_")}
    env.update(PATH="/usr/bin:/bin", TERM="xterm-256color", LANG="C.UTF-8", LC_ALL="C.UTF-8", TZ="UTC",
               HOME=home, XDG_STATE_HOME=os.path.join(home, "state"), XDG_CONFIG_HOME=os.path.join(home, "cfg"),
               ESCDELAY="25")
    return env


def run_rusage(argv, env, timeout=60):
    """Run a child with fork/exec + wait4: (wall s, max RSS KiB, status, stdout, stderr)."""
    import tempfile
    with tempfile.TemporaryFile() as fo, tempfile.TemporaryFile() as fe:
        t0 = time.perf_counter()
        pid = os.fork()
        if pid == 0:
            try:
                os.dup2(fo.fileno(), 1)
                os.dup2(fe.fileno(), 2)
                os.execve(argv[0], argv, env)
            finally:
                os._exit(127)
        import threading
        killer = threading.Timer(timeout, lambda: _kill_quiet(pid))
        killer.start()
        try:
            _, status, ru = os.wait4(pid, 0)
        finally:
            killer.cancel()
        wall = time.perf_counter() - t0
        fo.seek(0)
        fe.seek(0)
        code = os.waitstatus_to_exitcode(status)
        return wall, ru.ru_maxrss, code, fo.read(), fe.read()


def run_rss(argv, env, timeout=60):
    """(wall s, max RSS KiB, status, stdout, stderr) of argv started by /usr/bin/time.
    ru_maxrss of a child forked from this Python would include this Python's pages (the
    kernel keeps the high-water mark of the address space replaced at exec): ~20 MiB here.
    GNU time is ~1 MiB, so its wait4 figure is redrive's own."""
    with tempfile.NamedTemporaryFile() as f:
        w, _, code, out, err = run_rusage(["/usr/bin/time", "-f", "%M", "-o", f.name] + argv, env,
                                          timeout)
        f.seek(0)
        text = f.read().decode().split()
    return w, int(text[-1]) if text else 0, code, out, err


def read_loop_trace(path, since=None, until=None):
    """What REDRIVE_LOOP_TRACE wrote (src/io/loop.h): the summary line as a dict of floats,
    plus "slow": [(end time, CPU ms)] of the iterations listed (over 1 ms of CPU or of
    callback wall), "iters": the same as dicts (at, cpu, wall, preempt, minflt, ran: what
    ran, as the trace says it), and with since/until (time.monotonic values: the same clock)
    "window_max_ms"/"window_over_1ms"/"window_over_2ms" (CPU) and "window_wall_over_1ms" for
    those that ended inside it, "window_iters" the listed ones in it.
    {} when the binary wrote none (it did not return from its loop)."""
    if not os.path.exists(path):
        return {}
    d, iters, run = {}, [], []
    for line in open(path):                  # several runs may append: the last one's
        w = line.split()
        if w and w[0] == "slow":
            it = {"at": float(w[2]), "cpu": float(w[4])}
            for k in range(5, len(w) - 1, 2):    # wall_ms W preempt P block B minflt F ran TEXT
                if w[k] == "ran":
                    it["ran"] = " ".join(w[k + 1:])
                    break
                it[w[k]] = float(w[k + 1])
            it.setdefault("wall_ms", 0.0)
            it.setdefault("ran", "?")
            run.append(it)
        elif w:
            d = {w[i]: float(w[i + 1]) for i in range(0, len(w) - 1, 2)}
            iters, run = run, []
    if not d:
        return {}
    d["iters"] = iters
    d["slow"] = [(it["at"], it["cpu"]) for it in iters if it["cpu"] > 1.0]
    if since is not None:
        win = [it for it in iters if since <= it["at"] <= (until if until is not None else it["at"])]
        cpu = [it["cpu"] for it in win if it["cpu"] > 1.0]
        d["window_iters"] = win
        d["window_max_ms"] = max(cpu) if cpu else 0.0
        d["window_over_1ms"] = float(len(cpu))
        d["window_over_2ms"] = float(sum(1 for c in cpu if c > 2.0))
        d["window_wall_over_1ms"] = float(sum(1 for it in win if it["wall_ms"] > 1.0))
    return d


def describe_iteration(it):
    """One listed iteration as a note: its CPU / callback wall, preemptions and page faults,
    then what ran (the costliest first; PARENT>SPAN a part timed inside a callback)."""
    ran = it["ran"].replace(",", ", ")
    return "%.2f ms CPU / %.2f ms wall%s%s%s: %s" % (
        it["cpu"], it["wall_ms"], ", preempted %d" % it["preempt"] if it.get("preempt") else "",
        ", blocked %d" % it["block"] if it.get("block") else "",
        ", %d page faults" % it["minflt"] if it.get("minflt") else "", ran)


def attribution(iters):
    """{callback: (count, max iteration CPU ms)} over listed iterations, each counted under
    its costliest callback (the trace lists them by the larger of CPU and wall)."""
    out = {}
    for it in iters:
        first = it["ran"].split(",")[0]
        name = first.rsplit(":", 1)[0] if ":" in first else first
        c, m = out.get(name, (0, 0.0))
        out[name] = (c + 1, max(m, it["cpu"]))
    return out


def loop_figures(bench, label, loop):
    """The event loop's costliest iterations (CPU): the longest a key can wait behind work,
    each listed with what ran in it (issue 38: every iteration over 1 ms attributed).
    With a window (read_loop_trace since/until): the ones inside it; the run's own start
    (libraries loaded, first paint) is the start bench's."""
    if not loop:
        note("%s: no loop trace (the binary did not return from its loop)" % label)
        return
    fig(bench, "%s: loop iterations (whole run)" % label, loop["iterations"], "iterations")
    if loop.get("listed", 0) >= 20000:
        note("%s: the loop trace listed its first 20,000 slow iterations only: later ones are missing"
             % label)
    fig(bench, "%s: costliest loop iteration, whole run, CPU" % label, loop["cpu_max_ms"], "ms")
    if "window_max_ms" in loop:
        # the trace lists only the iterations over 1 ms: none in the window reads "< 1"
        fig(bench, "%s: costliest loop iteration while keys were sent, CPU" % label,
            loop["window_max_ms"] if loop["window_over_1ms"] else "< 1", "ms",
            "<= 2 ms (a key's own paint in it)")
        fig(bench, "%s: loop iterations over 1 ms CPU while keys were sent" % label,
            loop["window_over_1ms"], "iterations", "0")
        fig(bench, "%s: loop iterations over 2 ms CPU while keys were sent" % label,
            loop["window_over_2ms"], "iterations", "0")
        fig(bench, "%s: loop iterations over 1 ms of callback wall while keys were sent" % label,
            loop["window_wall_over_1ms"], "iterations", "0")
        shown = loop["window_iters"]
    else:
        fig(bench, "%s: loop iterations over 1 ms CPU" % label, loop["over_1ms"], "iterations", "0")
        shown = loop["iters"]
    for it in shown[:40]:
        note("%s: iteration %s" % (label, describe_iteration(it)))
    if len(shown) > 40:
        note("%s: ... and %d more iterations over 1 ms" % (label, len(shown) - 40))
    for name, (cnt, mx) in sorted(attribution(shown).items(), key=lambda kv: -kv[1][1]):
        note("%s: led by %s (its costliest callback, by CPU or wall): %d iterations, up to %.2f ms of "
             "the iteration's CPU" % (label, name, cnt, mx))
    if "window_iters" in loop:               # and the run's costliest, wherever they were
        for it in sorted(loop["iters"], key=lambda x: -x["cpu"])[:5]:
            note("%s: whole run, costliest iteration %s" % (label, describe_iteration(it)))


def _kill_quiet(pid):
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def proc_cpu_ticks(pid):
    """utime + stime of a process in clock ticks (/proc/PID/stat)."""
    with open("/proc/%d/stat" % pid) as f:
        s = f.read()
    fields = s[s.rindex(")") + 2:].split()
    return int(fields[11]) + int(fields[12])


def proc_sched(pid):
    """(CPU ns, sleeps) of a process summed over its threads: sum_exec_runtime from
    /proc/PID/task/*/schedstat (ns, not 10 ms ticks) and voluntary context switches (each a
    sleep ended by a wake-up)."""
    ns = sleeps = 0
    for t in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/schedstat" % (pid, t)) as f:
            ns += int(f.read().split()[0])
        with open("/proc/%d/task/%s/status" % (pid, t)) as f:
            for line in f:
                if line.startswith("voluntary_ctxt_switches:"):
                    sleeps += int(line.split()[1])
    return ns, sleeps


def proc_rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def proc_uss_kib(pid):
    """Private memory (USS: Private_Clean + Private_Dirty of /proc/PID/smaps_rollup), KiB:
    what this process costs the machine beyond the shared library pages RSS also counts."""
    d = {}
    with open("/proc/%d/smaps_rollup" % pid) as f:
        for line in f:
            p = line.split()
            if len(p) >= 2 and p[0].endswith(":") and p[1].isdigit():
                d[p[0][:-1]] = int(p[1])
    return d["Private_Clean"] + d["Private_Dirty"]


CLK_TCK = os.sysconf("SC_CLK_TCK")


# ---- the bench Attune database (era 2 schema, its own database: fixtures untouched) ----

ATTUNE_DB = "bench_attune"
ATTUNE_DATA_VERSION = 2   # 2: Attune's own (status, created) index in the schema
N_EXEC_FULL, N_WORKERS_FULL = 1_000_000, 10_000

ERRORS = ["Connection refused by upstream (transient)", "Worker queue TTL expired",
          "Execution timed out after 300s", "Worker heartbeat stale for 95s",
          "ZeroDivisionError: division by zero", "exit status 2",
          "Temporary connection reset by peer", "Request timed out waiting for payments API"]


def attune_sizes():
    return scaled(N_EXEC_FULL, 1000), scaled(N_WORKERS_FULL, 20)


def attune_db():
    """bench_attune at full size; a scaled run gets its own database (no rebuild ping-pong)."""
    n, _ = attune_sizes()
    return ATTUNE_DB if n == N_EXEC_FULL else "%s_%d" % (ATTUNE_DB, n)


def _connect(db, admin=True):
    import psycopg2
    c = psycopg2.connect(pg_dsn(db, admin))
    c.autocommit = True
    return c


def ensure_bench_attune(n_exec=None, n_workers=None, rebuild=None):
    """Create (or reuse when it already holds these sizes) database bench_attune.
    Returns (db name, n_exec, n_workers, seconds spent loading or 0)."""
    ATTUNE_DB = attune_db()
    if n_exec is None:
        n_exec, n_workers = attune_sizes()
    if rebuild is None:
        rebuild = os.environ.get("BENCH_REBUILD") == "1"
    admin = _connect("postgres")
    cur = admin.cursor()
    cur.execute("SELECT 1 FROM pg_database WHERE datname = %s", (ATTUNE_DB,))
    exists = cur.fetchone() is not None
    if exists and not rebuild:
        try:
            c = _connect(ATTUNE_DB)
            k = c.cursor()
            k.execute("SELECT n_exec, n_workers, version FROM public.bench_meta")
            row = k.fetchone()
            c.close()
            if row == (n_exec, n_workers, ATTUNE_DATA_VERSION):
                admin.close()
                return ATTUNE_DB, n_exec, n_workers, 0.0
        except Exception:
            pass
    t0 = time.perf_counter()
    if exists:
        cur.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
                    (ATTUNE_DB,))
        cur.execute('DROP DATABASE "%s"' % ATTUNE_DB)
    cur.execute('CREATE DATABASE "%s"' % ATTUNE_DB)
    cur.execute("ALTER DATABASE %s SET search_path = attune, public" % ATTUNE_DB)
    cur.execute("SELECT 1 FROM pg_roles WHERE rolname = 'redrive_ro'")
    if cur.fetchone():
        cur.execute('GRANT CONNECT ON DATABASE "%s" TO redrive_ro' % ATTUNE_DB)
    admin.close()

    c = _connect(ATTUNE_DB)
    k = c.cursor()
    k.execute(open(os.path.join(ROOT, "tests", "stack", "schema", "attune_era2.sql"), encoding="utf-8").read())
    k.execute("SET search_path = attune, public")
    k.execute("SET session_replication_role = replica")       # no FK / trigger work while loading
    k.execute("SET maintenance_work_mem = '256MB'")
    k.execute("SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'attune' AND tablename = 'execution' "
              "AND indexname <> 'execution_pkey'")
    idx = k.fetchall()
    for name, _ in idx:
        k.execute("DROP INDEX attune.%s" % name)
    k.execute("INSERT INTO action (id, ref, label) VALUES (1, 'core.http_request', 'HTTP'), (2, 'core.shell', 'Shell'), "
              "(3, 'deploy.rollout', 'Rollout'), (4, 'billing.charge', 'Charge'), (5, 'etl.nightly', 'ETL')")
    nw = n_workers
    k.execute("""
INSERT INTO worker (id, name, worker_type, worker_role, status, capabilities, last_heartbeat,
                    cordoned, cordon_reason, cordoned_at)
SELECT i, 'bench-worker-' || i,
       (ARRAY['local', 'remote', 'container'])[1 + i %% 3]::worker_type_enum, 'action',
       (CASE WHEN i %% 50 = 0 THEN 'error' WHEN i %% 20 = 0 THEN 'inactive' ELSE 'active' END)::worker_status_enum,
       CASE WHEN i %% 11 = 0 THEN '{}'::jsonb ELSE
       jsonb_build_object('runtimes', jsonb_build_array('python', 'shell'), 'max_concurrent_executions', 10,
                          'health', jsonb_build_object(
                              'status', CASE WHEN i %% 30 = 0 THEN 'degraded' WHEN i %% 50 = 0 THEN 'unhealthy' ELSE 'healthy' END,
                              'queue_depth', i %% 70, 'consecutive_failures', i %% 7,
                              'total_executions', 1000, 'failed_executions', i %% 100)) END,
       CASE WHEN i %% 13 = 0 THEN NULL ELSE now() - (i %% 600) * interval '1 second' END,
       i %% 97 = 0, CASE WHEN i %% 97 = 0 THEN 'bench cordon' END, CASE WHEN i %% 97 = 0 THEN now() END
  FROM generate_series(1, %(nw)s) i""", {"nw": nw})
    # Executions: created every 2 s up to now, id order = created order. Chains every 50 ids
    # (m = 1 failed root, m = 2 failed retry 1, m = 3 retry 2 completed or failed). The newest
    # 0.5 %% are live (running, scheduled, ...); older rows are terminal.
    live_from = n_exec - max(500, n_exec // 200)
    k.execute("""
INSERT INTO execution (id, action, action_ref, config, status, result, created, updated, retry_count,
                       max_retries, retry_reason, original_execution, worker, started_at)
SELECT i, 1 + i %% 5, (ARRAY['core.http_request', 'core.shell', 'deploy.rollout', 'billing.charge', 'etl.nightly'])[1 + i %% 5],
       CASE WHEN m IN (2, 3) THEN jsonb_build_object('n', i, 'retry_of', i - 1) ELSE jsonb_build_object('n', i) END,
       st::execution_status_enum,
       CASE WHEN st = 'failed' THEN jsonb_build_object('error', (%(errs)s::text[])[1 + h %% 8])
            WHEN st = 'timeout' THEN '{"error": "Execution exceeded timeout of 600s"}'::jsonb
            WHEN st = 'cancelled' THEN '{"message": "Cancelled by operator"}'::jsonb
            WHEN st = 'completed' THEN '{"ok": true}'::jsonb END,
       c, c + interval '3 seconds',
       CASE WHEN m IN (2, 3) THEN m - 1 ELSE 0 END,
       CASE WHEN m IN (1, 2, 3) THEN 3 WHEN st = 'failed' THEN (ARRAY[NULL, 0, 3])[1 + h %% 3] END,
       CASE WHEN m IN (2, 3) THEN (ARRAY['transient_error', 'worker_unavailable', 'queue_timeout'])[1 + h %% 3] END,
       CASE WHEN m IN (2, 3) THEN i - m + 1 END,
       1 + i %% %(nw)s,
       c + interval '1 second'
  FROM (SELECT i, c, m, h,
               CASE WHEN m IN (1, 2) THEN 'failed'
                    WHEN m = 3 THEN CASE WHEN h < 500 THEN 'completed' ELSE 'failed' END
                    WHEN i > %(live)s THEN
                         CASE WHEN h < 400 THEN 'completed' WHEN h < 460 THEN 'failed' WHEN h < 700 THEN 'running'
                              WHEN h < 820 THEN 'scheduled' WHEN h < 920 THEN 'requested' WHEN h < 960 THEN 'scheduling'
                              WHEN h < 980 THEN 'canceling' ELSE 'cancelled' END
                    ELSE CASE WHEN h < 880 THEN 'completed' WHEN h < 950 THEN 'failed' WHEN h < 975 THEN 'cancelled'
                              WHEN h < 992 THEN 'timeout' ELSE 'abandoned' END END AS st
          FROM (SELECT i, now() - (%(n)s - i) * interval '2 seconds' AS c, i %% 50 AS m, (i::bigint * 7919) %% 1000 AS h
                  FROM generate_series(1, %(n)s) i) g) s""",
              {"n": n_exec, "nw": nw, "live": live_from, "errs": ERRORS})
    for _, ddl in idx:
        k.execute(ddl)
    k.execute("SELECT setval(pg_get_serial_sequence('attune.execution', 'id'), %s)", (n_exec + 1,))
    k.execute("SELECT setval(pg_get_serial_sequence('attune.worker', 'id'), %s)", (nw + 1,))
    k.execute("SET session_replication_role = origin")
    k.execute("VACUUM (ANALYZE) attune.execution")
    k.execute("VACUUM (ANALYZE) attune.worker")
    k.execute("ANALYZE")
    k.execute("GRANT USAGE ON SCHEMA attune TO redrive_ro")
    k.execute("GRANT SELECT ON ALL TABLES IN SCHEMA attune TO redrive_ro")
    k.execute("GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA attune TO redrive_ro")
    k.execute("CREATE TABLE public.bench_meta (n_exec int, n_workers int, version int)")
    k.execute("INSERT INTO public.bench_meta VALUES (%s, %s, %s)", (n_exec, nw, ATTUNE_DATA_VERSION))
    k.execute("GRANT SELECT ON public.bench_meta TO redrive_ro")
    c.close()
    return ATTUNE_DB, n_exec, nw, time.perf_counter() - t0


# Attune's execution indexes as its own migration creates them (AndroxxTraxxon/attune,
# migrations/20250101000005_execution_and_operations.sql; the GIN indexes on result and
# env_vars and the unique enforcement index left out: no query of redrive's reads them,
# and each costs minutes to build at 10M). No (created, id), no partial index on failed,
# no index on config.
ATTUNE_REAL_INDEXES = [
    "idx_execution_action ON execution (action)",
    "idx_execution_action_ref ON execution (action_ref)",
    "idx_execution_parent ON execution (parent)",
    "idx_execution_enforcement ON execution (enforcement)",
    "idx_execution_executor ON execution (executor)",
    "idx_execution_worker ON execution (worker)",
    "idx_execution_status ON execution (status)",
    "idx_execution_created ON execution (created DESC)",
    "idx_execution_updated ON execution (updated DESC)",
    "idx_execution_status_created ON execution (status, created DESC)",
    "idx_execution_status_updated ON execution (status, updated DESC)",
    "idx_execution_action_status ON execution (action, status)",
    "idx_execution_worker_created ON execution (worker, created DESC)",
    "idx_execution_parent_created ON execution (parent, created DESC)",
    "idx_execution_original_execution ON execution (original_execution) WHERE original_execution IS NOT NULL",
    "idx_execution_status_retry ON execution (status, retry_count)"
    " WHERE status = 'failed' AND retry_count < COALESCE(max_retries, 0)",
    "idx_execution_top_level_created ON execution (created DESC) WHERE parent IS NULL",
]


def use_real_indexes(cur):
    """Replaces every index of attune.execution but its primary key by ATTUNE_REAL_INDEXES."""
    cur.execute("SET search_path = attune, public")
    cur.execute("SET maintenance_work_mem = '256MB'")
    cur.execute("SELECT indexname FROM pg_indexes WHERE schemaname = 'attune' AND tablename = 'execution' "
                "AND indexname <> 'execution_pkey'")
    for (name,) in cur.fetchall():
        cur.execute("DROP INDEX attune.%s" % name)
    for ddl in ATTUNE_REAL_INDEXES:
        cur.execute("CREATE INDEX " + ddl)
    cur.execute("ANALYZE attune.execution")


def ensure_real_attune(db):
    """<db>_real: a copy of the bench database (same rows, same load) whose execution table
    has only the indexes of Attune's own migration (ATTUNE_REAL_INDEXES). Reused while it
    holds the same load as <db> (its newest execution). Returns (name, seconds spent)."""
    real = db + "_real"
    def newest(name):
        try:
            c = _connect(name)
        except Exception:
            return None
        k = c.cursor()
        try:
            k.execute("SELECT max(created)::text, (SELECT version FROM public.bench_meta) FROM attune.execution")
            return k.fetchone()
        except Exception:
            return None
        finally:
            c.close()
    want = newest(db)
    if want is not None and newest(real) == want:
        return real, 0.0
    t0 = time.perf_counter()
    admin = _connect("postgres")
    cur = admin.cursor()
    cur.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname IN (%s, %s) "
                "AND pid <> pg_backend_pid()", (db, real))
    cur.execute('DROP DATABASE IF EXISTS "%s"' % real)
    cur.execute('CREATE DATABASE "%s" TEMPLATE "%s"' % (real, db))
    cur.execute('ALTER DATABASE "%s" SET search_path = attune, public' % real)
    cur.execute("SELECT 1 FROM pg_roles WHERE rolname = 'redrive_ro'")
    if cur.fetchone():
        cur.execute('GRANT CONNECT ON DATABASE "%s" TO redrive_ro' % real)
    admin.close()
    c = _connect(real)
    use_real_indexes(c.cursor())
    c.close()
    return real, time.perf_counter() - t0


def write_config(path, systems):
    """systems: [(name, {key: value})] -> an INI config file."""
    with open(path, "w") as f:
        for name, kv in systems:
            f.write('[system "%s"]\n' % name)
            for k, v in kv.items():
                f.write("%s = %s\n" % (k, v))
            f.write("\n")
    os.chmod(path, 0o600)
    return path


# ---- the console in a pty ----

class Console:
    """redrive in a pty (pexpect), output fed to pyte; counts every byte written."""

    def __init__(self, conf, home, cols=120, rows=40, extra_env=None, args=()):
        import pexpect
        import pyte
        sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))   # tests/
        import lib.pyte_rep  # noqa: F401  (CSI b, as ncurses sends it on xterm-256color)
        env = base_env(home)
        env.update(extra_env or {})
        self.screen = pyte.Screen(cols, rows)
        self.stream = pyte.ByteStream(self.screen)
        self.nbytes = 0
        self.t_spawn = time.perf_counter()
        self.child = pexpect.spawn(binary(), ["--config", conf] + list(args), env=env,
                                   dimensions=(rows, cols), timeout=10)
        self.child.delaybeforesend = None      # pexpect sleeps 50 ms before each send by default

    def pump(self, secs=0.05, feed=True):
        import pexpect
        end = time.perf_counter() + secs
        got = 0
        while True:
            left = end - time.perf_counter()
            if left <= 0:
                break
            try:
                data = self.child.read_nonblocking(65536, timeout=min(left, 0.05))
            except pexpect.TIMEOUT:
                continue
            except pexpect.EOF:
                break
            got += len(data)
            self.nbytes += len(data)
            if feed:
                self.stream.feed(data)
        return got

    def text(self):
        return "\n".join(self.screen.display)

    def wait_for(self, needle, secs=10):
        end = time.perf_counter() + secs
        while time.perf_counter() < end:
            self.pump(0.005)
            if needle in self.text():
                return time.perf_counter()
        raise AssertionError("%r not on screen:\n%s" % (needle, self.text()))

    def close(self):
        try:
            self.child.send("Q")
            self.pump(0.3)
        except Exception:
            pass
        self.child.terminate(force=True)


def keys_to_paint(c, seq, pace):
    """Sends the keys of seq to the console c (a Console) one every pace seconds and times
    each from outside: key written to the pty -> the first byte of output after it. A key
    with no output within its slot stays pending and is answered by the next output; one
    never answered counts with the time it waited by the end. Returns (latencies in ms, one
    per key; keys late for their slot; keys never answered; perf_counter at the start)."""
    lat = [None] * len(seq)
    late = 0
    pending = []                          # (key index, time sent), oldest first
    t0 = time.perf_counter()

    def answer(now):
        for j, ts in pending:
            lat[j] = (now - ts) * 1000
        pending.clear()

    for i, k in enumerate(seq):
        c.child.send(k)
        pending.append((i, time.perf_counter()))
        slot_end = t0 + (i + 1) * pace
        while True:                       # steady pace; keep draining the pty (bytes only)
            got = c.pump(0.001, feed=False)
            now = time.perf_counter()
            if got:
                answer(now)
            if now >= slot_end:
                break
        late += sum(1 for j, _ in pending if j == i)
    end = time.perf_counter() + max(0.5, 10 * pace)
    while pending and time.perf_counter() < end:
        if c.pump(0.001, feed=False):
            answer(time.perf_counter())
    unanswered = len(pending)
    answer(time.perf_counter())           # never answered: at least this long
    return lat, late, unanswered, t0


class StalledListener:
    """A TCP listener that accepts connections and never answers (a stalled store)."""

    def __init__(self):
        import socket
        import threading
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.conns = []
        self.stop = False
        self.t = threading.Thread(target=self._run, daemon=True)
        self.t.start()

    def _run(self):
        while not self.stop:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(c)

    def close(self):
        self.stop = True
        for c in self.conns:
            c.close()
        self.sock.close()


def bench_config(home, stalled_port=None, poll="2s"):
    """The console config of the latency / idle / start benches: the bench Attune database
    (plus, optionally, systems whose stores stall)."""
    systems = [("bench", {"profile": "attune-era2", "store": pg_dsn(attune_db()).replace("redrive-bench", "redrive"),
                          "poll": poll})]
    if stalled_port:
        systems.append(("stalled-pg", {"profile": "attune-era2", "poll": poll,
                                       "store": "host=127.0.0.1 port=%d dbname=x user=redrive_ro" % stalled_port}))
        systems.append(("stalled-redis", {"profile": "alakai", "poll": poll,
                                          "store": "redis://127.0.0.1:%d/0" % stalled_port}))
    return write_config(os.path.join(home, "config"), systems)


# ---- the change probe as the console sends it (src/sources/pg_changes.c) ----

def _c_string(name):
    """The concatenated C string literal `static const char NAME[] = "..." "...";`."""
    src = open(os.path.join(ROOT, "src", "sources", "pg_changes.c"), encoding="utf-8").read()
    m = re.search(r"static const char %s\[\] =\s*((?:\"(?:[^\"\\]|\\.)*\"\s*)+);" % name, src)
    assert m, name
    lits = re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(1))
    return "".join(bytes(x, "utf-8").decode("unicode_escape") for x in lits)


def probe_sql(changes_sql):
    """The probe statement redrive builds around a profile's [query changes]:
    $1 last states, $2 force, $3 nonce, $4 the queries sharing its sync -> (skip, states,
    unchanged); fails on purpose ('redrive-unchanged') when every query of $4 is unchanged
    and the session's log_min_messages is fatal or panic."""
    return (_c_string("PROBE_HEAD") + changes_sql.rstrip().rstrip(";") + _c_string("PROBE_TAIL")
            + _c_string("PROBE_FROM"))


def guard_sql(name, sql, nonce):
    """A refresh query wrapped in the probe's guard (pg_changes_guard)."""
    return ("SELECT * FROM (\n%s\n) rd_q\n"
            "WHERE strpos(COALESCE(current_setting('redrive.skip', true), ''), '%s:') <> 1\n"
            "   OR strpos(current_setting('redrive.skip', true), ',%s,') = 0"
            % (sql.rstrip().rstrip(";"), nonce, name))


def inline_params(sql, params):
    """sql with $1..$n written in as literals (pg_sql_inline: the first executions page as a
    parameterless statement)."""
    for i in range(len(params), 0, -1):
        v = params[i - 1]
        sql = re.sub(r"(?<![\w$])\$%d(?!\d)" % i, "NULL" if v is None else "'%s'" % str(v).replace("'", "''"), sql)
    return sql


UNCHANGED = "redrive-unchanged"   # the probe's deliberate error (pg_changes.c)


def watch_binary():
    """rd-source-watch (the PostgreSQL source on a loop, tests/integration/source_watch.c)
    of the build the bench uses (RD_WATCH: another one)."""
    if os.environ.get("RD_WATCH"):
        return os.environ["RD_WATCH"]
    for d in ("build-bench", "build"):
        p = os.path.join(ROOT, d, "tests", "integration", "rd-source-watch")
        if os.path.exists(p):
            return p
    return None
