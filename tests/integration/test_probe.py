"""Worker /health probes (tasker workers have no table): two tiny HTTP servers — one
healthy with metrics, one answering garbage — plus a dead port and a slow server."""
import http.server
import json
import os
import socket
import threading
import time

import pytest

from snaphelp import assert_clean_text, by_id, need_env, snapshot, write_config


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        mode = self.server.mode
        if self.path != "/health":
            self.send_response(404)
            self.end_headers()
            return
        status = 200
        if mode == "healthy":
            body = json.dumps({"status": "healthy", "worker_id": "w-1",
                               "metrics": {"queue_depth": 7, "active_steps": 2,
                                           "max_concurrent_steps": 10,
                                           "consecutive_failures": 0}}).encode()
        elif mode == "degraded":
            status = 503
            body = json.dumps({"status": "unhealthy", "queue_depth": 150,
                               "consecutive_failures": 12}).encode()
        elif mode == "slow":
            time.sleep(5)
            body = b"{}"
        else:
            body = b"<html>\x1b]0;pwned\x07 not json \xff\xfe</html>"
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except OSError:
            pass

    def log_message(self, *a):
        pass


def serve(mode):
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    srv.mode = mode
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


@pytest.fixture
def servers():
    made = {m: serve(m) for m in ("healthy", "garbage", "degraded", "slow")}
    yield {m: "http://127.0.0.1:%d" % s.server_address[1] for m, s in made.items()}
    for s in made.values():
        s.shutdown()
        s.server_close()


def dead_url():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return "http://127.0.0.1:%d" % p


def cfg(tmp_path, workers):
    need_env("RD_REDIS_URL")
    return write_config(tmp_path, {"tk": {
        "profile": "alakai", "store": os.environ["RD_REDIS_URL"], "prefix": "none-here",
        "workers": ", ".join(workers), "core": "http://127.0.0.1:9", "auth": "none"}})


def hostport(url):
    return url.split("://", 1)[1].rstrip("/")


def test_probe_health_garbage_dead(servers, tmp_path):
    dead = dead_url()
    c = cfg(tmp_path, [servers["healthy"], servers["garbage"] + "/", dead])
    s = snapshot(c, "tk", "--json", "--view", "workers")
    assert s.rc == 0, s.err
    assert s.source("workers-http")["state"] == "ok"
    w = by_id(s.json["workers"])
    assert set(w) == {hostport(servers["healthy"]), hostport(servers["garbage"]), hostport(dead)}
    good = w[hostport(servers["healthy"])]
    assert good["status"] == "active" and good["health"] == "healthy"
    assert good["queue_depth"] == 7 and good["heartbeat_age_s"] < 5
    bad = w[hostport(servers["garbage"])]
    assert bad["status"] == "error" and bad["health"] == "unknown"
    assert "unreadable" in bad["health_reason"]
    off = w[hostport(dead)]
    assert off["status"] == "offline" and off["health"] == "unhealthy"
    assert "unreachable" in off["health_reason"]


def test_probe_reported_unhealthy_and_thresholds(servers, tmp_path):
    s = snapshot(cfg(tmp_path, [servers["degraded"]]), "tk", "--json", "--view", "workers")
    assert s.rc == 0, s.err
    assert len(s.json["workers"]) == 1, s.json["workers"]
    w = s.json["workers"][0]
    assert w["id"] == hostport(servers["degraded"])
    assert w["status"] == "error"                 # answered 503
    assert w["health"] == "unhealthy"             # depth 150, 12 consecutive failures
    assert w["queue_depth"] == 150


def test_probe_slow_worker_times_out_in_3s(servers, tmp_path):
    t0 = time.monotonic()
    s = snapshot(cfg(tmp_path, [servers["slow"], servers["healthy"]]), "tk", "--json",
                 "--view", "workers")
    assert time.monotonic() - t0 < 6
    assert s.rc == 0, s.err
    w = by_id(s.json["workers"])
    assert set(w) == {hostport(servers["slow"]), hostport(servers["healthy"])}
    assert w[hostport(servers["slow"])]["status"] == "offline"
    assert w[hostport(servers["healthy"])]["status"] == "active"


def test_probe_text_sanitized(servers, tmp_path):
    s = snapshot(cfg(tmp_path, [servers["garbage"], servers["healthy"]]), "tk",
                 "--view", "workers")
    assert s.rc == 0, s.err
    assert_clean_text(s.out)
    assert "pwned" not in s.out
    # the text is there to be clean: the workers table with one row per probed worker
    lines = s.out.splitlines()
    assert "WORKERS" in lines, s.out
    rows = {l.split()[0]: l.split() for l in lines[lines.index("WORKERS") + 2:] if l.strip()}
    assert set(rows) == {hostport(servers["garbage"]), hostport(servers["healthy"])}, s.out
    assert rows[hostport(servers["garbage"])][2:4] == ["error", "unknown"], s.out
    assert "unreadable /health response" in s.out
    assert rows[hostport(servers["healthy"])][2:4] == ["active", "healthy"], s.out
