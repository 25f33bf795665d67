"""Counts that never drop a status (issue 24), past the estimate threshold (50,000 rows),
on each PostgreSQL profile's own schema and indexes, with only a handful of live rows, as
in production: every status present in the store is in the counts, every live status is
exact, and only the large terminal statuses are estimated (marked ≈). Planner statistics
cannot carry a status with one row in 120,000 (ANALYZE samples 30,000 rows), so a count
taken from them alone loses exactly the statuses an incident is about.

Each profile gets a database of its own, built once (about 10 s each) and dropped after."""
import os

import psycopg2
import pytest

import stack_fixtures as fx
import stacklib
from snaphelp import need_env, snapshot, write_config

N_BULK = 120_000


def _db(name, ddl_file, schema, fill):
    env = os.environ
    srv = stacklib.pg_server_admin(env)
    srv.autocommit = True
    cur = srv.cursor()
    cur.execute('DROP DATABASE IF EXISTS "%s"' % name)
    cur.execute('CREATE DATABASE "%s"' % name)
    if schema != "public":
        cur.execute('ALTER DATABASE "%s" SET search_path = %s, public' % (name, schema))
    conn = psycopg2.connect(env["RD_PG_ADMIN_DSN_ATTUNE2"].replace("dbname=attune2",
                                                                    "dbname=%s" % name))
    c = conn.cursor()
    c.execute(fx._ddl(ddl_file, schema))
    c.execute("SET search_path = %s, public" % schema)
    fill(c)
    fx._grant_read(c, name, schema, "redrive_ro")
    conn.commit()
    conn.autocommit = True
    c.execute("SET search_path = %s, public" % schema)
    c.execute("VACUUM ANALYZE")
    conn.close()
    dsn = env["RD_PG_DSN_ATTUNE2"].replace("dbname=attune2", "dbname=%s" % name)
    yield dsn
    srv_cur = srv.cursor()
    srv_cur.execute('DROP DATABASE IF EXISTS "%s" WITH (FORCE)' % name)
    srv.close()


def counts(tmp_path, profile, dsn):
    cfg = write_config(tmp_path, {"s": {"profile": profile, "store": dsn}})
    s = snapshot(cfg, "s", "--json", "--view", "overview")
    assert s.rc == 0, s.err
    return {c["status"]: (c["count"], c["estimated"]) for c in s.json["counts"]}


ATTUNE_LIVE = ["requested", "scheduling", "scheduled", "running", "canceling"]


def _fill_attune(c):
    c.execute("ALTER TABLE execution DISABLE TRIGGER USER")
    c.execute("INSERT INTO execution (action_ref, status, created, updated, result)"
              " SELECT 'core.echo', 'completed', now() - g * interval '1 second',"
              " now() - g * interval '1 second', '{}' FROM generate_series(1, %s) g", (N_BULK,))
    c.execute("INSERT INTO execution (action_ref, status, created, updated)"
              " SELECT 'core.live', s::execution_status_enum, now(), now()"
              " FROM unnest(%s::text[]) s", (ATTUNE_LIVE + ["abandoned", "timeout"],))


@pytest.fixture(scope="module")
def attune_db():
    need_env("RD_PG_DSN_ATTUNE2")
    yield from _db("counts_attune", "attune_era2.sql", "attune", _fill_attune)


def test_attune_live_statuses_exact_past_the_threshold(attune_db, tmp_path):
    got = counts(tmp_path, "attune", attune_db)
    want = {s: (1, False) for s in ATTUNE_LIVE + ["abandoned", "timeout"]}
    assert {k: v for k, v in got.items() if k != "completed"} == want
    n, est = got["completed"]
    assert est is True and abs(n - N_BULK) < N_BULK * 0.05, got["completed"]


OA_LIVE = ["created", "queued", "running", "paused"]


def _fill_openagents(c):
    c.execute("INSERT INTO jobs (job_id, name, status, created_at)"
              " SELECT 'bulk-' || g, 'bulk', 'completed', extract(epoch FROM now()) - g"
              " FROM generate_series(1, %s) g", (N_BULK,))
    # one of each live status; "FAILED" in upper case (SQLAlchemy's enum names) and lower
    for i, st in enumerate(OA_LIVE + ["FAILED", "failed", "CANCELLED"]):
        c.execute("INSERT INTO jobs (job_id, name, status, created_at)"
                  " VALUES (%s, 'live', %s, extract(epoch FROM now()))", ("live-%d" % i, st))


@pytest.fixture(scope="module")
def openagents_db():
    need_env("RD_PG_DSN_ATTUNE2")
    yield from _db("counts_openagents", "openagents.sql", "public", _fill_openagents)


def test_openagents_live_statuses_exact_past_the_threshold(openagents_db, tmp_path):
    got = counts(tmp_path, "openagents", openagents_db)
    want = {s: (1, False) for s in OA_LIVE}
    want.update({"failed": (2, False), "cancelled": (1, False)})
    assert {k: v for k, v in got.items() if k != "completed"} == want
    n, est = got["completed"]
    assert est is True and abs(n - N_BULK) < N_BULK * 0.05, got["completed"]


TASKER_LIVE = ["enqueued", "in_progress", "waiting_for_retry", "enqueued_for_orchestration"]


def _fill_tasker(c):
    c.execute("INSERT INTO named_tasks (named_task_uuid, name) VALUES"
              " ('00000000-0000-0000-0000-000000000001', 'bulk')")
    c.execute("INSERT INTO tasks (task_uuid, named_task_uuid, identity_hash, correlation_id,"
              " requested_at)"
              " VALUES"
              " ('00000000-0000-0000-0000-000000000002',"
              " '00000000-0000-0000-0000-000000000001', 'h',"
              " '00000000-0000-0000-0000-000000000009', now())")
    c.execute("INSERT INTO named_steps (named_step_uuid, name) VALUES"
              " ('00000000-0000-0000-0000-000000000003', 'step')")
    c.execute("INSERT INTO workflow_steps (workflow_step_uuid, task_uuid, named_step_uuid,"
              " processed, created_at, updated_at)"
              " SELECT md5(g::text)::uuid, '00000000-0000-0000-0000-000000000002',"
              " '00000000-0000-0000-0000-000000000003', g > 5 AND g <= %s + 5, now(), now()"
              " FROM generate_series(1, %s + 7) g", (N_BULK, N_BULK))
    # steps 1..4: one live state each; 5: error; 6..: complete, except the last two,
    # which have no transition yet (pending)
    states = TASKER_LIVE + ["error"]
    c.execute("INSERT INTO workflow_step_transitions (workflow_step_transition_uuid,"
              " workflow_step_uuid, to_state, sort_key, most_recent, created_at, updated_at)"
              " SELECT md5('t' || g)::uuid, md5(g::text)::uuid,"
              " CASE WHEN g <= %s THEN (%s::text[])[g] ELSE 'complete' END, 1, true, now(), now()"
              " FROM generate_series(1, %s + 5) g", (len(states), states, N_BULK))


@pytest.fixture(scope="module")
def tasker_db():
    need_env("RD_PG_DSN_ATTUNE2")
    yield from _db("counts_tasker", "tasker.sql", "tasker", _fill_tasker)


def test_tasker_live_states_exact_past_the_threshold(tasker_db, tmp_path):
    got = counts(tmp_path, "tasker", tasker_db)
    want = {s: (1, False) for s in TASKER_LIVE + ["error"]}
    want["pending"] = (2, False)
    assert {k: v for k, v in got.items() if k != "complete"} == want
    n, est = got["complete"]
    assert est is True and abs(n - N_BULK) < N_BULK * 0.05, got["complete"]
