"""Helpers for the action-layer tests (tests/actions)."""
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PY = "/usr/bin/python3"


def redrive_bin():
    b = os.environ.get("RD_BIN", os.path.join(ROOT, "build", "src", "cli", "redrive"))
    return os.path.abspath(b)


def probe_bin():
    b = os.environ.get("RD_ACT_PROBE")
    if b:
        return b
    return os.path.join(os.path.dirname(redrive_bin()), "..", "..", "tests", "actions", "rd-act-probe")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def have_stack():
    return bool(os.environ.get("RD_STACK_DIR")) and bool(os.environ.get("RD_CORE_TOKEN"))


def http_json(method, url, body=None, headers=None, timeout=10):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        raw = e.read()
        try:
            return e.code, json.loads(raw)
        except ValueError:
            return e.code, raw.decode(errors="replace")


class CoreServer:
    """A private reference core server (tools/coresrv/coresrv.py) for one system."""

    def __init__(self, system, tmpdir, *extra, quiet=True):
        self.port = free_port()
        self.url = "http://127.0.0.1:%d" % self.port
        self.log = os.path.join(str(tmpdir), "core-%s-%d.log" % (system, self.port))
        args = [PY, os.path.join(ROOT, "tools", "coresrv", "coresrv.py"), "--system", system,
                "--port", str(self.port), "--log", self.log] + (["--quiet"] if quiet else [])
        envf = os.path.join(os.environ.get("RD_STACK_DIR", ""), "env")
        if os.path.exists(envf):
            args += ["--env-file", envf]
        self.proc = subprocess.Popen(args + list(extra), stdout=subprocess.DEVNULL,
                                     stderr=open(self.log + ".err", "w"))
        deadline = time.time() + 15
        while time.time() < deadline:
            try:
                st, _ = http_json("GET", self.url + "/health", timeout=1)
                if st == 200:
                    return
            except OSError:
                pass
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        self.stop()
        raise RuntimeError("coresrv did not start: " + open(self.log + ".err").read())

    def access_log(self):
        with open(self.log + ".err") as f:
            return f.read()

    def actions(self):
        st, body = http_json("GET", self.url + "/_coresrv/log")
        return body["actions"]

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def core_actions(url):
    st, body = http_json("GET", url.rstrip("/") + "/_coresrv/log")
    assert st == 200, body
    return body["actions"]


def core_reset(url):
    http_json("POST", url.rstrip("/") + "/_coresrv/reset")


def reload_fixture(name):
    """The store back to the fixture dataset, in this process (no interpreter to start)."""
    if os.path.join(ROOT, "tests") not in sys.path:
        sys.path.insert(0, os.path.join(ROOT, "tests"))
    import stack_fixtures
    stack_fixtures.reload(name)


def write_config(tmpdir, name, **kv):
    """A config file with one [system "name"] section; returns its path."""
    lines = ['[system "%s"]' % name]
    for k, v in kv.items():
        if v is None:
            continue
        if isinstance(v, bool):
            v = "true" if v else "false"
        lines.append("%s = %s" % (k, v))
    path = os.path.join(str(tmpdir), "config-%s" % name)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def run_redrive(args, env_extra=None, stdin=None, timeout=60, tmpdir=None):
    env = dict(os.environ)
    env.setdefault("LANG", "C.UTF-8")
    env["TZ"] = "UTC"
    if tmpdir is not None:
        env["XDG_STATE_HOME"] = os.path.join(str(tmpdir), "state")
    if env_extra:
        env.update(env_extra)
    return subprocess.run([redrive_bin()] + list(args), capture_output=True, text=True,
                          env=env, stdin=stdin if stdin is not None else subprocess.DEVNULL,
                          timeout=timeout)


def journal_path(tmpdir):
    return os.path.join(str(tmpdir), "state", "redrive", "journal.jsonl")


def read_journal(tmpdir):
    p = journal_path(tmpdir)
    if not os.path.exists(p):
        return []
    with open(p) as f:
        return [json.loads(l) for l in f if l.strip()]


def admin_sql(query, args=(), dsn_var="RD_PG_ADMIN_DSN_ATTUNE2", search_path="attune, public"):
    """One statement as the store's owner (the stack's admin DSN); its rows, or None."""
    import psycopg2
    conn = psycopg2.connect(os.environ[dsn_var])
    try:
        with conn, conn.cursor() as cur:
            cur.execute("SET search_path = " + search_path)
            cur.execute(query, args)
            return cur.fetchall() if cur.description else None
    finally:
        conn.close()


class ProxyRecorder:
    """A stand-in for a proxy named in http_proxy / ALL_PROXY: it records every byte that
    reaches it and answers 502, so nothing sent through it could succeed unnoticed."""

    def __init__(self):
        import threading
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.url = "http://127.0.0.1:%d" % self.port
        self.got = []            # what each connection sent
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            c.settimeout(2)
            data = b""
            try:
                while b"\r\n\r\n" not in data:
                    chunk = c.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                c.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n"
                          b"Connection: close\r\n\r\n")
            except OSError:
                pass
            c.close()
            with self.lock:
                self.got.append(data)

    def env(self, **more):
        """Every variable libcurl reads a proxy from, pointing here."""
        e = {v: self.url for v in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY",
                                   "all_proxy", "ALL_PROXY")}
        e.update({"no_proxy": "", "NO_PROXY": ""})
        e.update(more)
        return e

    def received(self):
        with self.lock:
            return list(self.got)

    def close(self):
        self.sock.close()
