"""The DLQ view's horizon line in the real console against the stack's RabbitMQ (issue 36,
item 3): after the view's own peek it says when the soonest DLQ's oldest dead letter expires,
from its x-death time; in read-only (no peek) it says that is unknown without a peek and
gives only the TTL's bound. The vhost and its DLQs are test_rabbit_horizon.py's."""
import math
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "integration"))
from test_rabbit_horizon import POL_DLQ, POL_TTL_S, POLICY, VHOST, horizon  # noqa: E402,F401
from test_guards_live import ConfTerm  # noqa: E402


def lines(**over):
    e = os.environ
    keys = {"profile": "alakai", "store": e["RD_REDIS_URL"], "prefix": "alakai-executions",
            "broker": e["RD_RABBIT_MGMT_URL"], "broker_user": e["RD_RABBIT_USER"],
            "broker_password": "env:RD_RABBIT_PASSWORD", "broker_vhost": VHOST,
            "core": "http://127.0.0.1:9", "auth": "none"}
    keys.update(over)
    return ["%s = %s" % kv for kv in keys.items()]


def horizon_row(t):
    rows = [ln for ln in t.text().split("\n") if ln.startswith(POL_DLQ + ": ")]
    return rows[0].rstrip() if rows else None


def test_dlq_view_says_when_the_oldest_expires(horizon, tmp_path):
    _, times = horizon
    t = ConfTerm(tmp_path, "hz", lines(), cols=200, rows=30)
    t.wait_for("rabbitmq ok")
    t.send("5")
    t.wait_for("oldest dead letter expires in ")
    t0 = time.time()
    row = horizon_row(t)
    t.quit()
    left = POL_TTL_S - (t0 - times[POL_DLQ])
    want = {"%s: oldest dead letter expires in %dm (message-ttl 10m (policy %s) from x-death)  "
            "(4 DLQs: snapshot --view dlq lists each)" % (POL_DLQ, math.floor(x / 60), POLICY)
            for x in (left, left + 2)}                # a minute may turn while it is drawn
    assert row in want, (row, want)


def test_read_only_dlq_view_says_unknown_without_a_peek(horizon, tmp_path):
    t = ConfTerm(tmp_path, "hz", lines(read_only="true"), cols=200, rows=30)
    t.wait_for("rabbitmq ok")
    t.send("5")
    t.wait_for("peeking is off in read-only")
    t.wait_for("unknown without a peek")
    row = horizon_row(t)
    t.quit()
    assert row == ("%s: oldest dead letter expires within 10m (message-ttl 10m (policy %s): unknown "
                   "without a peek, off in read-only)  (4 DLQs: snapshot --view dlq lists each)"
                   % (POL_DLQ, POLICY)), row
