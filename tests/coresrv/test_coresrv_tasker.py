"""Reference core server, tasker: step reset_for_retry / resolve / complete, DLQ routes."""
import uuid

import pytest

from coresrv_helpers import APIKEY, OPERATOR, VIEWER, Server, call, core_url, pg_connect, \
    reload_fixtures


@pytest.fixture(scope="module")
def env():
    reload_fixtures("tasker")
    conn = pg_connect("tasker")
    cur = conn.cursor()
    nt, ns = str(uuid.uuid4()), str(uuid.uuid4())
    cur.execute("INSERT INTO named_tasks (named_task_uuid, namespace_name, name) "
                "VALUES (%s, 'coresrv_test', %s)", (nt, "coresrv-test-" + nt[:8]))
    cur.execute("INSERT INTO named_steps (named_step_uuid, name) VALUES (%s, 'coresrv_step')",
                (ns,))
    tasks = []

    def task(task_state="blocked_by_failures"):
        t = str(uuid.uuid4())
        cur.execute("""INSERT INTO tasks (task_uuid, named_task_uuid, identity_hash,
                       correlation_id) VALUES (%s, %s, %s, %s)""", (t, nt, t, str(uuid.uuid4())))
        for i, (fr, to) in enumerate([(None, "pending"), ("pending", task_state)]):
            cur.execute("""INSERT INTO task_transitions (task_transition_uuid, task_uuid, to_state,
                           from_state, sort_key, most_recent) VALUES (%s,%s,%s,%s,%s,%s)""",
                        (str(uuid.uuid4()), t, to, fr, i + 1, i == 1))
        tasks.append(t)
        return t

    def step(t, states=("pending", "in_progress", "error"), attempts=3, max_attempts=3):
        s = str(uuid.uuid4())
        cur.execute("""INSERT INTO workflow_steps (workflow_step_uuid, task_uuid, named_step_uuid,
                       attempts, max_attempts, in_process, processed, backoff_request_seconds)
                       VALUES (%s,%s,%s,%s,%s,false,false,30)""",
                    (s, t, ns, attempts, max_attempts))
        prev = None
        for i, st in enumerate(states):
            cur.execute("""INSERT INTO workflow_step_transitions (workflow_step_transition_uuid,
                           workflow_step_uuid, to_state, from_state, sort_key, most_recent)
                           VALUES (%s,%s,%s,%s,%s,%s)""",
                        (str(uuid.uuid4()), s, st, prev, i + 1, i == len(states) - 1))
            prev = st
        return s

    def transitions(s):
        cur.execute("""SELECT from_state, to_state, sort_key, most_recent, metadata
                       FROM workflow_step_transitions WHERE workflow_step_uuid = %s
                       ORDER BY sort_key""", (s,))
        return cur.fetchall()

    def step_row(s):
        cur.execute("SELECT attempts, in_process, processed, backoff_request_seconds, results "
                    "FROM workflow_steps WHERE workflow_step_uuid = %s", (s,))
        return cur.fetchone()

    yield {"url": core_url("tasker"), "task": task, "step": step, "transitions": transitions,
           "step_row": step_row, "cur": cur}
    if tasks:
        cur.execute("DELETE FROM tasks WHERE task_uuid = ANY(%s::uuid[])", (tasks,))
    cur.execute("DELETE FROM named_tasks WHERE named_task_uuid = %s", (nt,))
    cur.execute("DELETE FROM named_steps WHERE named_step_uuid = %s", (ns,))
    conn.close()
    reload_fixtures("tasker")


def patch(env, t, s, body, headers=OPERATOR):
    return call("%s/v1/tasks/%s/workflow_steps/%s" % (env["url"], t, s), "PATCH", body, headers)


RESET = {"action_type": "reset_for_retry", "reason": "flaky network", "reset_by": "alice"}


def test_reset_for_retry(env):
    t = env["task"]()
    s = env["step"](t)
    st, body, _ = patch(env, t, s, RESET)
    assert st == 202, body
    assert body["status"] == "queued" and body["state"] == "pending" and body["attempt"] == 4
    tr = env["transitions"](s)
    assert [(r[0], r[1], r[2], r[3]) for r in tr[-2:]] == [("in_progress", "error", 3, False),
                                                          ("error", "pending", 4, True)]
    assert tr[-1][4]["reason"] == "flaky network" and tr[-1][4]["actor"] == "alice"
    assert env["step_row"](s)[:4] == (0, False, False, None)
    env["cur"].execute("SELECT to_state FROM task_transitions WHERE task_uuid = %s AND "
                       "most_recent", (t,))
    assert env["cur"].fetchone()[0] == "waiting_for_retry"


def test_default_contract_retry_maps_to_step(env):
    t = env["task"]()
    s = env["step"](t)
    st, body, _ = call("%s/executions/%s/retry" % (env["url"], s), headers=APIKEY)
    assert st == 202 and body["id"] == s
    assert env["transitions"](s)[-1][1] == "pending"


@pytest.mark.parametrize("state", ["complete", "in_progress", "pending", "waiting_for_retry"])
def test_409_not_in_error(env, state):
    t = env["task"]()
    s = env["step"](t, states=("pending", state) if state != "pending" else ("pending",))
    st, body, _ = patch(env, t, s, RESET)
    assert st == 409 and body == {"error": "cannot retry execution in status '%s'" % state}
    assert len(env["transitions"](s)) == (2 if state != "pending" else 1)


def test_404(env):
    t = env["task"]()
    s = env["step"](t)
    other = env["task"]()
    assert patch(env, other, s, RESET)[0] == 404            # step is not in that task
    assert patch(env, t, str(uuid.uuid4()), RESET)[0] == 404
    assert patch(env, t, "nope", RESET)[0] == 404
    assert call("%s/executions/%s/retry" % (env["url"], uuid.uuid4()), headers=OPERATOR)[0] == 404


def test_400_401_403(env):
    t = env["task"]()
    s = env["step"](t)
    assert patch(env, t, s, {"action_type": "explode"})[0] == 400
    st, body, _ = patch(env, t, s, RESET, headers={})
    assert st == 401
    st, body, _ = patch(env, t, s, RESET, headers=VIEWER)
    assert st == 403 and "may not" in body["error"]
    assert len(env["transitions"](s)) == 3


def test_resolve_and_complete_manually(env):
    t = env["task"]()
    s1, s2 = env["step"](t), env["step"](t)
    st, body, _ = patch(env, t, s1, {"action_type": "resolve_manually", "reason": "n/a",
                                     "resolved_by": "bob"})
    assert st == 200 and body["state"] == "resolved_manually"
    assert env["transitions"](s1)[-1][1] == "resolved_manually"
    st, body, _ = patch(env, t, s2, {"action_type": "complete_manually", "reason": "done by hand",
                                     "completed_by": "bob", "completion_data": {"ok": 1}})
    assert st == 200 and body["state"] == "complete"
    assert env["step_row"](s2)[2] is True and env["step_row"](s2)[4] == {"ok": 1}
    st, body, _ = patch(env, t, s2, RESET)                       # complete now: no reset
    assert st == 409


def test_502_store_down(env):
    srv = Server("tasker", "--dsn", "host=127.0.0.1 port=1 dbname=x user=x connect_timeout=2")
    try:
        st, body, _ = patch({"url": srv.url}, uuid.uuid4(), uuid.uuid4(), RESET)
        assert st == 502 and body["error"].startswith("core could not read the store")
    finally:
        srv.stop()


def test_dlq_list_and_update(env):
    t = env["task"]()
    e = str(uuid.uuid4())
    env["cur"].execute("""INSERT INTO tasks_dlq (dlq_entry_uuid, task_uuid, original_state,
                          dlq_reason) VALUES (%s, %s, 'error', 'max_retries_exceeded')""", (e, t))
    st, body, _ = call(env["url"] + "/v1/dlq?resolution_status=pending&limit=500", "GET",
                       headers=VIEWER)
    assert st == 200 and e in [x["dlq_entry_uuid"] for x in body]
    st, body, _ = call(env["url"] + "/v1/dlq/stats", "GET", headers=OPERATOR)
    assert st == 200 and any(r["dlq_reason"] == "max_retries_exceeded" for r in body)
    url = "%s/v1/dlq/entry/%s" % (env["url"], e)
    assert call(url, "PATCH", {"resolution_status": "manually_resolved"}, VIEWER)[0] == 403
    assert call(url, "PATCH", {"resolution_status": "bogus"}, OPERATOR)[0] == 400
    st, body, _ = call(url, "PATCH", {"resolution_status": "manually_resolved",
                                      "resolution_notes": "replayed"}, OPERATOR)
    assert st == 200 and body["resolution_status"] == "manually_resolved"
    assert body["resolved_by"] == "alice" and body["resolution_timestamp"]
    st, body, _ = call(url, "PATCH", {"resolution_status": "cancelled"}, OPERATOR)
    assert st == 409
    assert call("%s/v1/dlq/entry/%s" % (env["url"], uuid.uuid4()), "PATCH",
                {"resolution_status": "cancelled"}, OPERATOR)[0] == 404


def test_health_is_public(env):
    st, body, _ = call(env["url"] + "/health", "GET")
    assert st == 200 and body["status"] == "healthy"
