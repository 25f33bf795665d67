"""Reference core server, alakai (Redis): seed-002 status codes, real HSETNX of attempt N+1."""
import json
import uuid

import pytest

from coresrv_helpers import OPERATOR, VIEWER, Server, call, core_url, redis_client, \
    reload_fixtures, stack_env

PREFIX = "alakai-executions"


def rec(status, attempt, **kw):
    r = {"status": status, "attempt": attempt, "errorCode": None, "errorMessage": None,
         "taskSnapshot": {"taskType": "digest", "repo": "acme/app", "n": attempt},
         "dispatchedAt": "2026-05-01T10:00:00.000Z", "resolvedAt": None}
    r.update(kw)
    return json.dumps(r)


@pytest.fixture(scope="module")
def env():
    reload_fixtures("alakai")
    r = redis_client()
    created = []

    def task(*records):
        tid = "coresrv-test-" + uuid.uuid4().hex[:12]
        key = "%s:%s" % (stack_env().get("RD_ALAKAI_PREFIX", PREFIX), tid)
        if records:
            r.hset(key, mapping={str(i + 1): v for i, v in enumerate(records)})
        created.append(key)
        return tid, key
    yield {"url": core_url("alakai"), "r": r, "task": task}
    if created:
        r.delete(*created)
    reload_fixtures("alakai")


def retry(url, tid, headers=OPERATOR, **kw):
    return call("%s/dashboard/executions/%s/retry" % (url, tid), headers=headers, **kw)


def test_retry_writes_next_attempt(env):
    tid, key = env["task"](rec("failed", 1, errorCode="E_MODEL", errorMessage="boom"))
    st, body, _ = retry(env["url"], tid)
    assert st == 202
    assert body == {"taskId": tid, "attempt": 2, "status": "queued"}
    new = json.loads(env["r"].hget(key, "2"))
    assert new["status"] == "running" and new["attempt"] == 2
    assert new["taskSnapshot"] == {"taskType": "digest", "repo": "acme/app", "n": 1}
    assert new["dispatchedAt"].endswith("Z") and new["resolvedAt"] is None
    assert json.loads(env["r"].hget(key, "1"))["status"] == "failed"   # history untouched


def test_retry_default_contract_route(env):
    tid, key = env["task"](rec("failed", 1))
    st, body, _ = call("%s/executions/%s/retry" % (env["url"], tid), headers=OPERATOR)
    assert (st, body["attempt"]) == (202, 2)
    assert env["r"].hexists(key, "2")


def test_404_no_execution(env):
    tid, _ = env["task"]()
    st, body, _ = retry(env["url"], tid)
    assert st == 404 and "no execution" in body["error"]


@pytest.mark.parametrize("status", ["running", "succeeded", "lost"])
def test_409_status(env, status):
    tid, key = env["task"](rec(status, 1))
    st, body, _ = retry(env["url"], tid)
    assert st == 409
    assert body == {"error": "cannot retry execution in status '%s'" % status}
    assert env["r"].hlen(key) == 1


def test_409_only_newest_attempt_counts(env):
    tid, key = env["task"](rec("failed", 1), rec("running", 2))
    st, body, _ = retry(env["url"], tid)
    assert st == 409 and body["error"] == "cannot retry execution in status 'running'"


def test_409_budget_exhausted(env):
    # MAX_RETRIES = 1: attempt 2 failed is not retryable (attempt <= MAX_RETRIES fails)
    tid, key = env["task"](rec("failed", 1), rec("failed", 2))
    st, body, _ = retry(env["url"], tid)
    assert st == 409 and body == {"error": "retry budget exhausted"}
    assert env["r"].hlen(key) == 2


def test_max_retries_flag(env):
    tid, key = env["task"](rec("failed", 1), rec("failed", 2))
    srv = Server("alakai", "--max-retries", "2")
    try:
        st, body, _ = retry(srv.url, tid)
        assert (st, body["attempt"]) == (202, 3)
        st, body, _ = retry(srv.url, tid)     # attempt 3 is running now
        assert st == 409
    finally:
        srv.stop()


def test_401_dashboard_unauthorized(env):
    tid, key = env["task"](rec("failed", 1))
    for headers in ({}, {"Authorization": "Bearer nope"}, {"X-API-Key": "wrong"}):
        st, body, hdrs = retry(env["url"], tid, headers=headers)
        assert st == 401 and body == {"error": "dashboard_unauthorized"}
    assert env["r"].hlen(key) == 1


def test_403_viewer(env):
    tid, key = env["task"](rec("failed", 1))
    st, body, _ = retry(env["url"], tid, headers=VIEWER)
    assert st == 403 and "may not retry" in body["error"]
    assert env["r"].hlen(key) == 1


def test_502_redis_unreachable(env):
    srv = Server("alakai", "--redis-url", "redis://127.0.0.1:1/0")
    try:
        st, body, _ = retry(srv.url, "anything")
        assert st == 502 and body["error"].startswith("core could not read the store")
    finally:
        srv.stop()


def test_502_record_not_json(env):
    tid, key = env["task"]("{not json")
    st, body, _ = retry(env["url"], tid)
    assert st == 502


def test_concurrent_retries_apply_once(env):
    import threading
    tid, key = env["task"](rec("failed", 1))
    results = []

    def go():
        results.append(retry(env["url"], tid)[0])
    ts = [threading.Thread(target=go) for _ in range(8)]
    [t.start() for t in ts]
    [t.join() for t in ts]
    assert sorted(results) == [202] + [409] * 7
    assert env["r"].hlen(key) == 2
