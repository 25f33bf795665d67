"""rd_http (src/sources/http.c) against a local Python HTTP server: status, bodies, caps,
timeouts, cancel, no redirects, exactly one callback per request."""
import json
import os
import socket
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from actlib import probe_bin


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def _send(self, status, body, headers=()):
        data = body.encode() if isinstance(body, str) else body
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.server.hits.append(("GET", self.path, dict(self.headers), b""))
        if self.path == "/ok":
            self._send(200, '{"ok":true}')
        elif self.path == "/big":
            self._send(200, b"x" * (300 * 1024))
        elif self.path == "/slow":
            time.sleep(3)
            self._send(200, "late")
        elif self.path == "/redirect":
            self._send(302, "", [("Location", "http://127.0.0.1:%d/ok" % self.server.server_port)])
        else:
            self._send(404, '{"error":"nope"}')

    def _body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def do_POST(self):
        body = self._body()
        self.server.hits.append(("POST", self.path, dict(self.headers), body))
        self._send(202, json.dumps({"method": "POST", "body": body.decode(),
                                    "ct": self.headers.get("Content-Type"),
                                    "x": self.headers.get("X-Test")}))

    def do_PATCH(self):
        body = self._body()
        self.server.hits.append(("PATCH", self.path, dict(self.headers), body))
        self._send(200, json.dumps({"method": "PATCH", "body": body.decode()}))


@pytest.fixture(scope="module")
def srv():
    s = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    s.daemon_threads = True
    s.hits = []
    t = threading.Thread(target=s.serve_forever, daemon=True)
    t.start()
    yield s
    s.shutdown()


def run(*args, timeout=20):
    p = subprocess.run([probe_bin(), "http", *args], capture_output=True, text=True,
                       timeout=timeout)
    assert p.returncode == 0, p.stderr
    lines = [json.loads(l) for l in p.stdout.splitlines() if l.strip()]
    return lines[:-1], lines[-1]


def url(s, path):
    return "http://127.0.0.1:%d%s" % (s.server_port, path)


def test_get_ok(srv):
    res, tail = run("GET", url(srv, "/ok"))
    assert tail["calls"] == 1 and len(res) == 1
    assert res[0]["status"] == 200 and json.loads(res[0]["body"]) == {"ok": True}
    assert res[0]["curl_code"] == 0 and not res[0]["truncated"]


def test_post_body_headers(srv):
    res, _ = run("POST", url(srv, "/p"), "--body", '{"a":1}', "--header", "X-Test: yes")
    body = json.loads(res[0]["body"])
    assert res[0]["status"] == 202
    assert body == {"method": "POST", "body": '{"a":1}', "ct": "application/json", "x": "yes"}


def test_patch(srv):
    res, _ = run("PATCH", url(srv, "/p"), "--body", '{"b":2}')
    assert json.loads(res[0]["body"]) == {"method": "PATCH", "body": '{"b":2}'}


def test_body_cap_truncates(srv):
    res, _ = run("GET", url(srv, "/big"), "--max-body", "1000")
    assert res[0]["truncated"] is True
    assert res[0]["body_len"] == 1000
    assert res[0]["status"] == 200


def test_big_body_under_default_cap(srv):
    res, _ = run("GET", url(srv, "/big"))
    assert res[0]["body_len"] == 300 * 1024 and not res[0]["truncated"]


def test_timeout_reports_sent(srv):
    res, tail = run("GET", url(srv, "/slow"), "--timeout", "500")
    assert tail["calls"] == 1
    assert res[0]["status"] == 0 and res[0]["timed_out"] is True
    assert res[0]["request_sent"] is True


def test_no_redirects(srv):
    res, _ = run("GET", url(srv, "/redirect"))
    assert res[0]["status"] == 302


def test_connection_refused_not_sent():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    res, tail = run("POST", "http://127.0.0.1:%d/x" % port, "--body", "{}")
    assert tail["calls"] == 1
    assert res[0]["status"] == 0 and res[0]["request_sent"] is False
    assert res[0]["error"]


def test_protocols_restricted():
    res, tail = run("GET", "file:///etc/passwd")
    assert tail["calls"] == 1
    assert res[0]["status"] == 0 and res[0]["curl_code"] != 0
    assert "root:" not in res[0]["body"]


def test_many_parallel(srv):
    res, tail = run("GET", url(srv, "/ok"), "--count", "20")
    assert tail["calls"] == 20 and len(res) == 20 and all(r["status"] == 200 for r in res)


def test_cancel_no_callback(srv):
    res, tail = run("GET", url(srv, "/slow"), "--cancel-after", "200", "--count", "3")
    assert tail["calls"] == 0
    assert res == [{"cancelled": True, "pending": 0}]
