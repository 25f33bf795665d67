"""Every profile's actions end to end: the CLI → reference core → the real store changed."""
import json
import os

import psycopg2
import pytest
import redis

import actlib
from conftest import core_entries, keys_of

TASK2 = "00000000-0000-4000-8000-100000000002"
STEP3 = "00000000-0000-4000-8000-200000000003"
TASK6 = "00000000-0000-4000-8000-100000000006"
STEP9 = "00000000-0000-4000-8000-200000000009"


def pg(system):
    return psycopg2.connect(os.environ["RD_PG_ADMIN_DSN_" + system.upper()])


def one(system, sql, *args):
    with pg(system) as c, c.cursor() as cur:
        cur.execute(sql, args)
        return cur.fetchone()


MUTATED = ("attune1", "attune2", "tasker", "openagents", "alakai")


@pytest.fixture(scope="module", autouse=True)
def reload_around():
    if actlib.have_stack():
        for name in MUTATED:
            actlib.reload_fixture(name)
    yield
    if actlib.have_stack():
        for name in MUTATED:
            actlib.reload_fixture(name)


@pytest.mark.parametrize("system", ["attune1", "attune2"])
def test_attune_retry_creates_next_attempt(act, system):
    a = act(system)
    p = a.run("retry", "4", "--yes")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "retried: attempt 3 queued" in p.stdout
    if system == "attune1":
        row = one(system, "SELECT id, status::text FROM execution "
                          "WHERE config->>'retry_of' = '4'")
    else:
        row = one(system, "SELECT id, status::text FROM attune.execution "
                          "WHERE config->>'retry_of' = '4' AND retry_count = 2")
    assert row is not None and row[1] == "requested"
    j = a.journal()
    assert len(j) == 1 and j[0]["code"] == "ok" and j[0]["http_status"] == 202
    assert j[0]["targets"] == ["4"] and j[0]["action"] == "retry"
    assert j[0]["operator"] == "alice" and j[0]["system"] == system
    assert len(j[0]["idempotency_key"]) == 32


def test_tasker_retry_resets_step(act):
    a = act("tasker", auth="api-key", token="env:RD_CORE_API_KEY")
    p = a.run("retry", "%s/%s" % (TASK2, STEP3), "--yes", "--reason", "operator says go")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "ok: retried" in p.stdout
    st = one("tasker", "SELECT to_state, metadata::text FROM tasker.workflow_step_transitions "
                       "WHERE workflow_step_uuid = %s AND most_recent", STEP3)
    assert st[0] == "pending"
    assert "operator says go" in st[1]
    (key,) = keys_of(p.stdout)
    (entry,) = core_entries(a.core, key)
    assert entry["identity"] == "tasker-bot" and entry["applied"]
    assert [x["targets"] for x in a.journal()] == [["%s/%s" % (TASK2, STEP3)]]   # as typed


def test_tasker_retry_by_step_uuid_finds_its_task(act):
    """A bare STEP_UUID: the CLI reads the step's task from the store, as the console does."""
    a = act("tasker", auth="api-key", token="env:RD_CORE_API_KEY")
    p = a.run("retry", STEP9.upper(), "--yes")
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.startswith("%s/%s: ok: retried" % (TASK6, STEP9.upper())), p.stdout
    st = one("tasker", "SELECT to_state FROM tasker.workflow_step_transitions "
                       "WHERE workflow_step_uuid = %s AND most_recent", STEP9)
    assert st[0] == "pending"
    (key,) = keys_of(p.stdout)
    (entry,) = core_entries(a.core, key)
    assert entry["applied"]
    j = a.journal()   # named as typed: the step alone (its task read from the store)
    assert len(j) == 1 and j[0]["targets"] == [STEP9.upper()], j


def test_tasker_retry_unknown_step(act):
    a = act("tasker", auth="api-key", token="env:RD_CORE_API_KEY")
    p = a.run("retry", "00000000-0000-4000-8000-2000000000ff", "--yes")
    assert p.returncode == 1, p.stdout + p.stderr
    assert p.stdout == ""
    assert "no such step in the store" in p.stderr
    assert not a.journal()                     # nothing was sent
    p = a.run("retry", "/" + STEP3, "--yes")   # malformed: usage
    assert p.returncode == 2
    assert "TASK_UUID/STEP_UUID" in p.stderr


def test_tasker_retry_store_down(act):
    a = act("tasker", auth="api-key", token="env:RD_CORE_API_KEY",
            store="postgresql://127.0.0.1:1/tasker")
    p = a.run("retry", STEP9, "--yes")
    assert p.returncode == 1
    assert "cannot find its task: postgresql:" in p.stderr


def test_alakai_retry_writes_next_attempt(act):
    a = act("alakai")
    p = a.run("retry", "task-failed-retryable", "--yes")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "retried: attempt 2 queued" in p.stdout
    r = redis.Redis.from_url(os.environ["RD_REDIS_URL"])
    rec = json.loads(r.hget("alakai-executions:task-failed-retryable", "2"))
    assert rec["attempt"] == 2 and rec["status"] == "running"


def test_openagents_retry_requeues_job(act):
    a = act("openagents")
    p = a.run("retry", "job-0002", "--yes")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "retried: attempt 3 queued" in p.stdout
    st, rc = one("openagents", "SELECT status, retry_count FROM jobs WHERE job_id = 'job-0002'")
    assert st.lower() == "queued" and rc == 2


def test_attune2_drain_undrain(act):
    a = act("attune2")
    p = a.run("drain", "1", "--yes", "--reason", "kernel patch")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "ok: drained" in p.stdout
    cordoned, reason = one("attune2", "SELECT cordoned, cordon_reason FROM attune.worker "
                                      "WHERE id = 1")
    assert cordoned is True and reason == "kernel patch"
    p = a.run("undrain", "1", "--yes")
    assert p.returncode == 0
    assert one("attune2", "SELECT cordoned FROM attune.worker WHERE id = 1")[0] is False


def test_attune1_drain_in_meta(act):
    a = act("attune1")
    p = a.run("drain", "worker-healthy", "--yes")
    assert p.returncode == 0, p.stdout + p.stderr
    meta = one("attune1", "SELECT meta FROM worker WHERE id = 1")[0]
    assert meta.get("cordoned") is True


@pytest.mark.parametrize("system", ["attune1", "attune2"])
def test_attune_deactivate_activate(act, system):
    a = act(system)
    table = "worker" if system == "attune1" else "attune.worker"
    p = a.run("deactivate", "3", "--yes")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "ok: deactivated" in p.stdout
    assert one(system, "SELECT status::text FROM %s WHERE id = 3" % table)[0] == "inactive"
    p = a.run("activate", "3", "--yes")
    assert p.returncode == 0
    assert one(system, "SELECT status::text FROM %s WHERE id = 3" % table)[0] == "active"


def test_openagents_deactivate_drain(act):
    a = act("openagents")
    p = a.run("deactivate", "oa-worker-1", "--yes")
    assert p.returncode == 0, p.stdout + p.stderr
    assert one("openagents", "SELECT status FROM workers WHERE worker_id = 'oa-worker-1'")[0] \
        == "offline"
    p = a.run("activate", "oa-worker-1", "--yes")
    assert p.returncode == 0
    p = a.run("drain", "oa-worker-1", "--yes")
    assert p.returncode == 0
    assert one("openagents", "SELECT status FROM workers WHERE worker_id = 'oa-worker-1'")[0] \
        == "draining"


def test_unsupported_action_refused(act):
    a = act("alakai")
    p = a.run("drain", "w1", "--yes")
    assert p.returncode == 1
    assert "no drain action" in p.stderr
