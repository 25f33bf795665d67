"""redrive snapshot against Tasker (database tasker, schema tasker) — tests/stack/README.md."""
import os

import pytest

import stack_fixtures as fx
from snaphelp import assert_clean_text, by_id, need_env, snapshot, write_config

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
    assert v[5]["eligibility"] == "config-error"
    assert not v[6]["retry_eligible"] and v[6]["flagged"]
    assert v[9]["error"] == fx.HOSTILE


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
    for args in ((), ("--view", "dlq"), ("--view", "chain", S[9])):
        s = snapshot(cfg, "t", *args)
        assert s.rc == 0
        assert_clean_text(s.out)
