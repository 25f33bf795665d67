#!/usr/bin/python3
"""Deterministic fixture data for the local stack (see README.md beside this file for the
exact ids and the facts tests may assert).

  /usr/bin/python3 tests/stack/fixtures.py [--env-file DIR/env] setup
      create the role redrive_ro, the databases and schemas (when missing), then reload all
  /usr/bin/python3 tests/stack/fixtures.py [--env-file DIR/env] reload [STORE|all]
      truncate and load the known dataset into the named store(s) (STORES below)
  /usr/bin/python3 tests/stack/fixtures.py [--env-file DIR/env] touch
      refresh the heartbeats of the workers documented as "fresh" (they go stale after 30 s)

Importable as `stack_fixtures` (tests/stack_fixtures.py): reload(what="all", env=None),
touch(env=None), setup(env=None), and the constants below.
Times are relative to the moment of loading: T = load time (UTC).
"""
import argparse
import datetime as dt
import json
import os
import sys
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import stacklib  # noqa: E402

SCHEMA_DIR = os.path.join(HERE, "schema")

# ---- hostile strings ------------------------------------------------------------------------
# ESC [2J (clear screen), OSC 52 clipboard write (ESC ] 52;c;<b64> BEL), CR, BS, U+202E.
HOSTILE = ("boom \x1b[2J\x1b]52;c;cHduZWQ=\x07 after-clear\rSPOOFED LINE\b\b\b"
           " \u202eevil-reversed\u202c end")
# For Redis and RabbitMQ (byte stores): the same plus invalid UTF-8 bytes.
HOSTILE_BYTES = HOSTILE.encode() + b" bad-utf8:\xff\xfe\xc3\x28\xed\xa0\x80 end"

# ---- ids ---------------------------------------------------------------------------------
FIXTURE_ID_MAX = 999          # fixture numeric ids are < 1000; sequences restart at 1000
SIM_ID_BASE = 100000          # the simulator uses ids >= 100000

ATTUNE_WORKERS = {  # id: name
    1: "worker-healthy", 2: "worker-stale", 3: "worker-degraded", 4: "worker-unhealthy",
    5: "worker-unknown", 6: "worker-nohealth", 7: "worker-drain",
}
ATTUNE_FRESH_WORKERS = (1, 3, 4, 6, 7)
ATTUNE_CORDONED_WORKER = 7     # era 2 only (era 1 has no cordon columns)
ATTUNE_TTL_WORKER = 5          # worker.5.executions has x-message-ttl 500

# chains: root id -> ordered list of execution ids (oldest first)
ATTUNE_CHAINS = {
    1: [1], 2: [2], 3: [3, 4], 5: [5, 6, 7], 8: [8, 9, 10], 11: [11], 12: [12], 13: [13],
    14: [14], 15: [15, 16], 17: [17], 18: [18], 19: [19], 20: [20], 21: [21], 22: [22],
    23: [23], 24: [24], 25: [25], 26: [26],
}
ATTUNE_FAILED = [2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 15, 20]
ATTUNE_ELIGIBLE = [2, 4, 11, 13]        # status failed, max_retries > 0, retry_count < max
ATTUNE_EXHAUSTED = [7]                  # failed, budget used up
ATTUNE_DLQ_EXPIRED = [21, 22, 23]       # + one message with a hostile, invalid-UTF-8 payload
ATTUNE_DLQ_REJECTED = [26]

U = "00000000-0000-4000-8000-"
def tu(kind, n):  # noqa: E302  deterministic fixture uuids: kind digit + number
    return "%s%s%011d" % (U, kind, n)


TASKER_TASKS = {n: tu("1", n) for n in range(1, 9)}
TASKER_STEPS = {n: tu("2", n) for n in range(1, 13)}
TASKER_DLQ = {n: tu("3", n) for n in range(1, 6)}

OA_JOBS = ["job-%04d" % n for n in range(1, 13)]
ALAKAI_PREFIX = "alakai-executions"


# ---- time helpers --------------------------------------------------------------------------
def _now():
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0)


def _iso(t):
    return t.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _naive(t):  # for `timestamp without time zone` columns (UTC)
    return t.astimezone(dt.timezone.utc).replace(tzinfo=None)


def _j(v):
    return json.dumps(v)


# ---- setup ---------------------------------------------------------------------------------
ATTUNE_ALT_SCHEMA = "attune_alt"
# database: (DDL file, schema it goes into, relation proving it is loaded, relations to drop).
# The era-2 DDL creates schema `attune`; _ddl() retargets it (no copy of the DDL).
PG_DATABASES = {
    "attune1": ("attune_era1.sql", "public", "execution", ()),
    "attune2": ("attune_era2.sql", "attune", "execution", ()),
    "tasker": ("tasker.sql", "tasker", "workflow_steps", ()),
    "openagents": ("openagents.sql", "public", "jobs", ()),
    # issue 9: era 2 in a schema not named attune (the database sets no search_path), era 2
    # in public, OpenAgents without the optional relation job_tags
    "attune_alt": ("attune_era2.sql", ATTUNE_ALT_SCHEMA, "execution", ()),
    "attune_public": ("attune_era2.sql", "public", "execution", ()),
    "openagents_notags": ("openagents.sql", "public", "jobs", ("job_tags",)),
}
# database -> (era, schema) of the Attune stores
ATTUNE_DBS = {"attune1": (1, "public"), "attune2": (2, "attune"),
              "attune_alt": (2, ATTUNE_ALT_SCHEMA),
              "attune_public": (2, "public")}
OPENAGENTS_DBS = ("openagents", "openagents_notags")
# roles: redrive_ro (read-only, everything, trust), rd_scram (member of redrive_ro, read-only,
# SCRAM password, TLS only: see pg_hba.conf in stack.sh), rd_noworkers (read-only on
# openagents except the table workers)
SCRAM_ROLE = "rd_scram"
NOWORKERS_ROLE = "rd_noworkers"

_SCHEMA_HEADER = "CREATE SCHEMA %s;\nSET search_path = %s, public;\n"


def _ddl(fname, schema):
    """The DDL of fname, to be run with search_path = schema (created first unless public)."""
    with open(os.path.join(SCHEMA_DIR, fname), encoding="utf-8") as f:
        sql = f.read()
    for own in ("attune", "tasker"):
        header = _SCHEMA_HEADER % (own, own)
        if header in sql:
            if schema == own:
                return sql
            assert sql.count(header) == 1, fname
            sql = sql.replace(header, "")
            break
    pre = "SET search_path = %s;\n" % schema
    if schema != "public":
        pre = "CREATE SCHEMA %s;\n" % schema + pre
    return pre + sql


def _grant_read(cur, db, schema, role, defaults=True):
    cur.execute('GRANT CONNECT ON DATABASE "%s" TO %s' % (db, role))
    for s in sorted({schema, "public"}):
        cur.execute("GRANT USAGE ON SCHEMA %s TO %s" % (s, role))
        cur.execute("GRANT SELECT ON ALL TABLES IN SCHEMA %s TO %s" % (s, role))
        cur.execute("GRANT SELECT ON ALL SEQUENCES IN SCHEMA %s TO %s" % (s, role))
        cur.execute("GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA %s TO %s" % (s, role))
        if defaults:
            cur.execute("ALTER DEFAULT PRIVILEGES IN SCHEMA %s GRANT SELECT ON TABLES TO %s" % (s, role))


def _roles(cur, env):
    for role in ("redrive_ro", SCRAM_ROLE, NOWORKERS_ROLE):
        cur.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,))
        if not cur.fetchone():
            cur.execute("CREATE ROLE %s LOGIN" % role)
        cur.execute("ALTER ROLE %s SET default_transaction_read_only = on" % role)
    cur.execute("ALTER ROLE redrive_ro PASSWORD 'redrive-ro'")
    # the password file is the truth (made once per stack DIR): only its verifier is sent
    pw = stacklib.read_secret(env["RD_PG_SCRAM_PASSWORD_FILE"])
    cur.execute("ALTER ROLE %s PASSWORD %%s" % SCRAM_ROLE, (stacklib.scram_verifier(pw),))
    cur.execute("GRANT redrive_ro TO %s" % SCRAM_ROLE)


def _setup_db(env, db):
    fname, schema, probe, drop = PG_DATABASES[db]
    conn = stacklib.pg_admin(env, db)
    cur = conn.cursor()
    cur.execute("SELECT to_regclass(%s)", ("%s.%s" % (schema, probe),))
    if cur.fetchone()[0] is None:
        cur.execute(_ddl(fname, schema))
        for rel in drop:
            cur.execute("DROP TABLE %s.%s" % (schema, rel))
        cur.execute("RESET search_path")
    _grant_read(cur, db, schema, "redrive_ro")
    if db == "openagents":
        _grant_read(cur, db, schema, NOWORKERS_ROLE, defaults=False)
        cur.execute("REVOKE ALL ON public.workers FROM %s" % NOWORKERS_ROLE)
    conn.commit()
    conn.close()


def _parallel(fn, items, workers=4):
    """fn(item) for every item, a few at a time (the stores are independent; most of the time
    is spent waiting on the servers). Raises the first failure."""
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for f in [pool.submit(fn, it) for it in items]:
            f.result()


def setup(env=None, what="all"):
    """Create roles, databases and schemas when missing, grant, then reload(what)."""
    env = env or stacklib.load_env()
    srv = stacklib.pg_server_admin(env)
    cur = srv.cursor()
    _roles(cur, env)
    for db in PG_DATABASES:
        cur.execute("SELECT 1 FROM pg_database WHERE datname = %s", (db,))
        if not cur.fetchone():
            cur.execute('CREATE DATABASE "%s"' % db)
    cur.execute("ALTER DATABASE attune2 SET search_path = attune, public")
    cur.execute("ALTER DATABASE tasker SET search_path = tasker, public")
    srv.close()
    _parallel(lambda db: _setup_db(env, db), list(PG_DATABASES))
    _parallel(lambda w: reload(w, env), STORES if what == "all" else what.split(","))


# ---- Attune --------------------------------------------------------------------------------
def _attune_rows(T):
    """The Attune dataset, era-neutral. Each execution: dict with chain fields separate."""
    m = lambda n: T - dt.timedelta(minutes=n)  # noqa: E731
    s = lambda n: T - dt.timedelta(seconds=n)  # noqa: E731
    actions = [(1, "core.http_request"), (2, "core.shell"), (3, "deploy.rollout"),
               (4, "billing.charge"), (5, "etl.nightly")]
    health = lambda st, cf, tot, failed, qd: {  # noqa: E731
        "status": st, "last_check": _iso(T), "consecutive_failures": cf, "total_executions": tot,
        "failed_executions": failed, "average_execution_time_ms": 850, "queue_depth": qd}
    workers = [
        # id, status, last_heartbeat, capabilities, cordon (era2)
        (1, "active", T, {"runtimes": ["python", "shell"], "max_concurrent_executions": 8,
                          "health": health("healthy", 0, 100, 2, 2)}, None),
        (2, "active", m(5), {"runtimes": ["python"], "max_concurrent_executions": 4,
                             "health": health("healthy", 0, 40, 1, 0)}, None),
        (3, "active", T, {"runtimes": ["shell"], "max_concurrent_executions": 4,
                          "health": health("degraded", 5, 50, 10, 60)}, None),
        (4, "error", T, {"runtimes": ["node"], "max_concurrent_executions": 2,
                         "health": health("unhealthy", 12, 40, 30, 120)}, None),
        (5, "active", None, {}, None),
        (6, "active", T, {"runtimes": ["python"], "max_concurrent_executions": 2}, None),
        (7, "active", T, {"runtimes": ["python"], "max_concurrent_executions": 4,
                          "health": health("healthy", 0, 10, 0, 0)},
         ("kernel upgrade", 1, m(15))),
    ]
    # executions: id, action, status, created, result, retry info, worker (era2), extra
    # retry info: (retry_count, max_retries, root, retry_of, reason, retry_at)
    E = []

    def ex(eid, aid, status, created, error=None, retry=None, worker=None, parent=None,
           is_workflow=False, message=None, started=None, result=None):
        res = result
        if error is not None or message is not None:
            res = {}
            if error is not None:
                res["error"] = error
            if message is not None:
                res["message"] = message
        E.append(dict(id=eid, action=aid, action_ref=dict(actions)[aid], status=status,
                      created=created, result=res, retry=retry, worker=worker, parent=parent,
                      is_workflow=is_workflow, started=started))

    ex(1, 1, "completed", m(120), result={"status_code": 200}, worker=1, started=m(120))
    ex(2, 1, "failed", m(110), error="Connection refused by upstream (transient)",
       retry=(0, 3, None, None, None, None), worker=1, started=m(110))
    # chain 3 -> 4 (2 long): eligible at the end
    ex(3, 2, "failed", m(100), error="Worker queue TTL expired",
       retry=(0, 2, None, None, None, None), worker=2, started=None)
    ex(4, 2, "failed", m(98), error="Execution timed out after 300s",
       retry=(1, 2, 3, 3, "worker_unavailable", m(99)), worker=1, started=m(98))
    # chain 5 -> 6 -> 7 (3 long): budget exhausted
    ex(5, 3, "failed", m(90), error="Worker heartbeat stale for 95s",
       retry=(0, 2, None, None, None, None), worker=2, started=m(90))
    ex(6, 3, "failed", m(88), error="Temporary connection reset by peer",
       retry=(1, 2, 5, 5, "worker_heartbeat_stale", m(89)), worker=3, started=m(88))
    ex(7, 3, "failed", m(85), error="Worker unavailable: no active worker for runtime",
       retry=(2, 2, 5, 6, "transient_error", m(86)), worker=3, started=m(85))
    # chain 8 -> 9 -> 10 (3 long): succeeds on the 3rd attempt
    ex(8, 4, "failed", m(80), error="Request timed out waiting for payments API",
       retry=(0, 3, None, None, None, None), worker=4, started=m(80))
    ex(9, 4, "failed", m(79), error="Transient error: 503 from payments API",
       retry=(1, 3, 8, 8, "queue_timeout", m(79)), worker=4, started=m(79))
    ex(10, 4, "completed", m(78), result={"charged": True},
       retry=(2, 3, 8, 9, "transient_error", m(78)), worker=1, started=m(78))
    ex(11, 2, "failed", m(70), error="ZeroDivisionError: division by zero",
       retry=(0, 3, None, None, None, None), worker=6, started=m(70))
    ex(12, 2, "failed", m(65), error="exit status 2", worker=6, started=m(65))
    ex(13, 1, "failed", m(60), error=HOSTILE, retry=(0, 1, None, None, None, None),
       worker=1, started=m(60))
    ex(14, 5, "running", m(2), worker=1, started=m(2))
    # chain 15 -> 16: retry requested, not yet picked up (retry_at in the future)
    ex(15, 1, "failed", m(5), error="Worker unavailable", retry=(0, 3, None, None, None, None),
       worker=3, started=m(5))
    ex(16, 1, "requested", s(30), retry=(1, 3, 15, 15, "worker_unavailable",
                                        T + dt.timedelta(seconds=60)))
    ex(17, 3, "timeout", m(50), error="Execution exceeded timeout of 600s", worker=3,
       started=m(50))
    ex(18, 3, "cancelled", m(45), message="Cancelled by operator", worker=1, started=m(45))
    ex(19, 1, "scheduled", s(40), worker=1)
    ex(20, 5, "failed", m(40), message="Worker queue TTL expired", worker=5)
    # 21..23: dispatched to worker 5 whose queue TTL dead-letters them (messages in the DLQ)
    for i in (21, 22, 23):
        ex(i, 1, "scheduled", m(3), worker=5)
    # workflow parent/child: `parent` is NOT a retry link
    ex(24, 5, "running", m(30), is_workflow=True, worker=1, started=m(30))
    ex(25, 2, "completed", m(29), parent=24, result={"rows": 42}, worker=1, started=m(29))
    # 26: message rejected by worker 2 (x-death reason rejected)
    ex(26, 2, "scheduled", m(4), worker=2)
    queue_stats = [
        (1, 3, 1, 4, m(2), 500, 496), (2, 0, 0, 2, None, 120, 120),
        (3, 0, 1, 1, None, 30, 29), (4, 0, 0, 1, None, 80, 80), (5, 120, 2, 2, m(10), 900, 778),
    ]
    return actions, workers, E, queue_stats


def _reload_attune(env, db, T):
    era, schema = ATTUNE_DBS[db]
    actions, workers, E, queue_stats = _attune_rows(T)
    conn = stacklib.pg_admin(env, db)
    cur = conn.cursor()
    sch = schema + "."
    cur.execute("TRUNCATE %sexecution, %sworker, %squeue_stats, %saction RESTART IDENTITY CASCADE"
                % (sch, sch, sch, sch))
    for aid, ref in actions:
        cur.execute("INSERT INTO %saction (id, ref, label, created) VALUES (%%s, %%s, %%s, %%s)" % sch,
                    (aid, ref, ref.replace(".", " "), T - dt.timedelta(days=30)))
    for wid, status, hb, caps, cordon in workers:
        name = ATTUNE_WORKERS[wid]
        cols = ["id", "name", "worker_type", "worker_role", "runtime", "host", "port", "status",
                "capabilities", "meta", "last_heartbeat", "created", "updated"]
        vals = [wid, name, "remote" if wid % 2 else "local", "action", None,
                "10.0.0.%d" % (10 + wid), 9000 + wid, status, _j(caps),
                _j({"version": "0.3.%d" % wid}), hb, T - dt.timedelta(days=7), T]
        if era == 2 and cordon:
            cols += ["cordoned", "cordon_reason", "cordoned_by", "cordoned_at"]
            vals += [True, cordon[0], cordon[1], cordon[2]]
        cur.execute("INSERT INTO %sworker (%s) VALUES (%s)"
                    % (sch, ", ".join(cols), ", ".join(["%s"] * len(vals))), vals)
    for e in E:
        config = {"timeout": 600, "args": {"n": e["id"]}}
        cols = {"id": e["id"], "action": e["action"], "action_ref": e["action_ref"],
                "env_vars": _j({"LOG_LEVEL": "info"}), "parent": e["parent"],
                "enforcement": None, "executor": 1, "status": e["status"],
                "result": None if e["result"] is None else _j(e["result"]),
                "created": e["created"], "is_workflow": e["is_workflow"]}
        r = e["retry"]
        if r:
            rc, mx, root, prev, reason, at = r
            if era == 1:
                config.update({"retry_count": rc, "max_retries": mx})
                if root is not None:
                    config.update({"original_execution": root, "retry_of": prev,
                                   "retry_reason": reason, "retry_at": _iso(at)})
            else:
                cols.update({"retry_count": rc, "max_retries": mx, "retry_reason": reason,
                             "original_execution": root})
                if prev is not None:
                    config.update({"retry_of": prev, "retry_at": _iso(at)})
        if era == 2:
            cols["worker"] = e["worker"]
            cols["started_at"] = e["started"]
        cols["config"] = _j(config)
        names = list(cols)
        cur.execute("INSERT INTO %sexecution (%s) VALUES (%s)"
                    % (sch, ", ".join(names), ", ".join(["%s"] * len(names))),
                    [cols[n] for n in names])
    # the `updated` trigger fires on UPDATE only; make updated = created (+ a little) for realism
    cur.execute("UPDATE %sexecution SET updated = created + interval '5 seconds'" % sch)
    for row in queue_stats:
        cur.execute("INSERT INTO %squeue_stats (action_id, queue_length, active_count, max_concurrent,"
                    " oldest_enqueued_at, total_enqueued, total_completed, last_updated)"
                    " VALUES (%%s, %%s, %%s, %%s, %%s, %%s, %%s, %%s)" % sch, row + (T,))
    for seq in ("execution_id_seq", "worker_id_seq", "action_id_seq"):
        cur.execute("SELECT setval('%s%s', 1000, false)" % (sch, seq))
    conn.commit()
    conn.close()


# ---- Tasker --------------------------------------------------------------------------------
def _reload_tasker(env, T):
    conn = stacklib.pg_admin(env, "tasker")
    cur = conn.cursor()
    cur.execute("TRUNCATE tasker.tasks_dlq, tasker.workflow_step_transitions, tasker.task_transitions,"
                " tasker.workflow_steps, tasker.tasks, tasker.named_steps, tasker.named_tasks CASCADE")
    N = lambda t: _naive(t)  # noqa: E731
    m = lambda n: T - dt.timedelta(minutes=n)  # noqa: E731
    s = lambda n: T - dt.timedelta(seconds=n)  # noqa: E731
    nt = {1: ("ecommerce", "order_fulfillment"), 2: ("data", "nightly_etl")}
    for n, (ns, name) in nt.items():
        cur.execute("INSERT INTO tasker.named_tasks (named_task_uuid, namespace_name, name, version,"
                    " description, created_at, updated_at) VALUES (%s,%s,%s,'1.0.0',%s,%s,%s)",
                    (tu("4", n), ns, name, name.replace("_", " "), N(m(10000)), N(m(10000))))
    step_names = {1: "validate_order", 2: "charge_payment", 3: "ship_order", 4: "extract",
                  5: "transform", 6: "load", 7: "notify"}
    for n, name in step_names.items():
        cur.execute("INSERT INTO tasker.named_steps (named_step_uuid, name, created_at, updated_at)"
                    " VALUES (%s,%s,%s,%s)", (tu("5", n), name, N(m(10000)), N(m(10000))))
    # tasks: n -> (named task, complete, requested, task states)
    tasks = {
        1: (1, True, m(60), ["pending", "initializing", "enqueuing_steps", "steps_in_process",
                             "evaluating_results", "complete"]),
        2: (1, False, m(50), ["pending", "initializing", "enqueuing_steps", "steps_in_process",
                              "evaluating_results", "waiting_for_retry"]),
        3: (2, False, m(240), ["pending", "initializing", "enqueuing_steps", "steps_in_process",
                               "evaluating_results", "blocked_by_failures", "error"]),
        4: (2, False, m(230), ["pending", "initializing", "enqueuing_steps", "steps_in_process",
                               "evaluating_results", "blocked_by_failures", "error"]),
        5: (1, False, m(20), ["pending", "initializing", "enqueuing_steps", "steps_in_process"]),
        6: (1, False, m(400), ["pending", "initializing", "enqueuing_steps", "steps_in_process",
                               "error"]),
        7: (2, False, m(300), ["pending", "initializing", "enqueuing_steps", "error"]),
        8: (1, True, m(500), ["pending", "initializing", "enqueuing_steps", "steps_in_process",
                              "evaluating_results", "error", "resolved_manually"]),
    }
    for n, (ntn, complete, req, states) in tasks.items():
        cur.execute("INSERT INTO tasker.tasks (task_uuid, named_task_uuid, complete, requested_at,"
                    " completed_at, initiator, source_system, reason, tags, context, identity_hash,"
                    " priority, correlation_id, created_at, updated_at)"
                    " VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)",
                    (TASKER_TASKS[n], tu("4", ntn), complete, N(req),
                     N(req + dt.timedelta(minutes=5)) if complete else None, "fixture",
                     "shop" if ntn == 1 else "warehouse", "fixture task %d" % n,
                     _j(["fixture", "t%d" % n]), _j({"order_id": 1000 + n}), "hash-%d" % n,
                     n % 3, tu("6", n), N(req), N(req)))
        for k, st in enumerate(states):
            cur.execute("INSERT INTO tasker.task_transitions (task_transition_uuid, task_uuid, to_state,"
                        " from_state, metadata, sort_key, most_recent, created_at, updated_at)"
                        " VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s)",
                        (tu("7", n * 100 + k), TASKER_TASKS[n], st, states[k - 1] if k else None,
                         _j({}), k, k == len(states) - 1, N(req + dt.timedelta(seconds=k)),
                         N(req + dt.timedelta(seconds=k))))
    # Tasker's step results: error.error_type RetryableError / PermanentError, and
    # metadata.error_code (tasker-core's StepExecutionResult)
    err = lambda msg, code="STEP_FAILED", kind="RetryableError": {  # noqa: E731
        "success": False, "status": "error",
        "error": {"message": msg, "error_type": kind, "retryable": kind == "RetryableError"},
        "metadata": {"error_code": code, "retryable": kind == "RetryableError"}}
    attempt = ["enqueued", "in_progress"]
    # steps: n -> (task, named step, retryable, max_attempts, attempts, last_attempted_at,
    #              backoff_request_seconds, results, states, in_process, processed)
    steps = {
        1: (2, 3, True, 3, None, None, None, None, [], False, False),
        2: (1, 1, True, 3, 1, m(59), None, {"ok": True},
            ["pending"] + attempt + ["complete"], False, True),
        3: (2, 2, True, 3, 2, s(10), 30, err("card processor timeout (attempt 2)", "GATEWAY_TIMEOUT"),
            ["pending"] + attempt + ["error", "waiting_for_retry"] + attempt + ["error"], False, False),
        4: (3, 4, True, 3, 3, m(200), None, err("source database unreachable"),
            ["pending"] + attempt + ["error", "waiting_for_retry"] + attempt
            + ["error", "waiting_for_retry"] + attempt + ["error"], False, False),
        5: (4, 5, True, 0, 1, m(220), None, err("schema mismatch in transform"),
            ["pending"] + attempt + ["error"], False, False),
        6: (4, 6, False, 3, 1, m(219), None, err("duplicate key on load", "DUPLICATE_KEY", "PermanentError"),
            ["pending"] + attempt + ["error"], False, False),
        7: (5, 1, True, 3, 1, s(30), None, None, ["pending"] + attempt, True, False),
        8: (5, 2, True, 3, 1, s(60), 120, err("rate limited by card processor"),
            ["pending"] + attempt + ["error", "waiting_for_retry"], False, False),
        9: (6, 3, True, 3, 1, m(390), None, err(HOSTILE),
            ["pending"] + attempt + ["error"], False, False),
        10: (8, 7, True, 3, 2, m(480), None, {"resolved": "by hand"},
             ["pending"] + attempt + ["error", "waiting_for_retry"] + attempt
             + ["error", "resolved_manually"], False, True),
        11: (7, 4, True, 3, 0, None, None, None, ["pending", "enqueued"], False, False),
        12: (3, 5, True, None, None, None, None, None, [], False, False),
    }
    for n, (t, ns, retryable, mx, att, last, backoff, results, states, inproc, processed) in steps.items():
        created = tasks[t][2] + dt.timedelta(seconds=n)
        cur.execute("INSERT INTO tasker.workflow_steps (workflow_step_uuid, task_uuid, named_step_uuid,"
                    " retryable, max_attempts, in_process, processed, processed_at, attempts,"
                    " last_attempted_at, backoff_request_seconds, inputs, results, created_at,"
                    " updated_at, priority)"
                    " VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)",
                    (TASKER_STEPS[n], TASKER_TASKS[t], tu("5", ns), retryable, mx, inproc,
                     processed, N(last) if processed and last else None, att,
                     N(last) if last else None, backoff, _j({"step": n}),
                     None if results is None else _j(results), N(created),
                     N(last or created), 0))
        for k, st in enumerate(states):
            when = created + dt.timedelta(seconds=k)
            meta = {}
            if st == "error" and results and "error" in results:
                # the transition's event, as JSON text (Tasker's metadata.event)
                meta = {"event": json.dumps({"type": "Fail", "data": results["error"]["message"]})}
            cur.execute("INSERT INTO tasker.workflow_step_transitions (workflow_step_transition_uuid,"
                        " workflow_step_uuid, to_state, from_state, metadata, sort_key, most_recent,"
                        " created_at, updated_at) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s)",
                        (tu("8", n * 100 + k), TASKER_STEPS[n], st, states[k - 1] if k else None,
                         _j(meta), k, k == len(states) - 1, N(when), N(when)))
    # DLQ: n -> (task, original_state, reason, timestamp, resolution, notes)
    dlq = {
        1: (3, "error", "max_retries_exceeded", m(190), "pending", None),
        2: (3, "error", "manual_dlq", m(900), "manually_resolved", "retried by hand last week"),
        3: (4, "blocked_by_failures", "dependency_cycle_detected", m(210), "pending", None),
        4: (6, "steps_in_process", "staleness_timeout", m(380), "pending", HOSTILE),
        5: (7, "enqueuing_steps", "worker_unavailable", m(290), "pending", None),
    }
    for n, (t, orig, reason, when, res, notes) in dlq.items():
        cur.execute("INSERT INTO tasker.tasks_dlq (dlq_entry_uuid, task_uuid, original_state, dlq_reason,"
                    " dlq_timestamp, resolution_status, resolution_timestamp, resolution_notes,"
                    " resolved_by, task_snapshot, metadata, created_at, updated_at)"
                    " VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)",
                    (TASKER_DLQ[n], TASKER_TASKS[t], orig, reason, N(when), res,
                     N(when + dt.timedelta(hours=1)) if res != "pending" else None, notes,
                     "ops@example.com" if res != "pending" else None,
                     _j({"task_uuid": TASKER_TASKS[t], "state": orig}),
                     _j({"detected_by": "staleness_detector" if reason == "staleness_timeout"
                         else "orchestrator"}), N(when), N(when)))
    conn.commit()
    conn.close()


# ---- OpenAgents ----------------------------------------------------------------------------
def _reload_openagents(env, db, T):
    t = T.timestamp()
    with_tags = "job_tags" not in PG_DATABASES[db][3]
    conn = stacklib.pg_admin(env, db)
    cur = conn.cursor()
    cur.execute("TRUNCATE jobs, workers, tags, %sjob_dependencies CASCADE"
                % ("job_tags, " if with_tags else ""))
    fixed = {"type": "fixed_delay", "delay": 30, "jitter": 0}
    expo = {"type": "exponential_backoff", "initial_delay": 5, "max_delay": 300,
            "multiplier": 2, "jitter": 0}
    expo_j = dict(expo, jitter=0.1)
    errj = lambda msg, typ="RuntimeError": {"type": typ, "message": msg,  # noqa: E731
                                            "traceback": "Traceback (most recent call last): ..."}
    # job: (n, name, status, max_retries, retry_count, policy, error, worker, tags, age_s)
    jobs = [
        (1, "send_welcome_email", "completed", 3, 0, fixed, None, "oa-worker-1", ["email"], 3600),
        (2, "generate_invoice", "FAILED", 3, 1, fixed, errj("PDF renderer crashed"), "oa-worker-1",
         ["reports"], 1800),
        (3, "sync_crm", "failed", 2, 2, expo, errj("CRM API returned 500", "HTTPError"),
         "oa-worker-2", ["crm"], 1700),
        (4, "resize_image", "failed", 0, 0, None, errj("unsupported format"), "oa-worker-1",
         ["media"], 1600),
        (5, "train_model", "RUNNING", 1, 0, expo, None, "oa-worker-1", ["ml"], 300),
        (6, "send_digest", "queued", 3, 0, fixed, None, None, ["email"], 120),
        (7, "send_receipt", "queued", 3, 0, fixed, None, None, ["email"], 110),
        (8, "monthly_report", "QUEUED", 1, 0, None, None, None, ["reports"], 100),
        (9, "scrape_prices", "failed", 5, 1, expo_j, errj(HOSTILE), "oa-worker-2", ["crawl"], 900),
        (10, "cleanup_tmp", "cancelled", 0, 0, None, None, None, [], 800),
        (11, "backfill", "paused", 2, 0, fixed, None, None, ["data"], 700),
        (12, "noop", "created", 0, 0, None, None, None, [], 60),
    ]
    for n, name, st, mx, rc, pol, err, wk, tags, age in jobs:
        jid = "job-%04d" % n
        created = t - age
        low = st.lower()
        started = created + 5 if low in ("completed", "failed", "running") else None
        done = created + 60 if low in ("completed", "failed", "cancelled") else None
        cur.execute("INSERT INTO jobs (job_id, name, description, payload, status, priority,"
                    " max_retries, retry_delay, retry_policy, timeout, metadata, created_at,"
                    " updated_at, started_at, completed_at, result, error, retry_count, batch_id,"
                    " worker_id) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)",
                    (jid, name, "fixture job %d" % n, _j({"n": n}), st, n % 3, mx,
                     pol.get("delay") if pol else None, _j(pol) if pol else None, 300,
                     _j({"fixture": True}), created, done or started or created, started, done,
                     _j({"ok": True}) if low == "completed" else None,
                     _j(err) if err else None, rc, "batch-1" if n <= 4 else None, wk))
        for tag in tags if with_tags else ():
            cur.execute("INSERT INTO job_tags (job_id, tag) VALUES (%s, %s)", (jid, tag))
    for tag in ("email", "reports", "crm", "media", "ml", "crawl", "data"):
        cur.execute("INSERT INTO tags (name, description) VALUES (%s, %s)", (tag, tag + " jobs"))
    cur.execute("INSERT INTO job_dependencies (job_id, dependency_id) VALUES ('job-0008', 'job-0002')")
    workers = [
        ("oa-worker-1", "active", t, ["job-0005"], 5, ["email", "reports", "ml", "media"]),
        ("oa-worker-2", "online", t - 300, [], 5, ["crm", "crawl"]),
        ("oa-worker-3", "offline", t - 3600, [], 5, ["email"]),
        ("oa-worker-4", "active", None, [], 5, []),
        ("oa-worker-5", "active", t + 600, [], 2, ["data"]),
    ]
    for i, (wid, st, hb, running, mc, tags) in enumerate(workers):
        cur.execute("INSERT INTO workers (worker_id, hostname, pid, tags, max_concurrent_jobs,"
                    " started_at, last_heartbeat, status, running_jobs, metadata)"
                    " VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)",
                    (wid, "oa-host-%d" % (i + 1), 4000 + i, _j(tags), mc, t - 86400, hb, st,
                     _j(running), _j({"version": "1.4.%d" % i})))
    conn.commit()
    conn.close()


# ---- Alakai (Redis) ------------------------------------------------------------------------
def _alakai_rec(task, attempt, status, dispatched, resolved=None, code=None, msg=None):
    r = {"status": status, "attempt": attempt,
         "taskSnapshot": {"taskId": task, "type": "render", "payload": {"doc": task}},
         "dispatchedAt": _iso(dispatched)}
    if resolved is not None:
        r["resolvedAt"] = _iso(resolved)
    if code is not None:
        r["errorCode"] = code
    if msg is not None:
        r["errorMessage"] = msg
    return json.dumps(r)


ALAKAI_TASKS = [
    "task-succeeded", "task-succeeded-retry", "task-failed-retryable", "task-failed-exhausted",
    "task-running", "task-orphan", "task-overlap", "task-lost", "task-malformed",
    "task-oversized", "task-nonnumeric", "task-hostile",
]


def _reload_alakai(env, T, r=None):
    r = r or stacklib.redis_client(env)
    r.flushdb()
    m = lambda n: T - dt.timedelta(minutes=n)  # noqa: E731
    P = ALAKAI_PREFIX + ":"
    rec = _alakai_rec
    h = {
        "task-succeeded": {"1": rec("task-succeeded", 1, "succeeded", m(50), m(49))},
        "task-succeeded-retry": {
            "1": rec("task-succeeded-retry", 1, "failed", m(40), m(39), "TRANSIENT", "socket hang up"),
            "2": rec("task-succeeded-retry", 2, "succeeded", m(38), m(37))},
        "task-failed-retryable": {
            "1": rec("task-failed-retryable", 1, "failed", m(30), m(29), "RENDER_FAILED",
                     "renderer exited with code 137")},
        "task-failed-exhausted": {
            "1": rec("task-failed-exhausted", 1, "failed", m(28), m(27), "RENDER_FAILED", "OOM killed"),
            "2": rec("task-failed-exhausted", 2, "failed", m(26), m(25), "RENDER_FAILED", "OOM killed again")},
        "task-running": {"1": rec("task-running", 1, "running", m(1))},
        "task-orphan": {"1": rec("task-orphan", 1, "running", m(180))},
        "task-overlap": {
            "1": rec("task-overlap", 1, "running", m(20)),
            "2": rec("task-overlap", 2, "running", m(5))},
        "task-lost": {"1": rec("task-lost", 1, "lost", m(70), m(60), "WORKER_LOST", "container vanished")},
        "task-malformed": {"1": '{"status": "failed", "attempt": 1, "errorMessage": "trunc'},
        "task-oversized": {"1": rec("task-oversized", 1, "failed", m(15), m(14), "HUGE",
                                    "x" * (1536 * 1024))},
        "task-nonnumeric": {
            "1": rec("task-nonnumeric", 1, "failed", m(12), m(11), "E", "first attempt failed"),
            "latest": '{"pointer": 1}', "-1": "null", "2x": "garbage"},
    }
    for task, fields in h.items():
        r.hset(P + task, mapping=fields)
    hostile = json.dumps({"status": "failed", "attempt": 1, "errorCode": "EVIL",
                          "errorMessage": "@@MSG@@", "dispatchedAt": _iso(m(8)),
                          "resolvedAt": _iso(m(7)),
                          "taskSnapshot": {"taskId": "task-hostile"}}).encode()
    # raw bytes inside the JSON string: control characters and invalid UTF-8, unescaped
    r.hset(P + "task-hostile", "1", hostile.replace(b"@@MSG@@", HOSTILE_BYTES.replace(b'"', b"'")))
    # a key under the prefix that is not a hash, and a key outside the prefix
    r.set(P + "task-wrongtype", "i am a string, not a hash")
    r.hset("other-app:task-1", "1", rec("other", 1, "failed", m(5), m(4), "X", "not alakai"))


# ---- RabbitMQ ------------------------------------------------------------------------------
RABBIT_EXCHANGES = [("attune.events", "topic"), ("attune.executions", "topic"),
                    ("attune.notifications", "topic"), ("attune.dlx", "direct"),
                    ("orders_dlx", "direct")]
ATTUNE_DLQ = "attune.dlx.queue"
HOSTILE_QUEUE = "fixture.hostile\x1b[31mRED\u202eeuq"
RABBIT_EXPECTED = {   # queue -> messages after loading
    "worker.1.executions": 2, "worker.2.executions": 0, "worker.3.executions": 60,
    "worker.4.executions": 120, "worker.5.executions": 0, "worker.6.executions": 0,
    "worker.7.executions": 0, ATTUNE_DLQ: 5, "orders": 5, "orders_dlq": 2, HOSTILE_QUEUE: 1,
}


def envelope(exec_id, worker_id, action_ref, T, retry_count=0, n=0):
    return {
        "message_id": str(uuid.uuid5(uuid.NAMESPACE_URL, "redrive-fixture-%d-%d" % (exec_id, n))),
        "correlation_id": str(uuid.uuid5(uuid.NAMESPACE_URL, "redrive-corr-%d" % exec_id)),
        "message_type": "ExecutionRequested", "version": "1.0", "timestamp": _iso(T),
        "headers": {"retry_count": retry_count, "source_service": "executor",
                    "trace_id": "trace-%06d" % exec_id},
        "payload": {"execution_id": exec_id, "worker_id": worker_id, "action_ref": action_ref,
                    "config": {"timeout": 600}},
    }


def _props(env_):
    return {"content_type": "application/json", "delivery_mode": 2,
            "message_id": env_["message_id"], "correlation_id": env_["correlation_id"],
            "type": env_["message_type"], "headers": {"x-source": "executor"}}


def publish_execution(rb, exec_id, worker_id, action_ref, T, n=0):
    e = envelope(exec_id, worker_id, action_ref, T, n=n)
    rb.publish("attune.executions", "execution.dispatch.worker.%d" % worker_id, json.dumps(e),
               _props(e))


def declare_attune_worker_queue(rb, wid, ttl=300000):
    q = "worker.%d.executions" % wid
    rb.declare_queue(q, {"x-dead-letter-exchange": "attune.dlx", "x-message-ttl": ttl})
    key = "execution.dispatch.worker.%d" % wid
    rb.bind("attune.executions", q, key)
    rb.bind("attune.dlx", ATTUNE_DLQ, key)   # dead-lettered messages keep their routing key
    return q


def _reload_rabbit(env, T):
    rb = stacklib.Rabbit(env)
    for q in rb.queues():
        rb.delete_queue(q["name"])
    for x in rb.exchanges():
        if x["name"] and not x["name"].startswith("amq."):
            rb.delete_exchange(x["name"])
    for name, kind in RABBIT_EXCHANGES:
        rb.declare_exchange(name, kind)
    rb.declare_queue(ATTUNE_DLQ)
    for wid in ATTUNE_WORKERS:
        declare_attune_worker_queue(rb, wid, 500 if wid == ATTUNE_TTL_WORKER else 300000)
    # Tasker-style queue with its own DLX and DLQ
    rb.declare_queue("orders", {"x-dead-letter-exchange": "orders_dlx",
                                "x-dead-letter-routing-key": "orders"})
    rb.declare_queue("orders_dlq")
    rb.bind("orders_dlx", "orders_dlq", "orders")
    rb.declare_queue(HOSTILE_QUEUE)

    # worker 1: 2 waiting; worker 3: 60 (degraded depth); worker 4: 120 (unhealthy depth)
    for i in range(2):
        publish_execution(rb, 19 if i == 0 else 14, 1, "core.http_request", T, n=i)
    for wid, count in ((3, 60), (4, 120)):
        for i in range(count):
            publish_execution(rb, 500 + i, wid, "deploy.rollout", T, n=wid * 1000 + i)
    # worker 5's queue has a 500 ms TTL: these expire into attune.dlx.queue (reason expired)
    for eid in ATTUNE_DLQ_EXPIRED:
        publish_execution(rb, eid, ATTUNE_TTL_WORKER, "core.http_request", T)
    hostile_env = envelope(13, ATTUNE_TTL_WORKER, "core.http_request", T)
    raw = json.dumps(hostile_env).encode().replace(b'"core.http_request"',
                                                   b'"' + HOSTILE_BYTES.replace(b'"', b"'") + b'"')
    props = _props(hostile_env)
    props["headers"] = {"x-note": HOSTILE}
    rb.publish("attune.executions", "execution.dispatch.worker.%d" % ATTUNE_TTL_WORKER, raw, props)
    # execution 26: rejected by worker 2 (reject without requeue -> DLX, reason rejected)
    publish_execution(rb, 26, 2, "core.shell", T)
    reject(rb, "worker.2.executions", 1)
    # tasker-style: 2 rejected into orders_dlq, 5 waiting in orders (no consumers)
    for i in range(7):
        body = json.dumps({"task_uuid": TASKER_TASKS[1 + i % 8], "step": "charge_payment", "n": i})
        rb.publish("", "orders", body, {"content_type": "application/json", "delivery_mode": 2})
    reject(rb, "orders", 2)
    rb.publish("", HOSTILE_QUEUE, HOSTILE_BYTES, {"headers": {"x-evil": HOSTILE}})
    wait_rabbit_counts(rb, RABBIT_EXPECTED, env.get("RD_RABBIT_FIXTURE_CONSUMER"))


def reject(rb, queue, n, timeout=10.0):
    """Reject n messages of queue without requeue (they go to its dead-letter exchange)."""
    deadline = time.monotonic() + timeout
    while n > 0:
        got = rb.get(queue, count=n, ackmode="reject_requeue_false")
        n -= len(got)
        if n > 0:
            if time.monotonic() > deadline:
                raise RuntimeError("%s: could not get %d more messages to reject" % (queue, n))
            time.sleep(0.05)


def rabbit_expected_state(expected, consumer_queue=None):
    """queue -> (messages, ready, unacked, consumers) the fixtures leave behind. The stack's
    fixture consumer (RD_RABBIT_FIXTURE_CONSUMER) holds one message of its queue unacked."""
    out = {}
    for q, n in expected.items():
        if q == consumer_queue:
            out[q] = (n, n - 1, 1, 1)
        else:
            out[q] = (n, n, 0, 0)
    return out


def wait_rabbit_counts(rb, expected, consumer_queue=None, timeout=40.0):
    """Wait until the management stats show exactly the expected counts."""
    want = rabbit_expected_state(expected, consumer_queue)
    deadline = time.monotonic() + timeout
    while True:
        got = {q["name"]: (q.get("messages"), q.get("messages_ready"), q.get("messages_unacknowledged"),
                           q.get("consumers")) for q in rb.queues()}
        bad = {q: got.get(q) for q, w in want.items() if got.get(q) != w}
        if not bad:
            return
        if time.monotonic() > deadline:
            raise RuntimeError("RabbitMQ fixture counts (messages, ready, unacked, consumers) not"
                               " reached: %s (want %s); is the simulator running? (stop it before"
                               " reloading)" % (bad, {q: want[q] for q in bad}))
        time.sleep(0.2)


# ---- entry points --------------------------------------------------------------------------
STORES = ("attune1", "attune2", "tasker", "openagents", "attune_alt", "attune_public",
          "openagents_notags", "alakai", "alakai_secured", "rabbit")


def reload(what="all", env=None):
    """Reset the named store(s) to the fixture dataset. Returns the load time T (UTC)."""
    env = env or stacklib.load_env()
    T = _now()
    names = STORES if what == "all" else (what,)
    for name in names:
        if name in ATTUNE_DBS:
            _reload_attune(env, name, T)
        elif name == "tasker":
            _reload_tasker(env, T)
        elif name in OPENAGENTS_DBS:
            _reload_openagents(env, name, T)
        elif name == "alakai":
            _reload_alakai(env, T)
        elif name == "alakai_secured":
            for server in stacklib.REDIS_SECURED:
                r = stacklib.redis_secured(env, server, verify=server == "tls")
                try:
                    _reload_alakai(env, T, r)
                finally:
                    r.close()
        elif name == "rabbit":
            _reload_rabbit(env, T)
        else:
            raise ValueError("unknown store %r (one of %s or all)" % (name, ", ".join(STORES)))
    return T


def touch(env=None):
    """Refresh the heartbeats of the workers documented as fresh (Attune 1, 3, 4, 6, 7;
    OpenAgents oa-worker-1) to now, without touching anything else."""
    env = env or stacklib.load_env()
    for db, (_, schema) in ATTUNE_DBS.items():
        conn = stacklib.pg_admin(env, db)
        cur = conn.cursor()
        cur.execute("UPDATE %s.worker SET last_heartbeat = now() WHERE id = ANY(%%s)" % schema,
                    (list(ATTUNE_FRESH_WORKERS),))
        conn.commit()
        conn.close()
    for db in OPENAGENTS_DBS:
        conn = stacklib.pg_admin(env, db)
        cur = conn.cursor()
        cur.execute("UPDATE workers SET last_heartbeat = extract(epoch from now())"
                    " WHERE worker_id = 'oa-worker-1'")
        conn.commit()
        conn.close()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--env-file", help="DIR/env of the stack (default: the environment)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sp = sub.add_parser("setup")
    sp.add_argument("what", nargs="?", default="all",
                    help="stores to reload after setup, comma-separated (default all)")
    rp = sub.add_parser("reload")
    rp.add_argument("what", nargs="?", default="all", choices=STORES + ("all",))
    sub.add_parser("touch")
    a = ap.parse_args(argv)
    env = stacklib.load_env(a.env_file)
    t0 = time.monotonic()
    if a.cmd == "setup":
        setup(env, a.what)
    elif a.cmd == "reload":
        reload(a.what, env)
    else:
        touch(env)
    print("fixtures: %s done in %.1f s" % (a.cmd, time.monotonic() - t0), file=sys.stderr)


if __name__ == "__main__":
    main()
