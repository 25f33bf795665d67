"""The traffic simulator writes live data into every store of the suite's main stack; the
fixtures are reloaded afterwards so later tests see the known dataset."""
import json
import os
import subprocess
import time

import pytest

import stack_fixtures as fx
from stack_fixtures import stacklib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SIM = os.path.join(ROOT, "tools", "sim", "sim.py")


def one(env, db, sql):
    conn = stacklib.pg_admin(env, db)
    try:
        cur = conn.cursor()
        cur.execute(sql)
        return cur.fetchone()[0]
    finally:
        conn.close()


def snapshot(env):
    r = stacklib.redis_client(env)
    return {
        "attune1_exec": one(env, "attune1", "SELECT count(*) FROM execution WHERE id >= 100000"),
        "attune1_retry": one(env, "attune1", "SELECT count(*) FROM execution WHERE id >= 100000"
                                             " AND config ? 'original_execution'"),
        "attune2_exec": one(env, "attune2", "SELECT count(*) FROM attune.execution WHERE id >= 100000"),
        "attune2_retry": one(env, "attune2", "SELECT count(*) FROM attune.execution WHERE id >= 100000"
                                             " AND original_execution IS NOT NULL AND worker IS NOT NULL"),
        "tasker_trans": one(env, "tasker", "SELECT count(*) FROM tasker.workflow_step_transitions"),
        "tasker_attempts": one(env, "tasker", "SELECT COALESCE(sum(attempts), 0) FROM tasker.workflow_steps"),
        "oa_jobs": one(env, "openagents", "SELECT count(*) FROM jobs WHERE job_id LIKE 'sim-%'"),
        "oa_retries": one(env, "openagents", "SELECT COALESCE(sum(retry_count), 0) FROM jobs"
                                             " WHERE job_id LIKE 'sim-%'"),
        "alakai": sum(1 for _ in r.scan_iter(match="alakai-executions:sim-task-*", count=500)),
        "alakai_retry": sum(1 for k in r.scan_iter(match="alakai-executions:sim-task-*", count=500)
                            if r.hexists(k, "2")),
    }


def age_fixture_heartbeats(env):
    """The fixtures' fresh workers an hour old: only the simulator can make them fresh."""
    for db in ("attune1", "attune2"):
        conn = stacklib.pg_admin(env, db)
        conn.cursor().execute("UPDATE %s.worker SET last_heartbeat = now() - interval '1 hour'"
                              " WHERE id IN (1, 3)" % fx.ATTUNE_DBS[db][1])
        conn.commit()
        conn.close()
    conn = stacklib.pg_admin(env, "openagents")
    conn.cursor().execute("UPDATE workers SET last_heartbeat = extract(epoch FROM now()) - 3600"
                          " WHERE worker_id = 'oa-worker-1'")
    conn.commit()
    conn.close()


@pytest.fixture
def env():
    e = stacklib.load_env()
    yield e
    fx.reload("all", e)


def test_sim_writes_every_store(env):
    before = snapshot(env)
    rb = stacklib.Rabbit(env)
    dlq_before = rb.queue(fx.ATTUNE_DLQ)["messages"]
    age_fixture_heartbeats(env)
    t0 = time.monotonic()
    p = subprocess.run(["/usr/bin/python3", SIM, "--rate", "12", "--seed", "7", "--duration", "9",
                        "--quiet"], capture_output=True, text=True, timeout=60)
    t_end = time.monotonic()
    assert p.returncode == 0, p.stderr
    assert time.monotonic() - t0 < 45
    summary = json.loads(p.stdout.strip().splitlines()[-1])
    assert summary["errors"] == 0, p.stderr
    after = snapshot(env)
    for k in before:
        assert after[k] > before[k], (k, before[k], after[k], summary)
    # dispatch messages expired into the DLQ through the real TTL + dead-letter exchange
    q = rb.wait_queue(fx.ATTUNE_DLQ, lambda j: j["messages"] > dlq_before, timeout=15,
                      what="new dead letters")
    assert q["messages"] > dlq_before
    deaths = [m["properties"]["headers"]["x-death"][0] for m in rb.get(fx.ATTUNE_DLQ, count=min(q["messages"], 5000), truncate=200)]
    assert any(d["reason"] == "expired" and d["queue"] == "worker.100004.executions" for d in deaths)
    # the error-looping worker's consecutive failures climbed; the stale one stopped beating
    cf = one(env, "attune2", "SELECT (capabilities->'health'->>'consecutive_failures')::int"
                             " FROM attune.worker WHERE id = 100003")
    assert cf >= 3
    assert summary["stats"]["rabbit"]["published"] > 0
    # the fixtures' live workers were kept beating (set an hour old before the run)
    since_end = time.monotonic() - t_end
    for db in ("attune1", "attune2"):
        schema = fx.ATTUNE_DBS[db][1]
        age = one(env, db, "SELECT max(extract(epoch FROM now() - last_heartbeat)) FROM %s.worker"
                           " WHERE id IN (1, 3)" % schema)
        assert age is not None and float(age) < 5 + since_end, (db, age)
    oa = one(env, "openagents", "SELECT extract(epoch FROM now()) - last_heartbeat FROM workers"
                                " WHERE worker_id = 'oa-worker-1'")
    assert oa is not None and float(oa) < 5 + since_end, oa
