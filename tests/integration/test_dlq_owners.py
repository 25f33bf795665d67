"""Two DLQ sources in one system (issue 11): Tasker on RabbitMQ keeps tasks_dlq in
PostgreSQL (4 pending entries, tests/stack/README.md ## Tasker) and dead-letter queues on
the broker (attune.dlx.queue 5 + orders_dlq 2 messages, ## RabbitMQ). Each source owns its
share of the model's DLQ: both sets of entries are shown and the total is their sum, also
after several refreshes of either source."""
import json
import os

import pytest

import stack_fixtures as fx
from snaphelp import need_env, snapshot, write_config
from test_redis_alakai import Watch

STORE_PENDING = 4                       # tasks_dlq entries 1, 3, 4, 5
BROKER = {fx.ATTUNE_DLQ: 5, "orders_dlq": 2}


@pytest.fixture(scope="module")
def cfg(tmp_path_factory):
    need_env("RD_PG_DSN_TASKER", "RD_RABBIT_MGMT_URL", "RD_RABBIT_USER", "RD_RABBIT_PASSWORD")
    fx.reload("tasker")
    fx.reload("rabbit")
    return write_config(tmp_path_factory.mktemp("dlqowners"), {"t": {
        "profile": "tasker", "store": os.environ["RD_PG_DSN_TASKER"],
        "broker": os.environ["RD_RABBIT_MGMT_URL"], "broker_user": os.environ["RD_RABBIT_USER"],
        "broker_password": "env:RD_RABBIT_PASSWORD", "core": "http://127.0.0.1:9",
        "auth": "none"}})


def check_dlq(j):
    """Both shares whole, the total their sum, the shares listed per source."""
    by_src = {}
    for e in j["dlq"]:
        by_src.setdefault(e["source"], []).append(e)
    assert sorted(by_src) == ["postgresql", "rabbitmq"], by_src.keys()
    store = by_src["postgresql"]
    assert sorted(e["id"] for e in store) == sorted(fx.TASKER_DLQ[n] for n in (1, 3, 4, 5))
    assert all(e["queue"] == "tasks_dlq" for e in store)
    broker = {}
    for e in by_src["rabbitmq"]:
        broker[e["queue"]] = broker.get(e["queue"], 0) + 1
    assert broker == BROKER
    # stable order: the store's share, then the broker's
    assert [e["source"] for e in j["dlq"]] == ["postgresql"] * 4 + ["rabbitmq"] * 7
    assert j["dlq_total"] == STORE_PENDING + sum(BROKER.values())
    parts = {p["source"]: p for p in j["dlq_sources"]}
    assert parts["postgresql"]["total"] == STORE_PENDING
    assert parts["rabbitmq"]["total"] == sum(BROKER.values())
    assert j["dlq_loaded"] is True


def test_snapshot_dlq_has_both_shares(cfg):
    s = snapshot(cfg, "t", "--json", "--view", "dlq")
    assert s.rc == 0, s.err
    check_dlq(s.json)
    # the overview's figure is the same sum
    o = snapshot(cfg, "t", "--json")
    assert o.rc == 0, o.err
    assert o.json["dlq_total"] == STORE_PENDING + sum(BROKER.values())


def test_dlq_survives_refreshes(cfg):
    w = Watch(cfg, "t", ready_timeout=30)
    try:
        assert w.ask("peek") == "ok"
        assert w.ask("idle 30").startswith("ok"), "the peek did not come back"
        check_dlq(json.loads(w.ask("json dlq")[len("json "):]))
        for _ in range(3):
            # a refresh of both sources (the store's counts, the broker's depths) ...
            assert w.ask("refresh") == "ok"
            assert w.ask("fresh postgresql 30").startswith("ok")
            assert w.ask("fresh rabbitmq 30").startswith("ok")
            check_dlq(json.loads(w.ask("json dlq")[len("json "):]))
            # ... and the DLQ view's refresh: a peek of both again
            assert w.ask("peek") == "ok"
            assert w.ask("idle 30").startswith("ok")
            check_dlq(json.loads(w.ask("json dlq")[len("json "):]))
    finally:
        w.ask("quit", timeout=5) if w.p.poll() is None else None
        w.p.wait(timeout=10)
