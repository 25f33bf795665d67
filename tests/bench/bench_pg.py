#!/usr/bin/python3
"""bench_pg: one console refresh against 1,000,000 Attune executions + 10,000 workers.

Compares, in one run, the profile's queries (profiles/attune-era2.profile, run as the console
runs them: unnamed-statement custom plans, the same parameters) with the naive dashboard
(count(*) GROUP BY status + ORDER BY created DESC OFFSET N/2 LIMIT 100), server time from
EXPLAIN (ANALYZE, BUFFERS, TIMING OFF) and client round-trip time, median of RUNS; then
`redrive snapshot --json` wall time and max RSS (through /usr/bin/time: a child forked from
Python would count its pages) against the same database.
SPEC §9: database time per refresh ≤ 1 ms at 1M executions / 10k workers, 1 round trip; naive ~165 ms.
"""
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B  # noqa: E402

RUNS = int(os.environ.get("BENCH_RUNS", "9"))
PROFILE = "attune-era2"
PAGE = 100   # config page_size default; the console asks for page + 1
BUDGET = "2000"   # rows a new filtered search reads (SCAN_BUDGET, pg_view.c)
BUDGET_NEXT = "20000"   # the next request, going on further back (x SCAN_GROWTH)


def walk(plan, out):
    out.append(plan)
    for p in plan.get("Plans", []):
        walk(p, out)
    return out


def explain(cur, stmt):
    # TIMING OFF: the totals without a clock read per row in every node (about a tenth of
    # the workers query's time at 10,000 workers); rows and buffers are still counted
    cur.execute("EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, FORMAT JSON) " + stmt)
    doc = cur.fetchone()[0]
    if isinstance(doc, str):
        doc = json.loads(doc)
    top = doc[0]
    nodes = walk(top["Plan"], [])
    # a Seq Scan that read over 1,000 rows (a tiny catalog's, e.g. pg_namespace's 5 rows, is
    # the planner's right choice and does not grow with anything)
    seq = sorted({n.get("Relation Name") for n in nodes if n.get("Node Type") == "Seq Scan"
                  and (n.get("Actual Rows", 0) + n.get("Rows Removed by Filter", 0))
                  * max(1, n.get("Actual Loops", 1)) > 1000} - {None})
    buf = top["Plan"].get("Shared Hit Blocks", 0) + top["Plan"].get("Shared Read Blocks", 0)
    return top.get("Planning Time", 0.0) + top.get("Execution Time", 0.0), buf, seq


def measure(cur, name, stmt):
    server, client, buf, seq = [], [], 0, []
    for _ in range(RUNS):
        t, buf, seq = explain(cur, stmt)
        server.append(t)
        t0 = time.perf_counter()
        cur.execute(stmt)
        cur.fetchall()
        client.append((time.perf_counter() - t0) * 1000)
    return {"name": name, "server": B.median(server), "client": B.median(client), "buffers": buf, "seq": seq}


INCIDENT = 20000   # issue 24: failures of one error in the last hour


def scan_rows(nodes):
    """Rows the execution scans of a plan examined: returned + removed by their filter
    (a subplan's probes apart: one per retry-eligible failure, never a range)."""
    return sum((n.get("Actual Rows", 0) + n.get("Rows Removed by Filter", 0)) * n.get("Actual Loops", 1)
               for n in nodes if n.get("Relation Name") == "execution" and "Scan" in n.get("Node Type", "")
               and n.get("Parent Relationship") != "SubPlan")


def server_median(cur, stmt):
    """(median server time of RUNS, rows examined by the execution scans, buffers, nodes)."""
    times, rows, buf, nodes = [], 0, 0, []
    for _ in range(RUNS):
        cur.execute("EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, FORMAT JSON) " + stmt)
        doc = cur.fetchone()[0]
        doc = json.loads(doc) if isinstance(doc, str) else doc
        top_plan = doc[0]
        times.append(top_plan.get("Planning Time", 0.0) + top_plan.get("Execution Time", 0.0))
        nodes = walk(top_plan["Plan"], [])
        rows = scan_rows(nodes)
        buf = top_plan["Plan"].get("Shared Hit Blocks", 0) + top_plan["Plan"].get("Shared Read Blocks", 0)
    return B.median(times), rows, buf, nodes


def bench_groups(db, bench="pg", store="bench schema"):
    """Error groups across the store (the profile's [query groups]) over an hour with an
    incident of INCIDENT failures of one error, added in a transaction rolled back after:
    server time (planning + execution, median of RUNS) and the rows the execution scans
    examined, at the default bound (200,000) and at a bound below the incident (10,000);
    then, with the incident in, the refresh's exact live counts ([query counts], planned
    for its parameters as every refresh plans it). `store` names the index set."""
    import psycopg2
    conn = psycopg2.connect(B.pg_dsn(db, admin=True))
    cur = conn.cursor()
    cur.execute("SET search_path = attune, public")
    cur.execute("SET plan_cache_mode = force_custom_plan")
    cur.execute("SELECT max(id), count(*) FROM execution")
    top, n = cur.fetchone()
    cur.execute("INSERT INTO execution (id, action, action_ref, status, result, created, updated, retry_count,"
                " max_retries) SELECT %s + g, 1, 'core.http_request', 'failed',"
                " jsonb_build_object('error', format('connection refused to host 10.0.%%s.%%s:5432 (job %%s)',"
                " g %% 250, g %% 200, g)), now() - interval '3590 seconds' + g * interval '0.179 seconds',"
                " now() - interval '3589 seconds' + g * interval '0.179 seconds', 0,"
                " CASE WHEN g %% 10 < 3 THEN 3 ELSE 0 END FROM generate_series(1, %s) g", (top, INCIDENT))
    B.console_settings(cur)          # the console's session (no parallel workers, no JIT)
    if INCIDENT > 0.1 * n:
        # what autovacuum does at once to a table that grew by over a tenth (its default
        # analyze scale factor); at 1M the incident is 2 %: the statistics stay those of before
        cur.execute("ANALYZE execution")
    q = B.profile_queries(PROFILE)
    tag = store
    for cap in (200000, 10000):
        t, rows, buf, nodes = server_median(cur, B.inline_params(q["groups"], ["3600", str(cap)]))
        seq = any(x.get("Node Type") == "Seq Scan" and x.get("Relation Name") == "execution" for x in nodes)
        B.note("groups (%s) over the last hour (%d-failure incident), bound %d: server %.2f ms, rows examined %d, "
               "buffers %d%s" % (tag, INCIDENT, cap, t, rows, buf, ", SEQ SCAN" if seq else ""))
        B.fig(bench, "groups (%s), last hour with a %d-failure incident, bound %d (server)" % (tag, INCIDENT, cap),
              t, "ms", "<= 100 ms")
        B.fig(bench, "groups (%s), bound %d: rows examined by the execution scans" % (tag, cap), rows, "rows",
              "<= bound per status read")
    t, rows, buf, nodes = server_median(cur, q["counts"])
    cur.execute(q["counts"])
    live = {r[0]: r[1] for r in cur.fetchall() if not r[2]}
    B.note("%d executions with the incident" % n)
    B.note("counts (%s): server %.2f ms, rows examined %d, buffers %d, exact: %s"
           % (tag, t, rows, buf, " ".join("%s=%s" % kv for kv in sorted(live.items()))))
    B.fig(bench, "refresh query counts, exact live counts (%s), planned each time (server)" % tag, t, "ms",
          "<= 1 ms")
    # as the console runs it: a named statement without parameters, its plan kept
    cur.execute("SET plan_cache_mode = auto")
    cur.execute("PREPARE bench_counts AS " + q["counts"])
    t, rows, buf, nodes = server_median(cur, "EXECUTE bench_counts")
    B.note("counts (%s), plan kept: server %.2f ms" % (tag, t))
    B.fig(bench, "refresh query counts, exact live counts (%s), plan kept (server)" % tag, t, "ms", "<= 1 ms")
    B.fig(bench, "refresh query counts (%s): rows examined" % tag, rows, "rows")
    conn.rollback()
    conn.close()


def main():
    B.need_env("RD_PG_HOST", "RD_PG_PORT")
    db, n, nw, load_s = B.ensure_bench_attune()
    bench = "pg"
    B.note("bench_pg: %d executions, %d workers in database %s%s" %
           (n, nw, db, (" (loaded in %.1f s)" % load_s) if load_s else " (reused)"))
    import psycopg2
    conn = psycopg2.connect(B.pg_dsn(db, console=True))
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute("SET plan_cache_mode = force_custom_plan")   # libpq unnamed statements: custom plans
    q = B.profile_queries(PROFILE)
    # Keys for the deep keyset page (the naive dashboard's OFFSET N/2 page, reached by key)
    # the bench's own lookups on a session without the console's statement timeout
    setup = B._connect(db)
    sk = setup.cursor()
    sk.execute("SELECT created::text, id::text FROM attune.execution ORDER BY created DESC, id DESC OFFSET %s LIMIT 1",
               (n // 2,))
    deep_key, deep_id = sk.fetchone()
    sk.execute("SELECT id::text FROM attune.execution WHERE original_execution IS NOT NULL "
               "ORDER BY id DESC LIMIT 1")
    chain_id = sk.fetchone()[0]
    setup.close()
    lim = str(PAGE + 1)

    for name in ("counts", "workers", "failing", "executions", "chain"):
        cur.execute("PREPARE p_%s AS %s" % (name, q[name]))
    # the first page as redrive prepares it (first_page_plan = cached): its parameters
    # written in, one plan kept; deeper and filtered pages are planned for their parameters
    cur.execute("PREPARE p_page1 AS " + B.inline_params(q["executions"], [None, None, None, None, lim, lim, None]))
    lit = lambda v: "NULL" if v is None else "'%s'" % v.replace("'", "''")  # noqa: E731
    ex = lambda name, *a: "EXECUTE p_%s%s" % (name, "(%s)" % ", ".join(lit(x) for x in a) if a else "")  # noqa: E731

    refresh = [("counts", ex("counts")), ("workers", ex("workers")), ("failing", ex("failing")),
               ("executions page 1", ex("page1"))]
    extra = [("executions page 1, planned for its parameters each time",
              ex("executions", None, None, None, None, lim, lim, None)),
             ("executions deep page (keyset at N/2)", ex("executions", deep_key, deep_id, None, None, lim, lim, None)),
             ("executions status=failed", ex("executions", None, None, "failed", None, lim, BUDGET, None)),
             ("executions status=running", ex("executions", None, None, "running", None, lim, BUDGET, None)),
             ("executions text filter 'zerodivision'", ex("executions", None, None, None, "zerodivision", lim, BUDGET, None)),
             ("executions text filter, no match (newest %s rows)" % BUDGET,
              ex("executions", None, None, None, "no-such-text-xyz", lim, BUDGET, None)),
             ("executions text filter, no match, going on (%s rows)" % BUDGET_NEXT,
              ex("executions", None, None, None, "no-such-text-xyz", lim, BUDGET_NEXT, None)),
             ("chain of one execution", ex("chain", chain_id))]

    # The change probe: an unchanged store costs the probe plus the skipped (planned, never
    # executed) queries, the way the console sends them (guarded, one round trip).
    nonce = "bench"
    cur.execute("PREPARE p_probe AS " + B.probe_sql(q["changes"]))
    guarded = {"counts": "g_counts", "workers": "g_workers", "failing": "g_failing",
               "executions": "g_executions"}
    page1 = B.inline_params(q["executions"], [None, None, None, None, lim, lim, None])   # first_page_plan = cached
    for name, g in guarded.items():
        cur.execute("PREPARE p_%s AS %s" % (g, B.guard_sql(name, page1 if name == "executions" else q[name], nonce)))
    cur.execute("EXECUTE p_probe(NULL, true, %s, '')", (nonce,))
    states = cur.fetchone()[1]
    probe_stmt = "EXECUTE p_probe(%s, false, %s, '')" % (lit(states), lit(nonce))
    unchanged = [("probe", probe_stmt), ("counts", ex("g_counts")), ("workers", ex("g_workers")),
                 ("failing", ex("g_failing")),
                 ("executions page 1", ex("g_executions"))]
    naive = [("naive count(*) GROUP BY status", "SELECT status, count(*) FROM attune.execution GROUP BY status"),
             ("naive OFFSET %d LIMIT 100" % (n // 2),
              "SELECT * FROM attune.execution ORDER BY created DESC OFFSET %d LIMIT 100" % (n // 2))]

    res = {}
    ures = {}
    for label, stmt in unchanged:
        cur.execute(probe_stmt)                # the skip list the guarded queries read
        r = measure(cur, "unchanged " + label, stmt)
        ures[label] = r
        B.note("unchanged: %-29s server %8.2f ms  buffers %7d" % (label, r["server"], r["buffers"]))
    cur.execute("SELECT current_setting('redrive.skip')")
    skip = cur.fetchone()[0]
    B.note("probe skip list: %s" % skip)
    for label, stmt in refresh + extra + naive:
        if (label, stmt) == naive[0]:
            # the naive dashboard is no console: without the console's 5 s statement
            # timeout (at 10M under load its count passed it)
            cur.execute("SET statement_timeout = 0")
        r = measure(cur, label, stmt)
        res[label] = r
        B.note("%-40s server %8.2f ms  client %8.2f ms  buffers %7d%s" %
               (label, r["server"], r["client"], r["buffers"], ("  SEQ SCAN " + ",".join(r["seq"])) if r["seq"] else ""))

    # One refresh in one round trip (the console pipelines the batch; a multi-statement
    # simple query is the same single round trip from here).
    batch = "; ".join(s for _, s in refresh)
    naive_batch = "; ".join(s for _, s in naive)
    rt, nrt = [], []
    for _ in range(RUNS):
        t0 = time.perf_counter()
        cur.execute(batch)
        rt.append((time.perf_counter() - t0) * 1000)
        t0 = time.perf_counter()
        cur.execute(naive_batch)
        nrt.append((time.perf_counter() - t0) * 1000)
    server_total = sum(res[l]["server"] for l, _ in refresh)
    naive_total = sum(res[l]["server"] for l, _ in naive)
    B.fig(bench, "executions / workers", "%d / %d" % (n, nw), "rows")
    for l, _ in refresh:
        B.fig(bench, "refresh query %s (server)" % l, res[l]["server"], "ms")
    B.fig(bench, "refresh: server time, all queries", server_total, "ms", "<= 1 ms")
    # Only what is on screen is fetched (sources_set_interest): the overview and the workers
    # view poll counts, workers and failing; the executions views counts, failing and the
    # page; every list (above) only the drain cockpit, the fleet's other systems, snapshots.
    on_workers = sum(res[l]["server"] for l in ("counts", "workers", "failing"))
    on_execs = sum(res[l]["server"] for l in ("counts", "failing", "executions page 1"))
    B.fig(bench, "refresh, overview / workers view (counts, workers, failing): server time", on_workers, "ms",
          "<= 1 ms")
    B.fig(bench, "refresh, executions view (counts, failing, page): server time", on_execs, "ms", "<= 1 ms")
    B.fig(bench, "refresh: one round trip, client wall", B.median(rt), "ms", "<= 5 ms, 1 round trip")
    B.fig(bench, "refresh, unchanged store (probe + skipped queries): server time",
          sum(r["server"] for r in ures.values()), "ms", "<= 1 ms")
    B.fig(bench, "refresh, unchanged store: buffers", sum(r["buffers"] for r in ures.values()), "buffers")
    B.fig(bench, "refresh, changed store: buffers", sum(res[l]["buffers"] for l, _ in refresh), "buffers")
    B.fig(bench, "naive dashboard: server time", naive_total, "ms", "~165 ms (reference)")
    B.fig(bench, "naive dashboard: client wall", B.median(nrt), "ms")
    B.fig(bench, "naive / profile server-time ratio", naive_total / server_total if server_total else 0.0, "x")
    for l, _ in extra:
        B.fig(bench, l + " (server)", res[l]["server"], "ms")
    # The failing query's upper bound of the retry-eligible failures is counted on a
    # session's first run, then carried while no failure is written (for at most 60 s): the
    # refresh above is the carried one; this is a run that counts (once a minute at most
    # per console on a store whose failures stand still, every refresh while they are written)
    counting = []
    for _ in range(RUNS):
        cur.execute("SELECT set_config('redrive.elig', '', false)")
        t, buf, _ = explain(cur, ex("failing"))
        counting.append((t, buf))
    B.fig(bench, "refresh query failing, counting the retry-eligible bound (server)",
          B.median([t for t, _ in counting]), "ms")
    B.fig(bench, "refresh query failing, counting: buffers", counting[-1][1], "buffers")
    # Diagnostic: the counts query without parallel workers (its never-executed exact branch
    # gets a Gather plan whose workers start on every refresh).
    cur.execute("SET max_parallel_workers_per_gather = 0")
    r = measure(cur, "counts, no parallel workers", ex("counts"))
    cur.execute("RESET max_parallel_workers_per_gather")
    B.note("counts with max_parallel_workers_per_gather = 0: server %.2f ms" % r["server"])
    B.fig(bench, "diagnostic: counts with max_parallel_workers_per_gather=0", r["server"], "ms")
    seqs = sorted({l for l, _ in refresh + extra if res[l]["seq"]})
    B.fig(bench, "profile queries with a Seq Scan over 1,000 rows", len(seqs), "queries", "0")
    for l in seqs:
        B.note("seq scan in: %s (%s)" % (l, ",".join(res[l]["seq"])))
    conn.close()
    bench_groups(db, bench)
    # the same on Attune's own indexes only (the bench database copied, its execution
    # indexes those of Attune's migration: benchlib.ATTUNE_REAL_INDEXES)
    real, real_s = B.ensure_real_attune(db)
    B.note("real-schema copy %s%s" % (real, (" (built in %.1f s)" % real_s) if real_s else " (reused)"))
    bench_groups(real, bench, "Attune's own indexes")

    # redrive snapshot --json against the same database
    with tempfile.TemporaryDirectory() as home:
        conf = B.write_config(os.path.join(home, "config"),
                              [("bench", {"profile": PROFILE, "store": B.pg_dsn(db).replace("redrive-bench", "redrive")})])
        env = B.base_env(home)
        env["REDRIVE_LOOP_TRACE"] = os.path.join(home, "loop.txt")
        argv = [B.binary(), "--config", conf, "snapshot", "--json"]
        walls, rss, codes, loops = [], [], set(), []
        out = b""
        for _ in range(max(3, RUNS // 2)):
            w, r, code, out, err = B.run_rss(argv, env)
            walls.append(w * 1000)
            rss.append(r)
            codes.add(code)
            loops.append(B.read_loop_trace(env["REDRIVE_LOOP_TRACE"]))
        if codes != {0}:
            B.note("snapshot exit status %s: %s" % (sorted(codes), err.decode(errors="replace")[:300]))
        try:
            doc = json.loads(out)
            B.note("snapshot JSON: %d bytes, top-level keys %s" % (len(out), ",".join(sorted(doc)[:8]) if isinstance(doc, dict) else type(doc).__name__))
        except ValueError:
            B.note("snapshot output is not JSON (%d bytes)" % len(out))
        B.fig(bench, "snapshot --json wall (median)", B.median(walls), "ms")
        B.fig(bench, "snapshot --json max RSS", max(rss) / 1024.0, "MiB", "<= 12 MiB")
        B.fig(bench, "snapshot exit status", ",".join(str(c) for c in sorted(codes)), "code", "0")
        B.loop_figures(bench, "snapshot", max(loops, key=lambda x: x.get("cpu_max_ms", -1.0)))


if __name__ == "__main__":
    main()
