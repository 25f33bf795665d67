#!/usr/bin/python3
"""bench_sqs: Alakai's SQS source in the console (pty, 120x40, poll 1s) against the stack's
SQS emulator (RD_SQS_ENDPOINT) through a loopback proxy that counts every request and can
stall (hold every request unanswered).

1. requests per poll: over BENCH_SQS_S seconds (default 10), the SQS requests the console
   sends per poll round and per queue (a queue and its DLQ: target 1 per queue,
   GetQueueAttributes only);
2. a stall of the SQS endpoint for BENCH_SQS_STALL_S seconds (default 10): keys that each
   change the screen (view switches) at a steady pace while every SQS request hangs; key to
   first output byte, compared with the same keys while the endpoint answers. Target: the
   stall adds nothing (SPEC §9: p99 <= 5 ms).
"""
import http.server
import json
import os
import sys
import tempfile
import threading
import time
import urllib.request
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B  # noqa: E402

KEYS = {"AWS_ACCESS_KEY_ID": "AKIDBENCH", "AWS_SECRET_ACCESS_KEY": "bench-secret"}
REGION = "us-east-1"


def sqs(endpoint, action, body):
    req = urllib.request.Request(endpoint + "/", data=json.dumps(body).encode(), method="POST",
                                 headers={"X-Amz-Target": "AmazonSQS." + action,
                                          "Content-Type": "application/x-amz-json-1.0"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read() or b"{}")


class StallProxy:
    """Forwards to the emulator and logs (time, action, QueueUrl); while `stalled` is set,
    requests are held unanswered until it clears."""

    def __init__(self, upstream):
        self.log = []
        self.stalled = threading.Event()
        self.held = 0
        px = self

        class H(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                target = self.headers.get("X-Amz-Target", "")
                px.log.append((time.perf_counter(), target,
                               json.loads(body or b"{}").get("QueueUrl")))
                if px.stalled.is_set():
                    px.held += 1
                    while px.stalled.is_set():
                        time.sleep(0.05)
                    return                      # the console gave up long ago: no answer
                req = urllib.request.Request(upstream + "/", data=body, method="POST", headers={
                    "X-Amz-Target": target, "Content-Type": self.headers.get("Content-Type")})
                try:
                    with urllib.request.urlopen(req, timeout=10) as r:
                        status, out = r.status, r.read()
                except urllib.error.HTTPError as e:
                    status, out = e.code, e.read()
                self.send_response(status)
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

        self.srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.srv.daemon_threads = True
        self.url = "http://127.0.0.1:%d" % self.srv.server_address[1]
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()

    def close(self):
        self.stalled.clear()
        self.srv.shutdown()
        self.srv.server_close()


def console(home, main, proxy):
    conf = B.write_config(os.path.join(home, "config"), [("alakai-bench", {
        "profile": "alakai", "store": os.environ["RD_REDIS_URL"], "sqs_queue_url": main,
        "sqs_endpoint": proxy.url, "sqs_region": REGION, "poll": "1s"})])
    env = dict(KEYS, AWS_EC2_METADATA_DISABLED="true")
    return B.Console(conf, home, extra_env=env)


def key_latencies(c, seconds, pace):
    """Keys that each change the screen (queues <-> overview) for `seconds`; returns the
    key-to-first-output latencies in ms (a key never answered counts with its wait)."""
    lat, pending = [], []
    t0 = time.perf_counter()
    i = 0
    while time.perf_counter() - t0 < seconds:
        c.child.send("4" if i % 2 == 0 else "1")
        pending.append(time.perf_counter())
        slot_end = t0 + (i + 1) * pace
        while True:
            got = c.pump(0.001, feed=False)
            now = time.perf_counter()
            if got:
                lat += [(now - ts) * 1000 for ts in pending]
                pending = []
            if now >= slot_end:
                break
        i += 1
    end = time.perf_counter() + 2
    while pending and time.perf_counter() < end:
        if c.pump(0.001, feed=False):
            now = time.perf_counter()
            lat += [(now - ts) * 1000 for ts in pending]
            pending = []
    now = time.perf_counter()
    lat += [(now - ts) * 1000 for ts in pending]
    return lat, len(pending)


def main():
    B.need_env("RD_SQS_ENDPOINT", "RD_REDIS_URL")
    window = float(os.environ.get("BENCH_SQS_S", "10"))
    stall = float(os.environ.get("BENCH_SQS_STALL_S", "10"))
    pace = float(os.environ.get("BENCH_PACE", "0.05"))
    ep = os.environ["RD_SQS_ENDPOINT"]
    name = "bench-sqs-" + uuid.uuid4().hex[:8]
    dlq = sqs(ep, "CreateQueue", {"QueueName": name + "-dlq"})["QueueUrl"]
    main_q = sqs(ep, "CreateQueue", {"QueueName": name, "Attributes": {"RedrivePolicy": json.dumps(
        {"deadLetterTargetArn": "arn:aws:sqs:%s:123456789012:%s-dlq" % (REGION, name),
         "maxReceiveCount": 3})}})["QueueUrl"]
    px = StallProxy(ep)
    with tempfile.TemporaryDirectory() as home:
        c = console(home, main_q, px)
        try:
            c.wait_for("sqs ok", 20)
            c.pump(1.5)
            # 1. requests per poll
            t0 = time.perf_counter()
            c.pump(window, feed=False)
            t1 = time.perf_counter()
            win = [x for x in px.log if t0 <= x[0] < t1]
            per_q = {u: sum(1 for x in win if x[2] == u) for u in (main_q, dlq)}
            rounds = max(per_q.values())
            other = sum(1 for x in win if x[1] != "AmazonSQS.GetQueueAttributes")
            B.note("%d requests in %.1f s: %s" % (len(win), t1 - t0, ", ".join(
                "%s %d" % (u.rsplit("/", 1)[1], n) for u, n in per_q.items())))
            B.fig("sqs", "poll rounds in the window", rounds, "rounds", "%.0f at poll 1s" % window)
            B.fig("sqs", "SQS requests per poll", float(len(win)) / rounds if rounds else float("nan"),
                  "requests", "2 (2 queues)")
            B.fig("sqs", "SQS requests per poll per queue",
                  float(len(win)) / rounds / len(per_q) if rounds else float("nan"), "requests", "1")
            B.fig("sqs", "requests other than GetQueueAttributes", other, "requests", "0")
            # 2. key latency, endpoint answering, then stalled
            normal, lost_n = key_latencies(c, stall, pace)
            px.stalled.set()
            ts = time.perf_counter()
            stalled, lost_s = key_latencies(c, stall, pace)
            stall_len = time.perf_counter() - ts
            held = px.held
            px.stalled.clear()
            c.pump(0.5)
        finally:
            c.close()
            px.close()
    B.note("stall: %.1f s, %d SQS requests held unanswered" % (stall_len, held))
    for label, lat, lost in (("answering", normal, lost_n), ("stalled", stalled, lost_s)):
        B.fig("sqs", "%s: keys sent" % label, len(lat), "keys")
        B.fig("sqs", "%s: key-to-paint p50" % label, B.pct(lat, 50), "ms")
        B.fig("sqs", "%s: key-to-paint p99" % label, B.pct(lat, 99), "ms", "<= 5 ms")
        B.fig("sqs", "%s: key-to-paint max" % label, max(lat), "ms")
        B.fig("sqs", "%s: keys never answered" % label, lost, "keys", "0")
    B.fig("sqs", "SQS requests held during the stall", held, "requests", ">= 1")


if __name__ == "__main__":
    main()
