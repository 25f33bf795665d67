"""The RabbitMQ management API source against the real broker of the local stack and
the fixture data of tests/stack/README.md (## RabbitMQ): queues, DLQ detection, the
DLQ peek (x-death reasons, execution ids), sanitizing, and broker failures — which must
leave the other sources fine."""
import os
import socket

import pytest

import stack_fixtures as fx
from snaphelp import assert_clean_text, by_id, need_env, snapshot, write_config


def cfg_for(**over):
    cfg = {"profile": "alakai", "store": os.environ["RD_REDIS_URL"],
           "prefix": "alakai-executions", "broker": os.environ["RD_RABBIT_MGMT_URL"],
           "broker_user": os.environ["RD_RABBIT_USER"],
           "broker_password": "env:RD_RABBIT_PASSWORD", "dlq": fx.ATTUNE_DLQ,
           "core": "http://127.0.0.1:9", "auth": "none"}
    cfg.update(over)
    return cfg


@pytest.fixture(scope="module")
def rabbit(tmp_path_factory):
    need_env("RD_RABBIT_MGMT_URL", "RD_RABBIT_USER", "RD_RABBIT_PASSWORD", "RD_REDIS_URL")
    fx.reload("rabbit")
    fx.reload("alakai")
    return tmp_path_factory.mktemp("rabbit")


def conf(rabbit, **over):
    return write_config(rabbit, {"rb": cfg_for(**over)})


def test_queues_depths_consumers_dlq(rabbit):
    s = snapshot(conf(rabbit), "rb", "--json", "--view", "queues")
    assert s.rc == 0, s.err
    assert s.source("rabbitmq")["state"] == "ok"
    q = by_id([dict(x, id=x["name"]) for x in s.json["queues"]])
    assert q["worker.1.executions"]["depth"] == 2
    assert q["worker.3.executions"]["depth"] == 60
    assert q["worker.4.executions"]["depth"] == 120
    assert q["worker.4.executions"]["consumers"] == 0
    assert q["worker.2.executions"]["depth"] == 0
    assert q[fx.ATTUNE_DLQ]["is_dlq"] and q[fx.ATTUNE_DLQ]["depth"] == 5
    assert q["orders_dlq"]["is_dlq"]                 # *_dlq naming
    assert not q["orders"]["is_dlq"] and not q["worker.1.executions"]["is_dlq"]
    o = snapshot(conf(rabbit), "rb", "--json").json
    assert o["dlq_total"] == 5 + 2 + 2               # DLQ depths + alakai's exhausted/orphan


def test_queue_globs_keep_dlqs(rabbit):
    s = snapshot(conf(rabbit, queues="worker.*.executions"), "rb", "--json", "--view", "queues")
    names = {x["name"] for x in s.json["queues"]}
    assert {"worker.%d.executions" % i for i in range(1, 8)} <= names
    assert "orders" not in names and fx.HOSTILE_QUEUE not in names
    assert fx.ATTUNE_DLQ in names and "orders_dlq" in names    # DLQs always shown


def test_dlq_peek_xdeath_and_execution_ids(rabbit):
    s = snapshot(conf(rabbit), "rb", "--json", "--view", "dlq")
    assert s.rc == 0, s.err
    dlq = [e for e in s.json["dlq"] if e["queue"] == fx.ATTUNE_DLQ]
    assert len(dlq) == 5
    expired = sorted(int(e["execution_id"]) for e in dlq if e["reason"] == "expired")
    assert expired == sorted(fx.ATTUNE_DLQ_EXPIRED + [13])
    rejected = [int(e["execution_id"]) for e in dlq if e["reason"] == "rejected"]
    assert rejected == fx.ATTUNE_DLQ_REJECTED
    for e in dlq:
        assert e["count"] >= 1 and e["first_death_at"] > 0
    tasker = [e for e in s.json["dlq"] if e["queue"] == "orders_dlq"]
    assert len(tasker) == 2 and all(e["reason"] == "rejected" for e in tasker)
    assert all(e["execution_id"] and e["execution_id"].count("-") == 4 for e in tasker)
    # the peek requeued: nothing was consumed
    assert fx.stacklib.Rabbit(fx.stacklib.load_env()).queue(fx.ATTUNE_DLQ) is not None


def test_dlq_peek_text_is_sanitized(rabbit):
    s = snapshot(conf(rabbit), "rb", "--view", "dlq")
    assert s.rc == 0, s.err
    assert_clean_text(s.out)
    assert "requeue" in s.out                        # the UI says a peek requeues
    q = snapshot(conf(rabbit), "rb", "--view", "queues")
    assert_clean_text(q.out)
    assert "fixture.hostile" in q.out


def test_wrong_password_is_down_others_fine(rabbit, monkeypatch):
    monkeypatch.setenv("RD_WRONG_PW", "not-the-password")
    s = snapshot(conf(rabbit, broker_password="env:RD_WRONG_PW"), "rb", "--json")
    assert s.rc == 3
    b = s.source("rabbitmq")
    assert b["state"] == "down" and "broker rejected credentials" in b["error"]
    assert s.source("redis")["state"] == "ok"
    assert len(s.json["executions"]) > 0


def test_unreachable_broker(rabbit):
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    s = snapshot(conf(rabbit, broker="http://127.0.0.1:%d" % port), "rb", "--json")
    assert s.rc == 3
    assert "unreachable" in s.source("rabbitmq")["error"]
    assert s.source("redis")["state"] == "ok"


def test_secret_file_permissions_and_unknown_vhost(rabbit, tmp_path):
    pw = tmp_path / "pw"
    pw.write_text(os.environ["RD_RABBIT_PASSWORD"] + "\n")
    pw.chmod(0o644)
    s = snapshot(conf(rabbit, broker_password="file:%s" % pw), "rb", "--json")
    # found before connecting: a config error with file:line (issue 11)
    assert s.rc == 2 and "broker_password" in s.err and "readable" in s.err, s.err
    pw.chmod(0o600)
    s = snapshot(conf(rabbit, broker_password="file:%s" % pw), "rb", "--json")
    assert s.rc == 0 and s.source("rabbitmq")["state"] == "ok"
    s = snapshot(conf(rabbit, broker_vhost="no-such-vhost"), "rb", "--json")
    assert s.rc == 3 and "404" in s.source("rabbitmq")["error"]


def test_cmd_secret(rabbit):
    s = snapshot(conf(rabbit, broker_password="cmd:printf '%s' \"$RD_RABBIT_PASSWORD\""),
                 "rb", "--json")
    assert s.rc == 0, s.source("rabbitmq")


# ---- management over HTTPS (the stack's TLS listener, its certificate from RD_TLS_CA) ----

def https_conf(rabbit, **over):
    need_env("RD_RABBIT_MGMT_HTTPS_URL", "RD_TLS_CA", "RD_TLS_WRONG_CA")
    return conf(rabbit, broker=os.environ["RD_RABBIT_MGMT_HTTPS_URL"], **over)


def test_https_management_verified_with_its_ca(rabbit):
    s = snapshot(https_conf(rabbit, cacert=os.environ["RD_TLS_CA"]), "rb", "--json",
                 "--view", "queues")
    assert s.rc == 0, s.err
    assert s.source("rabbitmq")["state"] == "ok"
    q = by_id([dict(x, id=x["name"]) for x in s.json["queues"]])
    assert q[fx.ATTUNE_DLQ]["is_dlq"] and q[fx.ATTUNE_DLQ]["depth"] == 5


def test_https_management_wrong_ca_is_a_clear_error(rabbit):
    s = snapshot(https_conf(rabbit, cacert=os.environ["RD_TLS_WRONG_CA"]), "rb", "--json")
    assert s.rc == 3, s.err
    src = s.source("rabbitmq")
    assert src["state"] == "down", src
    assert "certificate" in src["error"].lower(), src["error"]
    assert s.source("redis")["state"] == "ok"       # the store is read all the same


def test_https_management_without_ca_is_refused(rabbit):
    # the stack's CA is not in the system store: verification is on, so this must fail
    s = snapshot(https_conf(rabbit), "rb", "--json")
    assert s.rc == 3, s.err
    assert "certificate" in s.source("rabbitmq")["error"].lower()
