"""Error groups across the store, in a time window (issue 24): an incident of 20,000
failures of one error in the last hour among 60,000+ executions, a handful of other
errors, older failures outside the window, on Attune's era-2 schema and its own indexes.
The group reads 20,000 (not the loaded page's 100), first seen about an hour ago, its
eligible count by Attune's rule; `--since 6h` takes the older failures in; a small bound
(REDRIVE_GROUPS_CAP, the test knob) is hit and said; the JSON gives the window and the
cap; and the groups query reads a bounded number of rows (its cost gate)."""
import json
import time

import pytest

from snaphelp import need_env, snapshot, write_config
from test_counts_scale import _db

N_OK = 40_000
N_INCIDENT = 20_000
N_ELIGIBLE = 6_000
N_OLD = 500
OTHERS = ["Worker heartbeat stale for 31s", "Disk quota exceeded on /var/lib/a",
          "Permission denied: 'deploy' key", "Execution exceeded timeout of 600s"]
INCIDENT = "connection refused to host 10.0.%s.%s:5432 (job %s)"
INCIDENT_FP = "connection refused to host <ip>:<n> (job <n>)"


def _fill(c):
    c.execute("ALTER TABLE execution DISABLE TRIGGER USER")
    c.execute("INSERT INTO execution (action_ref, status, created, updated, result)"
              " SELECT 'core.echo', 'completed', now() - g * interval '2 seconds',"
              " now() - g * interval '2 seconds', '{}' FROM generate_series(1, %s) g", (N_OK,))
    # the incident: one error over the last hour (each with its own host and job id), the
    # first N_ELIGIBLE with retries left (eligible), the rest without
    c.execute("INSERT INTO execution (action_ref, status, created, updated, result, retry_count, max_retries)"
              " SELECT CASE WHEN g %% 2 = 0 THEN 'billing.charge' ELSE 'core.http_request' END, 'failed',"
              " now() - interval '3590 seconds' + g * (interval '3580 seconds' / %s),"
              " now() - interval '3589 seconds' + g * (interval '3580 seconds' / %s),"
              " jsonb_build_object('error', format(%s, g %% 250, g %% 200, g)),"
              " 0, CASE WHEN g <= %s THEN 3 ELSE 0 END"
              " FROM generate_series(1, %s) g",
              (N_INCIDENT, N_INCIDENT, INCIDENT, N_ELIGIBLE, N_INCIDENT))
    for i, err in enumerate(OTHERS):
        c.execute("INSERT INTO execution (action_ref, status, created, updated, result)"
                  " SELECT 'etl.nightly', %s, now() - g * interval '1 minute', now() - g * interval '1 minute',"
                  " jsonb_build_object('error', %s) FROM generate_series(1, %s) g",
                  ("timeout" if "timeout" in err else "failed", err, 3 + i))
    # older failures, outside the last hour but inside 6 h
    c.execute("INSERT INTO execution (action_ref, status, created, updated, result)"
              " SELECT 'deploy.rollout', 'failed', now() - interval '3 hours' - g * interval '1 second',"
              " now() - interval '3 hours' - g * interval '1 second',"
              " '{\"error\": \"Image pull backoff\"}' FROM generate_series(1, %s) g", (N_OLD,))


@pytest.fixture(scope="module")
def incident_db():
    need_env("RD_PG_DSN_ATTUNE2")
    yield from _db("groups_incident", "attune_era2.sql", "attune", _fill)


def groups(tmp_path, dsn, *args):
    cfg = write_config(tmp_path, {"s": {"profile": "attune", "store": dsn}})
    s = snapshot(cfg, "s", "--json", "--view", "groups", *args)
    assert s.rc == 0, s.err
    return s.json


def by_fp(doc):
    return {g["fingerprint"]: g for g in doc["groups"]}


def test_incident_group_counts_the_store_in_the_last_hour(incident_db, tmp_path):
    doc = groups(tmp_path, incident_db)
    assert doc["groups_scope"] == "store"
    assert (doc["window"], doc["window_s"], doc["groups_capped"], doc["groups_cap"]) == ("1h", 3600, False, 200000)
    got = by_fp(doc)
    g = got[INCIDENT_FP]
    assert (g["count"], g["retry_eligible"]) == (N_INCIDENT, N_ELIGIBLE)
    assert {a["name"]: a["count"] for a in g["actions"]} == {"billing.charge": 10_000, "core.http_request": 10_000}
    now = time.time()
    assert 3500 < now - g["first_seen"] < 3700, g["first_seen"]
    assert 0 <= now - g["last_seen"] < 120, g["last_seen"]
    assert g["trend"] == "steady" and g["recent"] + g["before"] == N_INCIDENT
    assert 4000 < g["recent"] < 6000, g["recent"]   # a quarter of the hour
    # the handful of others; the older failures are outside the window
    others = {fp: (x["count"], x["retry_eligible"]) for fp, x in got.items() if fp != INCIDENT_FP}
    assert others == {"Worker heartbeat stale for <n>s": (3, 0), "Disk quota exceeded on /var/lib/a": (4, 0),
                      "Permission denied: '<s>' key": (5, 0), "Execution exceeded timeout of <n>s": (6, 0)}
    assert doc["groups_failures"] == N_INCIDENT + 18
    assert doc["groups"][0]["fingerprint"] == INCIDENT_FP


def test_window_of_six_hours_takes_the_older_failures_in(incident_db, tmp_path):
    doc = groups(tmp_path, incident_db, "--since", "6h")
    assert (doc["window"], doc["window_s"], doc["groups_capped"]) == ("6h", 21600, False)
    got = by_fp(doc)
    assert got["Image pull backoff"]["count"] == N_OLD
    assert got[INCIDENT_FP]["count"] == N_INCIDENT
    assert doc["groups_failures"] == N_INCIDENT + 18 + N_OLD


def test_bad_window_is_refused(incident_db, tmp_path):
    cfg = write_config(tmp_path, {"s": {"profile": "attune", "store": incident_db}})
    for bad in ("6x", "10s", "40d", ""):
        s = snapshot(cfg, "s", "--view", "groups", "--since", bad)
        assert s.rc == 2 and "--since needs a duration from 1m to 30d" in s.err, (bad, s.err)


def test_cap_is_hit_and_said(incident_db, tmp_path, monkeypatch):
    monkeypatch.setenv("REDRIVE_GROUPS_CAP", "1000")
    doc = groups(tmp_path, incident_db)
    # the failed ones stop at the bound; the 6 timeouts are read apart (their own bound)
    assert (doc["groups_capped"], doc["groups_cap"], doc["groups_failures"]) == (True, 1000, 1006)
    cfg = write_config(tmp_path, {"s": {"profile": "attune", "store": incident_db}})
    s = snapshot(cfg, "s", "--view", "groups")
    assert s.rc == 0, s.err
    assert "ERROR GROUPS (the store's failures of the last 1h: 1006, by error fingerprint) capped at 1000 failures" in s.out


def test_groups_query_reads_bounded_rows(incident_db):
    """The cost gate: the profile's groups query, at a bound of 1,000, reads at most 1,000
    rows from each execution scan, and a bounded number of buffers."""
    import psycopg2
    import stack_fixtures  # noqa: F401  (the stack's environment)
    from snaphelp import ROOT
    import os
    import sys
    sys.path.insert(0, os.path.join(ROOT, "tests", "bench"))
    import benchlib as B
    sql = B.profile_queries("attune-era2")["groups"]
    conn = psycopg2.connect(incident_db)
    cur = conn.cursor()
    cur.execute("SET search_path = attune, public")
    cur.execute("EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, FORMAT JSON) " + B.inline_params(sql, ["3600", "1000"]))
    doc = cur.fetchone()[0]
    doc = json.loads(doc) if isinstance(doc, str) else doc
    nodes = []

    def walk(p):
        nodes.append(p)
        for c in p.get("Plans", []):
            walk(c)
    walk(doc[0]["Plan"])
    scans = [n for n in nodes if n.get("Relation Name") == "execution" and "Scan" in n["Node Type"]
             and n.get("Parent Relationship") != "SubPlan"]
    assert scans and all(n["Node Type"] != "Seq Scan" for n in scans), [n["Node Type"] for n in scans]
    for n in scans:
        assert n["Actual Rows"] * n.get("Actual Loops", 1) <= 1000, n
    buf = doc[0]["Plan"].get("Shared Hit Blocks", 0) + doc[0]["Plan"].get("Shared Read Blocks", 0)
    assert buf < 5000, buf
    conn.close()


def _fill_era1(c):
    c.execute("ALTER TABLE execution DISABLE TRIGGER USER")
    c.execute("INSERT INTO execution (action_ref, status, created, updated, result)"
              " SELECT 'core.echo', CASE WHEN g <= 300 THEN 'failed' ELSE 'completed' END::execution_status_enum,"
              " now() - g * interval '1 second', now() - g * interval '1 second',"
              " CASE WHEN g <= 300 THEN jsonb_build_object('error', format('timeout after %sms', g)) ELSE '{}' END"
              " FROM generate_series(1, 2000) g")


@pytest.fixture(scope="module")
def era1_db():
    need_env("RD_PG_DSN_ATTUNE2")
    yield from _db("groups_era1", "attune_era1.sql", "attune", _fill_era1)


def test_era1_groups_the_store(era1_db, tmp_path):
    doc = groups(tmp_path, era1_db)
    assert doc["groups_scope"] == "store" and doc["groups_failures"] == 300
    assert [(g["fingerprint"], g["count"]) for g in doc["groups"]] == [("timeout after <n>ms", 300)]
