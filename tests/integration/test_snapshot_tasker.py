"""redrive snapshot against Tasker (database tasker, schema tasker) — tests/stack/README.md."""
import json
import os

import psycopg2
import pytest

import stack_fixtures as fx
from snaphelp import assert_clean_text, assert_hostile_row, by_id, need_env, snapshot, write_config

S = fx.TASKER_STEPS


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    need_env("RD_PG_DSN_TASKER")
    T = fx.reload("tasker")
    cfg = write_config(tmp_path_factory.mktemp("tasker"),
                       {"t": {"profile": "tasker", "store": os.environ["RD_PG_DSN_TASKER"]}})
    return cfg, T.timestamp()


def test_steps_and_states(env):
    cfg, _ = env
    s = snapshot(cfg, "t", "--json")
    assert s.rc == 0, s.err
    j = s.json
    ex = by_id(j["executions"])
    assert set(ex) == set(S.values())
    state = {n: ex[S[n]]["status"] for n in S}
    assert state[1] == "pending" and state[12] == "pending"       # no transition
    assert state[2] == "complete" and state[7] == "in_progress"
    assert state[8] == "waiting_for_retry" and state[10] == "resolved_manually"
    assert state[11] == "enqueued"
    counts = {c["status"]: c["count"] for c in j["counts"]}
    assert counts == {"pending": 2, "complete": 1, "error": 5, "in_progress": 1,
                      "waiting_for_retry": 1, "resolved_manually": 1, "enqueued": 1}
    assert ex[S[3]]["parent_id"] == fx.TASKER_TASKS[2]
    assert ex[S[3]]["name"] == "charge_payment"


def test_eligibility(env):
    cfg, _ = env
    ex = by_id(snapshot(cfg, "t", "--json").json["executions"])
    v = {n: ex[S[n]] for n in S}
    assert v[1]["retry_eligible"] and v[1]["attempt"] == 0        # attempts NULL = 0
    assert v[12]["retry_eligible"] and v[12]["max_attempts"] == 3  # NULLs read as defaults
    assert v[3]["retry_eligible"] and v[9]["retry_eligible"]
    assert not v[4]["retry_eligible"] and "exhausted" in v[4]["eligibility_reason"]
    # max_attempts = 0 after the first attempt: Tasker retries no more; flagged
    assert v[5]["eligibility"] == "no" and v[5]["flagged"]
    assert "max_attempts = 0" in v[5]["eligibility_reason"]
    assert not v[6]["retry_eligible"] and v[6]["flagged"]
    assert v[9]["error"] == fx.HOSTILE
    # a finished or in-flight step: no, and what is true of it (issue 34), whatever its budget
    assert [(v[n]["eligibility"], v[n]["eligibility_reason"]) for n in (2, 7, 10, 11)] == [
        ("no", "complete"), ("no", "in progress"), ("no", "resolved manually"), ("no", "enqueued: in flight")]


def test_next_retry(env):
    cfg, T = env
    ex = by_id(snapshot(cfg, "t", "--json").json["executions"])
    assert abs(ex[S[3]]["next_retry_at"] - (T + 20)) < 2       # T-10 s + 30 s
    assert abs(ex[S[8]]["next_retry_at"] - (T + 60)) < 2       # T-60 s + 120 s


def test_chain_is_transition_history(env):
    cfg, _ = env
    j = snapshot(cfg, "t", "--json", "--view", "chain", S[3]).json
    states = [c["status"] for c in j["chain"]]
    assert states == ["pending", "enqueued", "in_progress", "error", "waiting_for_retry",
                      "enqueued", "in_progress", "error"]
    assert [c["attempt"] for c in j["chain"]][-1] == 2
    assert j["chain"][-1]["error"] == "card processor timeout (attempt 2)"
    assert all(c["chain_root"] == S[3] for c in j["chain"])
    assert len(snapshot(cfg, "t", "--json", "--view", "chain", S[4]).json["chain"]) == 12
    assert snapshot(cfg, "t", "--json", "--view", "chain", S[1]).json["chain"] == []
    assert snapshot(cfg, "t", "--json", "--view", "chain", "not-a-uuid").json["chain"] == []


def test_dlq_pending_entries(env):
    cfg, _ = env
    s = snapshot(cfg, "t", "--json", "--view", "dlq")
    assert s.rc == 0, s.err
    d = by_id(s.json["dlq"])
    D = fx.TASKER_DLQ
    assert set(d) == {D[1], D[3], D[4], D[5]}                   # entry 2 is resolved
    assert d[D[1]]["reason"] == "max_retries_exceeded"
    assert d[D[1]]["execution_id"] == fx.TASKER_TASKS[3]
    assert d[D[4]]["reason"] == "staleness_timeout"
    assert fx.HOSTILE in __import__("json").loads(d[D[4]]["payload"])["resolution_notes"]
    ts = [e["first_death_at"] for e in s.json["dlq"]]
    assert ts == sorted(ts, reverse=True)
    assert snapshot(cfg, "t", "--json").json.get("dlq") in (None, [])   # only with --view dlq


def test_text_is_sanitized(env):
    cfg, _ = env
    chain = snapshot(cfg, "t", "--json", "--view", "chain", S[9]).json["chain"]
    failed = [c["id"] for c in chain if c["status"] == "error"]
    assert len(failed) == 1, chain
    cases = (((), S[9]), (("--view", "dlq"), fx.TASKER_DLQ[4]),
             (("--view", "chain", S[9]), failed[0]))
    for args, row in cases:
        s = snapshot(cfg, "t", *args)
        assert s.rc == 0, s.err
        assert_clean_text(s.out)
        if args[:2] == ("--view", "dlq"):      # the hostile note is deep in the payload
            assert "\n" + row + "  " in s.out, s.out
        else:
            assert_hostile_row(s.out, row)


def test_real_error_fields(env):
    """Tasker's step results carry error.error_type and metadata.error_code; transitions
    carry the event as JSON text in metadata.event."""
    cfg, _ = env
    ex = by_id(snapshot(cfg, "t", "--json").json["executions"])
    assert ex[S[3]]["reason"] == "RetryableError: GATEWAY_TIMEOUT"
    assert ex[S[6]]["reason"] == "PermanentError: DUPLICATE_KEY"
    assert ex[S[4]]["reason"] == "RetryableError: STEP_FAILED"
    assert ex[S[2]]["reason"] is None and ex[S[1]]["reason"] is None
    assert ex[S[9]]["error"] == fx.HOSTILE
    chain = snapshot(cfg, "t", "--json", "--view", "chain", S[9]).json["chain"]
    assert [c["error"] for c in chain if c["status"] == "error"] == [fx.HOSTILE]
    assert all(c["error"] is None for c in chain if c["status"] != "error")


LONG = "enqueued_as_error_for_orchestration"
EXTRA = {  # n -> (state, attempts, max_attempts)
    13: (LONG, 1, 3), 14: ("enqueued_for_orchestration", 1, 3), 15: ("cancelled", 1, 3),
    16: ("pending", 0, 0),
}


@pytest.fixture
def extra_steps(env):
    """Steps in Tasker's other states, and one with max_attempts = 0 never attempted;
    the fixture is reloaded afterwards."""
    conn = psycopg2.connect(os.environ["RD_PG_ADMIN_DSN_TASKER"])
    cur = conn.cursor()
    for n, (state, att, mx) in EXTRA.items():
        step = fx.tu("2", n)
        cur.execute("INSERT INTO tasker.workflow_steps (workflow_step_uuid, task_uuid,"
                    " named_step_uuid, retryable, max_attempts, attempts, created_at, updated_at)"
                    " VALUES (%s,%s,%s,true,%s,%s,now(),now())",
                    (step, fx.TASKER_TASKS[5], fx.tu("5", 3), mx, att))
        cur.execute("INSERT INTO tasker.workflow_step_transitions"
                    " (workflow_step_transition_uuid, workflow_step_uuid, to_state, metadata,"
                    " sort_key, most_recent, created_at, updated_at)"
                    " VALUES (%s,%s,%s,%s,0,true,now(),now())",
                    (fx.tu("8", n * 100), step, state,
                     json.dumps({"event": json.dumps({"type": "Enqueue", "data": None})})))
    conn.commit()
    conn.close()
    yield {n: fx.tu("2", n) for n in EXTRA}
    fx.reload("tasker")


def test_long_states_are_never_cut(env, extra_steps):
    cfg, _ = env
    j = snapshot(cfg, "t", "--json").json
    counts = {c["status"]: c["count"] for c in j["counts"]}
    assert counts[LONG] == 1 and counts["enqueued_for_orchestration"] == 1
    assert counts["cancelled"] == 1 and counts["pending"] == 3
    ex = by_id(j["executions"])
    X = extra_steps
    assert ex[X[13]]["status"] == LONG
    for n in (13, 14, 15):                     # in flight or done: nothing to retry
        assert not ex[X[n]]["retry_eligible"], ex[X[n]]
    # max_attempts = 0: Tasker's readiness SQL still runs the first attempt
    assert ex[X[16]]["retry_eligible"] and ex[X[16]]["eligibility"] == "yes"
    assert ex[X[16]]["flagged"] and "max_attempts = 0" in ex[X[16]]["eligibility_reason"]
    s = snapshot(cfg, "t")
    assert s.rc == 0
    rows = [ln.split() for ln in s.out.splitlines()]
    assert [LONG, "1"] in rows, s.out          # the whole state, in the counts table
    s = snapshot(cfg, "t", "--status", LONG, "--json")
    assert [e["id"] for e in s.json["executions"]] == [X[13]]
