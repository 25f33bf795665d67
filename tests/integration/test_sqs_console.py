"""Alakai's SQS queue in the console and in `redrive check`, against the real stack: the
stack's SQS emulator (tests/stack/sqs.sh, RD_SQS_*) and its Redis (RD_REDIS_URL).

- the DLQ view peeks only on request, says first what a peek does, and links each dead
  letter to its Redis execution record ("no record" for a lost dispatch);
- the console sends exactly one GetQueueAttributes per queue per poll (counted at a
  loopback proxy that also checks every signature with test_sqs.py's verifier);
- expiring ECS credentials are fetched again before they expire and the requests after
  that are signed with the new key;
- `redrive check` names the credentials provider, never the secret;
- a queue that keeps growing with nothing in flight is flagged not draining.
"""
import datetime
import http.server
import io
import json
import os
import subprocess
import threading
import time
import uuid

import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tui"))
from lib.term import Term as BaseTerm  # noqa: E402

from test_sqs import REGION, Proxy, rd_bin, sqs

KEYS = {"AWS_ACCESS_KEY_ID": "AKIDCONSOLE", "AWS_SECRET_ACCESS_KEY": "console/secret+KEY"}
PREFIX = "alakai-executions"


@pytest.fixture(autouse=True)
def stack_env():
    for k in ("RD_SQS_ENDPOINT", "RD_REDIS_URL", "RD_REDIS_PORT"):
        if not os.environ.get(k):
            pytest.fail("needs the local stack env with its SQS emulator (%s)" % k)


def fresh_queues(name, max_receive=2):
    """A new queue and DLQ on the stack's emulator (unique names: tests never collide)."""
    ep = os.environ["RD_SQS_ENDPOINT"]
    name = "%s-%s" % (name, uuid.uuid4().hex[:8])
    dlq = sqs(ep, "CreateQueue", {"QueueName": name + "-dlq"})["QueueUrl"]
    main = sqs(ep, "CreateQueue", {"QueueName": name, "Attributes": {
        "RedrivePolicy": json.dumps({
            "deadLetterTargetArn": "arn:aws:sqs:%s:123456789012:%s-dlq" % (REGION, name),
            "maxReceiveCount": max_receive})}})["QueueUrl"]
    return name, main, dlq


def config(tmp_path, main, endpoint, extra=""):
    cfg = tmp_path / "config"
    cfg.write_text('[system "alakai"]\nprofile = alakai\nstore = %s\nsqs_queue_url = %s\n'
                   'sqs_endpoint = %s\nsqs_region = %s\npoll = 1s\n%s'
                   % (os.environ["RD_REDIS_URL"], main, endpoint, REGION, extra))
    return str(cfg)


class Term(BaseTerm):
    """Only the variables given (no stack env: the AWS keys are what the test says)."""
    WAIT_S = 15

    def __init__(self, tmp_path, conf, env_extra, cols=120, rows=30):
        super().__init__(conf, env=dict({"AWS_EC2_METADATA_DISABLED": "true"}, **env_extra), cols=cols,
                         rows=rows, keep=(), binary=rd_bin(), home=tmp_path)

    def close(self):
        self.child.send("Q")
        self.pump(0.3)
        self.child.terminate(force=True)


def dead_letter(main, dlq, bodies):
    """Sends the bodies and lets every one die into the DLQ through real receives whose
    visibility timeout lapses (the consumer never deletes them)."""
    ep = os.environ["RD_SQS_ENDPOINT"]
    for b in bodies:
        sqs(ep, "SendMessage", {"QueueUrl": main, "MessageBody": json.dumps(b)})
    end = time.time() + 30
    while time.time() < end:
        sqs(ep, "ReceiveMessage", {"QueueUrl": main, "VisibilityTimeout": 1,
                                   "MaxNumberOfMessages": 10, "WaitTimeSeconds": 1})
        a = sqs(ep, "GetQueueAttributes", {"QueueUrl": dlq, "AttributeNames": ["All"]})
        if int(a["Attributes"]["ApproximateNumberOfMessages"]) >= len(bodies):
            return
        time.sleep(1.1)
    raise AssertionError("the messages did not reach the DLQ")


def row_of(term, needle):
    """The list row (0 = first) holding needle in the DLQ list (title, header, then rows)."""
    lines = term.text().split("\n")
    for i, line in enumerate(lines[3:]):
        if needle in line:
            return i
    raise AssertionError("%r not in the list:\n%s" % (needle, term.text()))


def test_dlq_peek_on_request_and_links_to_redis_records(tmp_path):
    import redis
    name, main, dlq = fresh_queues("rdc-dlq")
    known, lost = "sqs-known-" + uuid.uuid4().hex[:8], "sqs-lost-" + uuid.uuid4().hex[:8]
    r = redis.Redis(host="127.0.0.1", port=int(os.environ["RD_REDIS_PORT"]), db=0)
    rec = {"status": "failed", "attempt": 1, "errorCode": "LAUNCH_FAILED",
           "errorMessage": "no capacity", "dispatchedAt": "2026-01-01T00:00:00Z",
           "resolvedAt": "2026-01-01T00:00:05Z",
           "taskSnapshot": {"taskId": known, "type": "render", "payload": {}}}
    r.hset("%s:%s" % (PREFIX, known), "1", json.dumps(rec))
    try:
        dead_letter(main, dlq, [{"taskId": known, "attempt": 1, "taskType": "render"},
                                {"taskId": lost, "attempt": 1, "taskType": "ingest"}])
        p = CountingProxy(os.environ["RD_SQS_ENDPOINT"], KEYS["AWS_SECRET_ACCESS_KEY"])
        t = Term(tmp_path, config(tmp_path, main, p.url), KEYS)
        try:
            t.wait_for("sqs ok")
            t.send("5")
            # before the first peek: what a peek does, and nothing received
            t.wait_for("RECEIVES its messages")
            assert "receive count" in t.text() and "visibility" in t.text()
            t.pump(2.5)                       # two more polls: still no ReceiveMessage
            assert {x[1] for x in p.log} == {"AmazonSQS.GetQueueAttributes"}, p.log
            t.send("\x12")                    # ctrl-r: peek
            t.wait_for(lost)
            t.wait_for(known)
            t.send("g", 0.2)                  # top of the list
            for _ in range(row_of(t, known)):
                t.send("j", 0.1)
            t.send("\r")
            t.wait_for("linked retry chain of " + known)
            t.wait_for("LAUNCH_FAILED")
            t.send("\x1b", 0.5)               # back to the list
            t.wait_for("peeked of")
            t.send("g", 0.2)
            for _ in range(row_of(t, lost)):
                t.send("j", 0.1)
            t.send("\r")
            t.wait_for("no record in the store (a lost dispatch")
            t.wait_for("taskType ingest")
            received = [x for x in p.log if x[1] == "AmazonSQS.ReceiveMessage"]
            assert received and {x[2] for x in received} == {dlq}, p.log
            assert all(s[1] for s in p.seen), p.seen
        finally:
            t.close()
            p.close()
    finally:
        r.delete("%s:%s" % (PREFIX, known))


class CountingProxy(Proxy):
    """test_sqs.Proxy (signature check, forwarding) plus the time and queue of each request."""

    def __init__(self, upstream, secret, token=None):
        super().__init__(upstream, secret, token=token)
        self.log = []                          # (time, action, QueueUrl)
        inner = self.srv.RequestHandlerClass.do_POST
        proxy = self

        def do_post(handler):
            n = int(handler.headers.get("Content-Length", 0))
            body = handler.rfile.read(n)
            proxy.log.append((time.time(), handler.headers.get("X-Amz-Target"),
                              json.loads(body or b"{}").get("QueueUrl")))
            handler.rfile = io.BytesIO(body)
            inner(handler)
        self.srv.RequestHandlerClass.do_POST = do_post


def test_one_get_queue_attributes_per_queue_per_poll(tmp_path):
    name, main, dlq = fresh_queues("rdc-count")
    p = CountingProxy(os.environ["RD_SQS_ENDPOINT"], KEYS["AWS_SECRET_ACCESS_KEY"])
    t = Term(tmp_path, config(tmp_path, main, p.url), KEYS)
    try:
        t.wait_for("sqs ok")
        t.send("4")
        t.wait_for(name + "-dlq")
        t0 = time.time()
        t.pump(8)
        t1 = time.time()
    finally:
        t.close()
        p.close()
    win = [x for x in p.log if t0 <= x[0] <= t1]
    assert {x[1] for x in p.log} == {"AmazonSQS.GetQueueAttributes"}, p.log
    assert all(s[1] for s in p.seen), p.seen
    per_q = {u: sorted(x[0] for x in win if x[2] == u) for u in (main, dlq)}
    # 8 s at poll 1s: 5..9 polls (a loaded machine), each queue once per poll
    for u, times in per_q.items():
        assert 5 <= len(times) <= 9, (u, times)
        gaps = [b - a for a, b in zip(times, times[1:])]
        assert len(gaps) == len(times) - 1 and min(gaps) > 0.5, (u, gaps)
    assert abs(len(per_q[main]) - len(per_q[dlq])) <= 1, per_q
    assert len(win) == len(per_q[main]) + len(per_q[dlq])


class ExpiringEcs:
    """A loopback ECS credentials endpoint: each fetch hands out a new key that expires
    `ttl` seconds later."""

    def __init__(self, secret, token, ttl):
        self.fetches = []                      # (time, access key)
        ecs = self

        class H(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_GET(self):
                if self.path != "/creds" or self.headers.get("Authorization") != "ecs-auth":
                    self.send_response(401)
                    self.end_headers()
                    return
                key = "ASIAREFRESH%d" % (len(ecs.fetches) + 1)
                ecs.fetches.append((time.time(), key))
                exp = datetime.datetime.now(datetime.timezone.utc) + \
                    datetime.timedelta(seconds=ttl)
                out = json.dumps({"AccessKeyId": key, "SecretAccessKey": secret,
                                  "Token": token,
                                  "Expiration": exp.strftime("%Y-%m-%dT%H:%M:%SZ")}).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

        self.srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = "http://127.0.0.1:%d/creds" % self.srv.server_address[1]
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()

    def close(self):
        self.srv.shutdown()
        self.srv.server_close()


def test_expiring_credentials_are_refreshed_before_expiry(tmp_path):
    """Keys that expire in 5 min + 6 s: the console (which refreshes 5 min early) fetches
    again about 6 s later, well before expiry, and signs what follows with the new key."""
    name, main, _ = fresh_queues("rdc-refresh")
    ecs = ExpiringEcs("refresh/secret", "refresh-token", 306)
    p = CountingProxy(os.environ["RD_SQS_ENDPOINT"], "refresh/secret", token="refresh-token")
    env = {"AWS_CONTAINER_CREDENTIALS_FULL_URI": ecs.url,
           "AWS_CONTAINER_AUTHORIZATION_TOKEN": "ecs-auth"}
    t = Term(tmp_path, config(tmp_path, main, p.url), env)
    try:
        t.wait_for("sqs ok")
        end = time.time() + 30
        while len(ecs.fetches) < 2 and time.time() < end:
            t.pump(0.5)
        t.pump(3)                              # polls after the second fetch
    finally:
        t.close()
        p.close()
        ecs.close()
    assert len(ecs.fetches) >= 2, ecs.fetches
    first, second = ecs.fetches[0], ecs.fetches[1]
    assert 3 <= second[0] - first[0] <= 20, ecs.fetches      # early: ~6 s, not at expiry
    assert all(s[1] for s in p.seen), p.seen                 # every request verifies
    keys = [s[3] for s in p.seen]
    assert keys[0] == "ASIAREFRESH1" and "ASIAREFRESH2" in keys, keys
    # once the second key is in use the first never comes back
    i = keys.index("ASIAREFRESH2")
    assert "ASIAREFRESH1" not in keys[i:], keys
    assert len(keys[i:]) >= 2, keys
    # and the request signed with it came after its fetch
    assert [x for x in p.log if x[0] >= second[0]], p.log


def run_check(tmp_path, main, env_extra, extra=""):
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "LC_ALL": "C", "TZ": "UTC",
           "AWS_EC2_METADATA_DISABLED": "true"}
    env.update(env_extra)
    return subprocess.run([rd_bin(), "--config", config(tmp_path, main,
                                                        os.environ["RD_SQS_ENDPOINT"], extra),
                           "check", "--json"], capture_output=True, text=True, env=env,
                          timeout=60)


def check_lines(out):
    doc = json.loads(out)
    lines = []
    for system in doc["systems"]:
        lines += [(c["check"], c["status"], c["message"]) for c in system["checks"]]
    return lines


def test_check_names_the_credentials_provider(tmp_path):
    _, main, _ = fresh_queues("rdc-check")
    home = tmp_path / "home"
    (home / ".aws").mkdir(parents=True)
    (home / ".aws" / "credentials").write_text(
        "[ops]\naws_access_key_id = AKIDOPSFILE\naws_secret_access_key = ops/file/secret\n")
    (home / ".aws" / "config").write_text(
        "[profile proc]\ncredential_process = printf '{\"Version\":1,\"AccessKeyId\":"
        "\"AKIDPROC\",\"SecretAccessKey\":\"proc/secret\"}'\n")
    ecs = ExpiringEcs("ecs/secret", "ecs-token", 3600)
    cases = [
        (KEYS, "", "from the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)",
         KEYS["AWS_SECRET_ACCESS_KEY"]),
        ({}, "aws_profile = ops\n", "from the shared credentials file, profile ops",
         "ops/file/secret"),
        ({}, "aws_profile = proc\n", "from credential_process of profile proc", "proc/secret"),
        ({"AWS_CONTAINER_CREDENTIALS_FULL_URI": ecs.url,
          "AWS_CONTAINER_AUTHORIZATION_TOKEN": "ecs-auth"}, "",
         "from ECS task credentials (container credentials endpoint), expire in 59m",
         "ecs/secret"),
    ]
    try:
        for env, extra, want, secret in cases:
            t0 = time.monotonic()
            r = run_check(tmp_path, main, env, extra)
            # done once every source answered, not at check's 8 s deadline (SQS has no
            # server version to wait for)
            assert time.monotonic() - t0 < 6, (time.monotonic() - t0, r.stdout)
            lines = check_lines(r.stdout)
            creds = [x for x in lines if x[0] == "sqs credentials"]
            assert creds == [("sqs credentials", "ok", want + (" (refreshed 5m before)"
                                                                if "expire" in want else ""))], \
                (lines, r.stderr)
            sq = [x for x in lines if x[0] == "sqs"]
            assert len(sq) == 1 and sq[0][1] == "ok" and "2 queues read" in sq[0][2], lines
            assert secret not in r.stdout + r.stderr
            assert "ecs-auth" not in r.stdout + r.stderr
    finally:
        ecs.close()
    # no credentials at all: a failed line that says why, the text form too
    r = run_check(tmp_path, main, {})
    lines = check_lines(r.stdout)
    creds = [x for x in lines if x[0] == "sqs credentials"]
    assert len(creds) == 1 and creds[0][1] == "failed", lines
    assert "no AWS credentials" in creds[0][2], creds


def test_not_draining_in_console_and_snapshot_json(tmp_path):
    """Messages keep arriving and nobody receives them: the queue is flagged NOT DRAINING in
    the Queues view and the Overview, and in `snapshot --json --for 5` (which polls for 5 s:
    one poll alone never knows a trend); a one-shot snapshot does not flag it."""
    name, main, dlq = fresh_queues("rdc-drain")
    ep = os.environ["RD_SQS_ENDPOINT"]
    stop = threading.Event()

    def feed():
        i = 0
        while not stop.is_set():
            sqs(ep, "SendMessage", {"QueueUrl": main, "MessageBody": json.dumps(
                {"taskId": "grow-%d" % i, "attempt": 1, "taskType": "render"})})
            i += 1
            stop.wait(0.3)
    th = threading.Thread(target=feed, daemon=True)
    th.start()
    home = tmp_path / "home"
    home.mkdir()
    env = dict(KEYS, PATH="/usr/bin:/bin", HOME=str(home), LC_ALL="C", TZ="UTC",
               AWS_EC2_METADATA_DISABLED="true")
    conf = config(tmp_path, main, ep)

    def snap(*extra):
        r = subprocess.run([rd_bin(), "--config", conf, "snapshot", "--json"] + list(extra),
                           capture_output=True, text=True, env=env, timeout=60)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)
    try:
        t = Term(tmp_path, conf, KEYS)
        try:
            t.wait_for("sqs ok")
            t.send("4")
            t.wait_for("NOT DRAINING", secs=20)
            t.send("1")
            t.wait_for("NOT DRAINING: " + name)
            t.wait_for("SQS backlog")
        finally:
            t.close()
        one = snap("--view", "queues")
        q = next(x for x in one["queues"] if x["name"] == name)
        assert q["not_draining"] is False and q["ready"] > 5, q
        held = snap("--for", "5")          # the overview: queues and sqs_backlog
        q = next(x for x in held["queues"] if x["name"] == name)
        assert q["not_draining"] is True, q
        d = next(x for x in held["queues"] if x["name"] == name + "-dlq")
        assert d["not_draining"] is False and d["is_dlq"] is True, d
        assert held["sqs_backlog"]["not_draining"] == [name], held["sqs_backlog"]
        assert held["sqs_backlog"]["visible"] >= q["ready"]
    finally:
        stop.set()
        th.join(5)
    # a consumer receives: in flight > 0, the flag clears
    sqs(ep, "ReceiveMessage", {"QueueUrl": main, "MaxNumberOfMessages": 5,
                               "VisibilityTimeout": 60})
    after = snap("--for", "3", "--view", "queues")
    q = next(x for x in after["queues"] if x["name"] == name)
    assert q["unacked"] >= 1 and q["not_draining"] is False, q


def test_demo_shows_alakai_sqs_queue_and_dlq_live(tmp_path):
    """The demo's config (scripts/demo-config.sh) and the simulator: Alakai's dispatch queue
    and its DLQ in `snapshot --json --view queues`, dead letters that died through real
    receives in `--view dlq`, some of them lost dispatches with no Redis record."""
    stack = os.environ.get("RD_STACK_DIR")
    if not stack:
        pytest.fail("needs RD_STACK_DIR (the stack env)")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    conf = tmp_path / "demo.conf"
    conf.write_text(subprocess.run(["bash", os.path.join(root, "scripts", "demo-config.sh"),
                                    os.path.join(stack, "env")], capture_output=True,
                                   check=True, text=True).stdout)
    assert "sqs_queue_url = " + os.environ["RD_SQS_QUEUE_URL"] in conf.read_text()
    sim = subprocess.Popen(["/usr/bin/python3", os.path.join(root, "tools", "sim", "sim.py"),
                            "--env-file", os.path.join(stack, "env"), "--rate", "6",
                            "--seed", "11", "--profiles", "alakai", "--duration", "25",
                            "--quiet"], stdout=subprocess.PIPE, text=True)
    env = {k: v for k, v in os.environ.items()
           if k.startswith("RD_") or k == "AWS_SHARED_CREDENTIALS_FILE"}
    env.update(PATH="/usr/bin:/bin", HOME=str(tmp_path), LC_ALL="C", TZ="UTC",
               AWS_EC2_METADATA_DISABLED="true")

    def snap(view):
        r = subprocess.run([rd_bin(), "--config", str(conf), "--system", "alakai", "snapshot",
                            "--json", "--view", view], capture_output=True, text=True,
                           env=env, timeout=60)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)
    try:
        dead = []
        end = time.time() + 40
        while time.time() < end and not dead:
            time.sleep(3)
            d = snap("dlq")
            dead = [e for e in d["dlq"] if e["queue"] == "alakai-dispatch-dlq"]
        out, _ = sim.communicate(timeout=60)
    finally:
        if sim.poll() is None:
            sim.kill()
            sim.wait()
    stats = json.loads(out)["stats"]["alakai"]
    assert stats.get("sqs_sent", 0) > 20 and stats.get("sqs_consumed", 0) > 10, stats
    assert dead, "no dead letter peeked from alakai-dispatch-dlq"
    assert all(e["execution_id"].startswith("sim-task-") and e["count"] >= 1 and
               e["origin_queue"] == "alakai-dispatch" for e in dead), dead
    q = snap("queues")
    names = {x["name"]: x for x in q["queues"]}
    assert names["alakai-dispatch"]["is_dlq"] is False
    assert names["alakai-dispatch"]["max_receive"] == 3
    assert names["alakai-dispatch-dlq"]["is_dlq"] is True
    assert names["alakai-dispatch-dlq"]["ready"] >= len(dead)
    assert {s["name"]: s["state"] for s in q["sources"]}["sqs"] == "ok"
    assert next(s for s in q["sources"] if s["name"] == "sqs")["credentials"] == \
        "shared-file:redrive-local"
