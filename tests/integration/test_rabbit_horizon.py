"""When will the dead letters be lost (issue 36, item 3), against the stack's real RabbitMQ:
a DLQ whose message TTL is a queue argument and one whose TTL comes from a policy, each
holding a message dead-lettered at a time the broker stamped (x-death), read back here.
The DLQ view's JSON and text say when the oldest one expires; read-only says it cannot
know without a peek (and gives only the bound); the fleet's WHY raises it below
dlq_horizon_warn / dlq_horizon_crit. Everything lives in a vhost of its own."""
import math
import os
import time
import urllib.parse

import pytest

import stack_fixtures as fx
from snaphelp import need_env, snapshot, write_config

VHOST = "rd.horizon"
ARG_DLQ, POL_DLQ, MSG_DLQ = "hz_arg_dlq", "hz_pol_dlq", "hz_msg_dlq"
ARG_TTL_S, POL_TTL_S = 3600, 600
POLICY = "hz-ttl"


def _rabbit():
    env = fx.stacklib.load_env()
    return fx.stacklib.Rabbit(env), fx.stacklib.Rabbit(env, vhost=VHOST), env


def _xdeath_time(rb, queue):
    """The x-death time the broker stamped on the queue's only message (read with a requeue,
    as redrive's own peek does)."""
    got = rb.get(queue, count=1)
    assert len(got) == 1, got
    return got[0]["properties"]["headers"]["x-death"][0]["time"]


@pytest.fixture(scope="module")
def horizon(tmp_path_factory):
    need_env("RD_RABBIT_MGMT_URL", "RD_RABBIT_USER", "RD_RABBIT_PASSWORD", "RD_REDIS_URL")
    root, rb, env = _rabbit()
    v = urllib.parse.quote(VHOST, safe="")
    root.call("DELETE", "/api/vhosts/%s" % v, ok_missing=True)
    root.call("PUT", "/api/vhosts/%s" % v, {})
    root.call("PUT", "/api/permissions/%s/%s" % (v, urllib.parse.quote(env["RD_RABBIT_USER"], safe="")),
              {"configure": ".*", "write": ".*", "read": ".*"})
    rb.declare_queue(ARG_DLQ, {"x-message-ttl": ARG_TTL_S * 1000})
    rb.declare_queue(POL_DLQ)
    root.call("PUT", "/api/policies/%s/%s" % (v, POLICY),
              {"pattern": "^%s$" % POL_DLQ, "definition": {"message-ttl": POL_TTL_S * 1000},
               "apply-to": "queues", "priority": 1})
    rb.wait_queue(POL_DLQ, lambda q: q.get("policy") == POLICY, what="the policy applied")
    times = {}
    for dlq in (ARG_DLQ, POL_DLQ):
        src = dlq.replace("_dlq", "_src")
        rb.declare_queue(src, {"x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq})
        rb.publish("", src, '{"execution_id": 7}', {"message_id": "hz-" + dlq})
        fx.reject(rb, src, 1)
        rb.wait_queue(dlq, lambda q: q.get("messages") == 1, what="the dead letter")
        times[dlq] = _xdeath_time(rb, dlq)
    # a message published straight into a DLQ with its own TTL (expiration)
    rb.declare_queue(MSG_DLQ, {"x-message-ttl": ARG_TTL_S * 1000})
    rb.publish("", MSG_DLQ, '{"execution_id": 8}', {"message_id": "hz-own-ttl", "expiration": "86400000"})
    rb.wait_queue(MSG_DLQ, lambda q: q.get("messages") == 1, what="the message")
    d = tmp_path_factory.mktemp("horizon")
    yield d, times
    root.call("DELETE", "/api/vhosts/%s" % v, ok_missing=True)


def conf(d, name="hz", **over):
    keys = {"profile": "alakai", "store": os.environ["RD_REDIS_URL"], "prefix": "alakai-executions",
            "broker": os.environ["RD_RABBIT_MGMT_URL"], "broker_user": os.environ["RD_RABBIT_USER"],
            "broker_password": "env:RD_RABBIT_PASSWORD", "broker_vhost": VHOST,
            "core": "http://127.0.0.1:9", "auth": "none"}
    keys.update(over)
    return write_config(d, {name: keys})


def timed_snapshot(config, system, *args):
    t0 = time.time()
    s = snapshot(config, system, *args)
    t1 = time.time()
    assert s.rc == 0, s.err
    return s, t0, t1


def horizons(s):
    return {h["queue"]: h for h in s.json["dlq_horizons"] if h["source"] == "rabbitmq"}


def check_exact(h, death, ttl, basis, t0, t1):
    """The whole horizon: expires_in_s is floor(x-death + TTL - now) for a now within the run."""
    lo, hi = math.floor(death + ttl - t1), math.floor(death + ttl - t0)
    got = h["expires_in_s"]
    assert isinstance(got, (int, float)) and lo <= got <= hi, (got, lo, hi)
    assert 0 < got < ttl
    assert h == {"queue": h["queue"], "source": "rabbitmq", "depth": 1, "expires_in_s": got,
                 "expires_within_s": None, "expires_estimated": False, "expires_basis": basis}


def test_ttl_by_argument_and_by_policy(horizon):
    d, times = horizon
    s, t0, t1 = timed_snapshot(conf(d), "hz", "--json", "--view", "dlq")
    hz = horizons(s)
    assert set(hz) == {ARG_DLQ, POL_DLQ, MSG_DLQ}, s.json["dlq_horizons"]
    check_exact(hz[ARG_DLQ], times[ARG_DLQ], ARG_TTL_S, "message-ttl 1h from x-death", t0, t1)
    check_exact(hz[POL_DLQ], times[POL_DLQ], POL_TTL_S,
                "message-ttl 10m (policy %s) from x-death" % POLICY, t0, t1)
    # a TTL set per message: the horizon is per message, unknown (the queue's TTL bounds it)
    assert hz[MSG_DLQ] == {"queue": MSG_DLQ, "source": "rabbitmq", "depth": 1, "expires_in_s": None,
                           "expires_within_s": ARG_TTL_S, "expires_estimated": False,
                           "expires_basis": "message-ttl 1h; a TTL set per message (expiration): "
                                            "per message, unknown"}
    # the queues carry what the horizon rests on: the lower of argument and policy
    q = {x["name"]: x for x in snapshot(conf(d), "hz", "--json", "--view", "queues").json["queues"]}
    assert (q[ARG_DLQ]["ttl_ms"], q[ARG_DLQ].get("ttl_from")) == (ARG_TTL_S * 1000, None)
    assert (q[POL_DLQ]["ttl_ms"], q[POL_DLQ]["ttl_from"]) == (POL_TTL_S * 1000, "policy " + POLICY)
    assert "limits_note" not in q[ARG_DLQ] and "limits_note" not in q[POL_DLQ]


def test_text_says_when(horizon):
    d, times = horizon
    s, t0, t1 = timed_snapshot(conf(d), "hz", "--view", "dlq")
    lines = s.out.split("\n")
    at = lines.index("DLQ HORIZONS")
    mine = sorted(ln for ln in lines[at + 1:] if ln.startswith(("hz_arg", "hz_pol")))
    left = [POL_TTL_S - (t - times[POL_DLQ]) for t in (t1, t0)]
    # format_age floors to whole minutes; the run may straddle a minute
    want = {"hz_pol_dlq (rabbitmq): oldest dead letter expires in %dm (message-ttl 10m (policy %s) "
            "from x-death)" % (math.floor(x / 60), POLICY) for x in left}
    assert mine[1] in want, mine
    assert mine[0].startswith("hz_arg_dlq (rabbitmq): oldest dead letter expires in ")
    assert mine[0].endswith("m (message-ttl 1h from x-death)")


def test_read_only_says_unknown_without_a_peek(horizon):
    d, _ = horizon
    s, _, _ = timed_snapshot(conf(d, read_only="true"), "hz", "--json", "--view", "dlq")
    hz = horizons(s)
    assert hz[ARG_DLQ] == {"queue": ARG_DLQ, "source": "rabbitmq", "depth": 1, "expires_in_s": None,
                           "expires_within_s": ARG_TTL_S, "expires_estimated": False,
                           "expires_basis": "message-ttl 1h: unknown without a peek, off in read-only"}
    assert hz[POL_DLQ]["expires_in_s"] is None and hz[POL_DLQ]["expires_within_s"] == POL_TTL_S
    assert hz[POL_DLQ]["expires_basis"] == ("message-ttl 10m (policy %s): unknown without a peek, "
                                            "off in read-only" % POLICY)
    assert s.json["dlq_peek_off"] is True and not [e for e in s.json["dlq"] if e.get("source") == "rabbitmq"]


def fleet_row(d, **over):
    s = snapshot(conf(d, **over), None, "--json", "--view", "fleet")
    assert s.rc in (0, 1, 2), s.err
    rows = [r for r in s.json["systems"] if r["system"] == "hz"]
    assert len(rows) == 1, s.json
    return rows[0]


def test_fleet_why_warn_and_crit(horizon):
    """The fleet does not peek: the policy's 10m TTL bounds the soonest DLQ."""
    d, _ = horizon
    quiet = {"dlq_warn": "0", "dlq_crit": "0"}     # the DLQ size's own reasons left out
    warn = fleet_row(d, **quiet)
    assert warn["dlq_horizon"] == {"queue": POL_DLQ, "source": "rabbitmq", "depth": 1, "expires_in_s": None,
                                   "expires_within_s": POL_TTL_S, "expires_estimated": False,
                                   "expires_basis": "message-ttl 10m (policy %s): unknown without a "
                                                    "peek" % POLICY}
    # every DLQ of the system, the soonest first
    got = [(h["queue"], h["expires_within_s"]) for h in warn["dlq_horizons"]]
    assert got[0] == (POL_DLQ, POL_TTL_S) and sorted(got[1:3]) == \
        [(ARG_DLQ, ARG_TTL_S), (MSG_DLQ, ARG_TTL_S)], warn["dlq_horizons"]
    # the store's own DLQ (its entries not read here: named by its source)
    assert warn["dlq_horizons"][3:] == [{"queue": "redis", "source": "redis", "depth": 2,
                                         "expires_in_s": None, "expires_within_s": None,
                                         "expires_estimated": False,
                                         "expires_basis": "no retention rule: kept until resolved"}]
    assert warn["dlq_horizons_capped"] is False
    assert "DLQ expires within 10m < 1h" in warn["reasons"], warn["reasons"]
    crit = fleet_row(d, dlq_horizon_crit="15m", **quiet)
    assert crit["level"] == "FAIL"
    assert "DLQ expires within 10m < 15m" in crit["reasons"], crit["reasons"]
    assert "DLQ expires within 10m < 1h" not in crit["reasons"]
    off = fleet_row(d, dlq_horizon_warn="0", dlq_horizon_crit="0", **quiet)
    assert not [r for r in off["reasons"] if r.startswith("DLQ expires")], off["reasons"]
    below = fleet_row(d, dlq_horizon_warn="5m", dlq_horizon_crit="1m", **quiet)
    assert not [r for r in below["reasons"] if r.startswith("DLQ expires")], below["reasons"]


def test_crit_above_warn_is_a_config_error(horizon, tmp_path):
    d, _ = horizon
    s = snapshot(conf(tmp_path, dlq_horizon_warn="10m", dlq_horizon_crit="1h"), "hz", "--json")
    assert s.rc != 0
    assert "dlq_horizon_crit (3600s) is above dlq_horizon_warn (600s)" in s.err, s.err
