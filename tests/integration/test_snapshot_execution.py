"""`redrive snapshot --view execution ID`: one execution in full from each profile's store
(the [query execution_detail] of the PostgreSQL profiles, Alakai's Redis record), read
once, sanitized in the text, the JSON embedding the parameters and the result."""
import os

import pytest

import stack_fixtures as fx
from snaphelp import HOSTILE_SHOWN, assert_clean_text, need_env, snapshot, write_config


@pytest.fixture(scope="module")
def cfg(tmp_path_factory):
    need_env("RD_PG_DSN_ATTUNE1", "RD_PG_DSN_ATTUNE2", "RD_PG_DSN_TASKER", "RD_PG_DSN_OPENAGENTS",
             "RD_REDIS_URL")
    for store in ("attune1", "attune2", "tasker", "openagents", "alakai"):
        fx.reload(store)
    e = os.environ
    return write_config(tmp_path_factory.mktemp("execution"), {
        "a1": {"profile": "attune", "store": e["RD_PG_DSN_ATTUNE1"]},
        "a2": {"profile": "attune", "store": e["RD_PG_DSN_ATTUNE2"]},
        "t": {"profile": "tasker", "store": e["RD_PG_DSN_TASKER"]},
        "oa": {"profile": "openagents", "store": e["RD_PG_DSN_OPENAGENTS"]},
        "ak": {"profile": "alakai", "store": e["RD_REDIS_URL"]},
    })


# system, id of the fixture row whose error is the hostile string, what its record holds
CASES = [
    ("a1", "13", {"name": "core.http_request", "status": "failed", "attempt": 1, "max_attempts": 2,
                  "chain_root": "13", "chain_length": 1, "worker": None,
                  "params": {"args": {"n": 13}, "timeout": 600, "max_retries": 1, "retry_count": 0}}),
    ("a2", "13", {"name": "core.http_request", "status": "failed", "attempt": 1, "max_attempts": 2,
                  "chain_root": "13", "chain_length": 1, "worker": "1",
                  "params": {"args": {"n": 13}, "timeout": 600}}),
    ("t", fx.TASKER_STEPS[9], {"name": "ship_order", "status": "error", "attempt": 1, "max_attempts": 3,
                               "chain_root": fx.TASKER_STEPS[9], "chain_length": 1, "worker": None,
                               "parent_id": fx.TASKER_TASKS[6], "params": {"step": 9},
                               "reason": "RetryableError", "retryable": "true"}),
    ("oa", "job-0009", {"name": "scrape_prices", "status": "failed", "attempt": 2, "max_attempts": 6,
                        "chain_root": "job-0009", "chain_length": 2, "worker": "oa-worker-2",
                        "params": {"n": 9}, "backtrace": "Traceback (most recent call last): ..."}),
    ("ak", "task-hostile", {"status": "failed", "attempt": 1, "max_attempts": 2, "chain_root": "task-hostile",
                            "chain_length": 1, "reason": "EVIL", "params": {"taskId": "task-hostile"}}),
]


# the result each CASES row holds, whole (OpenAgents' failed job has none: null)
RESULTS = {
    "a1": {"error": fx.HOSTILE},
    "a2": {"error": fx.HOSTILE},
    "t": {"error": {"message": fx.HOSTILE, "retryable": True, "error_type": "RetryableError"},
          "status": "error", "success": False, "metadata": {"retryable": True, "error_code": "STEP_FAILED"}},
    "oa": None,
    # Alakai: the task's record itself (its times are those of the fixture's load)
    "ak": {"status": "failed", "attempt": 1, "errorCode": "EVIL", "taskSnapshot": {"taskId": "task-hostile"}},
}


@pytest.mark.parametrize("system,xid,want", CASES, ids=[c[0] for c in CASES])
def test_json_record(cfg, system, xid, want):
    s = snapshot(cfg, system, "--view", "execution", xid, "--json")
    assert s.rc == 0, s.err
    j = s.json
    assert j["view"] == "execution" and j["execution_id"] == xid
    d = j["execution"]
    assert d["id"] == xid
    for k, v in want.items():
        assert d[k] == v, (k, d[k])
    assert d["error"].startswith(fx.HOSTILE[:40])          # the whole error, raw in JSON
    # every timestamp the store has is a number
    times = {k: v for k, v in d.items() if k.endswith("_at")}
    assert times and all(isinstance(v, (int, float)) or v is None for v in times.values())
    assert any(isinstance(v, (int, float)) and v > 1e9 for v in times.values())
    # the result is embedded JSON (Alakai: the record), never a string of JSON
    if system == "ak":
        r = d["result"]
        assert {k: r.get(k) for k in RESULTS["ak"]} == RESULTS["ak"], r
        assert r["errorMessage"].startswith(fx.HOSTILE) and isinstance(r["dispatchedAt"], str), r
    else:
        assert d["result"] == RESULTS[system], d["result"]
    # Attune: env_vars (secrets) is never read
    assert "LOG_LEVEL" not in s.out and "env_vars" not in s.out


@pytest.mark.parametrize("system,xid,result", [("a2", "1", {"status_code": 200}), ("oa", "job-0001", {"ok": True})])
def test_json_result_of_a_completed_row(cfg, system, xid, result):
    s = snapshot(cfg, system, "--view", "execution", xid, "--json")
    assert s.rc == 0, s.err
    assert s.json["execution"]["result"] == result


@pytest.mark.parametrize("system,xid,want", CASES, ids=[c[0] for c in CASES])
def test_text_sanitized(cfg, system, xid, want):
    s = snapshot(cfg, system, "--view", "execution", xid)
    assert s.rc == 0, s.err
    assert_clean_text(s.out)
    lines = s.out.split("\n")
    head = [ln for ln in lines if ln.startswith("execution ")]
    assert head and head[0].startswith("execution %s  " % xid)
    err = lines[lines.index("error:") + 1]
    assert err.startswith(HOSTILE_SHOWN), err
    # the parameters pretty-printed, two spaces an indent level
    p = lines.index("parameters:")
    assert lines[p + 1] == "{" and lines[p + 2].startswith('  "'), lines[p:p + 4]


@pytest.mark.parametrize("system", ["a1", "a2", "t", "oa", "ak"])
def test_missing(cfg, system):
    xid = "00000000-0000-4000-8000-999999999999" if system == "t" else "999999"
    s = snapshot(cfg, system, "--view", "execution", xid, "--json")
    assert s.rc == 0, s.err
    j = s.json
    assert j["execution"] is None and j["execution_id"] == xid
    assert j["execution_missing"] == ("no such task" if system == "ak" else "no such execution in the store")


def test_needs_id(cfg):
    s = snapshot(cfg, "a2", "--view", "execution")
    assert s.rc == 2 and "--view execution needs an execution id" in s.err


def test_tasker_chain_row(cfg):
    """A Tasker chain's rows are the step's transitions: Enter on one shows the step."""
    import psycopg2
    with psycopg2.connect(os.environ["RD_PG_DSN_TASKER"]) as c, c.cursor() as cur:
        cur.execute("SELECT workflow_step_transition_uuid::text FROM tasker.workflow_step_transitions "
                    "WHERE workflow_step_uuid = %s ORDER BY sort_key LIMIT 1", (fx.TASKER_STEPS[9],))
        tid = cur.fetchone()[0]
    s = snapshot(cfg, "t", "--view", "execution", tid, "--json")
    assert s.rc == 0, s.err
    assert s.json["execution_id"] == tid and s.json["execution"]["id"] == fx.TASKER_STEPS[9]
