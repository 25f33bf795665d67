"""Values PostgreSQL itself cannot convert cost one field of one row, never the query:
a "\\u0000" in a json column (`->>` refuses it: "unsupported Unicode escape sequence"),
JSON text that a `::jsonb` cast refuses. The profiles select such columns as text and
redrive decodes them (docs/profiles.md, "Select JSON as text"). Each test adds its hostile
rows to the fixture data and reloads the fixtures afterwards."""
import json
import os
import time

import psycopg2
import pytest

import stack_fixtures as fx
import stacklib
from snaphelp import by_id, need_env, snapshot, write_config


@pytest.fixture
def openagents(tmp_path):
    need_env("RD_PG_DSN_OPENAGENTS")
    fx.reload("openagents")
    conn = stacklib.pg_admin(os.environ, "openagents")
    yield conn, write_config(tmp_path, {
        "o": {"profile": "openagents", "store": os.environ["RD_PG_DSN_OPENAGENTS"]}})
    conn.close()
    fx.reload("openagents")


def test_openagents_nul_escape_in_error_and_tags(openagents):
    conn, cfg = openagents
    cur = conn.cursor()
    now = time.time()
    # a dead job (no retries left) whose error object holds \u0000, raw json text
    cur.execute("INSERT INTO jobs (job_id, name, status, max_retries, retry_count, created_at,"
                " updated_at, completed_at, error) VALUES ('job-nul', 'nul_error', 'failed',"
                " 0, 0, %s, %s, %s, %s::json)",
                (now - 50, now - 40, now - 40,
                 '{"type": "Value\\u0000Error", "message": "bad \\u0000 byte"}'))
    # an active worker whose tags hold \u0000 (the queues' consumer count reads the tags)
    cur.execute("INSERT INTO workers (worker_id, hostname, tags, max_concurrent_jobs,"
                " last_heartbeat, status, running_jobs) VALUES ('oa-worker-nul', 'oa-host-nul',"
                " %s::json, 1, %s, 'active', '[]')", ('["email", "x\\u0000y"]', now))
    conn.commit()
    with pytest.raises(psycopg2.Error, match="unsupported Unicode escape sequence"):
        cur.execute("SELECT error->>'message' FROM jobs WHERE job_id = 'job-nul'")
    conn.rollback()
    s = snapshot(cfg, "o", "--json")
    assert s.rc == 0, s.err
    assert s.source("postgresql")["state"] == "ok", s.source("postgresql")
    ex = by_id(s.json["executions"])
    assert set(ex) == set(fx.OA_JOBS) | {"job-nul"}
    assert ex["job-nul"]["error"] == "bad "          # the decoded text, cut at the NUL
    assert ex["job-nul"]["reason"] == "Value"
    assert ex["job-0002"]["error"] == "PDF renderer crashed"
    assert ex["job-0002"]["reason"] == "RuntimeError"
    q = {r["name"]: r for r in snapshot(cfg, "o", "--json", "--view", "queues").json["queues"]}
    assert q["email"]["consumers"] == 2             # oa-worker-1 and oa-worker-nul
    d = by_id(snapshot(cfg, "o", "--json", "--view", "dlq").json["dlq"])
    assert sorted(d) == ["job-0003", "job-0004", "job-nul"]
    assert d["job-nul"]["reason"] == "Value" and d["job-0003"]["reason"] == "HTTPError"
    w = by_id(snapshot(cfg, "o", "--json", "--view", "workers").json["workers"])
    assert "oa-worker-nul" in w and "email" in w["oa-worker-nul"]["tags"]


@pytest.fixture
def tasker(tmp_path):
    need_env("RD_PG_DSN_TASKER")
    fx.reload("tasker")
    conn = stacklib.pg_admin(os.environ, "tasker")
    yield conn, write_config(tmp_path, {
        "t": {"profile": "tasker", "store": os.environ["RD_PG_DSN_TASKER"]}})
    conn.close()
    fx.reload("tasker")


def set_event(cur, step, event):
    cur.execute("UPDATE tasker.workflow_step_transitions SET metadata = %s::jsonb"
                " WHERE workflow_step_uuid = %s AND most_recent",
                (json.dumps({"event": event}), fx.TASKER_STEPS[step]))
    assert cur.rowcount == 1


def test_tasker_event_the_server_cannot_cast(tasker):
    conn, cfg = tasker
    cur = conn.cursor()
    # steps 7 and 11 have no error of their own: the transition's event is their error
    set_event(cur, 11, '{"type": "Fail", "data": "nul \\u0000 here"}')   # ::jsonb refuses
    set_event(cur, 7, '{not json}')                                     # ::jsonb refuses
    conn.commit()
    s = snapshot(cfg, "t", "--json")
    assert s.rc == 0, s.err
    assert s.source("postgresql")["state"] == "ok", s.source("postgresql")
    ex = by_id(s.json["executions"])
    assert set(ex) == set(fx.TASKER_STEPS.values())
    assert ex[fx.TASKER_STEPS[11]]["error"] == "nul "
    assert ex[fx.TASKER_STEPS[7]]["error"] == "{not json}"
    assert ex[fx.TASKER_STEPS[9]]["error"] == fx.HOSTILE        # untouched neighbours
    assert ex[fx.TASKER_STEPS[3]]["error"] == "card processor timeout (attempt 2)"


@pytest.mark.parametrize("db,schema", [("attune1", "public"), ("attune2", "attune")])
def test_attune_jsonb_cannot_hold_an_unconvertible_value(db, schema):
    """Attune keeps its JSON as jsonb, which refuses "\\u0000" on input, so `->>` in its
    profiles cannot meet one; era 1's casts of config values to bigint are guarded by the
    deployment's expression indexes, which refuse a row whose value is not a number.
    Nothing is changed: each statement is refused and rolled back."""
    need_env("RD_PG_ADMIN_DSN_" + db.upper())
    conn = stacklib.pg_admin(os.environ, db)
    cur = conn.cursor()
    one = "(SELECT min(id) FROM %s.execution)" % schema
    with pytest.raises(psycopg2.Error, match="unsupported Unicode escape sequence"):
        cur.execute("UPDATE %s.execution SET result = %%s::jsonb WHERE id = %s" % (schema, one),
                    ('{"error": "bad \\u0000 byte"}',))
    conn.rollback()
    if db == "attune1":
        for key in ("retry_of", "original_execution"):
            with pytest.raises(psycopg2.Error, match="invalid input syntax for type bigint"):
                cur.execute("UPDATE public.execution SET config = COALESCE(config, '{}')"
                            " || jsonb_build_object(%%s, 'abc') WHERE id = %s" % one, (key,))
            conn.rollback()
    conn.close()
