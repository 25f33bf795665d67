"""The local stack: start/stop idempotence, crash recovery, schemas, fixture facts, DLQ.

The lifecycle tests run a PRIVATE stack (own DIR, port base = the suite's base + 1000, or the
next free one) so the suite's main stack (sourced env) is never disturbed. The data tests use
the main stack's env vars."""
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import pytest

import stack_fixtures as fx
from stack_fixtures import stacklib

HERE = os.path.dirname(os.path.abspath(__file__))
STACK_SH = os.path.join(HERE, "stack.sh")


def stack(cmd, d, base=None, timeout=300):   # a loaded 2-core machine can take minutes
    env = dict(os.environ)
    if base is not None:
        env["RD_PORT_BASE"] = str(base)
    return subprocess.run(["bash", STACK_SH, cmd, d], env=env, capture_output=True, text=True,
                          timeout=timeout)


port_open = stacklib.port_open
dir_processes = stacklib.dir_processes
STACK_PORTS = stacklib.STACK_PORTS


def free_base():
    base = stacklib.free_base(1000)
    if base is None:
        pytest.fail("no free port range for a private stack")
    return base


@pytest.fixture(scope="module")
def private_stack():
    d = tempfile.mkdtemp(prefix="rd-stack-test-")
    base = free_base()
    yield d, base
    stack("stop", d)
    shutil.rmtree(d, ignore_errors=True)


# ---- lifecycle (private stack) -------------------------------------------------------------
def test_start_fresh(private_stack):
    d, base = private_stack
    t0 = time.monotonic()
    r = stack("start", d, base)
    assert r.returncode == 0, r.stderr[-3000:]
    print("fresh start: %.1f s" % (time.monotonic() - t0))
    env = stacklib.parse_env_file(os.path.join(d, "env"))
    assert env["RD_PG_PORT"] == str(base)
    assert stacklib.parse_env_file(os.path.join(d, "env")) == env
    assert env["RD_REDIS_URL"] == "redis://127.0.0.1:%d/0" % (base + 1)
    assert env["RD_RABBIT_MGMT_URL"] == "http://127.0.0.1:%d" % (base + 3)
    assert env["RD_RABBIT_AMQP_PORT"] == str(base + 2)
    for db in ("ATTUNE1", "ATTUNE2", "TASKER", "OPENAGENTS"):
        assert "user=redrive_ro" in env["RD_PG_DSN_" + db]
        assert "user=postgres" in env["RD_PG_ADMIN_DSN_" + db]
    for p in (base, base + 1, base + 2, base + 3) + tuple(range(base + 20, base + 26)):
        assert port_open(p), p
    assert env["RD_REDIS_AUTH_URL"] == "redis://127.0.0.1:%d/0" % (base + 20)
    assert env["RD_REDIS_TLS_URL"] == "rediss://127.0.0.1:%d/0" % (base + 21)
    assert env["RD_RABBIT_MGMT_HTTPS_URL"] == "https://127.0.0.1:%d" % (base + 25)
    for k in ("RD_TLS_CA", "RD_TLS_WRONG_CA", "RD_TLS_CLIENT_CERT", "RD_TLS_CLIENT_KEY",
              "RD_REDIS_AUTH_PASSWORD_FILE", "RD_REDIS_ACL_PASSWORD_FILE", "RD_PG_SCRAM_PASSWORD_FILE"):
        assert os.path.isfile(env[k]) and env[k].startswith(d + "/"), k
    assert stack("status", d).returncode == 0
    # the private stack has its own data: the fixtures are loaded
    conn = stacklib.pg_ro(env, "attune2")
    cur = conn.cursor()
    cur.execute("SELECT count(*) FROM execution")
    assert cur.fetchone()[0] == 26
    conn.close()
    ov = stacklib.Rabbit(env).overview()
    assert ov["node"] == "rd%d@localhost" % base


def test_start_twice_is_quick(private_stack):
    """A second start finds the stack running and starts nothing: the same service
    processes before and after (not a timed assertion: the machine may be loaded)."""
    d, base = private_stack
    before = service_pids(d)
    assert len(before) >= 10, before
    r = stack("start", d, base)
    assert r.returncode == 0, r.stderr
    assert "already running" in r.stderr
    assert service_pids(d) == before, r.stderr


def service_pids(d):
    """The services' pid files under d (path -> the pid in its first line)."""
    out = {}
    for root, _, files in os.walk(d):
        for f in files:
            if f.endswith(".pid"):
                with open(os.path.join(root, f)) as fh:
                    out[os.path.relpath(os.path.join(root, f), d)] = fh.readline().strip()
    return out


def test_other_dir_on_same_ports_is_refused(private_stack):
    d, base = private_stack
    other = tempfile.mkdtemp(prefix="rd-stack-other-")
    try:
        r = stack("start", other, base)
        assert r.returncode != 0
        assert "belong to another stack" in r.stderr
        assert stack("stop", other).returncode == 0
        assert stack("status", d).returncode == 0      # the running stack was not touched
    finally:
        shutil.rmtree(other, ignore_errors=True)


def test_base_in_ephemeral_range_is_refused():
    """A base whose ports meet the kernel's ephemeral range is refused before anything
    starts (issue 38: RabbitMQ's dist port at base 33400 was held by an outgoing
    connection); RD_STACK_EPHEMERAL_OK=1 is the way around it."""
    rng = stacklib.ephemeral_range()
    if rng is None:
        pytest.skip("no /proc/sys/net/ipv4/ip_local_port_range")
    lo, hi = rng
    root = tempfile.mkdtemp(prefix="rd-stack-eph-")
    try:
        # inside the range, and just below it with its +40 reaching in
        for base in (lo + 100, lo - stacklib.PORT_SPAN):
            d = os.path.join(root, "s%d" % base)
            r = stack("start", d, base, timeout=120)
            try:
                assert r.returncode == 1, (base, r.returncode, r.stderr[-500:])
                assert "ephemeral range %d-%d" % (lo, hi) in r.stderr
                assert "choose a base at most %d" % (lo - stacklib.PORT_SPAN - 1) in r.stderr
                assert not os.path.exists(d)          # refused before the DIR was made
            finally:
                if os.path.exists(d):
                    stack("stop", d)
        assert not stacklib.in_ephemeral(lo - stacklib.PORT_SPAN - 1)
        assert stacklib.in_ephemeral(lo - stacklib.PORT_SPAN)
        assert not stacklib.in_ephemeral(free_base())
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_crash_recovery(private_stack):
    d, base = private_stack
    procs = dir_processes(d)
    assert procs, "no service process found for %s" % d
    env = stacklib.parse_env_file(os.path.join(d, "env"))
    pw_before = stacklib.read_secret(env["RD_REDIS_AUTH_PASSWORD_FILE"])
    with open(env["RD_TLS_CA"]) as f:
        ca_before = f.read()
    for pid, _ in procs:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not all(not port_open(base + i) for i in (0, 1, 3, 20, 21, 25)):
        time.sleep(0.1)
    assert stack("status", d).returncode != 0
    r = stack("start", d, base)
    assert r.returncode == 0, r.stderr[-3000:]
    assert stack("status", d).returncode == 0
    env = stacklib.parse_env_file(os.path.join(d, "env"))
    r = stacklib.redis_client(env)
    assert r.hlen("alakai-executions:task-failed-exhausted") == 2
    # the secured servers came back with the same passwords and certificates
    assert stacklib.read_secret(env["RD_REDIS_AUTH_PASSWORD_FILE"]) == pw_before
    with open(env["RD_TLS_CA"]) as f:
        assert f.read() == ca_before
    for name in ("auth", "tls"):
        r = stacklib.redis_secured(env, name, user="acl")
        assert r.hlen("alakai-executions:task-failed-exhausted") == 2, name
        r.close()
    assert stacklib.Rabbit(env, https=True).overview()["node"] == "rd%d@localhost" % base


def test_stop_twice_leaves_nothing(private_stack):
    d, base = private_stack
    r = stack("stop", d)
    assert r.returncode == 0, r.stderr
    r = stack("stop", d)
    assert r.returncode == 0, r.stderr
    assert dir_processes(d) == []
    open_ports = [base + i for i in range(STACK_PORTS) if port_open(base + i)]
    assert open_ports == []
    assert stack("status", d).returncode != 0


# ---- schemas and fixtures (the suite's main stack) ------------------------------------------
@pytest.fixture(scope="module")
def env():
    e = stacklib.load_env()
    fx.reload("all", e)
    return e


def q(env, db, sql, args=()):
    conn = stacklib.pg_ro(env, db)
    try:
        cur = conn.cursor()
        cur.execute(sql, args)
        return cur.fetchall()
    finally:
        conn.close()


def columns(env, db, schema, table):
    return {r[0] for r in q(env, db, "SELECT column_name FROM information_schema.columns"
                                     " WHERE table_schema = %s AND table_name = %s", (schema, table))}


def test_schemas(env):
    e1 = columns(env, "attune1", "public", "execution")
    assert {"retry_count", "max_retries", "original_execution", "config"} <= e1
    assert "worker" not in e1 and "started_at" not in e1
    assert "cordoned" not in columns(env, "attune1", "public", "worker")
    e2 = columns(env, "attune2", "attune", "execution")
    assert {"worker", "started_at", "retry_count", "original_execution"} <= e2
    assert {"cordoned", "cordon_reason", "cordoned_by", "cordoned_at"} <= columns(env, "attune2", "attune", "worker")
    assert q(env, "attune2", "SHOW search_path")[0][0] == "attune, public"
    for db in ("attune1", "attune2"):
        assert q(env, db, "SELECT count(*) FROM healthy_workers")[0][0] >= 1
        assert q(env, db, "SELECT get_worker_queue_depth(4), is_execution_retriable(7),"
                          " is_execution_retriable(4)")[0] == (120, False, True)
        idx = {r[0] for r in q(env, db, "SELECT indexname FROM pg_indexes WHERE tablename = 'execution'")}
        assert {"idx_execution_created_id", "idx_execution_failed"} <= idx
    assert "attempts" in columns(env, "tasker", "tasker", "workflow_steps")
    idx = {r[0] for r in q(env, "tasker", "SELECT indexdef FROM pg_indexes WHERE schemaname = 'tasker'")}
    assert any("most_recent" in i and "UNIQUE" in i for i in idx)
    assert q(env, "tasker", "SELECT enum_range(NULL::tasker.dlq_reason)::text")[0][0] == \
        "{staleness_timeout,max_retries_exceeded,dependency_cycle_detected,worker_unavailable,manual_dlq}"
    assert "last_heartbeat" in columns(env, "openagents", "public", "workers")


def test_readonly_role(env):
    import psycopg2
    conn = stacklib.pg_ro(env, "attune1")
    cur = conn.cursor()
    with pytest.raises(psycopg2.Error):
        cur.execute("UPDATE execution SET status = 'failed' WHERE id = 1")
    conn.rollback()
    cur.execute("SET default_transaction_read_only = off")  # the grants still forbid it
    with pytest.raises(psycopg2.Error):
        cur.execute("UPDATE execution SET status = 'failed' WHERE id = 1")
    conn.close()


def chains(env, era):
    if era == 1:
        rows = q(env, "attune1", "SELECT id, COALESCE((config->>'original_execution')::bigint, id),"
                                 " (config->>'retry_count')::int FROM execution ORDER BY id")
    else:
        rows = q(env, "attune2", "SELECT id, COALESCE(original_execution, id), retry_count FROM execution"
                                 " ORDER BY id")
    out = {}
    for eid, root, rc in rows:
        out.setdefault(root, []).append((rc or 0, eid))
    return {root: [e for _, e in sorted(v)] for root, v in out.items()}


@pytest.mark.parametrize("era", [1, 2])
def test_attune_facts(env, era):
    db = "attune%d" % era
    assert chains(env, era) == fx.ATTUNE_CHAINS
    failed = [r[0] for r in q(env, db, "SELECT id FROM execution WHERE status = 'failed' ORDER BY id")]
    assert failed == fx.ATTUNE_FAILED
    if era == 1:
        elig = q(env, db, "SELECT id FROM execution WHERE status = 'failed'"
                          " AND COALESCE((config->>'max_retries')::int, 0) > 0"
                          " AND (config->>'retry_count')::int < (config->>'max_retries')::int ORDER BY id")
        # era 1 keeps the columns at their defaults
        assert q(env, db, "SELECT count(*) FROM execution WHERE retry_count <> 0 OR max_retries IS NOT NULL"
                          " OR original_execution IS NOT NULL")[0][0] == 0
    else:
        elig = q(env, db, "SELECT id FROM execution WHERE status = 'failed' AND max_retries > 0"
                          " AND retry_count < max_retries ORDER BY id")
        assert q(env, db, "SELECT id, cordon_reason FROM worker WHERE cordoned") == [(7, "kernel upgrade")]
    newest = {c[-1] for c in fx.ATTUNE_CHAINS.values()}
    assert sorted(i for (i,) in elig if i in newest) == fx.ATTUNE_ELIGIBLE
    assert q(env, db, "SELECT result->>'error' FROM execution WHERE id = 13")[0][0] == fx.HOSTILE
    w = dict(q(env, db, "SELECT id, name FROM worker"))
    assert w == fx.ATTUNE_WORKERS
    stale = q(env, db, "SELECT now() - last_heartbeat > interval '4 minutes', capabilities->'health'->>'status'"
                       " FROM worker WHERE id = 2")[0]
    assert stale == (True, "healthy")
    assert q(env, db, "SELECT last_heartbeat FROM worker WHERE id = 5")[0][0] is None
    cf = dict(q(env, db, "SELECT id, (capabilities->'health'->>'consecutive_failures')::int FROM worker"
                         " WHERE id IN (3, 4)"))
    assert cf == {3: 5, 4: 12}


def test_tasker_facts(env):
    rows = q(env, "tasker", "SELECT s.workflow_step_uuid::text, s.attempts, s.max_attempts, s.retryable,"
                            " COALESCE(t.to_state, 'pending'),"
                            " (SELECT count(*) FROM workflow_step_transitions x"
                            "   WHERE x.workflow_step_uuid = s.workflow_step_uuid)"
                            " FROM workflow_steps s LEFT JOIN workflow_step_transitions t"
                            " ON t.workflow_step_uuid = s.workflow_step_uuid AND t.most_recent")
    by = {r[0]: r[1:] for r in rows}
    S = fx.TASKER_STEPS
    assert len(by) == 12
    assert by[S[1]] == (None, 3, True, "pending", 0)
    assert by[S[3]] == (2, 3, True, "error", 8)
    assert by[S[4]] == (3, 3, True, "error", 12)
    assert by[S[5]] == (1, 0, True, "error", 4)
    assert by[S[6]] == (1, 3, False, "error", 4)
    assert by[S[8]] == (1, 3, True, "waiting_for_retry", 5)
    assert by[S[12]] == (None, None, True, "pending", 0)
    backoff = q(env, "tasker", "SELECT backoff_request_seconds FROM workflow_steps WHERE workflow_step_uuid = %s",
                (S[3],))
    assert backoff == [(30,)]
    chain = [r[0] for r in q(env, "tasker", "SELECT to_state FROM workflow_step_transitions"
                                            " WHERE workflow_step_uuid = %s ORDER BY sort_key", (S[3],))]
    assert chain == ["pending", "enqueued", "in_progress", "error", "waiting_for_retry", "enqueued",
                     "in_progress", "error"]
    dlq = q(env, "tasker", "SELECT dlq_reason::text FROM tasks_dlq WHERE resolution_status = 'pending'"
                           " ORDER BY dlq_reason::text")
    assert [r[0] for r in dlq] == ["dependency_cycle_detected", "max_retries_exceeded",
                                   "staleness_timeout", "worker_unavailable"]
    assert q(env, "tasker", "SELECT count(*) FROM tasks_dlq")[0][0] == 5


def test_openagents_facts(env):
    rows = dict((r[0], r[1:]) for r in q(env, "openagents", "SELECT job_id, status, max_retries, retry_count"
                                                            " FROM jobs"))
    assert len(rows) == 12
    assert rows["job-0002"] == ("FAILED", 3, 1)
    assert rows["job-0003"] == ("failed", 2, 2)
    failed = sorted(j for j, r in rows.items() if r[0].lower() == "failed")
    assert failed == ["job-0002", "job-0003", "job-0004", "job-0009"]
    dead = sorted(j for j in failed if rows[j][2] >= rows[j][1])
    assert dead == ["job-0003", "job-0004"]
    kinds = {r[0] for r in q(env, "openagents", "SELECT retry_policy->>'type' FROM jobs"
                                                " WHERE retry_policy IS NOT NULL")}
    assert kinds == {"fixed_delay", "exponential_backoff"}
    per_tag = dict(q(env, "openagents", "SELECT t.tag, count(*) FROM jobs j JOIN job_tags t USING (job_id)"
                                        " WHERE lower(j.status) = 'queued' GROUP BY t.tag"))
    assert per_tag == {"email": 2, "reports": 1}
    hb = q(env, "openagents", "SELECT worker_id, last_heartbeat - extract(epoch from now())"
                              " FROM workers ORDER BY worker_id")
    d = dict(hb)
    assert d["oa-worker-4"] is None and d["oa-worker-5"] > 500 and d["oa-worker-2"] < -250


def test_alakai_facts(env):
    r = stacklib.redis_client(env)
    keys = sorted(k.decode() for k in r.scan_iter(match="alakai-executions:*", count=100))
    hashes = [k for k in keys if r.type(k) == b"hash"]
    assert [k.split(":", 1)[1] for k in hashes] == sorted(fx.ALAKAI_TASKS)
    assert r.type("alakai-executions:task-wrongtype") == b"string"
    ex = r.hgetall("alakai-executions:task-failed-exhausted")
    assert [json.loads(ex[k])["status"] for k in (b"1", b"2")] == ["failed", "failed"]
    orphan = json.loads(r.hget("alakai-executions:task-orphan", "1"))
    assert orphan["status"] == "running"
    ov = r.hgetall("alakai-executions:task-overlap")
    assert {json.loads(v)["status"] for v in ov.values()} == {"running"} and len(ov) == 2
    assert r.hstrlen("alakai-executions:task-oversized", "1") > 1 << 20
    with pytest.raises(ValueError):
        json.loads(r.hget("alakai-executions:task-malformed", "1"))
    raw = r.hget("alakai-executions:task-hostile", "1")
    assert b"\x1b[2J" in raw and b"\xff\xfe" in raw
    with pytest.raises(UnicodeDecodeError):
        raw.decode("utf-8")
    assert set(r.hkeys("alakai-executions:task-nonnumeric")) == {b"1", b"latest", b"-1", b"2x"}
    cfg = r.config_get("notify-keyspace-events")["notify-keyspace-events"]
    assert "K" in cfg and ("A" in cfg or "h" in cfg)


def test_rabbit_queues_and_dlq(env):
    rb = stacklib.Rabbit(env)
    got = {x["name"]: x for x in rb.queues()}
    want = fx.rabbit_expected_state(fx.RABBIT_EXPECTED, env.get("RD_RABBIT_FIXTURE_CONSUMER"))
    for name, w in want.items():
        x = got[name]
        assert (x["messages"], x["messages_ready"], x["messages_unacknowledged"], x["consumers"]) == w, name
    assert env["RD_RABBIT_FIXTURE_CONSUMER"] == "worker.1.executions"
    assert got["worker.1.executions"]["consumers"] == 1
    args = got["worker.5.executions"]["arguments"]
    assert args == {"x-dead-letter-exchange": "attune.dlx", "x-message-ttl": 500}
    assert got["worker.1.executions"]["arguments"]["x-message-ttl"] == 300000
    msgs = rb.get(fx.ATTUNE_DLQ, count=10)       # peek: requeued
    assert len(msgs) == 5
    reasons = {}
    for m in msgs:
        death = m["properties"]["headers"]["x-death"][0]
        try:
            eid = json.loads(m["payload"])["payload"]["execution_id"]
        except ValueError:
            eid = "hostile"
        reasons[eid] = (death["reason"], death["queue"])
    assert reasons == {21: ("expired", "worker.5.executions"), 22: ("expired", "worker.5.executions"),
                       23: ("expired", "worker.5.executions"), "hostile": ("expired", "worker.5.executions"),
                       26: ("rejected", "worker.2.executions")}
    env_ = json.loads(next(m for m in msgs if m["payload"].startswith("{\"message_id")
                           and "26" in m["payload"])["payload"])
    assert env_["message_type"] == "ExecutionRequested" and env_["version"] == "1.0"
    assert set(env_["headers"]) == {"retry_count", "source_service", "trace_id"}
    od = rb.get("orders_dlq", count=5)
    assert [m["properties"]["headers"]["x-death"][0]["reason"] for m in od] == ["rejected", "rejected"]
