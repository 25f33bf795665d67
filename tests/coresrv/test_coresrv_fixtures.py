"""The stack's core servers (RD_CORE_URL_*) against the documented fixture dataset
(tests/stack/README.md): the verdicts must agree with the fixture's eligibility facts."""
import json

import pytest
import stack_fixtures as F

from coresrv_helpers import OPERATOR, call, core_url, pg_connect, redis_client, \
    reload_fixtures


@pytest.fixture(scope="module", autouse=True)
def reloaded():
    for s in ("attune1", "attune2", "tasker", "openagents", "alakai"):
        reload_fixtures(s)
    yield
    for s in ("attune1", "attune2", "tasker", "openagents", "alakai"):
        reload_fixtures(s)


@pytest.mark.parametrize("system", ["attune1", "attune2"])
def test_attune_fixture_verdicts(system):
    url = core_url(system)
    for xid in F.ATTUNE_FAILED:
        st, body, _ = call("%s/api/v1/executions/%d/retry" % (url, xid), headers=OPERATOR)
        later = [c[c.index(xid) + 1] for c in F.ATTUNE_CHAINS.values()
                 if xid in c and c[-1] != xid]
        if xid in F.ATTUNE_ELIGIBLE:
            assert st == 202, (xid, body)
        elif later:                      # not the newest attempt of its chain: never fork
            assert st == 409 and body["error"] == "execution already retried as %d" % later[0]
        else:
            assert st == 409 and body["error"] == "retry budget exhausted", (xid, body)
    st, body, _ = call("%s/api/v1/executions/14/retry" % url, headers=OPERATOR)   # running
    assert st == 409 and body["error"] == "cannot retry execution in status 'running'"
    # the new row for 4 (chain 3 -> 4) continues chain 3
    conn = pg_connect(system)
    cur = conn.cursor()
    cur.execute("SELECT retry_count, original_execution, config FROM execution "
                "WHERE id >= 1000 AND (config->>'retry_of')::bigint = 4")
    rc, root, cfg = cur.fetchone()
    if system == "attune1":
        assert (cfg["retry_count"], cfg["original_execution"]) == (2, 3)
    else:
        assert (rc, root) == (2, 3)
    conn.close()
    # worker 7 is cordoned in era 2 only
    st, body, _ = call("%s/api/v1/workers/%d/cordon" % (url, F.ATTUNE_CORDONED_WORKER),
                       body={"reason": "x"}, headers=OPERATOR)
    assert st == 200 and body["changed"] is (system == "attune1")


def test_alakai_fixture_verdicts():
    url = core_url("alakai")
    want = {"task-failed-retryable": (202, None),
            "task-failed-exhausted": (409, "retry budget exhausted"),
            "task-succeeded": (409, "cannot retry execution in status 'succeeded'"),
            "task-running": (409, "cannot retry execution in status 'running'"),
            "task-overlap": (409, "cannot retry execution in status 'running'"),
            "task-lost": (409, "cannot retry execution in status 'lost'"),
            "task-nonnumeric": (202, None),      # only numeric fields are attempts
            "task-hostile": (202, None),         # invalid UTF-8 inside the record
            "task-oversized": (202, None),
            "task-malformed": (502, None),
            "task-wrongtype": (502, None),
            "no-such-task": (404, None)}
    for task, (status, msg) in want.items():
        st, body, _ = call("%s/dashboard/executions/%s/retry" % (url, task), headers=OPERATOR)
        assert st == status, (task, body)
        if msg:
            assert body["error"] == msg
        if st == 202:
            assert body == {"taskId": task, "attempt": 2, "status": "queued"}
    r = redis_client()
    rec = json.loads(r.hget(F.ALAKAI_PREFIX + ":task-failed-retryable", "2"))
    assert rec["status"] == "running" and rec["taskSnapshot"]["taskId"] == "task-failed-retryable"


def test_tasker_fixture_verdicts():
    url = core_url("tasker")
    T, S = F.TASKER_TASKS, F.TASKER_STEPS
    # step -> (task, expected status)
    cases = {3: (2, 202), 4: (3, 202), 5: (4, 202), 6: (4, 202), 9: (6, 202),
             2: (1, 409), 7: (5, 409), 8: (5, 409), 10: (8, 409), 1: (2, 409)}
    for step, (task, status) in cases.items():
        st, body, _ = call("%s/v1/tasks/%s/workflow_steps/%s" % (url, T[task], S[step]), "PATCH",
                           {"action_type": "reset_for_retry", "reason": "t", "reset_by": "t"},
                           OPERATOR)
        assert st == status, (step, body)
    st, body, _ = call(url + "/v1/dlq?resolution_status=pending", "GET", headers=OPERATOR)
    got = {e["dlq_entry_uuid"] for e in body}
    assert st == 200 and got >= {F.TASKER_DLQ[n] for n in (1, 3, 4, 5)}
    assert F.TASKER_DLQ[2] not in got                              # manually_resolved


def test_openagents_fixture_verdicts():
    url = core_url("openagents")
    want = {"job-0002": 202, "job-0009": 202, "job-0003": 409, "job-0004": 409,
            "job-0005": 409, "job-0006": 409, "job-0001": 409, "job-9999": 404}
    for job, status in want.items():
        st, body, _ = call("%s/executions/%s/retry" % (url, job), headers=OPERATOR)
        assert st == status, (job, body)
    conn = pg_connect("openagents")
    cur = conn.cursor()
    cur.execute("SELECT status, retry_count FROM jobs WHERE job_id = 'job-0002'")
    assert cur.fetchone() == ("QUEUED", 2)
    conn.close()
