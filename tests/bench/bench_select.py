#!/usr/bin/python3
"""bench_select: a group's selection and its members at 1,000,000 Attune executions on
Attune's own index set (benchlib.ensure_real_attune), with an incident of INCIDENT failures
of one error written a moment ago (autovacuum off on the table: no ANALYZE since), then the
same once settled (ANALYZE). Measured, fresh and settled:
  - `redrive retry --group ID --since 1h --select-only` wall (the console's R on a group);
  - `redrive snapshot --view executions --group ID --json` wall (Enter on the group: its
    groups read, then its first page of members);
  - the server time and rows examined of [query by_status]'s first group page (2,001 rows).
The incident is deleted afterwards. Issue 34: before, the selection took 17.8 s / 22.5 s on
fresh rows (the whole table walked), 0.58 s settled."""
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B  # noqa: E402

INCIDENT = int(os.environ.get("BENCH_INCIDENT", "20000"))
FP = "PaymentGateway: upstream reset by pgw-<n>.internal:<n> (job <n>)"


def fnv_id(text):
    h = 0xcbf29ce484222325
    for b in text.encode():
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return ("%016x" % h)[:6]


def wall(argv, env):
    t0 = time.perf_counter()
    p = subprocess.run(argv, capture_output=True, env=env, timeout=600)
    return (time.perf_counter() - t0) * 1000, p


def server(cur, sql):
    cur.execute("EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, FORMAT JSON) " + sql)
    doc = cur.fetchone()[0]
    doc = json.loads(doc) if isinstance(doc, str) else doc
    top = doc[0]
    nodes = []

    def walk(p):
        nodes.append(p)
        for c in p.get("Plans", []):
            walk(c)
    walk(top["Plan"])
    seq = any(n.get("Node Type") == "Seq Scan" and n.get("Relation Name") == "execution" for n in nodes)
    # the ranges (read once each) and the probes (one per value found, a row or two each)
    idx = sorted({"%s %s x%d" % (n["Node Type"], n.get("Index Name"), n.get("Actual Loops", 1))
                  for n in nodes if n.get("Index Name")})
    return top.get("Planning Time", 0) + top.get("Execution Time", 0), seq, idx


def measure(label, cur, argv_sel, argv_snap, env):
    q = B.profile_queries("attune-era2")["by_status"]
    # as the console runs it: bound parameters, planned for their values
    cur.execute("DEALLOCATE ALL")
    cur.execute("SET plan_cache_mode = force_custom_plan")
    cur.execute("PREPARE by_status AS " + q)
    for limit in (101, 2001):
        t, seq, idx = server(cur, "EXECUTE by_status(NULL, NULL, NULL, %d, 3600)" % limit)
        B.note("%s: by_status group page of %d rows: server %.1f ms, %s%s" % (label, limit, t, "; ".join(idx),
                                                                              ", SEQ SCAN" if seq else ""))
        B.fig("select", "group page [query by_status], %d rows, %s rows (server)" % (limit, label), t, "ms",
              "<= 100 ms")
    w, p = wall(argv_sel, env)
    end = json.loads(p.stdout.decode().splitlines()[-1]) if p.stdout.strip() else {}
    B.note("%s: retry --group --select-only: %.0f ms, %s" % (label, w, {k: end.get(k) for k in ("read", "pages", "send")}))
    B.fig("select", "retry --group ID --since 1h --select-only, %s rows (wall)" % label, w, "ms", "<= 1,000 ms")
    before = os.environ.get("BENCH_BEFORE_BIN")   # an earlier build: its selection of the same group
    if before:
        argv = [before] + argv_sel[1:]
        argv[argv.index("--group") + 1] = FP             # it knows no ids
        w, p = wall(argv, env)
        end = json.loads(p.stdout.decode().splitlines()[-1]) if p.stdout.strip() else {}
        B.note("%s: before (%s): retry --group FP --select-only: %.0f ms, %s" % (
            label, before, w, {k: end.get(k) for k in ("read", "pages", "send")}))
        B.fig("select", "before: retry --group FP --since 1h --select-only, %s rows (wall)" % label, w, "ms")
    w, p = wall(argv_snap, env)
    doc = json.loads(p.stdout) if p.returncode == 0 else {}
    B.note("%s: snapshot --group: %.0f ms, group %s, %d rows" % (label, w, doc.get("group"), len(doc.get("executions", []))))
    B.fig("select", "snapshot --view executions --group ID (groups + first page), %s rows (wall)" % label, w, "ms",
          "<= 1,000 ms")


def main():
    B.need_env("RD_PG_HOST", "RD_PG_PORT")
    db, n, nw, _ = B.ensure_bench_attune()
    real, _ = B.ensure_real_attune(db)
    import psycopg2
    conn = psycopg2.connect(B.pg_dsn(real, admin=True))
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute("SET search_path = attune, public")
    cur.execute("ALTER TABLE execution SET (autovacuum_enabled = false)")
    cur.execute("SELECT max(id) FROM execution")
    top = cur.fetchone()[0]
    cur.execute("INSERT INTO execution (id, action, action_ref, status, result, created, updated, retry_count,"
                " max_retries) SELECT %s + g, 1, 'billing.charge', 'failed',"
                " jsonb_build_object('error', format('PaymentGateway: upstream reset by pgw-%%s.internal:443 (job %%s)',"
                " g %% 40, g)), now() - interval '3000 seconds' + g * interval '0.14 seconds', now(), 0,"
                " CASE WHEN g %% 10 < 3 THEN 3 ELSE 0 END FROM generate_series(1, %s) g", (top, INCIDENT))
    gid = fnv_id(FP)
    try:
        with tempfile.TemporaryDirectory() as home:
            conf = B.write_config(os.path.join(home, "config"),
                                  [("bench", {"profile": "attune", "store": B.pg_dsn(real).replace("redrive-bench", "redrive"),
                                              "core": "http://127.0.0.1:9"})])
            env = B.base_env(home)
            env["HOME"] = home
            sel = [B.binary(), "--config", conf, "retry", "--group", gid, "--since", "1h", "--select-only"]
            snap = [B.binary(), "--config", conf, "snapshot", "--view", "executions", "--group", gid, "--json"]
            B.note("bench_select: %d executions + a %d-failure incident (group %s) in %s" % (n, INCIDENT, gid, real))
            measure("fresh", cur, sel, snap, env)
            cur.execute("ANALYZE execution")
            measure("settled", cur, sel, snap, env)
    finally:
        cur.execute("DELETE FROM execution WHERE id > %s", (top,))
        cur.execute("ALTER TABLE execution RESET (autovacuum_enabled)")
        cur.execute("VACUUM ANALYZE execution")
        conn.close()


if __name__ == "__main__":
    main()
