"""Reference core server, attune1 (era 1: config JSON) and attune2 (era 2: columns)."""
import json

import pytest

from coresrv_helpers import OPERATOR, VIEWER, Server, call, core_url, pg_connect, \
    reload_fixtures

REF = "coresrv.test"
ERAS = ["attune1", "attune2"]


@pytest.fixture(scope="module", params=ERAS)
def env(request):
    system = request.param
    reload_fixtures(system)
    conn = pg_connect(system)
    cur = conn.cursor()

    def execution(status="failed", rc=0, mr=3, root=None):
        era1 = system == "attune1"
        cfg = {"timeout": 30}
        if era1:
            cfg.update({"retry_count": rc, "max_retries": mr})
            if root is not None:
                cfg["original_execution"] = root
            cur.execute("""INSERT INTO execution (action_ref, config, status, result)
                           VALUES (%s, %s, %s, '{"error":"boom"}') RETURNING id""",
                        (REF, json.dumps(cfg), status))
        else:
            cur.execute("""INSERT INTO execution (action_ref, config, status, result, retry_count,
                           max_retries, original_execution) VALUES (%s, %s, %s,
                           '{"error":"boom"}', %s, %s, %s) RETURNING id""",
                        (REF, json.dumps(cfg), status, rc, mr, root))
        return cur.fetchone()[0]

    def worker(status="active"):
        cur.execute("""INSERT INTO worker (name, status, meta) VALUES
                       ('coresrv-test-' || nextval('worker_id_seq'), %s, '{"zone":"a"}')
                       RETURNING id, name""", (status,))
        return cur.fetchone()

    def row(table, id_):
        cur.execute("SELECT to_jsonb(t) FROM %s t WHERE id = %%s" % table, (id_,))
        r = cur.fetchone()
        return r[0] if r else None

    yield {"system": system, "url": core_url(system), "execution": execution, "worker": worker,
           "row": row, "cur": cur}
    cur.execute("DELETE FROM execution WHERE action_ref = %s", (REF,))
    cur.execute("DELETE FROM worker WHERE name LIKE 'coresrv-test-%%'")
    conn.close()
    reload_fixtures(system)


def retry(env, xid, headers=OPERATOR, prefix="/api/v1", **kw):
    return call("%s%s/executions/%s/retry" % (env["url"], prefix, xid), headers=headers, **kw)


def retry_meta(env, r):
    """(retry_count, max_retries, original_execution, retry_of, reason) as written by the era."""
    c = r["config"] or {}
    if env["system"] == "attune1":
        assert r["retry_count"] == 0 and r["original_execution"] is None   # columns untouched
        return (c.get("retry_count"), c.get("max_retries"), c.get("original_execution"),
                c.get("retry_of"), c.get("retry_reason"))
    return (r["retry_count"], r["max_retries"], r["original_execution"], c.get("retry_of"),
            r["retry_reason"])


def test_retry_creates_next_execution(env):
    x = env["execution"](rc=0, mr=2)
    st, body, _ = retry(env, x)
    assert st == 202, body
    assert body["status"] == "queued" and body["attempt"] == 2 and body["retry_of"] == x
    new = env["row"]("execution", body["id"])
    assert new["status"] == "requested" and new["action_ref"] == REF
    assert new["config"]["timeout"] == 30
    assert retry_meta(env, new) == (1, 2, x, x, "manual_retry")
    assert env["row"]("execution", x)["status"] == "failed"      # the original stays as it was


def test_retrying_a_superseded_attempt_is_refused(env):
    x = env["execution"](rc=0, mr=3)
    st, body, _ = retry(env, x)
    assert st == 202
    st, body2, _ = retry(env, x)                                    # x is no longer the newest
    assert st == 409 and body2 == {"error": "execution already retried as %d" % body["id"]}


def test_retry_of_a_retry_keeps_root(env):
    root = env["execution"](rc=0, mr=3)
    second = env["execution"](rc=1, mr=3, root=root)
    st, body, _ = retry(env, second, prefix="")                    # default contract route
    assert st == 202 and body["attempt"] == 3
    assert retry_meta(env, env["row"]("execution", body["id"])) == (2, 3, root, second,
                                                                     "manual_retry")


@pytest.mark.parametrize("status", ["running", "completed", "requested", "timeout"])
def test_409_status(env, status):
    x = env["execution"](status=status)
    st, body, _ = retry(env, x)
    assert st == 409 and body == {"error": "cannot retry execution in status '%s'" % status}


@pytest.mark.parametrize("rc,mr", [(2, 2), (0, 0), (0, None), (5, 3)])
def test_409_budget(env, rc, mr):
    x = env["execution"](rc=rc, mr=mr)
    st, body, _ = retry(env, x)
    assert st == 409 and body == {"error": "retry budget exhausted"}
    env["cur"].execute("SELECT count(*) FROM execution WHERE action_ref = %s AND id > %s",
                       (REF, x))
    assert env["cur"].fetchone()[0] == 0


def test_404(env):
    assert retry(env, 987654321)[0] == 404
    assert retry(env, "not-a-number")[0] == 404


def test_401_403(env):
    x = env["execution"]()
    st, body, hdrs = retry(env, x, headers={})
    assert st == 401 and body["error"].startswith("unauthorized")
    st, body, _ = retry(env, x, headers=VIEWER)
    assert st == 403 and "viewer" in body["error"]
    env["cur"].execute("SELECT count(*) FROM execution WHERE action_ref = %s AND id > %s",
                       (REF, x))
    assert env["cur"].fetchone()[0] == 0


def test_502_store_down(env):
    srv = Server(env["system"], "--dsn", "host=127.0.0.1 port=1 dbname=x user=x connect_timeout=2")
    try:
        st, body, _ = call(srv.url + "/api/v1/executions/1/retry", headers=OPERATOR)
        assert st == 502 and body["error"].startswith("core could not read the store")
        st, body, _ = call(srv.url + "/api/v1/workers/1/cordon", headers=OPERATOR)
        assert st == 502
    finally:
        srv.stop()


def cordon_state(env, w):
    if env["system"] == "attune2":
        return w["cordoned"], w["cordon_reason"]
    m = w["meta"] or {}
    assert m.get("zone") == "a"                                    # other meta keys kept
    return bool(m.get("cordoned")), m.get("cordon_reason")


def test_cordon_uncordon(env):
    wid, name = env["worker"]()
    st, body, _ = call("%s/api/v1/workers/%d/cordon" % (env["url"], wid),
                       body={"reason": "disk full"}, headers=OPERATOR)
    assert st == 200 and body["cordoned"] is True and body["changed"] is True
    assert cordon_state(env, env["row"]("worker", wid)) == (True, "disk full")
    st, body, _ = call("%s/api/v1/workers/%d/cordon" % (env["url"], wid), body={},
                       headers=OPERATOR)
    assert st == 200 and body["changed"] is False
    st, body, _ = call("%s/workers/%s/undrain" % (env["url"], name), headers=OPERATOR)
    assert st == 200 and body["cordoned"] is False
    assert cordon_state(env, env["row"]("worker", wid)) == (False, None)
    st, body, _ = call("%s/workers/%d/drain" % (env["url"], wid), headers=OPERATOR)
    assert st == 200 and cordon_state(env, env["row"]("worker", wid))[0] is True


def test_deactivate_activate(env):
    wid, name = env["worker"]("busy")
    st, body, _ = call("%s/api/v1/workers/%d/deactivate" % (env["url"], wid), headers=OPERATOR)
    assert st == 200 and body["status"] == "inactive"
    assert env["row"]("worker", wid)["status"] == "inactive"
    st, body, _ = call("%s/workers/%d/activate" % (env["url"], wid), headers=OPERATOR)
    assert st == 200 and env["row"]("worker", wid)["status"] == "active"


def test_worker_404_403(env):
    assert call("%s/api/v1/workers/99999999/cordon" % env["url"], headers=OPERATOR)[0] == 404
    wid, _ = env["worker"]()
    st, body, _ = call("%s/workers/%d/deactivate" % (env["url"], wid), headers=VIEWER)
    assert st == 403 and env["row"]("worker", wid)["status"] == "active"
