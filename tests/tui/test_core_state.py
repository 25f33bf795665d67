"""The core API's state (issue 11): a GET /auth/me probe at a low rate (config core_probe)
and after each action shows "core ok as <identity>" or "core down: <reason>" in the top
bar, the overview's sources panel and `snapshot --json` (a "core" object) — never a token.
A private core server is stopped and started again on the same port."""
import json
import os
import signal
import subprocess
import sys
import time

from lib.term import BIN, ROOT, LiveTerm as Term

sys.path.insert(0, os.path.join(ROOT, "tests", "actions"))
import actlib  # noqa: E402

PROBE = "core_probe = 1s\n"
AUTH = "auth = bearer\ntoken = env:RD_CORE_TOKEN\n" + PROBE
SLACK_S = 6        # one probe (1 s) + load


def restart(srv):
    """The same core server again, on its port."""
    args = [actlib.PY, os.path.join(ROOT, "tools", "coresrv", "coresrv.py"), "--system", "attune2",
            "--port", str(srv.port), "--log", srv.log, "--quiet",
            "--env-file", os.path.join(os.environ["RD_STACK_DIR"], "env")]
    end = time.time() + 20
    while time.time() < end:
        srv.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=open(srv.log + ".err2", "a"))
        t = time.time()
        while time.time() - t < 5 and srv.proc.poll() is None:
            try:
                if actlib.http_json("GET", srv.url + "/health", timeout=1)[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.1)
        if srv.proc.poll() is None:
            srv.proc.kill()
        time.sleep(0.5)        # the port may still be held a moment
    raise AssertionError("could not restart the core on port %d" % srv.port)


def snapshot_core(tmp_path, url):
    conf = tmp_path / "snap.conf"
    conf.write_text('[system "a"]\nprofile = attune\nstore = %s\ncore = %s\n%s'
                    % (os.environ["RD_PG_DSN_ATTUNE2"], url, AUTH))
    env = dict(os.environ, TZ="UTC", LANG="C.UTF-8", REDRIVE_PROFILES=os.path.join(ROOT, "profiles"))
    p = subprocess.run([BIN, "--config", str(conf), "snapshot", "--json"], capture_output=True,
                       timeout=30, env=env)
    assert p.returncode == 0, p.stderr
    assert os.environ["RD_CORE_TOKEN"].encode() not in p.stdout + p.stderr
    return json.loads(p.stdout)["core"]


def top(t):
    return t.screen.display[0]


def test_core_down_and_back_in_top_bar_and_snapshot(tmp_path):
    srv = actlib.CoreServer("attune2", tmp_path)
    t = None
    try:
        c = snapshot_core(tmp_path, srv.url)
        assert c["state"] == "ok" and c["identity"] == "alice" and c["error"] is None, c
        t = Term(tmp_path, cols=200, core=srv.url, auth=AUTH)
        t.wait_for("core ok as alice", secs=15)
        assert "core ok as alice" in top(t), top(t)
        t.wait_for("core API     ok        as alice")                 # the sources panel

        srv.stop()
        t0 = time.time()
        t.wait_for("core down: core unreachable", secs=SLACK_S)
        assert "core down: core unreachable" in top(t), top(t)
        assert "Connection refused" in t.text() or "Couldn't connect" in t.text(), t.text()
        t.wait_for("core API     DOWN", secs=2)
        down_s = time.time() - t0
        c = snapshot_core(tmp_path, srv.url)
        assert c["state"] == "down" and "unreachable" in c["error"] and c["identity"] is None, c

        restart(srv)
        t0 = time.time()
        t.wait_for("core ok as alice", secs=SLACK_S)
        back_s = time.time() - t0
        assert "core down" not in top(t), top(t)
        c = snapshot_core(tmp_path, srv.url)
        assert c["state"] == "ok" and c["identity"] == "alice", c
        assert os.environ["RD_CORE_TOKEN"].encode() not in bytes(t.raw)
        print("core shown down after %.1f s, ok again after %.1f s" % (down_s, back_s))
        t.send("Q")
        assert t.finish() == 0
    finally:
        if t and t.child.isalive():
            t.child.kill(signal.SIGKILL)
        srv.stop()


def test_refused_token_is_an_error_not_down(tmp_path):
    srv = actlib.CoreServer("attune2", tmp_path)
    try:
        os.environ["RD_TEST_BAD_TOKEN"] = "not-a-valid-token"
        conf = tmp_path / "bad.conf"
        conf.write_text('[system "a"]\nprofile = attune\nstore = %s\ncore = %s\nauth = bearer\n'
                        'token = env:RD_TEST_BAD_TOKEN\n%s' % (os.environ["RD_PG_DSN_ATTUNE2"], srv.url, PROBE))
        env = dict(os.environ, TZ="UTC", REDRIVE_PROFILES=os.path.join(ROOT, "profiles"))
        p = subprocess.run([BIN, "--config", str(conf), "snapshot", "--json"], capture_output=True,
                           timeout=30, env=env)
        assert p.returncode == 0, p.stderr
        c = json.loads(p.stdout)["core"]
        assert c["state"] == "error" and "HTTP 401" in c["error"], c
        assert b"not-a-valid-token" not in p.stdout + p.stderr
    finally:
        os.environ.pop("RD_TEST_BAD_TOKEN", None)
        srv.stop()


def test_jwt_login_not_prompted_by_the_probe(tmp_path):
    """Before the first action a jwt-login without a password source is not asked for its
    password by the probe: the core is probed without credentials (a 401 = it is up)."""
    login = os.environ.get("RD_CORE_LOGIN", "ops")
    t = Term(tmp_path, cols=200, auth="auth = jwt-login\nlogin = %s\n%s" % (login, PROBE))
    try:
        t.wait_for("core ok (not logged in)", secs=15)
        t.pump(2.5)                                  # two more probes
        assert "password for" not in t.text(), t.text()
        assert "core ok (not logged in)" in top(t), top(t)
        t.send("Q")
        assert t.finish() == 0
    finally:
        if t.child.isalive():
            t.child.kill(signal.SIGKILL)
