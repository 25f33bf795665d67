"""Reference core server, openagents: default contract, retry in place, worker status."""
import time
import uuid

import pytest

from coresrv_helpers import OPERATOR, VIEWER, Server, call, core_url, pg_connect, \
    reload_fixtures


@pytest.fixture(scope="module")
def env():
    reload_fixtures("openagents")
    conn = pg_connect("openagents")
    cur = conn.cursor()

    def job(status="failed", rc=0, mr=3):
        j = "coresrv-test-" + uuid.uuid4().hex[:20]
        now = time.time() - 100
        cur.execute("""INSERT INTO jobs (job_id, name, status, max_retries, retry_count,
                       created_at, updated_at, started_at, completed_at, worker_id, error)
                       VALUES (%s, 'coresrv test', %s, %s, %s, %s, %s, %s, %s, 'w-1',
                       '{"message":"boom"}')""", (j, status, mr, rc, now, now, now, now))
        return j

    def worker(status="active"):
        w = "coresrv-test-" + uuid.uuid4().hex[:12]
        cur.execute("INSERT INTO workers (worker_id, hostname, status, last_heartbeat) "
                    "VALUES (%s, 'h', %s, %s)", (w, status, time.time()))
        return w

    def get(table, key, id_):
        cur.execute("SELECT to_jsonb(t) FROM %s t WHERE %s = %%s" % (table, key), (id_,))
        return cur.fetchone()[0]

    yield {"url": core_url("openagents"), "job": job, "worker": worker,
           "jobrow": lambda j: get("jobs", "job_id", j),
           "workerrow": lambda w: get("workers", "worker_id", w)}
    cur.execute("DELETE FROM jobs WHERE job_id LIKE 'coresrv-test-%%'")
    cur.execute("DELETE FROM workers WHERE worker_id LIKE 'coresrv-test-%%'")
    conn.close()
    reload_fixtures("openagents")


def retry(env, j, headers=OPERATOR):
    return call("%s/executions/%s/retry" % (env["url"], j), headers=headers)


@pytest.mark.parametrize("status,queued", [("failed", "queued"), ("FAILED", "QUEUED")])
def test_retry_in_place(env, status, queued):
    j = env["job"](status, rc=1, mr=3)
    before = time.time()
    st, body, _ = retry(env, j)
    assert st == 202 and body == {"id": j, "attempt": 3, "retry_count": 2, "status": "queued"}
    r = env["jobrow"](j)
    assert r["status"] == queued and r["retry_count"] == 2
    assert r["started_at"] is None and r["worker_id"] is None and r["updated_at"] >= before - 1


@pytest.mark.parametrize("status", ["running", "completed", "QUEUED", "created"])
def test_409_status(env, status):
    j = env["job"](status)
    st, body, _ = retry(env, j)
    assert st == 409 and body == {"error": "cannot retry execution in status '%s'"
                                  % status.lower()}


@pytest.mark.parametrize("rc,mr", [(3, 3), (0, 0), (4, 3)])
def test_409_budget(env, rc, mr):
    j = env["job"]("failed", rc=rc, mr=mr)
    st, body, _ = retry(env, j)
    assert st == 409 and body == {"error": "retry budget exhausted"}
    assert env["jobrow"](j)["retry_count"] == rc


def test_404_401_403(env):
    assert retry(env, "no-such-job")[0] == 404
    j = env["job"]()
    st, body, _ = retry(env, j, headers={"Authorization": "Bearer bogus"})
    assert st == 401 and body["error"].startswith("unauthorized")
    st, body, _ = retry(env, j, headers=VIEWER)
    assert st == 403
    assert env["jobrow"](j)["status"] == "failed"


def test_502_store_down(env):
    srv = Server("openagents", "--dsn", "host=127.0.0.1 port=1 dbname=x user=x connect_timeout=2")
    try:
        st, body, _ = retry({"url": srv.url}, "x")
        assert st == 502
    finally:
        srv.stop()


def test_worker_actions(env):
    w = env["worker"]()
    url = "%s/workers/%s/" % (env["url"], w)
    for op, want in (("drain", "draining"), ("undrain", "active"), ("deactivate", "offline"),
                     ("activate", "active")):
        st, body, _ = call(url + op, headers=OPERATOR)
        assert st == 200 and body["status"] == want and body["changed"] is True
        assert env["workerrow"](w)["status"] == want
    st, body, _ = call(url + "undrain", headers=OPERATOR)     # not draining: nothing to do
    assert st == 200 and body["changed"] is False
    assert call("%s/workers/nope/drain" % env["url"], headers=OPERATOR)[0] == 404
    assert call(url + "drain", headers=VIEWER)[0] == 403
    assert env["workerrow"](w)["status"] == "active"
