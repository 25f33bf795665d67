#!/usr/bin/python3
"""bench_standout: what stands out about the error groups (issue 36) at 1,000,000 Attune
executions (SCALE) on Attune's own index set (benchlib.ensure_real_attune), with an
incident of INCIDENT failures (default 20,000) written into the last hour: 60 % of them on
one worker and one action of their own, the rest spread, one error fingerprint.

Measured (server = EXPLAIN (ANALYZE, BUFFERS) planning + execution, plans made for the
parameters as redrive's unnamed statements are, median of BENCH_RUNS, default 5):
  - [query groups_window]: the window's baseline, one grouped read of the hour's executions
    (worker, action, attempt; the worker's host): its server time and rows examined;
  - [query groups] with the worker column (this change) and as it was before (the profile
    of the branch's base, `git show main:profiles/attune-era2.profile`): the added grouping
    key's cost;
  - the naive way for comparison: the baseline per group (one grouped query per group:
    here one group, so the figure is per group);
  - `redrive snapshot --view groups --json` wall (groups + baseline + the lists in C), and
    that the concentration is listed (its first item and shares printed).
The incident is deleted afterwards. Figures only: no timed assertion."""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B  # noqa: E402

INCIDENT = int(os.environ.get("BENCH_INCIDENT", "20000"))
RUNS = int(os.environ.get("BENCH_RUNS", "5"))


def explain(cur, sql):
    cur.execute("EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, FORMAT JSON) " + sql)
    doc = cur.fetchone()[0]
    doc = json.loads(doc) if isinstance(doc, str) else doc
    top = doc[0]
    rows = [0]

    def walk(p):
        if p.get("Relation Name") == "execution" and p.get("Node Type", "").endswith("Scan"):
            rows[0] += int(p.get("Actual Rows", 0) * p.get("Actual Loops", 1))
        for c in p.get("Plans", []):
            walk(c)
    walk(top["Plan"])
    return top.get("Planning Time", 0) + top.get("Execution Time", 0), rows[0]


def server(cur, name, sql, params):
    cur.execute("DEALLOCATE ALL")
    cur.execute("SET plan_cache_mode = force_custom_plan")
    cur.execute("PREPARE %s AS %s" % (name, sql))
    times, rows = [], 0
    for _ in range(RUNS):
        t, rows = explain(cur, "EXECUTE %s(%s)" % (name, params))
        times.append(t)
    return statistics.median(times), rows


def base_profile_groups():
    """The groups query as the branch's base had it (no worker column)."""
    try:
        text = subprocess.run(["git", "-C", B.ROOT, "show", "main:profiles/attune-era2.profile"],
                              capture_output=True, check=True).stdout.decode()
    except Exception:
        return None
    with tempfile.NamedTemporaryFile("w", suffix=".profile", delete=False) as f:
        f.write(text)
        path = f.name
    try:
        return B.profile_queries(path).get("groups")
    finally:
        os.unlink(path)


NAIVE = """SELECT 'worker' AS dimension, worker::text AS value, count(*) AS n FROM execution
 WHERE created > now() - make_interval(secs => $1::float8) GROUP BY worker
UNION ALL SELECT 'action', action_ref, count(*) FROM execution
 WHERE created > now() - make_interval(secs => $1::float8) GROUP BY action_ref
UNION ALL SELECT 'worker_in_group', worker::text, count(*) FROM execution
 WHERE created > now() - make_interval(secs => $1::float8) AND status = 'failed'
   AND result->>'error' LIKE $2 GROUP BY worker"""


def main():
    B.need_env("RD_PG_HOST", "RD_PG_PORT")
    db, n, nw, _ = B.ensure_bench_attune()
    real, _ = B.ensure_real_attune(db)
    import psycopg2
    conn = psycopg2.connect(B.pg_dsn(real, admin=True))
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute("SET search_path = attune, public")
    cur.execute("SELECT max(id) FROM execution")
    top = cur.fetchone()[0]
    cur.execute("SELECT count(*) FROM execution WHERE created > now() - interval '1 hour'")
    before_hour = cur.fetchone()[0]
    # 60 % on worker 7 and action ingest.parse, the rest over every worker and the usual actions
    cur.execute("INSERT INTO execution (id, action, action_ref, status, result, created, updated, retry_count,"
                " max_retries, worker) SELECT %s + g, 1,"
                " CASE WHEN g %% 10 < 6 THEN 'ingest.parse' ELSE 'billing.charge' END, 'failed',"
                " jsonb_build_object('error', format('Parser choked on record %%s at offset %%s', g, g * 7)),"
                " now() - interval '3300 seconds' + g * (interval '3000 seconds' / %s), now(), 0, 3,"
                " CASE WHEN g %% 10 < 6 THEN 7 ELSE 1 + g %% %s END"
                " FROM generate_series(1, %s) g", (top, INCIDENT, nw, INCIDENT))
    cur.execute("ANALYZE execution")
    try:
        q = B.profile_queries("attune-era2")
        B.note("bench_standout: %d executions (%d in the hour before the incident) + a %d-failure incident in %s"
               % (n, before_hour, INCIDENT, real))
        t, rows = server(cur, "gw", q["groups_window"], "3600, 200000")
        B.fig("standout", "[query groups_window] the hour's baseline (server)", t, "ms", "<= 100 ms")
        B.fig("standout", "the hour's executions", before_hour + INCIDENT, "rows")
        B.fig("standout", "[query groups_window] rows examined", rows, "rows", "the hour's executions")
        t, rows = server(cur, "gq", q["groups"], "3600, 200000")
        B.fig("standout", "[query groups] with the worker column (server)", t, "ms", "<= 100 ms")
        B.fig("standout", "[query groups] with the worker column: rows examined", rows, "rows")
        old = base_profile_groups()
        if old:
            t, rows = server(cur, "go", old, "3600, 200000")
            B.fig("standout", "[query groups] before (no worker column) (server)", t, "ms")
        t, rows = server(cur, "nv", NAIVE, "3600, 'Parser choked%'")
        B.fig("standout", "naive: the window's and one group's shares, three reads (server), per group", t, "ms")
        with tempfile.TemporaryDirectory() as home:
            conf = B.write_config(os.path.join(home, "config"),
                                  [("bench", {"profile": "attune", "store": B.pg_dsn(real).replace("redrive-bench", "redrive"),
                                              "core": "http://127.0.0.1:9"})])
            env = B.base_env(home)
            env["HOME"] = home
            walls, doc = [], {}
            for _ in range(RUNS):
                t0 = time.perf_counter()
                p = subprocess.run([B.binary(), "--config", conf, "snapshot", "--view", "groups", "--json"],
                                   capture_output=True, env=env, timeout=600)
                walls.append((time.perf_counter() - t0) * 1000)
                doc = json.loads(p.stdout) if p.returncode in (0, 3) and p.stdout else {}
            B.fig("standout", "snapshot --view groups --json (groups, baseline, lists in C) (wall)",
                  statistics.median(walls), "ms")
            g = [x for x in doc.get("groups", []) if x.get("fingerprint", "").startswith("Parser choked")]
            so = g[0].get("stands_out") if g else None
            B.note("the incident's group: %s; stands_out: %s; window: %s" % (
                g[0].get("count") if g else None, json.dumps(so), json.dumps(doc.get("stands_out_window"))))
    finally:
        cur.execute("DELETE FROM execution WHERE id > %s", (top,))
        cur.execute("VACUUM ANALYZE execution")
        conn.close()


if __name__ == "__main__":
    main()
