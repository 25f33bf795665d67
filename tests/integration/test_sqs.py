"""The SQS source against the real emulator (local-aws-sqs 2.0.2 from tests/stack/sqs.sh).

Every request the console sends goes through a loopback proxy that checks its AWS
Signature V4 with a verifier written here (hashlib/hmac, independent of src/io/sigv4.c)
before forwarding it. Credentials come from the environment, a session token, or a
loopback ECS credentials endpoint / IMDSv2 server. Redis is the stack's when its env is
loaded, else a private redis-server.
"""
import datetime
import hashlib
import hmac
import http.server
import json
import math
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ACCOUNT = "123456789012"
REGION = "us-east-1"


def rd_bin():
    b = os.environ.get("RD_BIN") or os.path.join(ROOT, "build", "src", "cli", "redrive")
    if not os.path.exists(b):
        pytest.fail("redrive binary not built: %s" % b)
    return b


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---- the emulator and Redis -------------------------------------------------------------

@pytest.fixture(scope="module")
def emulator(tmp_path_factory):
    if not os.path.exists(os.path.join(ROOT, "tools/sqs-emulator/node_modules/local-aws-sqs")):
        pytest.fail("SQS emulator not installed: run scripts/setup.sh")
    d = tmp_path_factory.mktemp("sqsstack")
    # a free port of its own: the stack's +30 is its own emulator and +31 its standby
    base = free_port() - 30
    r = subprocess.run(["bash", os.path.join(ROOT, "tests/stack/sqs.sh"), "start", str(d),
                        str(base)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    endpoint = "http://127.0.0.1:%d" % (base + 30)
    yield endpoint
    subprocess.run(["bash", os.path.join(ROOT, "tests/stack/sqs.sh"), "stop", str(d),
                    str(base)], timeout=30)


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory):
    if os.environ.get("RD_REDIS_URL"):
        yield os.environ["RD_REDIS_URL"]
        return
    port = free_port()
    d = tmp_path_factory.mktemp("redis")
    p = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1",
                          "--save", "", "--appendonly", "no", "--dir", str(d)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(50):
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            break
        except OSError:
            time.sleep(0.1)
    yield "redis://127.0.0.1:%d/0" % port
    p.terminate()
    p.wait(10)


def sqs(endpoint, action, body):
    req = urllib.request.Request(endpoint + "/", data=json.dumps(body).encode(), method="POST",
                                 headers={"X-Amz-Target": "AmazonSQS." + action,
                                          "Content-Type": "application/x-amz-json-1.0"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read() or b"{}")


def new_queues(endpoint, name, max_receive=2):
    """A fresh queue and DLQ per test (the emulator's re-create delay is off)."""
    dlq = sqs(endpoint, "CreateQueue", {"QueueName": name + "-dlq"})["QueueUrl"]
    main = sqs(endpoint, "CreateQueue", {"QueueName": name, "Attributes": {
        "RedrivePolicy": json.dumps({
            "deadLetterTargetArn": "arn:aws:sqs:%s:%s:%s-dlq" % (REGION, ACCOUNT, name),
            "maxReceiveCount": max_receive})}})["QueueUrl"]
    return main, dlq


# ---- an independent SigV4 verifier behind a loopback proxy ---------------------------------

def _sign(key, msg):
    return hmac.new(key, msg.encode(), hashlib.sha256).digest()


def verify_sigv4(method, path, query, headers, body, secret, region, service):
    """Returns (ok, why, access_key). headers: {lower-name: value}."""
    auth = headers.get("authorization", "")
    if not auth.startswith("AWS4-HMAC-SHA256 "):
        return False, "no SigV4 Authorization", None
    parts = dict(p.strip().split("=", 1) for p in auth[len("AWS4-HMAC-SHA256 "):].split(","))
    cred = parts["Credential"].split("/")
    access_key, day, reg, svc, term = cred
    if (reg, svc, term) != (region, service, "aws4_request"):
        return False, "scope %s/%s/%s" % (reg, svc, term), access_key
    amz_date = headers.get("x-amz-date", "")
    if amz_date[:8] != day:
        return False, "date mismatch", access_key
    when = datetime.datetime.strptime(amz_date, "%Y%m%dT%H%M%SZ").replace(
        tzinfo=datetime.timezone.utc)
    if abs((datetime.datetime.now(datetime.timezone.utc) - when).total_seconds()) > 300:
        return False, "stale x-amz-date", access_key
    signed = parts["SignedHeaders"].split(";")
    for must in ("host", "x-amz-date", "x-amz-target", "content-type"):
        if must not in signed:
            return False, "%s not signed" % must, access_key
    if "x-amz-security-token" in headers and "x-amz-security-token" not in signed:
        return False, "token not signed", access_key
    qs = sorted(urllib.parse.parse_qsl(query, keep_blank_values=True))
    cq = "&".join("%s=%s" % (urllib.parse.quote(k, safe="-_.~"),
                             urllib.parse.quote(v, safe="-_.~")) for k, v in qs)
    ch = "".join("%s:%s\n" % (h, " ".join(headers.get(h, "").split())) for h in signed)
    canon = "\n".join([method, urllib.parse.quote(path or "/", safe="/-_.~"), cq, ch,
                       ";".join(signed), hashlib.sha256(body).hexdigest()])
    sts = "\n".join(["AWS4-HMAC-SHA256", amz_date, "/".join(cred[1:]),
                     hashlib.sha256(canon.encode()).hexdigest()])
    k = _sign(_sign(_sign(_sign(("AWS4" + secret).encode(), day), reg), svc), "aws4_request")
    want = hmac.new(k, sts.encode(), hashlib.sha256).hexdigest()
    if want != parts["Signature"]:
        return False, "signature mismatch", access_key
    return True, "", access_key


class Proxy:
    """Checks each request's signature, records it, forwards it (or answers `canned`)."""

    def __init__(self, upstream, secret, region=REGION, token=None):
        self.upstream, self.secret, self.region, self.token = upstream, secret, region, token
        self.seen = []          # (action, ok, why, access_key, token)
        self.canned = None      # (status, body) to answer instead of forwarding
        proxy = self

        class H(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                hdrs = {k.lower(): v for k, v in self.headers.items()}
                u = urllib.parse.urlsplit(self.path)
                ok, why, ak = verify_sigv4("POST", u.path, u.query, hdrs, body,
                                           proxy.secret, proxy.region, "sqs")
                tok = hdrs.get("x-amz-security-token")
                if proxy.token is not None and tok != proxy.token:
                    ok, why = False, "wrong or missing session token"
                proxy.seen.append((hdrs.get("x-amz-target"), ok, why, ak, tok))
                if proxy.canned:
                    status, out = proxy.canned
                else:
                    req = urllib.request.Request(proxy.upstream + "/", data=body, method="POST",
                                                 headers={"X-Amz-Target": hdrs["x-amz-target"],
                                                          "Content-Type": hdrs["content-type"]})
                    try:
                        with urllib.request.urlopen(req, timeout=10) as r:
                            status, out = r.status, r.read()
                    except urllib.error.HTTPError as e:
                        status, out = e.code, e.read()
                self.send_response(status)
                self.send_header("Content-Type", "application/x-amz-json-1.0")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

        self.srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = "http://127.0.0.1:%d" % self.srv.server_address[1]
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()

    def close(self):
        self.srv.shutdown()
        self.srv.server_close()


def run_snapshot(tmp_path, redis_url, keys, env_extra, view="queues"):
    cfg = tmp_path / "config"
    lines = ['[system "alakai"]', "profile = alakai", "store = " + redis_url]
    lines += ["%s = %s" % kv for kv in keys.items()]
    cfg.write_text("\n".join(lines) + "\n")
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LC_ALL": "C",
           "TZ": "UTC", "AWS_EC2_METADATA_DISABLED": "true"}
    env.update(env_extra)
    r = subprocess.run([rd_bin(), "--config", str(cfg), "snapshot", "--json", "--view", view],
                       capture_output=True, text=True, env=env, timeout=60)
    return r


def source(snap, name):
    return next(s for s in snap["sources"] if s["name"] == name)


def queue(snap, name):
    return next(q for q in snap["queues"] if q["name"] == name)


KEYS = {"AWS_ACCESS_KEY_ID": "AKIDTESTSQS", "AWS_SECRET_ACCESS_KEY": "test/secret+KEY"}


# ---- tests -----------------------------------------------------------------------------------

def test_queues_view_counts_and_signatures(emulator, redis_url, tmp_path):
    main, dlq = new_queues(emulator, "rdq-counts")
    for i in range(3):
        sqs(emulator, "SendMessage", {"QueueUrl": main, "MessageBody": json.dumps(
            {"taskId": "t%d" % i, "attempt": 1, "taskType": "render"})})
    got = sqs(emulator, "ReceiveMessage", {"QueueUrl": main, "MaxNumberOfMessages": 1,
                                           "VisibilityTimeout": 60})
    assert len(got["Messages"]) == 1
    p = Proxy(emulator, KEYS["AWS_SECRET_ACCESS_KEY"])
    try:
        r = run_snapshot(tmp_path, redis_url, {"sqs_queue_url": main, "sqs_endpoint": p.url,
                                               "sqs_region": REGION}, KEYS)
    finally:
        p.close()
    assert r.returncode == 0, r.stderr
    snap = json.loads(r.stdout)
    assert source(snap, "sqs")["state"] == "ok"
    assert source(snap, "redis")["state"] == "ok"
    q = queue(snap, "rdq-counts")
    assert (q["ready"], q["unacked"], q["depth"], q["is_dlq"]) == (2, 1, 3, False)
    assert (q["max_receive"], q["retention_s"], q["dead_letter_exchange"]) == \
        (2, 345600, "rdq-counts-dlq")
    d = queue(snap, "rdq-counts-dlq")
    assert (d["ready"], d["unacked"], d["is_dlq"]) == (0, 0, True)
    # one GetQueueAttributes per queue, each correctly signed for key, region, service
    assert [s[0] for s in p.seen] == ["AmazonSQS.GetQueueAttributes"] * 2
    assert all(s[1] for s in p.seen), p.seen
    assert {s[3] for s in p.seen} == {"AKIDTESTSQS"}
    assert KEYS["AWS_SECRET_ACCESS_KEY"] not in r.stdout + r.stderr


def test_session_token_is_signed(emulator, redis_url, tmp_path):
    main, _ = new_queues(emulator, "rdq-token")
    tok = "FwoGZXIvYXdzEXAMPLETOKEN/with+slash=="
    p = Proxy(emulator, KEYS["AWS_SECRET_ACCESS_KEY"], token=tok)
    try:
        r = run_snapshot(tmp_path, redis_url, {"sqs_queue_url": main, "sqs_endpoint": p.url,
                                               "sqs_region": REGION},
                         dict(KEYS, AWS_SESSION_TOKEN=tok))
    finally:
        p.close()
    assert r.returncode == 0, r.stderr
    assert len(p.seen) == 2 and all(s[1] for s in p.seen), p.seen
    assert tok not in r.stdout + r.stderr


def test_wrong_region_is_caught_by_the_verifier(emulator, redis_url, tmp_path):
    """The verifier can fail: a request signed for another region does not pass it."""
    main, _ = new_queues(emulator, "rdq-region")
    p = Proxy(emulator, KEYS["AWS_SECRET_ACCESS_KEY"], region="eu-west-1")
    try:
        run_snapshot(tmp_path, redis_url, {"sqs_queue_url": main, "sqs_endpoint": p.url,
                                           "sqs_region": REGION}, KEYS)
    finally:
        p.close()
    assert p.seen and not any(s[1] for s in p.seen)


def test_receives_until_dlq_then_peek(emulator, redis_url, tmp_path):
    main, dlq = new_queues(emulator, "rdq-dead", max_receive=2)
    sqs(emulator, "SendMessage", {"QueueUrl": main, "MessageBody": json.dumps(
        {"taskId": "task-dead-1", "attempt": 2, "taskType": "render", "inputs": {"x": 1}}),
        "MessageAttributes": {"taskType": {"DataType": "String", "StringValue": "render"}}})
    # the consumer fails to launch twice: each receive lets the visibility timeout lapse
    for _ in range(2):
        got = sqs(emulator, "ReceiveMessage", {"QueueUrl": main, "VisibilityTimeout": 1,
                                               "WaitTimeSeconds": 2})
        assert len(got.get("Messages", [])) == 1
        time.sleep(1.3)
    p = Proxy(emulator, KEYS["AWS_SECRET_ACCESS_KEY"])
    try:
        r = run_snapshot(tmp_path, redis_url, {"sqs_queue_url": main, "sqs_endpoint": p.url,
                                               "sqs_region": REGION}, KEYS, view="dlq")
    finally:
        p.close()
    assert r.returncode == 0, r.stderr
    snap = json.loads(r.stdout)
    mine = [e for e in snap["dlq"] if e["queue"] == "rdq-dead-dlq"]
    assert len(mine) == 1, snap["dlq"]
    e = mine[0]
    assert (e["execution_id"], e["attempt"], e["task_type"]) == ("task-dead-1", 2, "render")
    assert e["count"] >= 1 and e["sent_at"] > 0 and e["origin_queue"] == "rdq-dead"
    # FIRST is the message's own sent time, not a receive (often redrive's own first peek)
    assert e["first_death_at"] == e["sent_at"], e
    assert "task-dead-1" in e["payload"]
    assert all(s[1] for s in p.seen), p.seen
    assert "AmazonSQS.ReceiveMessage" in [s[0] for s in p.seen]
    # peeking left it visible in the DLQ
    attrs = sqs(emulator, "GetQueueAttributes", {"QueueUrl": dlq,
                                                 "AttributeNames": ["All"]})["Attributes"]
    assert attrs["ApproximateNumberOfMessages"] == "1"


@pytest.mark.parametrize("status,body,want", [
    (400, b'{"__type":"com.amazonaws.sqs#QueueDoesNotExist","message":"The specified queue '
          b'does not exist."}', "QueueDoesNotExist: The specified queue does not exist."),
    (403, b'{"__type":"com.amazon.coral.service#AccessDeniedException","message":"User is '
          b'not authorized"}', "AccessDeniedException: User is not authorized"),
    (200, b'{"Attributes": [1, 2', "malformed GetQueueAttributes answer"),
    (400, b'{"__type":"com.amazonaws.sqs#ThrottlingException","message":"Rate exceeded"}',
     "backing off"),
])
def test_errors_are_clear_and_redis_keeps_working(emulator, redis_url, tmp_path, status, body,
                                                  want):
    main, _ = new_queues(emulator, "rdq-err")
    p = Proxy(emulator, KEYS["AWS_SECRET_ACCESS_KEY"])
    p.canned = (status, body)
    try:
        r = run_snapshot(tmp_path, redis_url, {"sqs_queue_url": main, "sqs_endpoint": p.url,
                                               "sqs_region": REGION}, KEYS)
    finally:
        p.close()
    assert r.returncode == 3, (r.returncode, r.stderr)      # a source is down
    snap = json.loads(r.stdout)
    assert want in source(snap, "sqs")["error"]
    assert source(snap, "sqs")["state"] in ("down", "stale")
    assert source(snap, "redis")["state"] == "ok"


def test_nonexistent_queue_on_the_emulator(emulator, redis_url, tmp_path):
    url = emulator + "/" + ACCOUNT + "/no-such-queue"
    r = run_snapshot(tmp_path, redis_url, {"sqs_queue_url": url, "sqs_region": REGION}, KEYS)
    snap = json.loads(r.stdout)
    assert "QueueDoesNotExist" in source(snap, "sqs")["error"]
    assert source(snap, "redis")["state"] == "ok"


class CredServer:
    """Loopback ECS credentials endpoint and IMDSv2 (token PUT, role, credentials)."""

    def __init__(self, secret, token, expires_in):
        self.secret, self.token, self.expires_in = secret, token, expires_in
        self.hits = []
        cs = self

        class H(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def creds(self):
                exp = datetime.datetime.now(datetime.timezone.utc) + \
                    datetime.timedelta(seconds=cs.expires_in)
                return json.dumps({"AccessKeyId": "ASIATEMP%d" % len(cs.hits),
                                   "SecretAccessKey": cs.secret, "Token": cs.token,
                                   "Expiration": exp.strftime("%Y-%m-%dT%H:%M:%SZ")}).encode()

            def reply(self, status, out):
                self.send_response(status)
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def do_PUT(self):
                cs.hits.append(("PUT", self.path, self.headers.get(
                    "X-aws-ec2-metadata-token-ttl-seconds")))
                self.reply(200, b"imds-session-token")

            def do_GET(self):
                cs.hits.append(("GET", self.path, self.headers.get("Authorization") or
                                self.headers.get("X-aws-ec2-metadata-token")))
                if self.path == "/ecs/creds":
                    if self.headers.get("Authorization") != "ecs-auth-token":
                        return self.reply(401, b"no")
                    return self.reply(200, self.creds())
                if self.headers.get("X-aws-ec2-metadata-token") != "imds-session-token":
                    return self.reply(401, b"")
                if self.path == "/latest/meta-data/iam/security-credentials/":
                    return self.reply(200, b"redrive-role")
                if self.path == "/latest/meta-data/iam/security-credentials/redrive-role":
                    return self.reply(200, self.creds())
                self.reply(404, b"")

        self.srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = "http://127.0.0.1:%d" % self.srv.server_address[1]
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()

    def close(self):
        self.srv.shutdown()
        self.srv.server_close()


def test_ecs_credentials(emulator, redis_url, tmp_path):
    main, _ = new_queues(emulator, "rdq-ecs")
    cs = CredServer("temp/secret", "temp-session-token", 3600)
    p = Proxy(emulator, "temp/secret", token="temp-session-token")
    env = {"AWS_CONTAINER_CREDENTIALS_FULL_URI": cs.url + "/ecs/creds",
           "AWS_CONTAINER_AUTHORIZATION_TOKEN": "ecs-auth-token"}
    try:
        r = run_snapshot(tmp_path, redis_url, {"sqs_queue_url": main, "sqs_endpoint": p.url,
                                               "sqs_region": REGION}, env)
    finally:
        p.close()
        cs.close()
    assert r.returncode == 0, r.stderr
    assert cs.hits == [("GET", "/ecs/creds", "ecs-auth-token")]
    assert len(p.seen) == 2 and all(s[1] for s in p.seen), p.seen
    assert {s[3] for s in p.seen} == {"ASIATEMP1"}     # the key of the one fetch
    assert "ecs-auth-token" not in r.stdout + r.stderr


def test_ecs_credentials_never_through_a_proxy(emulator, redis_url, tmp_path):
    """Security issue 32: the ECS endpoint is plain http (loopback here): its
    authorization token and the keys it returns never go through http_proxy / ALL_PROXY,
    nor does the SQS request signed with them (a plain http endpoint as well)."""
    sys.path.insert(0, os.path.join(ROOT, "tests", "actions"))
    import actlib
    main, _ = new_queues(emulator, "rdq-ecs-proxy")
    cs = CredServer("temp/secret", "temp-session-token", 3600)
    p = Proxy(emulator, "temp/secret", token="temp-session-token")
    rec = actlib.ProxyRecorder()
    env = dict(rec.env(), AWS_CONTAINER_CREDENTIALS_FULL_URI=cs.url + "/ecs/creds",
               AWS_CONTAINER_AUTHORIZATION_TOKEN="ecs-auth-token")
    try:
        r = run_snapshot(tmp_path, redis_url, {"sqs_queue_url": main, "sqs_endpoint": p.url,
                                               "sqs_region": REGION}, env)
    finally:
        p.close()
        cs.close()
        rec.close()
    assert r.returncode == 0, r.stderr
    assert source(json.loads(r.stdout), "sqs")["state"] == "ok", r.stdout
    assert cs.hits == [("GET", "/ecs/creds", "ecs-auth-token")]
    assert rec.received() == []


def test_imds_credentials(emulator, redis_url, tmp_path):
    main, _ = new_queues(emulator, "rdq-imds2")
    cs = CredServer("imds/secret", "imds-token", 3600)
    p = Proxy(emulator, "imds/secret", token="imds-token")
    env = {"AWS_EC2_METADATA_SERVICE_ENDPOINT": cs.url, "AWS_EC2_METADATA_DISABLED": "false"}
    try:
        r = run_snapshot(tmp_path, redis_url, {"sqs_queue_url": main, "sqs_endpoint": p.url,
                                               "sqs_region": REGION}, env)
    finally:
        p.close()
        cs.close()
    assert r.returncode == 0, r.stderr
    assert cs.hits[0] == ("PUT", "/latest/api/token", "21600")
    assert cs.hits[1][:2] == ("GET", "/latest/meta-data/iam/security-credentials/")
    assert cs.hits[2][:2] == ("GET", "/latest/meta-data/iam/security-credentials/redrive-role")
    assert len(p.seen) == 2 and all(s[1] for s in p.seen), p.seen


def test_shared_file_profile_and_credential_process(emulator, redis_url, tmp_path):
    main, _ = new_queues(emulator, "rdq-files")
    home = tmp_path / "home"
    (home / ".aws").mkdir(parents=True)
    (home / ".aws" / "credentials").write_text(
        "[default]\naws_access_key_id = AKIDDEFAULT\naws_secret_access_key = wrong\n\n"
        "[ops]\naws_access_key_id = AKIDOPS\naws_secret_access_key = ops/secret\n")
    (home / ".aws" / "config").write_text(
        "[profile proc]\ncredential_process = printf '{\"Version\":1,\"AccessKeyId\":"
        "\"AKIDPROC\",\"SecretAccessKey\":\"ops/secret\"}'\n")
    for prof, key in (("ops", "AKIDOPS"), ("proc", "AKIDPROC")):
        p = Proxy(emulator, "ops/secret")
        try:
            r = run_snapshot(tmp_path, redis_url, {"sqs_queue_url": main,
                                                   "sqs_endpoint": p.url,
                                                   "sqs_region": REGION,
                                                   "aws_profile": prof}, {})
        finally:
            p.close()
        assert r.returncode == 0, (prof, r.stderr, r.stdout)
        assert len(p.seen) == 2 and all(s[1] for s in p.seen), p.seen
        assert {s[3] for s in p.seen} == {key}


# ---- when will the dead letters be lost (issue 36, item 3) ---------------------------------

def test_dlq_retention_horizon_from_first_enqueue(emulator, redis_url, tmp_path):
    """A DLQ of 1 h retention: its oldest message expires 1 h after it was FIRST sent to the
    main queue (SQS counts retention from the original enqueue, not from the move)."""
    name = "rdq-horizon"
    dlq = sqs(emulator, "CreateQueue", {"QueueName": name + "-dlq",
                                        "Attributes": {"MessageRetentionPeriod": "3600"}})["QueueUrl"]
    main = sqs(emulator, "CreateQueue", {"QueueName": name, "Attributes": {
        "RedrivePolicy": json.dumps({
            "deadLetterTargetArn": "arn:aws:sqs:%s:%s:%s-dlq" % (REGION, ACCOUNT, name),
            "maxReceiveCount": 1})}})["QueueUrl"]
    sent0 = time.time()
    sqs(emulator, "SendMessage", {"QueueUrl": main, "MessageBody": json.dumps(
        {"taskId": "task-horizon", "attempt": 1, "taskType": "render"})})
    sent1 = time.time()
    time.sleep(2.0)                  # moved a while after it was sent: the move is not the basis
    got = sqs(emulator, "ReceiveMessage", {"QueueUrl": main, "VisibilityTimeout": 1,
                                           "WaitTimeSeconds": 2})
    assert len(got.get("Messages", [])) == 1
    deadline = time.time() + 10
    while time.time() < deadline:    # the visibility timeout lapses: into the DLQ
        a = sqs(emulator, "GetQueueAttributes", {"QueueUrl": dlq, "AttributeNames": ["All"]})
        if a["Attributes"].get("ApproximateNumberOfMessages") == "1":
            break
        time.sleep(0.3)
    keys = {"sqs_queue_url": main, "sqs_region": REGION}
    t0 = time.time()
    r = run_snapshot(tmp_path, redis_url, keys, KEYS, view="dlq")
    t1 = time.time()
    assert r.returncode == 0, r.stderr
    snap = json.loads(r.stdout)
    e = [x for x in snap["dlq"] if x["queue"] == name + "-dlq"]
    assert len(e) == 1 and sent0 - 1 <= e[0]["sent_at"] <= sent1 + 1, e
    h = [x for x in snap["dlq_horizons"] if x["queue"] == name + "-dlq"]
    assert len(h) == 1, snap["dlq_horizons"]
    h = h[0]
    lo, hi = math.floor(sent0 - 1 + 3600 - t1), math.floor(sent1 + 1 + 3600 - t0)
    got_s = h["expires_in_s"]
    assert isinstance(got_s, (int, float)) and lo <= got_s <= hi, (got_s, lo, hi)
    # exact against the peeked SentTimestamp, and the whole row
    assert got_s in (math.floor(e[0]["sent_at"] + 3600 - t) for t in (t0, t1)) or \
        math.floor(e[0]["sent_at"] + 3600 - t1) <= got_s <= math.floor(e[0]["sent_at"] + 3600 - t0)
    assert h == {"queue": name + "-dlq", "source": "sqs", "depth": 1, "expires_in_s": got_s,
                 "expires_within_s": None, "expires_estimated": False,
                 "expires_basis": "retention 1h from first enqueue"}
    # read-only: no receive, so no age: only the bound, said so
    r = run_snapshot(tmp_path, redis_url, dict(keys, read_only="true"), KEYS, view="dlq")
    assert r.returncode == 0, r.stderr
    ro = [x for x in json.loads(r.stdout)["dlq_horizons"] if x["queue"] == name + "-dlq"]
    assert ro == [{"queue": name + "-dlq", "source": "sqs", "depth": 1, "expires_in_s": None,
                   "expires_within_s": 3600, "expires_estimated": False,
                   "expires_basis": "retention 1h from first enqueue: unknown without a peek, "
                                    "off in read-only"}], ro
