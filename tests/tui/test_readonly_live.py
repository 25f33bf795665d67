"""Read-only touches nothing (issue 23): with --read-only or read_only = true, opening the DLQ
view (and `snapshot --view dlq`) does no RabbitMQ get (which requeues the messages and marks
them redelivered) and no SQS receive (which raises ApproximateReceiveCount); the view says
that peeking is off and shows what the broker's statistics tell. Proven on the brokers
themselves: RabbitMQ's management statistics of the DLQ and SQS's receive count, each
against a control run without read-only that does peek.

Needs the stack env (tests/stack/stack.sh start DIR && . DIR/env); fails without it.
"""
import base64
import json
import os
import sys
import time
import urllib.request
import uuid

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "actions"))
import actlib  # noqa: E402
from test_guards_live import ConfTerm  # noqa: E402

DLQ = "attune.dlx.queue"


@pytest.fixture(autouse=True)
def stack_env():
    if not os.environ.get("RD_STACK_DIR") or not os.environ.get("RD_SQS_ENDPOINT"):
        pytest.fail("needs the local stack env (tests/stack/stack.sh start DIR; . DIR/env)")


def attune2_lines(read_only_key=False):
    e = os.environ
    return ["profile = attune", "store = " + e["RD_PG_DSN_ATTUNE2"], "broker = " + e["RD_RABBIT_MGMT_URL"],
            "broker_user = " + e["RD_RABBIT_USER"], "broker_password = env:RD_RABBIT_PASSWORD"] + \
        (["read_only = true"] if read_only_key else [])


def gets(queue=DLQ):
    """How many basic.get the broker has served from the queue (its management statistics)."""
    e = os.environ
    auth = base64.b64encode(("%s:%s" % (e["RD_RABBIT_USER"], e["RD_RABBIT_PASSWORD"])).encode()).decode()
    st, q = actlib.http_json("GET", "%s/api/queues/%%2F/%s" % (e["RD_RABBIT_MGMT_URL"], queue),
                             headers={"Authorization": "Basic " + auth})
    assert st == 200, q
    ms = q.get("message_stats") or {}
    return ms.get("get", 0) + ms.get("get_no_ack", 0) + ms.get("get_empty", 0)


def mgmt(method, path, body=None):
    e = os.environ
    auth = base64.b64encode(("%s:%s" % (e["RD_RABBIT_USER"], e["RD_RABBIT_PASSWORD"])).encode()).decode()
    return actlib.http_json(method, e["RD_RABBIT_MGMT_URL"] + path, body,
                            headers={"Authorization": "Basic " + auth})


def barrier_get(queue=DLQ):
    """One get of one message (requeued), the queue holding at least 2."""
    st, q = mgmt("GET", "/api/queues/%%2F/%s" % queue)
    assert st == 200 and q.get("messages_ready", 0) >= 2, q
    st, got = mgmt("POST", "/api/queues/%%2F/%s/get" % queue,
                   {"count": 1, "ackmode": "ack_requeue_true", "encoding": "auto"})
    assert st == 200 and len(got) == 1, got


def settled_gets(queue=DLQ):
    """The get count once the statistics have caught up with every get made so far (an
    earlier test's peek may not show yet): after a get of ours shows, unchanged for 6 s."""
    b0 = gets(queue)
    barrier_get(queue)
    end = time.time() + 30
    while time.time() < end and gets(queue) == b0:
        time.sleep(0.2)
    v, since = gets(queue), time.time()
    while time.time() - since < 6 and time.time() < end + 30:
        time.sleep(0.5)
        if gets(queue) != v:
            v, since = gets(queue), time.time()
    assert v > b0, (b0, v)
    return v


def assert_no_gets_since(before, queue=DLQ):
    """No basic.get on the queue since the count was before. The statistics lag (they are
    collected every second and served every few): a barrier of our own, one get of one
    message, is waited for; once the count shows it, it shows every get made before it.
    Any peek of the console's asks for 20 and the queue holds at least 2: a count of
    exactly before + 1 means ours alone."""
    barrier_get(queue)
    end = time.time() + 90          # the statistics refresh every 5 s; far slower on a loaded host
    while time.time() < end and gets(queue) == before:
        time.sleep(0.2)
    assert gets(queue) == before + 1, (before, gets(queue))


def snapshot(tmp_path, system, lines, *args):
    conf = tmp_path / ("snap-%s-%d.conf" % (system, len(lines)))
    conf.write_text('[system "%s"]\n%s\n' % (system, "\n".join(lines)))
    return actlib.run_redrive(["--config", str(conf)] + list(args) + ["snapshot", "--view", "dlq"],
                              tmpdir=tmp_path)


def test_rabbitmq_dlq_is_not_peeked_in_read_only(tmp_path):
    before = settled_gets()
    t = ConfTerm(tmp_path, "attune2", attune2_lines(), args=["--read-only"])
    t.wait_for("rabbitmq ok")
    t.send("5")
    t.wait_for("peeking is off in read-only")
    t.wait_for("%s: " % DLQ)                          # its size from the broker's statistics
    t.wait_for("messages (ready ")
    t.send("\x12")                                    # refresh and more: still no peek
    t.send("m", wait=1.0)
    t.quit()
    for args, key in (((), True), (("--read-only",), False)):
        p = snapshot(tmp_path, "attune2", attune2_lines(read_only_key=key), *args)
        assert p.returncode == 0, p.stdout + p.stderr
        assert "note: peeking is off in read-only" in p.stdout, p.stdout
    assert_no_gets_since(before)

    # the control: without read-only the same snapshot peeks, and the statistics show it
    p = snapshot(tmp_path, "attune2", attune2_lines())
    assert p.returncode == 0 and "peeking is off" not in p.stdout, p.stdout + p.stderr
    end = time.time() + 30          # the broker's statistics refresh every 5 s; slower on a loaded host
    while time.time() < end and gets() == before:
        time.sleep(0.5)
    assert gets() > before


def sqs(action, body):
    req = urllib.request.Request(os.environ["RD_SQS_ENDPOINT"] + "/", data=json.dumps(body).encode(), method="POST",
                                 headers={"X-Amz-Target": "AmazonSQS." + action,
                                          "Content-Type": "application/x-amz-json-1.0"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read() or b"{}")


def receive_count(dlq, marker):
    """Receives until our message comes (this receive counts too): its ApproximateReceiveCount."""
    for _ in range(20):
        got = sqs("ReceiveMessage", {"QueueUrl": dlq, "MaxNumberOfMessages": 10, "VisibilityTimeout": 0,
                                     "AttributeNames": ["ApproximateReceiveCount"]})
        for m in got.get("Messages", []):
            if marker in m["Body"]:
                return int(m["Attributes"]["ApproximateReceiveCount"])
    raise AssertionError("our message never came back from " + dlq)


def test_sqs_dlq_is_not_received_in_read_only(tmp_path):
    name = "ro-%s" % uuid.uuid4().hex[:8]
    dlq = sqs("CreateQueue", {"QueueName": name + "-dlq"})["QueueUrl"]
    main = sqs("CreateQueue", {"QueueName": name})["QueueUrl"]
    marker = "task-" + name
    sqs("SendMessage", {"QueueUrl": dlq, "MessageBody": json.dumps({"taskId": marker, "attempt": 1})})
    e = os.environ
    lines = ["profile = alakai", "store = " + e["RD_REDIS_URL"], "sqs_queue_url = " + main, "sqs_dlq = " + dlq,
             "sqs_endpoint = " + e["RD_SQS_ENDPOINT"], "sqs_region = " + e["RD_SQS_REGION"],
             "aws_profile = " + e["RD_SQS_AWS_PROFILE"]]
    t = ConfTerm(tmp_path, "alakai", lines, args=["--read-only"])
    t.wait_for("sqs ok")
    t.send("5")
    t.wait_for("peeking is off in read-only")
    t.wait_for("%s-dlq: 1 messages" % name)         # ApproximateNumberOfMessages, no receive
    t.send("\x12")                                    # the keys that peek on SQS: still none
    t.send("m", wait=1.0)
    t.quit()
    p = snapshot(tmp_path, "alakai", lines, "--read-only")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "note: peeking is off in read-only" in p.stdout, p.stdout
    assert receive_count(dlq, marker) == 1           # only our own receive just now

    # the control: without read-only the snapshot receives it (+1 or more), then ours (+1)
    p = snapshot(tmp_path, "alakai", lines)
    assert p.returncode == 0 and marker in p.stdout, p.stdout + p.stderr
    assert receive_count(dlq, marker) >= 3


def marker_script(tmp_path, name, prints):
    marker = tmp_path / (name + ".ran")
    p = tmp_path / (name + ".sh")
    p.write_text('#!/bin/sh\necho ran >> "%s"\nprintf "%%s\\n" "$%s"\n' % (marker, prints))
    p.chmod(0o700)
    return str(p), marker


@pytest.mark.parametrize("args,key", [(["--read-only"], False), ([], True)], ids=["flag", "key"])
def test_console_read_only_never_logs_in(tmp_path, args, key):
    """Security issue 32: the console in read-only probes the core anonymously, every
    second here, and never logs in: no POST /auth/login, no password or token command."""
    e = os.environ
    pw, pw_marker = marker_script(tmp_path, "password", "RD_CORE_PASSWORD")
    srv = actlib.CoreServer("attune1", tmp_path, quiet=False)
    try:
        lines = ["profile = attune", "store = " + e["RD_PG_DSN_ATTUNE1"], "core = " + srv.url,
                 "auth = jwt-login", "login = " + e["RD_CORE_LOGIN"], "password = cmd:" + pw,
                 "core_probe = 1s"] + (["read_only = true"] if key else [])
        t = ConfTerm(tmp_path, "attune1", lines, args=args)
        t.wait_for("core ok (not logged in)", secs=15)
        t.send("4", wait=3.0)                         # the executions view, three more probes
        t.quit()
        log = srv.access_log()
    finally:
        srv.stop()
    assert log.count("GET /auth/me") >= 2, log
    assert "/auth/login" not in log, log
    assert not pw_marker.exists()
