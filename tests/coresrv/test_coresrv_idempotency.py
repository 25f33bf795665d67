"""Reference core server: Idempotency-Key replay, action log, stall hook (no re-send)."""
import json
import os
import socket
import tempfile
import time
import uuid

import pytest

from coresrv_helpers import OPERATOR, Server, actions, applied_count, call, core_url, \
    redis_client, stack_env

PREFIX = "alakai-executions"


@pytest.fixture(scope="module")
def redis_tasks():
    r = redis_client()
    prefix = stack_env().get("RD_ALAKAI_PREFIX", PREFIX)
    made = []

    def failed_task():
        tid = "coresrv-test-" + uuid.uuid4().hex[:12]
        key = "%s:%s" % (prefix, tid)
        r.hset(key, "1", json.dumps({"status": "failed", "attempt": 1, "errorCode": "E",
                                     "errorMessage": "x", "taskSnapshot": {"t": 1},
                                     "dispatchedAt": "2026-05-01T10:00:00.000Z",
                                     "resolvedAt": "2026-05-01T10:01:00.000Z"}))
        made.append(key)
        return tid, key
    yield r, failed_task
    if made:
        r.delete(*made)


def test_same_key_applies_once(redis_tasks):
    r, failed_task = redis_tasks
    url = core_url("alakai")
    tid, key = failed_task()
    k = "idem-" + uuid.uuid4().hex
    h = dict(OPERATOR, **{"Idempotency-Key": k})
    first = call("%s/dashboard/executions/%s/retry" % (url, tid), headers=h)
    second = call("%s/dashboard/executions/%s/retry" % (url, tid), headers=h)
    assert first[0] == second[0] == 202 and first[1] == second[1]
    assert second[2].get("Idempotent-Replayed") == "true"
    assert r.hlen(key) == 2                                     # one new attempt only
    assert applied_count(url, key=k) == 1
    log = [a for a in actions(url) if a["key"] == k]
    assert [(a["status"], a["applied"], a["replayed"]) for a in log] == \
        [(202, True, False), (202, False, True)]
    assert all(a["identity"] == "alice" for a in log)
    # a new key is a new request: now the newest attempt is running → 409
    h2 = dict(OPERATOR, **{"Idempotency-Key": "idem-" + uuid.uuid4().hex})
    assert call("%s/dashboard/executions/%s/retry" % (url, tid), headers=h2)[0] == 409


def test_same_key_other_request_422(redis_tasks):
    r, failed_task = redis_tasks
    url = core_url("alakai")
    (t1, _), (t2, k2) = failed_task(), failed_task()
    h = dict(OPERATOR, **{"Idempotency-Key": "idem-" + uuid.uuid4().hex})
    assert call("%s/dashboard/executions/%s/retry" % (url, t1), headers=h)[0] == 202
    st, body, _ = call("%s/dashboard/executions/%s/retry" % (url, t2), headers=h)
    assert st == 422 and "Idempotency-Key" in body["error"]
    assert r.hlen(k2) == 1


def test_errors_replayed_but_401_not_stored(redis_tasks):
    r, failed_task = redis_tasks
    url = core_url("alakai")
    tid, key = failed_task()
    k = "idem-" + uuid.uuid4().hex
    st, _, _ = call("%s/dashboard/executions/%s/retry" % (url, tid), headers={"Idempotency-Key": k})
    assert st == 401
    # the same key after authenticating is applied (401 was not stored)
    h = dict(OPERATOR, **{"Idempotency-Key": k})
    assert call("%s/dashboard/executions/%s/retry" % (url, tid), headers=h)[0] == 202
    # a 404 is stored and replayed
    k404 = dict(OPERATOR, **{"Idempotency-Key": "idem-" + uuid.uuid4().hex})
    a = call("%s/dashboard/executions/missing-%s/retry" % (url, k), headers=k404)
    b = call("%s/dashboard/executions/missing-%s/retry" % (url, k), headers=k404)
    assert a[0] == b[0] == 404 and b[2].get("Idempotent-Replayed") == "true"


def test_keys_are_per_identity(redis_tasks):
    r, failed_task = redis_tasks
    url = core_url("alakai")
    tid, key = failed_task()
    k = "idem-" + uuid.uuid4().hex
    a = call("%s/dashboard/executions/%s/retry" % (url, tid),
             headers=dict(OPERATOR, **{"Idempotency-Key": k}))
    b = call("%s/dashboard/executions/%s/retry" % (url, tid),
             headers={"x-dev-user": "mallory", "Idempotency-Key": k})
    assert a[0] == 202 and b[0] == 409                            # not a replay of alice's


def test_action_log_file(redis_tasks):
    r, failed_task = redis_tasks
    tid, key = failed_task()
    with tempfile.TemporaryDirectory() as d:
        log = os.path.join(d, "core-alakai.log")
        srv = Server("alakai", log=log)
        try:
            call("%s/dashboard/executions/%s/retry" % (srv.url, tid),
                 headers=dict(OPERATOR, **{"Idempotency-Key": "k1"}))
            call("%s/dashboard/executions/%s/retry" % (srv.url, tid), headers={})
        finally:
            srv.stop()
        text = open(log).read()
        lines = [json.loads(x) for x in text.splitlines()]
    assert OPERATOR["Authorization"].split()[1] not in text        # tokens never logged
    assert [(x["status"], x["applied"], x["identity"]) for x in lines] == \
        [(202, True, "alice"), (401, False, None)]
    for x in lines:
        assert {"time", "identity", "route", "key", "status"} <= set(x)
        assert x["route"] == "/dashboard/executions/%s/retry" % tid


def test_stall_after_applies_once_and_never_answers(redis_tasks):
    r, failed_task = redis_tasks
    tid, key = failed_task()
    srv = Server("alakai", "--stall-route", "/retry$", "--stall-seconds", "0")
    try:
        body = b""
        s = socket.create_connection(("127.0.0.1", srv.port), timeout=1.0)
        s.sendall(("POST /dashboard/executions/%s/retry HTTP/1.1\r\nHost: x\r\n"
                   "Authorization: %s\r\nIdempotency-Key: stall-1\r\nContent-Length: 0\r\n\r\n"
                   % (tid, OPERATOR["Authorization"])).encode())
        with pytest.raises(socket.timeout):
            body = s.recv(100)
        s.close()
        assert body == b""
        assert r.hlen(key) == 2                                   # applied, though unanswered
        st, log, _ = call(srv.url + "/_coresrv/log", "GET")
        assert [(a["status"], a["applied"]) for a in log["actions"]] == [(202, True)]
        assert call(srv.url + "/health", "GET")[0] == 200          # other routes still answer
    finally:
        srv.stop()


def test_stall_late_answer_before_mode(redis_tasks):
    r, failed_task = redis_tasks
    tid, key = failed_task()
    srv = Server("alakai", "--stall-route", "retry", "--stall-seconds", "0.6",
                 "--stall-mode", "before")
    try:
        t0 = time.time()
        st, body, _ = call("%s/dashboard/executions/%s/retry" % (srv.url, tid), headers=OPERATOR)
        assert st == 202 and time.time() - t0 >= 0.6
    finally:
        srv.stop()
