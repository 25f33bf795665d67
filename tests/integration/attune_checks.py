"""Checks shared by test_snapshot_attune.py, each test once per era (the same dataset in
two schema eras; see tests/stack/README.md)."""
import concurrent.futures
import time

import stack_fixtures as fx
from snaphelp import assert_clean_text, assert_hostile_row, by_id, snapshot, write_config


def config(tmp_path, dsn):
    return write_config(tmp_path, {"a": {"profile": "attune", "store": dsn}})


def check_overview(cfg, era):
    s = snapshot(cfg, "a", "--json")
    assert s.rc == 0, s.err
    j = s.json
    assert s.source("postgresql")["state"] == "ok"
    ex = by_id(j["executions"])
    assert set(ex) == {str(i) for i in range(1, 27)}
    created = [e["created_at"] for e in j["executions"]]
    assert created == sorted(created, reverse=True), "newest first"
    counts = {c["status"]: c["count"] for c in j["counts"]}
    assert counts["failed"] == len(fx.ATTUNE_FAILED)
    assert sum(counts.values()) == 26
    assert not any(c["estimated"] for c in j["counts"])
    eligible = sorted(int(e["id"]) for e in j["executions"] if e["retry_eligible"])
    assert eligible == fx.ATTUNE_ELIGIBLE
    for i in fx.ATTUNE_EXHAUSTED:
        assert ex[str(i)]["eligibility"] == "no"
        assert "exhausted" in ex[str(i)]["eligibility_reason"]
    for i in (12, 20):       # no budget
        assert ex[str(i)]["retry_eligible"] is False
    for i in (3, 5, 6, 8, 9, 15):   # eligible per row, but a later attempt exists
        assert "superseded" in ex[str(i)]["eligibility_reason"]
    # attempt numbering: retry_count + 1, max = max_retries + 1
    assert (ex["5"]["attempt"], ex["6"]["attempt"], ex["7"]["attempt"]) == (1, 2, 3)
    assert ex["7"]["max_attempts"] == 3
    # retry links (era 1 from config JSON, era 2 from the columns)
    assert ex["7"]["chain_root"] == "5" and ex["7"]["retry_of"] == "6"
    assert ex["25"]["chain_root"] == "25", "workflow parent is not a retry link"
    assert ex["4"]["reason"] == "worker_unavailable"
    assert ex["11"]["reason"] == "unknown"
    assert ex["2"]["reason"] == "transient_error"
    # retry row 16: retry_at = T + 60 s
    assert ex["16"]["next_retry_at"] is not None
    assert abs(ex["16"]["next_retry_at"] - (ex["16"]["created_at"] + 90)) < 5
    assert ex["18"]["error"] == "Cancelled by operator"
    assert ex["13"]["error"] == fx.HOSTILE, "JSON keeps the raw string, validly escaped"
    assert ex["14"]["worker"] == ("1" if era == 2 else None)
    return j


def check_workers(cfg, era):
    fx.touch()
    j = snapshot(cfg, "a", "--json", "--view", "workers").json
    w = by_id(j["workers"])
    assert set(w) == {str(i) for i in fx.ATTUNE_WORKERS}
    assert w["1"]["health"] == "healthy"
    assert w["2"]["health"] == "unhealthy" and "heartbeat" in w["2"]["health_reason"]
    assert w["2"]["reported_health"] == "healthy"      # reported ≠ computed
    assert w["3"]["health"] == "degraded" and "5 consecutive" in w["3"]["health_reason"]
    assert w["4"]["health"] == "unhealthy" and w["4"]["status"] == "error"
    assert w["5"]["health"] == "unknown"
    assert w["6"]["health"] == "healthy"
    assert w["3"]["queue_depth"] == 60 and w["4"]["queue_depth"] == 120
    assert w["7"]["status"] == ("draining" if era == 2 else "active")
    # type, role, then the runtimes (capabilities.runtimes, joined by the console: tags_json)
    assert w["1"]["tags"] == "remote action python,shell", w["1"]
    assert w["4"]["tags"] == "local action node", w["4"]
    assert w["5"]["tags"] == "remote action", w["5"]              # no runtimes
    if era == 2:
        assert w["7"]["tags"] == "remote action cordoned: kernel upgrade python", w["7"]


def check_chains(cfg):
    # each chain asked for by its first and its last execution; the snapshots (each mostly
    # waiting on the store) run side by side
    asks = [(root, ids, ask) for root, ids in fx.ATTUNE_CHAINS.items() for ask in (ids[0], ids[-1])]
    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        snaps = list(pool.map(lambda a: snapshot(cfg, "a", "--json", "--view", "chain", str(a[2])), asks))
    assert len(snaps) == 2 * len(fx.ATTUNE_CHAINS) > 0
    for (root, ids, ask), s in zip(asks, snaps):
        assert s.rc == 0, s.err
        j = s.json
        assert [c["id"] for c in j["chain"]] == [str(i) for i in ids], (root, ask)
        assert all(c["chain_root"] == str(root) for c in j["chain"])
    j = snapshot(cfg, "a", "--json", "--view", "chain", "no-such-id").json
    assert j["chain"] == []


def check_filters(cfg):
    j = snapshot(cfg, "a", "--json", "--view", "executions", "--status", "failed").json
    assert sorted(int(e["id"]) for e in j["executions"]) == fx.ATTUNE_FAILED
    j = snapshot(cfg, "a", "--json", "--view", "executions", "--filter", "zerodivision").json
    assert [e["id"] for e in j["executions"]] == ["11"]


def check_text(cfg):
    s = snapshot(cfg, "a")
    assert s.rc == 0, s.err
    assert_clean_text(s.out)
    assert_hostile_row(s.out, "13")         # the content is shown, defused
    s = snapshot(cfg, "a", "--view", "chain", "13")
    assert s.rc == 0, s.err
    assert_clean_text(s.out)
    assert "\nRETRY CHAIN 13\n" in s.out, s.out
    assert_hostile_row(s.out, "13")


def check_speed(cfg):
    t0 = time.monotonic()
    s = snapshot(cfg, "a", "--json")
    assert s.rc == 0
    assert time.monotonic() - t0 < 2.0
