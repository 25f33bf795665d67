"""Selections that do not depend on the planner's luck (issue 34): a group's or a status's
executions ([query by_status] of Attune era 2: a group's members, `retry --group/--status`,
the console's R) read the status's own index in the window, on Attune's real index set
(benchlib.ATTUNE_REAL_INDEXES: `(status, created DESC)`, the partial index of eligible
failures, and no `(created, id)` one), with incident rows written a moment ago and no
ANALYZE since: 60,000 settled executions (statistics taken, a handful live), then 5,000
failures and a few timeouts inserted with autovacuum off. The whole plan is checked: every
scan of execution outside the superseded probe is an index scan of a status index, no
sequential scan, and the rows the scans examine are bounded by the page asked for."""
import json
import os
import sys

import psycopg2
import pytest

import stack_fixtures as fx
import stacklib
from snaphelp import need_env

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
import benchlib as B  # noqa: E402

N_SETTLED = 60_000
N_FRESH = 5_000
STATUS_INDEXES = {"idx_execution_status_created", "idx_execution_status_retry", "idx_execution_status"}


@pytest.fixture(scope="module")
def fresh_db():
    need_env("RD_PG_DSN_ATTUNE2")
    env = os.environ
    name = "selection_plan"
    srv = stacklib.pg_server_admin(env)
    srv.autocommit = True
    cur = srv.cursor()
    cur.execute('DROP DATABASE IF EXISTS "%s" WITH (FORCE)' % name)
    cur.execute('CREATE DATABASE "%s"' % name)
    conn = psycopg2.connect(env["RD_PG_ADMIN_DSN_ATTUNE2"].replace("dbname=attune2", "dbname=%s" % name))
    conn.autocommit = True
    c = conn.cursor()
    c.execute(fx._ddl("attune_era2.sql", "attune"))
    c.execute("SET search_path = attune, public")
    c.execute("ALTER TABLE execution DISABLE TRIGGER USER")
    c.execute("ALTER TABLE execution SET (autovacuum_enabled = false)")   # no ANALYZE behind the test's back
    B.use_real_indexes(c)
    c.execute("SET search_path = attune, public")
    # settled: a day of completed executions, 2 % failed, a handful live; statistics taken
    c.execute("INSERT INTO execution (action_ref, status, created, updated, result)"
              " SELECT 'core.echo', CASE WHEN g %% 50 = 0 THEN 'failed' WHEN g %% 9973 = 0 THEN 'running'"
              " ELSE 'completed' END::execution_status_enum,"
              " now() - interval '2 hours' - g * interval '1 second', now() - interval '2 hours' - g * interval '1 second',"
              " jsonb_build_object('error', 'old error ' || g) FROM generate_series(1, %d) g" % N_SETTLED)
    c.execute("VACUUM ANALYZE execution")
    # the incident, written a moment ago: no ANALYZE since
    c.execute("INSERT INTO execution (action_ref, status, created, updated, result, retry_count, max_retries)"
              " SELECT 'billing.charge', 'failed', now() - g * interval '0.5 seconds', now(),"
              " jsonb_build_object('error', format('connection refused to host 10.0.0.%%s:5432 (job %%s)', g %% 250, g)),"
              " 0, CASE WHEN g %% 3 = 0 THEN 3 ELSE 0 END FROM generate_series(1, %d) g" % N_FRESH)
    c.execute("INSERT INTO execution (action_ref, status, created, updated, result)"
              " SELECT 'etl.nightly', 'timeout', now() - g * interval '1 minute', now(),"
              " '{\"error\": \"Execution exceeded timeout of 600s\"}' FROM generate_series(1, 7) g")
    yield c
    conn.close()
    cur.execute('DROP DATABASE IF EXISTS "%s" WITH (FORCE)' % name)
    srv.close()


def walk(plan, out, sub=False):
    sub = sub or plan.get("Parent Relationship") == "SubPlan"
    out.append((plan, sub))
    for p in plan.get("Plans", []):
        walk(p, out, sub)
    return out


def plan_of(c, params):
    """The plan of [query by_status] as the console runs it: its parameters bound, planned
    for their values (libpq's unnamed statements: custom plans)."""
    q = B.profile_queries("attune-era2")["by_status"]
    c.execute("DEALLOCATE ALL")
    c.execute("SET plan_cache_mode = force_custom_plan")
    c.execute("PREPARE by_status AS " + q)
    args = ", ".join("NULL" if v is None else "'%s'" % str(v).replace("'", "''") for v in params)
    c.execute("EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, FORMAT JSON) EXECUTE by_status(%s)" % args)
    doc = c.fetchone()[0]
    doc = json.loads(doc) if isinstance(doc, str) else doc
    return walk(doc[0]["Plan"], [])


def scans(nodes):
    return [n for n, sub in nodes if not sub and "Scan" in n["Node Type"]
            and (n.get("Relation Name") == "execution" or "Index Name" in n)]


def check_status_plan(c, params, limit):
    """Every scan of execution outside the superseded probe: a range of a status index — the
    index-only range of (status, created DESC) in the window, at most limit + 1 entries, or,
    for a status the statistics have (nearly) never seen, the (status) index's entries of that
    status (here the 7 timeouts: the planner's only other choice, bounded by the status's own
    rows) — or an equality probe on (status, created) of the values the range found (a
    handful of rows a probe); never a sequential scan, never the (created) index."""
    nodes = plan_of(c, params)
    got = [(n["Node Type"], n.get("Index Name"), n.get("Actual Rows", 0), n.get("Actual Loops", 1),
            n.get("Index Cond", "")) for n in scans(nodes)]
    assert got, nodes
    assert not [n for n, _ in nodes if n["Node Type"] == "Seq Scan"], got
    ranges = [g for g in got if "k.status" not in g[4] and "(status = status)" not in g[4]
              and not ("(created = " in g[4] and g[3] != 1)]
    probes = [g for g in got if g not in ranges]
    assert ranges, got
    for kind, index, rows, loops, cond in ranges:
        assert loops == 1 and index in STATUS_INDEXES, got
        if kind == "Index Only Scan":
            assert index == "idx_execution_status_created" and rows <= limit + 1, got
            assert "(status = " in cond and "created >= " in cond, got   # the status and the window
        else:
            assert (kind, index) == ("Index Scan", "idx_execution_status") and rows <= 7, got
    assert [g for g in ranges if g[0] == "Index Only Scan"], got          # failed: the window's range
    for kind, index, rows, loops, cond in probes:
        assert kind == "Index Scan" and "(status = " in cond and "(created = " in cond and rows <= 2, got
    return got


def check_status_plan_nowindow(c, params, limit):
    nodes = plan_of(c, params)
    got = [(n["Node Type"], n.get("Index Name"), n.get("Actual Rows", 0), n.get("Actual Loops", 1))
           for n in scans(nodes)]
    assert not [n for n, _ in nodes if n["Node Type"] == "Seq Scan"], got
    assert [g for g in got if g[0] == "Index Only Scan" and g[1] in STATUS_INDEXES and g[2] <= limit + 1], got
    return got


def test_the_statistics_are_stale(fresh_db):
    fresh_db.execute("SELECT reltuples, (SELECT count(*) FROM attune.execution) FROM pg_class"
                     " WHERE oid = 'attune.execution'::regclass")
    assert fresh_db.fetchone() == (N_SETTLED, N_SETTLED + N_FRESH + 7)   # the planner believes 60,000


def test_a_group_page_reads_the_failure_statuses_index_in_the_window(fresh_db):
    # the console's group page: every failure status, the window, 2,001 rows at most
    got = check_status_plan(fresh_db, [None, None, None, "2001", "3600"], 2001)
    assert len([g for g in got if g[3] == 1 and "(created = " not in g[4]]) == 3   # failed, timeout, abandoned


def test_a_status_selection_reads_the_status_index_page_by_page(fresh_db):
    check_status_plan(fresh_db, [None, None, "failed", "101", "3600"], 101)
    # a deeper page: the start is a bound of the index range, not a filter over the newest rows
    fresh_db.execute("SELECT created::text, id::text FROM execution WHERE status = 'failed'"
                     " ORDER BY created DESC, id DESC OFFSET 4000 LIMIT 1")
    key, kid = fresh_db.fetchone()
    check_status_plan(fresh_db, [key, kid, "failed", "101", "3600"], 101)
    # no window (retry --status without --since): still the status's index, newest first
    got = check_status_plan_nowindow(fresh_db, [None, None, "failed", "101", None], 101)
    assert got
