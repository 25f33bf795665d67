"""redrive snapshot against OpenAgents (database openagents) — tests/stack/README.md."""
import os
import re

import pytest

import stack_fixtures as fx
from snaphelp import assert_clean_text, assert_hostile_row, by_id, need_env, snapshot, write_config


@pytest.fixture(scope="module")
def cfg(tmp_path_factory):
    need_env("RD_PG_DSN_OPENAGENTS")
    fx.reload("openagents")
    return write_config(tmp_path_factory.mktemp("oa"), {
        "o": {"profile": "openagents", "store": os.environ["RD_PG_DSN_OPENAGENTS"]}})


def test_status_case_and_counts(cfg):
    s = snapshot(cfg, "o", "--json")
    assert s.rc == 0, s.err
    ex = by_id(s.json["executions"])
    assert set(ex) == set(fx.OA_JOBS)
    assert ex["job-0002"]["status"] == "failed"      # stored FAILED
    assert ex["job-0005"]["status"] == "running"     # stored RUNNING
    assert ex["job-0008"]["status"] == "queued"      # stored QUEUED
    counts = {c["status"]: c["count"] for c in s.json["counts"]}
    assert counts["failed"] == 4 and counts["queued"] == 3 and sum(counts.values()) == 12


def test_eligibility_and_delays(cfg):
    ex = by_id(snapshot(cfg, "o", "--json").json["executions"])
    assert sorted(k for k, e in ex.items() if e["retry_eligible"]) == ["job-0002", "job-0009"]
    assert "exhausted" in ex["job-0003"]["eligibility_reason"]
    assert ex["job-0003"]["attempt"] == 3 and ex["job-0003"]["max_attempts"] == 3
    assert not ex["job-0004"]["retry_eligible"]
    e2 = ex["job-0002"]                               # fixed_delay 30, no jitter
    assert e2["next_retry_min"] == e2["next_retry_max"] == e2["finished_at"] + 30
    e9 = ex["job-0009"]                               # exponential, jitter 0.1: a range
    assert e9["next_retry_min"] < e9["next_retry_max"]
    assert e9["error"] == fx.HOSTILE
    assert ex["job-0002"]["error"] == "PDF renderer crashed"


def test_queues_per_tag(cfg):
    q = by_id_name(snapshot(cfg, "o", "--json", "--view", "queues").json["queues"])
    assert q["email"]["depth"] == 2 and q["reports"]["depth"] == 1
    assert set(q) == {"email", "reports"}


def by_id_name(rows):
    return {r["name"]: r for r in rows}


def test_dead_jobs_are_the_dlq(cfg):
    j = snapshot(cfg, "o", "--json", "--view", "dlq").json
    assert sorted(d["id"] for d in j["dlq"]) == ["job-0003", "job-0004"]


def test_workers(cfg):
    fx.touch()
    w = by_id(snapshot(cfg, "o", "--json", "--view", "workers").json["workers"])
    assert w["oa-worker-1"]["health"] == "healthy"
    assert w["oa-worker-1"]["in_flight"] == 1 and w["oa-worker-1"]["capacity"] == 5
    assert w["oa-worker-2"]["health"] == "unhealthy"         # 300 s > 120 s
    assert w["oa-worker-4"]["health"] == "unknown"
    assert re.fullmatch(r"heartbeat \d+m in the future \(clock skew\)",
                        w["oa-worker-5"]["health_reason"]), w["oa-worker-5"]
    # the tags JSON array, joined by the console (tags_json)
    assert w["oa-worker-1"]["tags"] == "email,reports,ml,media"
    assert w["oa-worker-2"]["tags"] == "crm,crawl"
    assert w["oa-worker-4"]["tags"] is None, w["oa-worker-4"]          # no tags at all


def test_chain_is_the_row(cfg):
    j = snapshot(cfg, "o", "--json", "--view", "chain", "job-0003").json
    assert [c["id"] for c in j["chain"]] == ["job-0003"]


def test_text_is_sanitized(cfg):
    s = snapshot(cfg, "o")
    assert s.rc == 0, s.err
    assert_clean_text(s.out)
    assert_hostile_row(s.out, "job-0009")
