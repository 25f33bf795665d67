#!/usr/bin/python3
"""redrive traffic simulator: live data for every profile on the local stack.

  /usr/bin/python3 tools/sim/sim.py --env-file DIR/env --rate 5 --seed 1 [--duration 30]
        [--profiles attune1,attune2,tasker,openagents,alakai] [--quiet]

Writes as each system would (never through redrive):
  attune1/attune2  executions scheduled -> running -> completed|failed; failures retried as new
                   rows (era 1: config JSON original_execution/retry_of/retry_count; era 2: the
                   columns + worker/started_at), some budgets exhausted; dispatch messages
                   published to worker.{id}.executions; worker 100004's queue has a 1.5 s TTL so
                   messages expire into attune.dlx.queue (real TTL + DLX); workers heartbeat,
                   100002 goes stale after 15 s, 100003 error-loops (consecutive_failures climbs);
                   the fixtures' fresh workers (worker-healthy, worker-degraded, ...) keep beating.
  tasker           tasks with steps; transitions appended (most_recent moves), attempts++,
                   waiting_for_retry with backoff_request_seconds, exhausted -> tasks_dlq pending.
  openagents       jobs queued -> running -> completed|failed, retries in place (retry_count++),
                   upper- and lower-case statuses; sim workers heartbeat, one goes stale; the
                   fixture's oa-worker-1 keeps beating.
  alakai           hashes: attempt 1 running -> succeeded|failed, HSETNX of the next attempt on
                   retry, some orphan suspects (running, dispatched 3 h ago), some overlaps;
                   with the stack's SQS emulator (RD_SQS_QUEUE_URL): each dispatch is also sent
                   to the SQS queue and a consumer receives and deletes it, except ~8% it never
                   launches (its visibility lapses until maxReceiveCount moves it to the DLQ
                   through real receives), a third of those never recorded in Redis (lost).
Ids never collide with the fixtures: numeric ids >= 100000, names/ids prefixed "sim-".
On exit (duration reached, SIGINT or SIGTERM) prints a JSON summary of what it did on stdout.
"""
import argparse
import datetime as dt
import heapq
import json
import os
import random
import signal
import sys
import time
import urllib.request
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "stack"))
import stacklib  # noqa: E402
from fixtures import ATTUNE_FRESH_WORKERS  # noqa: E402

OA_FRESH_WORKERS = ("oa-worker-1",)   # the OpenAgents fixture worker documented as fresh

PROFILES = ("attune1", "attune2", "tasker", "openagents", "alakai")
SIM_BASE = 100000
ATTUNE_SIM_WORKERS = {
    100001: "sim-worker-steady", 100002: "sim-worker-goes-stale",
    100003: "sim-worker-error-loop", 100004: "sim-worker-ttl",
}
TTL_WORKER = 100004
TTL_MS = 1500
STALE_AFTER = 15.0
ALAKAI_PREFIX = "alakai-executions"
ALAKAI_MAX_RETRIES = 1

ATTUNE_ERRORS = [
    ("Worker queue TTL expired", "worker_unavailable"),
    ("Worker unavailable: connection refused", "worker_unavailable"),
    ("Execution timed out after 60s", "queue_timeout"),
    ("Worker heartbeat stale for 92s", "worker_heartbeat_stale"),
    ("Transient error: upstream 503", "transient_error"),
    ("KeyError: 'customer_id'", "unknown"),
]


def now():
    return dt.datetime.now(dt.timezone.utc)


def iso(t):
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (t.microsecond // 1000)


def naive(t):
    return t.replace(tzinfo=None)


class Sim:
    def __init__(self, env, rate, seed, profiles, quiet=False):
        self.env = env
        self.rate = rate
        self.rng = random.Random(seed)
        self.profiles = profiles
        self.quiet = quiet
        self.q = []           # (due, seq, fn, args)
        self.seq = 0
        self.t0 = time.monotonic()
        self.stats = {p: {} for p in profiles}
        self.stats["rabbit"] = {}
        self.errors = 0
        self.pg = {}
        self.redis = None
        self.rb = None
        self.next_attune_id = {}
        self.stop = False
        self.sqs_url = env.get("RD_SQS_QUEUE_URL") if "alakai" in profiles else None
        self.sqs_rng = random.Random(seed + 1)   # the other profiles' sequence is unchanged
        self.sqs_doomed = set()

    # ---- plumbing ----------------------------------------------------------------------
    def count(self, profile, what, n=1):
        d = self.stats[profile]
        d[what] = d.get(what, 0) + n

    def later(self, delay, fn, *args):
        self.seq += 1
        heapq.heappush(self.q, (time.monotonic() + delay, self.seq, fn, args))

    def log(self, msg):
        if not self.quiet:
            print("sim: %s" % msg, file=sys.stderr)

    def db(self, name):
        c = self.pg.get(name)
        if c is None or c.closed:
            c = stacklib.pg_admin(self.env, name, autocommit=True)
            c.cursor().execute("SET application_name = 'redrive-sim'")
            self.pg[name] = c
        return c

    def sql(self, dbname, query, args=()):
        cur = self.db(dbname).cursor()
        cur.execute(query, args)
        return cur

    def run_safely(self, fn, args):
        try:
            fn(*args)
        except Exception as e:  # a reload in the middle, a broken connection: keep going
            self.errors += 1
            if self.errors <= 20:
                self.log("%s: %s: %s" % (getattr(fn, "__name__", fn), type(e).__name__,
                                         str(e).strip().splitlines()[0] if str(e) else ""))
            for name, c in list(self.pg.items()):
                if c.closed or c.status != 1:
                    self.pg.pop(name, None)
                else:
                    try:
                        c.rollback()
                    except Exception:
                        self.pg.pop(name, None)

    # ---- setup -------------------------------------------------------------------------
    def setup(self):
        if any(p.startswith("attune") for p in self.profiles):
            self.rb = stacklib.Rabbit(self.env)
            self.setup_rabbit()
        for p in self.profiles:
            if p in ("attune1", "attune2"):
                self.setup_attune(p)
            elif p == "tasker":
                self.setup_tasker()
            elif p == "openagents":
                self.setup_openagents()
            elif p == "alakai":
                self.redis = stacklib.redis_client(self.env)
        self.later(0, self.heartbeat_tick)
        if self.sqs_url:
            self.later(1.0, self.sqs_consume)

    def setup_rabbit(self):
        """Exchanges, the DLQ and the sim workers' queues (again after a fixture reload)."""
        if True:
            for x, kind in (("attune.executions", "topic"), ("attune.dlx", "direct")):
                self.rb.declare_exchange(x, kind)
            self.rb.declare_queue("attune.dlx.queue")
            for wid in ATTUNE_SIM_WORKERS:
                q = "worker.%d.executions" % wid
                ttl = TTL_MS if wid == TTL_WORKER else 300000
                existing = self.rb.queue(q)
                if existing and existing.get("arguments", {}).get("x-message-ttl") != ttl:
                    self.rb.delete_queue(q)
                self.rb.declare_queue(q, {"x-dead-letter-exchange": "attune.dlx", "x-message-ttl": ttl})
                key = "execution.dispatch.worker.%d" % wid
                self.rb.bind("attune.executions", q, key)
                self.rb.bind("attune.dlx", "attune.dlx.queue", key)

    def sch(self, p):
        return "attune." if p == "attune2" else ""

    def setup_attune(self, p):
        s = self.sch(p)
        for wid, name in ATTUNE_SIM_WORKERS.items():
            caps = {"runtimes": ["python"], "max_concurrent_executions": 4,
                    "health": {"status": "healthy", "last_check": iso(now()),
                               "consecutive_failures": 0, "total_executions": 0,
                               "failed_executions": 0, "average_execution_time_ms": 500,
                               "queue_depth": 0}}
            self.sql(p, "INSERT INTO %sworker (id, name, worker_type, worker_role, host, port, status,"
                        " capabilities, meta, last_heartbeat) VALUES (%%s,%%s,'remote','action',%%s,%%s,"
                        "'active',%%s,%%s,now()) ON CONFLICT (id) DO UPDATE SET status='active',"
                        " capabilities=EXCLUDED.capabilities, last_heartbeat=now()" % s,
                     (wid, name, "10.9.0.%d" % (wid - SIM_BASE), 9100, json.dumps(caps),
                      json.dumps({"sim": True})))
        cur = self.sql(p, "SELECT COALESCE(max(id), 0) FROM %sexecution" % s)
        self.next_attune_id[p] = max(SIM_BASE + 1, cur.fetchone()[0] + 1)

    def setup_tasker(self):
        self.sql("tasker", "INSERT INTO tasker.named_tasks (named_task_uuid, namespace_name, name)"
                           " VALUES (%s, 'sim', 'sim_pipeline') ON CONFLICT DO NOTHING",
                 (str(uuid.uuid5(uuid.NAMESPACE_URL, "sim-named-task")),))
        for n in ("sim_fetch", "sim_process", "sim_store"):
            self.sql("tasker", "INSERT INTO tasker.named_steps (named_step_uuid, name) VALUES (%s, %s)"
                               " ON CONFLICT DO NOTHING",
                     (str(uuid.uuid5(uuid.NAMESPACE_URL, "sim-step-" + n)), n))

    def setup_openagents(self):
        t = time.time()
        for i, tags in ((1, ["sim", "email"]), (2, ["sim", "reports"])):
            self.sql("openagents", "INSERT INTO workers (worker_id, hostname, pid, tags,"
                                   " max_concurrent_jobs, started_at, last_heartbeat, status, running_jobs,"
                                   " metadata) VALUES (%s,%s,%s,%s,4,%s,%s,'active','[]','{}')"
                                   " ON CONFLICT (worker_id) DO UPDATE SET last_heartbeat = EXCLUDED.last_heartbeat,"
                                   " status = 'active'",
                     ("sim-oa-worker-%d" % i, "sim-host-%d" % i, 7000 + i, json.dumps(tags), t, t))

    # ---- heartbeats / queues (periodic, not counted in the rate) --------------------------
    def heartbeat_tick(self):
        age = time.monotonic() - self.t0
        for p in self.profiles:
            if p in ("attune1", "attune2"):
                self.run_safely(self.attune_heartbeats, (p, age))
            elif p == "openagents":
                self.run_safely(self.oa_heartbeats, (age,))
            elif p == "tasker":
                self.run_safely(self.setup_tasker, ())     # cheap; survives fixture reloads
        if self.rb is not None:
            # the steady worker consumes a little of its queue; the others only fill up
            self.run_safely(self.rb.get, ("worker.100001.executions", 3, "ack_requeue_false", 100))
        self.later(2.0, self.heartbeat_tick)

    def attune_heartbeats(self, p, age):
        s = self.sch(p)
        # the fixtures' live workers (worker-healthy, worker-degraded, ... documented fresh)
        # keep beating as their processes would: the demo stays true while it runs
        self.sql(p, "UPDATE %sworker SET last_heartbeat = now() WHERE id = ANY(%%s)" % s,
                 (list(ATTUNE_FRESH_WORKERS),))
        cur = self.sql(p, "UPDATE %sworker SET last_heartbeat = now(), capabilities = jsonb_set(capabilities,"
                          " '{health,last_check}', to_jsonb(%%s::text)) WHERE id IN (100001, 100004)" % s,
                       (iso(now()),))
        if cur.rowcount == 0:        # the fixtures were reloaded under us: recreate our workers
            self.setup_attune(p)
            self.log("%s: sim workers recreated (fixture reload?)" % p)
        if age < STALE_AFTER:
            self.sql(p, "UPDATE %sworker SET last_heartbeat = now() WHERE id = 100002" % s)
        # the error-looping worker: heartbeats, but consecutive failures keep climbing
        self.sql(p, "UPDATE %sworker SET last_heartbeat = now(), capabilities = jsonb_set(jsonb_set("
                    "capabilities, '{health,consecutive_failures}', to_jsonb(COALESCE((capabilities #>>"
                    " '{health,consecutive_failures}')::int, 0) + 1)), '{health,status}', to_jsonb(CASE"
                    " WHEN COALESCE((capabilities #>> '{health,consecutive_failures}')::int, 0) + 1 >= 10"
                    " THEN 'unhealthy' WHEN COALESCE((capabilities #>> '{health,consecutive_failures}')::int,"
                    " 0) + 1 >= 3 THEN 'degraded' ELSE 'healthy' END)) WHERE id = 100003" % s)
        self.count(p, "heartbeats")

    def oa_heartbeats(self, age):
        t = time.time()
        self.sql("openagents", "UPDATE workers SET last_heartbeat = %s WHERE worker_id = ANY(%s)",
                 (t, list(OA_FRESH_WORKERS)))
        cur = self.sql("openagents", "UPDATE workers SET last_heartbeat = %s WHERE worker_id = 'sim-oa-worker-1'",
                       (t,))
        if cur.rowcount == 0:
            self.setup_openagents()
        if age < STALE_AFTER:
            self.sql("openagents", "UPDATE workers SET last_heartbeat = %s WHERE worker_id = 'sim-oa-worker-2'", (t,))
        self.count("openagents", "heartbeats")

    # ---- Attune ------------------------------------------------------------------------
    def attune_spawn(self, p):
        eid = self.next_attune_id[p]
        self.next_attune_id[p] += 1
        max_retries = self.rng.choice([0, 1, 2, 2, 3])
        self.attune_insert(p, eid, max_retries, 0, None, None, None)
        self.count(p, "executions")

    def attune_insert(self, p, eid, max_retries, rc, root, prev, reason):
        s = self.sch(p)
        worker = self.rng.choice(list(ATTUNE_SIM_WORKERS))
        action_ref = self.rng.choice(["sim.http_call", "sim.shell", "sim.report"])
        config = {"sim": True, "timeout": 60}
        cols = {"id": eid, "action_ref": action_ref, "status": "requested" if rc else "scheduled",
                "env_vars": "{}"}
        if p == "attune1":
            config.update({"retry_count": rc, "max_retries": max_retries})
            if root is not None:
                config.update({"original_execution": root, "retry_of": prev, "retry_reason": reason,
                               "retry_at": iso(now())})
        else:
            cols.update({"retry_count": rc, "max_retries": max_retries, "retry_reason": reason,
                         "original_execution": root, "worker": worker})
            if prev is not None:
                config.update({"retry_of": prev, "retry_at": iso(now())})
        cols["config"] = json.dumps(config)
        names = list(cols)
        self.sql(p, "INSERT INTO %sexecution (%s) VALUES (%s)" % (s, ", ".join(names),
                                                              ", ".join(["%s"] * len(names))),
                 [cols[n] for n in names])
        self.later(self.rng.uniform(0.3, 1.0), self.attune_dispatch, p, eid, worker, action_ref,
                   max_retries, rc, root)

    def attune_dispatch(self, p, eid, worker, action_ref, max_retries, rc, root):
        s = self.sch(p)
        self.sql(p, "UPDATE %sexecution SET status = 'scheduled' WHERE id = %%s" % s, (eid,))
        env = {"message_id": str(uuid.uuid4()), "correlation_id": str(uuid.uuid4()),
               "message_type": "ExecutionRequested", "version": "1.0", "timestamp": iso(now()),
               "headers": {"retry_count": rc, "source_service": "executor",
                           "trace_id": "sim-%d" % eid},
               "payload": {"execution_id": eid, "worker_id": worker, "action_ref": action_ref,
                           "config": {"sim": True}}}
        props = {"content_type": "application/json", "delivery_mode": 2,
                 "message_id": env["message_id"], "type": "ExecutionRequested"}
        key = "execution.dispatch.worker.%d" % worker
        try:
            self.rb.publish("attune.executions", key, json.dumps(env), props)
        except RuntimeError:         # queue or exchange gone (fixture reload): declare, retry once
            self.setup_rabbit()
            self.rb.publish("attune.executions", key, json.dumps(env), props)
        self.count("rabbit", "published")
        if worker == TTL_WORKER:
            # never consumed: expires into attune.dlx.queue; Attune's DLQ handler marks it failed
            self.count("rabbit", "expiring")
            self.later(TTL_MS / 1000.0 + 0.5, self.attune_finish, p, eid, max_retries, rc, root,
                       ATTUNE_ERRORS[0])
            return
        self.later(self.rng.uniform(0.3, 1.5), self.attune_run, p, eid, max_retries, rc, root)

    def attune_run(self, p, eid, max_retries, rc, root):
        s = self.sch(p)
        extra = ", started_at = now()" if p == "attune2" else ""
        self.sql(p, "UPDATE %sexecution SET status = 'running'%s WHERE id = %%s" % (s, extra), (eid,))
        err = None if self.rng.random() < 0.55 else self.rng.choice(ATTUNE_ERRORS)
        self.later(self.rng.uniform(0.5, 3.0), self.attune_finish, p, eid, max_retries, rc, root, err)

    def attune_finish(self, p, eid, max_retries, rc, root, err):
        s = self.sch(p)
        if err is None:
            self.sql(p, "UPDATE %sexecution SET status = 'completed', result = %%s WHERE id = %%s" % s,
                     (json.dumps({"ok": True}), eid))
            self.count(p, "completed")
            return
        self.sql(p, "UPDATE %sexecution SET status = 'failed', result = %%s WHERE id = %%s" % s,
                 (json.dumps({"error": err[0]}), eid))
        self.count(p, "failed")
        reason = err[1]
        if reason == "unknown" or max_retries <= 0:
            return
        if rc >= max_retries:
            self.count(p, "exhausted")
            return
        delay = min(1.0 * 2 ** rc, 5.0) * self.rng.uniform(0.8, 1.2)
        self.later(delay, self.attune_retry, p, eid, max_retries, rc + 1, root or eid, reason)

    def attune_retry(self, p, prev, max_retries, rc, root, reason):
        eid = self.next_attune_id[p]
        self.next_attune_id[p] += 1
        self.attune_insert(p, eid, max_retries, rc, root, prev, reason)
        self.count(p, "retries")

    # ---- Tasker ------------------------------------------------------------------------
    def tasker_spawn(self):
        task = str(uuid.uuid4())
        t = now()
        self.sql("tasker", "INSERT INTO tasker.tasks (task_uuid, named_task_uuid, requested_at, initiator,"
                           " source_system, reason, tags, context, identity_hash, correlation_id)"
                           " VALUES (%s,%s,%s,'sim','sim','simulated','[\"sim\"]','{}',%s,%s)",
                 (task, str(uuid.uuid5(uuid.NAMESPACE_URL, "sim-named-task")), naive(t), "sim-" + task,
                  str(uuid.uuid4())))
        self.tasker_task_transition(task, "pending")
        self.tasker_task_transition(task, "steps_in_process")
        for n in self.rng.sample(["sim_fetch", "sim_process", "sim_store"], self.rng.randint(1, 3)):
            step = str(uuid.uuid4())
            max_attempts = self.rng.choice([1, 2, 3, 3])
            retryable = self.rng.random() > 0.1
            self.sql("tasker", "INSERT INTO tasker.workflow_steps (workflow_step_uuid, task_uuid, named_step_uuid,"
                               " retryable, max_attempts, attempts, inputs) VALUES (%s,%s,%s,%s,%s,NULL,'{}')",
                     (step, task, str(uuid.uuid5(uuid.NAMESPACE_URL, "sim-step-" + n)), retryable,
                      max_attempts))
            self.tasker_step_transition(step, "pending")
            self.later(self.rng.uniform(0.2, 1.0), self.tasker_step_attempt, task, step, max_attempts,
                       retryable)
        self.count("tasker", "tasks")

    def tasker_task_transition(self, task, to):
        cur = self.sql("tasker", "UPDATE tasker.task_transitions SET most_recent = false WHERE task_uuid = %s"
                                 " AND most_recent RETURNING sort_key, to_state", (task,))
        row = cur.fetchone()
        key, frm = (row[0] + 1, row[1]) if row else (0, None)
        self.sql("tasker", "INSERT INTO tasker.task_transitions (task_transition_uuid, task_uuid, to_state,"
                           " from_state, sort_key, most_recent) VALUES (%s,%s,%s,%s,%s,true)",
                 (str(uuid.uuid4()), task, to, frm, key))

    def tasker_step_transition(self, step, to, meta=None):
        cur = self.sql("tasker", "UPDATE tasker.workflow_step_transitions SET most_recent = false"
                                 " WHERE workflow_step_uuid = %s AND most_recent RETURNING sort_key, to_state",
                       (step,))
        row = cur.fetchone()
        key, frm = (row[0] + 1, row[1]) if row else (0, None)
        self.sql("tasker", "INSERT INTO tasker.workflow_step_transitions (workflow_step_transition_uuid,"
                           " workflow_step_uuid, to_state, from_state, metadata, sort_key, most_recent)"
                           " VALUES (%s,%s,%s,%s,%s,%s,true)",
                 (str(uuid.uuid4()), step, to, frm, json.dumps(meta or {}), key))
        self.count("tasker", "transitions")

    def tasker_step_attempt(self, task, step, max_attempts, retryable):
        self.tasker_step_transition(step, "enqueued")
        self.tasker_step_transition(step, "in_progress")
        self.sql("tasker", "UPDATE tasker.workflow_steps SET attempts = COALESCE(attempts, 0) + 1,"
                           " in_process = true, last_attempted_at = %s WHERE workflow_step_uuid = %s",
                 (naive(now()), step))
        self.count("tasker", "attempts")
        self.later(self.rng.uniform(0.5, 2.0), self.tasker_step_result, task, step, max_attempts, retryable)

    def tasker_step_result(self, task, step, max_attempts, retryable):
        if self.rng.random() < 0.55:
            self.sql("tasker", "UPDATE tasker.workflow_steps SET in_process = false, processed = true,"
                               " processed_at = %s, results = '{\"ok\": true}' WHERE workflow_step_uuid = %s",
                     (naive(now()), step))
            self.tasker_step_transition(step, "complete")
            return
        msg = self.rng.choice(["upstream timeout", "connection reset", "validation failed: bad sku"])
        backoff = self.rng.choice([None, 1, 2, 3])
        cur = self.sql("tasker", "UPDATE tasker.workflow_steps SET in_process = false, results = %s,"
                                 " backoff_request_seconds = %s WHERE workflow_step_uuid = %s RETURNING attempts",
                       (json.dumps({"success": False, "status": "error",
                                    "error": {"message": msg, "error_type": "RetryableError",
                                              "retryable": True},
                                    "metadata": {"error_code": "SIM_ERROR", "retryable": True}}),
                        backoff, step))
        attempts = cur.fetchone()[0]
        # Tasker writes the state machine's event as JSON text in metadata.event
        self.tasker_step_transition(step, "error",
                                    {"event": json.dumps({"type": "Fail", "data": msg})})
        if retryable and attempts < max_attempts:
            self.tasker_step_transition(step, "waiting_for_retry")
            self.later(backoff or 1.5, self.tasker_step_attempt, task, step, max_attempts, retryable)
            self.count("tasker", "retries")
            return
        self.count("tasker", "exhausted")
        self.tasker_task_transition(task, "error")
        cur = self.sql("tasker", "INSERT INTO tasker.tasks_dlq (dlq_entry_uuid, task_uuid, original_state,"
                                 " dlq_reason, dlq_timestamp, task_snapshot, metadata) VALUES (%s,%s,'error',"
                                 "'max_retries_exceeded',%s,%s,'{\"sim\": true}') ON CONFLICT DO NOTHING",
                       (str(uuid.uuid4()), task, naive(now()), json.dumps({"task_uuid": task})))
        if cur.rowcount:
            self.count("tasker", "dlq_entries")

    # ---- OpenAgents --------------------------------------------------------------------
    def oa_spawn(self):
        jid = "sim-" + uuid.uuid4().hex[:28]
        upper = self.rng.random() < 0.5
        st = lambda s: s.upper() if upper else s  # noqa: E731
        policy = self.rng.choice([
            {"type": "fixed_delay", "delay": 1, "jitter": 0},
            {"type": "exponential_backoff", "initial_delay": 1, "max_delay": 4, "multiplier": 2,
             "jitter": 0.1}])
        max_retries = self.rng.choice([0, 1, 2, 3])
        tag = self.rng.choice(["email", "reports", "sim"])
        t = time.time()
        self.sql("openagents", "INSERT INTO jobs (job_id, name, payload, status, priority, max_retries,"
                               " retry_policy, timeout, metadata, created_at, updated_at, retry_count)"
                               " VALUES (%s,%s,'{}',%s,1,%s,%s,60,'{\"sim\": true}',%s,%s,0)",
                 (jid, "sim_job_" + tag, st("queued"), max_retries, json.dumps(policy), t, t))
        self.sql("openagents", "INSERT INTO job_tags (job_id, tag) VALUES (%s, %s)", (jid, tag))
        self.count("openagents", "jobs")
        self.later(self.rng.uniform(0.3, 1.5), self.oa_run, jid, st, max_retries, policy)

    def oa_run(self, jid, st, max_retries, policy):
        t = time.time()
        self.sql("openagents", "UPDATE jobs SET status = %s, started_at = %s, updated_at = %s,"
                               " worker_id = 'sim-oa-worker-1' WHERE job_id = %s", (st("running"), t, t, jid))
        self.later(self.rng.uniform(0.5, 2.0), self.oa_finish, jid, st, max_retries, policy)

    def oa_finish(self, jid, st, max_retries, policy):
        t = time.time()
        if self.rng.random() < 0.55:
            self.sql("openagents", "UPDATE jobs SET status = %s, completed_at = %s, updated_at = %s,"
                                   " result = '{\"ok\": true}' WHERE job_id = %s", (st("completed"), t, t, jid))
            self.count("openagents", "completed")
            return
        cur = self.sql("openagents", "UPDATE jobs SET status = %s, completed_at = %s, updated_at = %s,"
                                     " error = %s WHERE job_id = %s RETURNING retry_count",
                       (st("failed"), t, t, json.dumps({"type": "SimError", "message": "simulated failure"}),
                        jid))
        rc = cur.fetchone()[0]
        self.count("openagents", "failed")
        if rc < max_retries:
            delay = policy.get("delay") or min(policy["initial_delay"] * policy["multiplier"] ** rc,
                                               policy["max_delay"])
            self.later(delay, self.oa_retry, jid, st, max_retries, policy)
        else:
            self.count("openagents", "dead")

    def oa_retry(self, jid, st, max_retries, policy):
        self.sql("openagents", "UPDATE jobs SET retry_count = retry_count + 1, status = %s, updated_at = %s"
                               " WHERE job_id = %s", (st("queued"), time.time(), jid))
        self.count("openagents", "retries")
        self.later(self.rng.uniform(0.3, 1.0), self.oa_run, jid, st, max_retries, policy)

    # ---- Alakai ------------------------------------------------------------------------
    def alakai_record(self, task, attempt, status, dispatched, resolved=None, code=None, msg=None):
        r = {"status": status, "attempt": attempt,
             "taskSnapshot": {"taskId": task, "type": "render", "payload": {"sim": True}},
             "dispatchedAt": iso(dispatched)}
        if resolved:
            r["resolvedAt"] = iso(resolved)
        if code:
            r["errorCode"] = code
            r["errorMessage"] = msg
        return json.dumps(r)

    def sqs(self, action, body):
        req = urllib.request.Request(self.env["RD_SQS_ENDPOINT"] + "/", method="POST",
                                     data=json.dumps(body).encode(), headers={
                                         "X-Amz-Target": "AmazonSQS." + action,
                                         "Content-Type": "application/x-amz-json-1.0"})
        with urllib.request.urlopen(req, timeout=5) as r:
            return json.loads(r.read() or b"{}")

    def sqs_dispatch(self, task):
        """The dispatch message; True when the task is lost (never recorded in Redis)."""
        roll = self.sqs_rng.random()
        if roll < 0.08:
            self.sqs_doomed.add(task)
            self.count("alakai", "sqs_doomed")
        self.sqs("SendMessage", {"QueueUrl": self.sqs_url, "MessageBody": json.dumps(
            {"taskId": task, "attempt": 1, "taskType": "render", "inputs": {"sim": True}})})
        self.count("alakai", "sqs_sent")
        if roll < 0.027:
            self.count("alakai", "sqs_lost")
            return True
        return False

    def sqs_consume(self):
        """The orchestrator: receives, launches and deletes; a doomed message is received and
        never deleted (its visibility lapses; after maxReceiveCount SQS moves it to the DLQ)."""
        self.later(1.0, self.sqs_consume)
        got = self.sqs("ReceiveMessage", {"QueueUrl": self.sqs_url, "MaxNumberOfMessages": 10,
                                          "VisibilityTimeout": 2, "WaitTimeSeconds": 0})
        for m in got.get("Messages", []):
            try:
                task = json.loads(m["Body"]).get("taskId")
            except ValueError:
                task = None
            if task in self.sqs_doomed:
                self.count("alakai", "sqs_failed_receives")
                continue
            self.sqs("DeleteMessage", {"QueueUrl": self.sqs_url, "ReceiptHandle": m["ReceiptHandle"]})
            self.count("alakai", "sqs_consumed")

    def alakai_spawn(self):
        task = "sim-task-" + uuid.uuid4().hex[:12]
        key = "%s:%s" % (ALAKAI_PREFIX, task)
        roll = self.rng.random()    # drawn first: SQS leaves the other profiles' sequence alone
        if self.sqs_url and self.sqs_dispatch(task):
            self.count("alakai", "tasks")
            return                  # a lost dispatch: in SQS (and soon its DLQ), not in Redis
        if roll < 0.05:   # crash-before-launch orphan: running "for 3 hours" and never resolved
            self.redis.hset(key, "1", self.alakai_record(task, 1, "running", now() - dt.timedelta(hours=3)))
            self.count("alakai", "orphans")
        else:
            self.redis.hset(key, "1", self.alakai_record(task, 1, "running", now()))
            self.later(self.rng.uniform(0.5, 2.5), self.alakai_finish, task, 1, now(), roll < 0.12)
        self.count("alakai", "tasks")

    def alakai_finish(self, task, attempt, dispatched, overlap):
        key = "%s:%s" % (ALAKAI_PREFIX, task)
        if overlap and attempt == 1:
            # a retry dispatched while attempt 1 still runs (the wrong-attempt callback gap)
            self.redis.hsetnx(key, "2", self.alakai_record(task, 2, "running", now()))
            self.count("alakai", "overlaps")
            self.later(self.rng.uniform(0.5, 2.0), self.alakai_finish, task, 2, now(), False)
            return
        if self.rng.random() < 0.55:
            self.redis.hset(key, str(attempt), self.alakai_record(task, attempt, "succeeded", dispatched, now()))
            self.count("alakai", "succeeded")
            return
        self.redis.hset(key, str(attempt), self.alakai_record(task, attempt, "failed", dispatched, now(),
                                                              "SIM_FAILED", "simulated render failure"))
        self.count("alakai", "failed")
        if attempt <= ALAKAI_MAX_RETRIES:
            self.later(self.rng.uniform(0.5, 1.5), self.alakai_retry, task, attempt + 1)
        else:
            self.count("alakai", "exhausted")

    def alakai_retry(self, task, attempt):
        key = "%s:%s" % (ALAKAI_PREFIX, task)
        if self.redis.hsetnx(key, str(attempt), self.alakai_record(task, attempt, "running", now())):
            self.count("alakai", "retries")
            self.later(self.rng.uniform(0.5, 2.0), self.alakai_finish, task, attempt, now(), False)

    # ---- main loop ---------------------------------------------------------------------
    def spawn(self):
        p = self.rng.choice(self.profiles)
        if p in ("attune1", "attune2"):
            self.run_safely(self.attune_spawn, (p,))
        elif p == "tasker":
            self.run_safely(self.tasker_spawn, ())
        elif p == "openagents":
            self.run_safely(self.oa_spawn, ())
        elif p == "alakai":
            self.run_safely(self.alakai_spawn, ())

    def run(self, duration):
        self.setup()
        end = None if duration is None else time.monotonic() + duration
        next_spawn = time.monotonic()
        interval = 1.0 / self.rate if self.rate > 0 else None
        while not self.stop:
            t = time.monotonic()
            if end is not None and t >= end:
                break
            if interval is not None:
                while next_spawn <= t:
                    self.spawn()
                    next_spawn += interval
                    if t - next_spawn > 5:   # fell far behind: don't burst
                        next_spawn = t
            while self.q and self.q[0][0] <= t:
                _, _, fn, args = heapq.heappop(self.q)
                self.run_safely(fn, args)
            wake = min(x for x in (next_spawn if interval else None, self.q[0][0] if self.q else None,
                                   end, t + 0.5) if x is not None)
            time.sleep(max(0.0, min(0.5, wake - time.monotonic())))
        for c in self.pg.values():
            try:
                c.close()
            except Exception:
                pass
        return {"profiles": self.profiles, "seconds": round(time.monotonic() - self.t0, 1),
                "errors": self.errors, "stats": self.stats}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--env-file", help="DIR/env of the stack (default: the environment)")
    ap.add_argument("--rate", type=float, default=2.0, help="new executions/tasks/jobs per second")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--duration", type=float, help="seconds (default: until SIGINT/SIGTERM)")
    ap.add_argument("--profiles", default=",".join(PROFILES))
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args(argv)
    profiles = [p for p in a.profiles.split(",") if p]
    bad = [p for p in profiles if p not in PROFILES]
    if bad or not profiles:
        ap.error("unknown profile(s) %s; choose from %s" % (",".join(bad), ",".join(PROFILES)))
    env = stacklib.load_env(a.env_file)
    sim = Sim(env, a.rate, a.seed, profiles, a.quiet)

    def stop(*_):
        sim.stop = True
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    summary = sim.run(a.duration)
    print(json.dumps(summary, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
