"""Store side of the reference core server: one class per system, each doing the real write.

Every method returns (status, body) or raises ApiError(status, message). A body may carry
"_applied": False to say the request succeeded without changing anything (logged as such).
"""
import datetime
import json
import re
import time
import uuid

STORE_DOWN = "core could not read the store"


class ApiError(Exception):
    def __init__(self, status, message):
        super().__init__(message)
        self.status, self.message = status, message


def status_conflict(status):
    return ApiError(409, "cannot retry execution in status '%s'" % status)


BUDGET = ApiError(409, "retry budget exhausted")

# How the attempt a retry writes ends (POST /_coresrv/outcome): left as a retry leaves it
# (running), or written finished at once: succeeded, failed with the retried attempt's own
# error (failed_again), or failed with another error (new_error).
OUTCOMES = ("running", "succeeded", "failed_again", "new_error")
NEW_ERROR = "coresrv outcome hook: disk quota exceeded on volume vol-%d"


def make_system(name, env, opts):
    if name == "alakai":
        return Alakai(env, opts)
    if name in ("attune1", "attune2"):
        return Attune(name, env, opts)
    if name == "tasker":
        return Tasker(env, opts)
    return OpenAgents(env, opts)


class Base:
    outcome = "running"

    def retry(self, eid, ident, body):
        raise ApiError(404, "no such execution: %s" % eid)

    def worker_action(self, wid, op, ident, body):
        raise ApiError(404, "no such worker: %s (this system has no worker actions)" % wid)

    def get_execution(self, eid):
        raise ApiError(404, "no such execution: %s" % eid)

    def get_worker(self, wid):
        raise ApiError(404, "no such worker: %s" % wid)


# ---- Alakai (Redis) ----------------------------------------------------------------------
class Alakai(Base):
    def __init__(self, env, opts):
        import redis
        self.url = opts.redis_url or env.get("TASK_TRACKING_REDIS_URL") or \
            env.get("RD_REDIS_URL") or "redis://127.0.0.1:6379/0"
        self.prefix = opts.prefix or env.get("EXECUTIONS_REDIS_KEY_PREFIX") or \
            env.get("RD_ALAKAI_PREFIX") or "alakai-executions"
        mr = opts.max_retries if opts.max_retries is not None else env.get("MAX_RETRIES", 1)
        self.max_retries = int(mr)
        # bytes, not str: records may hold invalid UTF-8 and raw control characters
        self.r = redis.Redis.from_url(self.url, socket_connect_timeout=2, socket_timeout=5)
        self.redis_error = redis.RedisError

    def retry(self, task_id, ident, body):
        key = "%s:%s" % (self.prefix, task_id)
        try:
            fields = self.r.hgetall(key)
        except self.redis_error as e:
            raise ApiError(502, "%s: %s" % (STORE_DOWN, str(e).splitlines()[0] if str(e) else
                                            type(e).__name__))
        fields = {f.decode("utf-8", "replace"): v for f, v in fields.items()}
        attempts = sorted(int(f) for f in fields if re.fullmatch(r"[1-9][0-9]{0,8}", f))
        if not attempts:
            raise ApiError(404, "no execution for task '%s'" % task_id)
        n = attempts[-1]
        try:
            rec = json.loads(fields[str(n)].decode("utf-8", "replace"), strict=False)
            if not isinstance(rec, dict):
                raise ValueError("not an object")
        except ValueError:
            raise ApiError(502, "%s: attempt %d of task '%s' is not a JSON record"
                           % (STORE_DOWN, n, task_id))
        status = rec.get("status")
        if status != "failed":
            raise status_conflict(status)
        if not n <= self.max_retries:
            raise BUDGET
        prev_at = rec.get("dispatchedAt")
        if isinstance(prev_at, (int, float)) and not isinstance(prev_at, bool):
            at = int(time.time() * 1000) if prev_at > 1e11 else time.time()
        else:
            t = time.time()
            at = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + ".%03dZ" % int(t % 1 * 1000)
        new = {"status": "running", "attempt": n + 1, "errorCode": None, "errorMessage": None,
               "taskSnapshot": rec.get("taskSnapshot"), "dispatchedAt": at, "resolvedAt": None}
        if self.outcome != "running":
            new["status"] = "succeeded" if self.outcome == "succeeded" else "failed"
            new["resolvedAt"] = at
            if self.outcome == "failed_again":
                new["errorCode"], new["errorMessage"] = rec.get("errorCode"), rec.get("errorMessage")
            elif self.outcome == "new_error":
                new["errorCode"], new["errorMessage"] = "E_QUOTA", NEW_ERROR % (n + 1)
        try:
            ok = self.r.hsetnx(key, str(n + 1), json.dumps(new))
        except self.redis_error as e:
            raise ApiError(502, "%s: %s" % (STORE_DOWN, e))
        if not ok:
            # Another retry reserved attempt n+1 first (the seed's HSETNX gate).
            try:
                other = json.loads(self.r.hget(key, str(n + 1)) or b"{}",
                                   strict=False).get("status", "running")
            except (ValueError, AttributeError, self.redis_error):
                other = "running"
            raise status_conflict(other)
        return 202, {"taskId": task_id, "attempt": n + 1, "status": "queued"}


# ---- PostgreSQL helpers ------------------------------------------------------------------
class PgSystem(Base):
    SCHEMA = None           # preferred schema (search_path)

    def __init__(self, dsn_name, env, opts):
        import psycopg2
        import psycopg2.extras
        self.pg = psycopg2
        self.Json = psycopg2.extras.Json
        self.dict_cursor = psycopg2.extras.RealDictCursor
        self.dsn = opts.dsn or env.get("RD_PG_ADMIN_DSN_" + dsn_name) or ""
        self._cols = {}
        # idle connections kept for the next request (a core answers many at once: a new
        # backend per request would cost more than the request)
        import threading
        self._idle = []
        self._idle_lock = threading.Lock()

    def connect(self):
        try:
            conn = self.pg.connect(self.dsn, connect_timeout=3,
                                   application_name="redrive-coresrv")
        except self.pg.Error as e:
            raise ApiError(502, "%s: %s" % (STORE_DOWN, (str(e).strip().splitlines() or
                                                          [type(e).__name__])[0]))
        try:
            with conn.cursor() as cur:
                cur.execute("SET statement_timeout = '10s'")
                if self.SCHEMA:
                    cur.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (self.SCHEMA,))
                    if cur.fetchone():
                        cur.execute("SET search_path TO %s, public" % self.SCHEMA)
            conn.commit()
        except self.pg.Error as e:
            conn.close()
            raise ApiError(502, "%s: %s" % (STORE_DOWN, str(e).strip()))
        return conn

    POOL_MAX = 16

    def run(self, fn, *args):
        """Run fn(cur, *args) in one transaction; store errors become 502."""
        with self._idle_lock:
            conn = self._idle.pop() if self._idle else None
        if conn is not None:         # alive still? (the store may have restarted meanwhile)
            try:
                with conn.cursor() as cur:
                    cur.execute("SELECT 1")
                conn.rollback()
            except self.pg.Error:
                conn.close()
                conn = None
        if conn is None or conn.closed:
            conn = self.connect()
        keep = False
        try:
            with conn:
                with conn.cursor(cursor_factory=self.dict_cursor) as cur:
                    out = fn(cur, *args)
            keep = True
            return out
        except self.pg.OperationalError as e:
            raise ApiError(502, "%s: %s" % (STORE_DOWN, str(e).strip().splitlines()[0]))
        except ApiError:
            keep = True          # an answer (404, 409...): the transaction was rolled back
            raise
        finally:
            if keep and not conn.closed:
                with self._idle_lock:
                    if len(self._idle) < self.POOL_MAX:
                        self._idle.append(conn)
                        conn = None
            if conn is not None:
                conn.close()

    def columns(self, cur, table):
        if table not in self._cols:
            cur.execute("""SELECT a.attname FROM pg_attribute a
                           WHERE a.attrelid = to_regclass(%s) AND a.attnum > 0
                             AND NOT a.attisdropped""", (table,))
            self._cols[table] = {r["attname"] for r in cur.fetchall()}
        return self._cols[table]


def jsonable(v):
    if isinstance(v, (datetime.datetime, datetime.date)):
        return v.isoformat()
    if isinstance(v, uuid.UUID):
        return str(v)
    if hasattr(v, "as_integer_ratio") and not isinstance(v, (int, float)):
        return float(v)     # Decimal
    return v


def row_json(row):
    return {k: jsonable(v) for k, v in row.items()}


def as_int(v, default=None):
    if isinstance(v, bool):
        return default
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, str) and re.fullmatch(r"-?[0-9]{1,18}", v.strip()):
        return int(v)
    return default


# ---- Attune (era 1: public schema + config JSON; era 2: schema attune + columns) ----------
class Attune(PgSystem):
    def __init__(self, name, env, opts):
        self.era = 1 if name == "attune1" else 2
        self.SCHEMA = "attune" if self.era == 2 else None
        super().__init__(name.upper(), env, opts)

    @staticmethod
    def parse_id(eid, what):
        if not re.fullmatch(r"[0-9]{1,18}", eid):
            raise ApiError(404, "no such %s: %s" % (what, eid))
        return int(eid)

    def effective(self, row):
        """Retry metadata: column value if non-default, else config JSON (systems.md), the
        same reading as the schema's is_execution_retriable()."""
        cfg = row.get("config") if isinstance(row.get("config"), dict) else {}
        rc = max(as_int(row.get("retry_count"), 0) or 0, as_int(cfg.get("retry_count"), 0) or 0)
        mr = row.get("max_retries") or as_int(cfg.get("max_retries"), 0) or 0
        root = row.get("original_execution")
        if root is None:
            root = as_int(cfg.get("original_execution"))
        return rc, mr, root

    def retry(self, eid, ident, body):
        xid = self.parse_id(eid, "execution")
        return self.run(self._retry, xid, ident)

    def _retry(self, cur, xid, ident):
        cols = self.columns(cur, "execution")
        cur.execute("SELECT * FROM execution WHERE id = %s FOR UPDATE", (xid,))
        row = cur.fetchone()
        if row is None:
            raise ApiError(404, "no such execution: %d" % xid)
        status = str(row["status"])
        if status != "failed":
            raise status_conflict(status)
        rc, mr, root = self.effective(row)
        if not (mr > 0 and rc < mr):
            raise BUDGET
        root = root if root is not None else xid
        succ = self._successor(cur, cols, xid, root, rc)
        if succ is not None:
            # Only the newest attempt of a chain may be retried: never fork a chain.
            raise ApiError(409, "execution already retried as %d" % succ)
        now = datetime.datetime.now(datetime.timezone.utc)
        new = {}
        for c in ("action", "action_ref", "env_vars", "parent", "enforcement", "executor",
                  "is_workflow", "workflow_def", "workflow_task"):
            if c in cols and row.get(c) is not None:
                new[c] = row[c]
        cfg = dict(row["config"]) if isinstance(row.get("config"), dict) else {}
        if self.era == 1:
            cfg.update({"retry_count": rc + 1, "max_retries": mr, "original_execution": root,
                        "retry_of": xid, "retry_reason": "manual_retry",
                        "retry_at": now.isoformat().replace("+00:00", "Z"),
                        "retried_by": ident.name})
        else:
            # era 2 has no retry_of column: config carries it (and retry_at), as Attune does
            cfg.update({"retry_of": xid, "retry_at": now.isoformat().replace("+00:00", "Z")})
            for c, v in (("retry_count", rc + 1), ("max_retries", mr),
                         ("retry_reason", "manual_retry"), ("original_execution", root),
                         ("retry_of", xid)):
                if c in cols:
                    new[c] = v
        if "config" in cols and (cfg or row.get("config") is not None):
            new["config"] = cfg
        new["status"] = "requested"
        if self.outcome != "running":
            new["status"] = "completed" if self.outcome == "succeeded" else "failed"
            if "result" in cols:
                new["result"] = ({"ok": True} if self.outcome == "succeeded" else
                                 row.get("result") if self.outcome == "failed_again" else
                                 {"error": NEW_ERROR % (rc + 2)})
        names = list(new)
        vals = [self.Json(v) if isinstance(v, (dict, list)) else v for v in new.values()]
        cur.execute("INSERT INTO execution (%s) VALUES (%s) RETURNING id"
                    % (", ".join(names), ", ".join(["%s"] * len(names))), vals)
        new_id = cur.fetchone()["id"]
        return 202, {"id": new_id, "attempt": rc + 2, "retry_count": rc + 1,
                     "status": "queued", "execution_status": "requested",
                     "retry_of": xid, "original_execution": root}

    def _successor(self, cur, cols, xid, root, rc):
        """A later attempt of the same chain, by either era's links (indexed expressions)."""
        conds = ["(config ? 'retry_of' AND (config ->> 'retry_of')::bigint = %(id)s)",
                 "(config ? 'original_execution' AND (config ->> 'original_execution')::bigint"
                 " = %(root)s AND coalesce((config ->> 'retry_count')::int, 0) > %(rc)s)"]
        if "original_execution" in cols:
            conds.append("(original_execution = %(root)s AND retry_count > %(rc)s)")
        cur.execute("SELECT min(id) AS id FROM execution WHERE id <> %%(id)s AND (%s)"
                    % " OR ".join(conds), {"id": xid, "root": root, "rc": rc})
        return cur.fetchone()["id"]

    def _find_worker(self, cur, wid):
        if re.fullmatch(r"[0-9]{1,18}", wid):
            cur.execute("SELECT * FROM worker WHERE id = %s FOR UPDATE", (int(wid),))
        else:
            cur.execute("SELECT * FROM worker WHERE name = %s FOR UPDATE", (wid,))
        row = cur.fetchone()
        if row is None:
            raise ApiError(404, "no such worker: %s" % wid)
        return row

    def worker_action(self, wid, op, ident, body):
        op = {"drain": "cordon", "undrain": "uncordon"}.get(op, op)
        reason = body.get("reason") if isinstance(body, dict) else None
        if reason is not None and not isinstance(reason, str):
            raise ApiError(400, "reason must be a string")
        return self.run(self._worker, wid, op, reason, ident)

    def _worker(self, cur, wid, op, reason, ident):
        cols = self.columns(cur, "worker")
        row = self._find_worker(cur, wid)
        sets, vals, changed = [], [], True
        if op in ("deactivate", "activate"):
            want = "inactive" if op == "deactivate" else "active"
            changed = str(row["status"]) != want
            sets.append("status = %s")
            vals.append(want)
        elif "cordoned" in cols:                   # era 2: cordon columns
            on = op == "cordon"
            changed = bool(row.get("cordoned")) != on
            sets += ["cordoned = %s", "cordon_reason = %s", "cordoned_at = %s"]
            vals += [on, (reason or "drained via redrive") if on else None,
                     datetime.datetime.now(datetime.timezone.utc) if on else None]
        else:                                      # era 1: no cordon columns → meta JSON
            meta = row.get("meta") if isinstance(row.get("meta"), dict) else {}
            on = op == "cordon"
            changed = bool(meta.get("cordoned")) != on
            meta = dict(meta)
            if on:
                meta.update({"cordoned": True, "cordon_reason": reason or "drained via redrive",
                             "cordoned_by": ident.name,
                             "cordoned_at": datetime.datetime.now(datetime.timezone.utc)
                             .isoformat().replace("+00:00", "Z")})
            else:
                for k in ("cordoned", "cordon_reason", "cordoned_by", "cordoned_at"):
                    meta.pop(k, None)
            sets.append("meta = %s")
            vals.append(self.Json(meta))
        if "updated" in cols:
            sets.append("updated = now()")
        cur.execute("UPDATE worker SET %s WHERE id = %%s RETURNING *" % ", ".join(sets),
                    vals + [row["id"]])
        return 200, dict(self._worker_view(cur.fetchone()), _applied=changed, changed=changed)

    @staticmethod
    def _worker_view(w):
        meta = w.get("meta") if isinstance(w.get("meta"), dict) else {}
        cordoned = w["cordoned"] if "cordoned" in w else bool(meta.get("cordoned"))
        reason = w["cordon_reason"] if "cordon_reason" in w else meta.get("cordon_reason")
        return {"id": w["id"], "name": w.get("name"), "status": str(w["status"]),
                "cordoned": bool(cordoned), "cordon_reason": reason}

    def get_execution(self, eid):
        xid = self.parse_id(eid, "execution")

        def q(cur):
            cur.execute("SELECT * FROM execution WHERE id = %s", (xid,))
            row = cur.fetchone()
            if row is None:
                raise ApiError(404, "no such execution: %d" % xid)
            return row_json(row)
        return self.run(q)

    def get_worker(self, wid):
        return self.run(lambda cur: row_json(self._find_worker(cur, wid)))


# ---- Tasker (schema tasker) ----------------------------------------------------------------
UUID_RX = re.compile(r"[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?"
                     r"[0-9a-fA-F]{12}")
DLQ_RESOLUTIONS = ("pending", "manually_resolved", "permanently_failed", "cancelled")


class Tasker(PgSystem):
    SCHEMA = "tasker"
    ACTIONS = {"reset_for_retry": "pending", "resolve_manually": "resolved_manually",
               "complete_manually": "complete"}

    def __init__(self, env, opts):
        super().__init__("TASKER", env, opts)

    @staticmethod
    def parse_uuid(v, what):
        if not UUID_RX.fullmatch(v or ""):
            raise ApiError(404, "no such %s: %s" % (what, v))
        return str(uuid.UUID(v))

    def retry(self, eid, ident, body):
        step = self.parse_uuid(eid, "execution")
        reason = body.get("reason") if isinstance(body, dict) else None
        return self.run(self._step, None, step, "reset_for_retry",
                        {"reason": reason or "retry via redrive", "reset_by": ident.name}, ident)

    def step_action(self, task, step, ident, body):
        task = self.parse_uuid(task, "task")
        step = self.parse_uuid(step, "workflow step")
        if not isinstance(body, dict) or body.get("action_type") not in self.ACTIONS:
            raise ApiError(400, "action_type must be one of %s" % ", ".join(self.ACTIONS))
        return self.run(self._step, task, step, body["action_type"], body, ident)

    def _step(self, cur, task, step, action, body, ident):
        cur.execute("SELECT * FROM workflow_steps WHERE workflow_step_uuid = %s FOR UPDATE",
                    (step,))
        row = cur.fetchone()
        if row is None or (task is not None and str(row["task_uuid"]) != task):
            raise ApiError(404, "no such workflow step: %s" % step)
        cur.execute("""SELECT to_state FROM workflow_step_transitions
                       WHERE workflow_step_uuid = %s AND most_recent""", (step,))
        cur_row = cur.fetchone()
        state = cur_row["to_state"] if cur_row else "pending"
        if state != "error":
            if action == "reset_for_retry":
                raise status_conflict(state)
            raise ApiError(409, "cannot %s a step in state '%s'"
                           % (action.replace("_", " "), state))
        to_state = self.ACTIONS[action]
        who = body.get(action == "complete_manually" and "completed_by" or
                       action == "resolve_manually" and "resolved_by" or "reset_by")
        meta = {"action_type": action, "reason": body.get("reason"),
                "actor": who if isinstance(who, str) and who else ident.name,
                "identity": ident.name, "via": "redrive-coresrv"}
        tcols = self.columns(cur, "workflow_step_transitions")
        cur.execute("""SELECT coalesce(max(sort_key), 0) AS k FROM workflow_step_transitions
                       WHERE workflow_step_uuid = %s""", (step,))
        sort_key = cur.fetchone()["k"] + 1
        cur.execute("""UPDATE workflow_step_transitions SET most_recent = false
                       WHERE workflow_step_uuid = %s AND most_recent""", (step,))
        values = {"workflow_step_uuid": step, "to_state": to_state, "from_state": state,
                  "metadata": self.Json(meta), "sort_key": sort_key, "most_recent": True}
        self._insert_transition(cur, "workflow_step_transitions", tcols, values)
        scols = self.columns(cur, "workflow_steps")
        sets = ["in_process = false"]
        if action == "reset_for_retry":
            sets += ["processed = false", "processed_at = NULL"]
            if "backoff_request_seconds" in scols:
                sets.append("backoff_request_seconds = NULL")
            sets.append("attempts = 0")
        else:
            sets += ["processed = true", "processed_at = (now() AT TIME ZONE 'UTC')"]
        vals = []
        if action == "complete_manually" and "results" in scols:
            sets.append("results = %s")
            vals.append(self.Json(body.get("completion_data", {"completed_manually": True})))
        if "updated_at" in scols:
            sets.append("updated_at = (now() AT TIME ZONE 'UTC')")
        cur.execute("UPDATE workflow_steps SET %s WHERE workflow_step_uuid = %%s RETURNING *"
                    % ", ".join(sets), vals + [step])
        new = cur.fetchone()
        self._task_follow_up(cur, str(row["task_uuid"]), action, meta)
        if action == "reset_for_retry" and self.outcome != "running":
            self._finish_step(cur, step, tcols, scols, sort_key, row)
        prev = as_int(row.get("attempts"), 0) or 0
        out = {"id": step, "workflow_step_uuid": step, "task_uuid": str(row["task_uuid"]),
               "state": to_state, "from_state": state, "previous_attempts": prev,
               "attempts": new.get("attempts")}
        if action == "reset_for_retry":
            out.update(attempt=prev + 1, status="queued")
            return 202, out
        out["status"] = to_state
        return 200, out

    def _finish_step(self, cur, step, tcols, scols, sort_key, row):
        """The retried step run at once to its end (POST /_coresrv/outcome)."""
        ok = self.outcome == "succeeded"
        meta = {"event": json.dumps({"type": "Complete" if ok else "Fail"}),
                "via": "redrive-coresrv outcome hook"}
        err = None
        if not ok:
            old = row.get("results") if isinstance(row.get("results"), dict) else {}
            old_err = old.get("error") if isinstance(old.get("error"), dict) else {}
            err = dict(old_err) if self.outcome == "failed_again" else \
                {"message": NEW_ERROR % sort_key, "error_type": "RetryableError"}
            meta["error"] = err.get("message")
        cur.execute("""UPDATE workflow_step_transitions SET most_recent = false
                       WHERE workflow_step_uuid = %s AND most_recent""", (step,))
        self._insert_transition(cur, "workflow_step_transitions", tcols,
                                {"workflow_step_uuid": step,
                                 "to_state": "complete" if ok else "error",
                                 "from_state": "pending", "metadata": self.Json(meta),
                                 "sort_key": sort_key + 1, "most_recent": True})
        sets, vals = ["attempts = 1"], []
        if "results" in scols:
            sets.append("results = %s")
            vals.append(self.Json({"ok": True} if ok else {"error": err}))
        cur.execute("UPDATE workflow_steps SET %s WHERE workflow_step_uuid = %%s"
                    % ", ".join(sets), vals + [step])

    def _insert_transition(self, cur, table, cols, values):
        cur.execute("""SELECT a.attname FROM pg_attribute a
                       JOIN pg_index i ON i.indrelid = a.attrelid AND a.attnum = ANY(i.indkey)
                       LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
                       WHERE a.attrelid = to_regclass(%s) AND i.indisprimary
                         AND d.adbin IS NULL""", (table,))
        for r in cur.fetchall():            # a uuid primary key without a default
            values.setdefault(r["attname"], str(uuid.uuid4()))
        for c in ("created_at", "updated_at"):
            if c in cols:
                values.setdefault(c, datetime.datetime.utcnow())
        values = {k: v for k, v in values.items() if k in cols}
        cur.execute("INSERT INTO %s (%s) VALUES (%s)" % (table, ", ".join(values),
                                                          ", ".join(["%s"] * len(values))),
                    list(values.values()))

    def _task_follow_up(self, cur, task, action, meta):
        """A task blocked by this failure becomes waiting_for_retry (reset) again."""
        tcols = self.columns(cur, "task_transitions")
        if not tcols or action != "reset_for_retry":
            return
        cur.execute("""SELECT to_state FROM task_transitions WHERE task_uuid = %s
                       AND most_recent FOR UPDATE""", (task,))
        r = cur.fetchone()
        if not r or r["to_state"] not in ("blocked_by_failures", "error"):
            return
        cur.execute("SELECT coalesce(max(sort_key), 0) AS k FROM task_transitions "
                    "WHERE task_uuid = %s", (task,))
        k = cur.fetchone()["k"] + 1
        cur.execute("UPDATE task_transitions SET most_recent = false "
                    "WHERE task_uuid = %s AND most_recent", (task,))
        self._insert_transition(cur, "task_transitions", tcols, {
            "task_uuid": task, "to_state": "waiting_for_retry", "from_state": r["to_state"],
            "metadata": self.Json(meta), "sort_key": k, "most_recent": True})
        if "complete" in self.columns(cur, "tasks"):
            cur.execute("UPDATE tasks SET complete = false WHERE task_uuid = %s", (task,))

    def list_steps(self, task):
        task = self.parse_uuid(task, "task")

        def q(cur):
            cur.execute("""SELECT s.*, coalesce(t.to_state, 'pending') AS current_state
                           FROM workflow_steps s LEFT JOIN workflow_step_transitions t
                             ON t.workflow_step_uuid = s.workflow_step_uuid AND t.most_recent
                           WHERE s.task_uuid = %s ORDER BY s.created_at""", (task,))
            return [row_json(r) for r in cur.fetchall()]
        return self.run(q)

    def dlq_list(self, query):
        status = (query.get("resolution_status") or [None])[0]
        limit = min(max(as_int((query.get("limit") or ["50"])[0], 50), 1), 500)
        offset = max(as_int((query.get("offset") or ["0"])[0], 0), 0)
        if status is not None and status not in DLQ_RESOLUTIONS:
            raise ApiError(400, "resolution_status must be one of %s" % ", ".join(DLQ_RESOLUTIONS))

        def q(cur):
            cur.execute("""SELECT * FROM tasks_dlq WHERE (%s::text IS NULL OR
                           resolution_status::text = %s) ORDER BY dlq_timestamp DESC,
                           dlq_entry_uuid LIMIT %s OFFSET %s""", (status, status, limit, offset))
            return [row_json(r) for r in cur.fetchall()]
        return self.run(q)

    def dlq_stats(self):
        def q(cur):
            cur.execute("""SELECT dlq_reason::text AS dlq_reason, count(*) AS total_dlq,
                             count(*) FILTER (WHERE resolution_status::text = 'pending') AS pending,
                             count(*) FILTER (WHERE resolution_status::text <> 'pending')
                               AS resolved
                           FROM tasks_dlq GROUP BY 1 ORDER BY 1""")
            return [row_json(r) for r in cur.fetchall()]
        return self.run(q)

    def dlq_update(self, eid, ident, body):
        entry = self.parse_uuid(eid, "DLQ entry")
        if not isinstance(body, dict):
            raise ApiError(400, "body must be a JSON object")
        st = body.get("resolution_status")
        if st is not None and st not in DLQ_RESOLUTIONS:
            raise ApiError(400, "resolution_status must be one of %s" % ", ".join(DLQ_RESOLUTIONS))
        for f in ("resolution_notes", "resolved_by"):
            if body.get(f) is not None and not isinstance(body.get(f), str):
                raise ApiError(400, "%s must be a string" % f)
        return self.run(self._dlq_update, entry, ident, body)

    def _dlq_update(self, cur, entry, ident, body):
        cols = self.columns(cur, "tasks_dlq")
        cur.execute("SELECT * FROM tasks_dlq WHERE dlq_entry_uuid = %s FOR UPDATE", (entry,))
        row = cur.fetchone()
        if row is None:
            raise ApiError(404, "no such DLQ entry: %s" % entry)
        cur_st = str(row["resolution_status"])
        st = body.get("resolution_status")
        if cur_st != "pending" and st is not None and st != cur_st:
            raise ApiError(409, "DLQ entry is already %s" % cur_st)
        sets, vals = [], []
        if st is not None:
            sets.append("resolution_status = %s")
            vals.append(st)
            if st != "pending" and "resolution_timestamp" in cols:
                sets.append("resolution_timestamp = (now() AT TIME ZONE 'UTC')")
        if body.get("resolution_notes") is not None:
            sets.append("resolution_notes = %s")
            vals.append(body["resolution_notes"])
        if st is not None or body.get("resolved_by") is not None:
            sets.append("resolved_by = %s")
            vals.append(body.get("resolved_by") or ident.name)
        if not sets:
            raise ApiError(400, "nothing to update")
        if "updated_at" in cols:
            sets.append("updated_at = (now() AT TIME ZONE 'UTC')")
        cur.execute("UPDATE tasks_dlq SET %s WHERE dlq_entry_uuid = %%s RETURNING *"
                    % ", ".join(sets), vals + [entry])
        return 200, row_json(cur.fetchone())


# ---- OpenAgents (jobs / workers, epoch-float timestamps) -----------------------------------
class OpenAgents(PgSystem):
    WORKER_STATUS = {"deactivate": "offline", "activate": "active", "drain": "draining",
                     "undrain": "active"}

    def __init__(self, env, opts):
        super().__init__("OPENAGENTS", env, opts)

    def retry(self, eid, ident, body):
        return self.run(self._retry, eid)

    def _retry(self, cur, jid):
        cur.execute("SELECT * FROM jobs WHERE job_id = %s FOR UPDATE", (jid,))
        row = cur.fetchone()
        if row is None:
            raise ApiError(404, "no such execution: %s" % jid)
        status = str(row["status"])
        if status.lower() != "failed":
            raise status_conflict(status.lower())
        rc = as_int(row.get("retry_count"), 0) or 0
        mr = as_int(row.get("max_retries"), 0) or 0
        if not (mr > 0 and rc < mr):
            raise BUDGET
        cols = self.columns(cur, "jobs")
        queued = "QUEUED" if status.isupper() else "queued"
        if self.outcome != "running":
            end = "completed" if self.outcome == "succeeded" else "failed"
            queued = end.upper() if status.isupper() else end
        sets = ["status = %s", "retry_count = %s"]
        vals = [queued, rc + 1]
        if self.outcome == "new_error":
            sets.append("error = %s")
            vals.append(self.Json({"message": NEW_ERROR % (rc + 2)}))
        elif self.outcome == "succeeded":
            sets.append("error = NULL")
        for c in ("started_at", "completed_at", "worker_id"):
            if c in cols:
                sets.append("%s = NULL" % c)
        if "updated_at" in cols:
            sets.append("updated_at = %s")
            vals.append(time.time())
        cur.execute("UPDATE jobs SET %s WHERE job_id = %%s" % ", ".join(sets), vals + [jid])
        return 202, {"id": jid, "attempt": rc + 2, "retry_count": rc + 1, "status": "queued"}

    def worker_action(self, wid, op, ident, body):
        want = self.WORKER_STATUS[op] if op in self.WORKER_STATUS else None
        if want is None:
            raise ApiError(404, "no such worker action: %s" % op)

        def q(cur):
            cur.execute("SELECT * FROM workers WHERE worker_id = %s FOR UPDATE", (wid,))
            row = cur.fetchone()
            if row is None:
                raise ApiError(404, "no such worker: %s" % wid)
            cur_st = str(row["status"]).lower()
            if op == "undrain" and cur_st != "draining":
                return 200, {"id": wid, "status": cur_st, "changed": False, "_applied": False}
            changed = cur_st != want
            cur.execute("UPDATE workers SET status = %s WHERE worker_id = %s", (want, wid))
            return 200, {"id": wid, "status": want, "previous_status": cur_st,
                         "changed": changed, "_applied": changed}
        return self.run(q)
