"""Helpers for the reference core server's tests: HTTP calls, private server instances,
store access. Needs the local stack's env (RD_STACK_DIR/env sourced by scripts/test.sh)."""
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORESRV = os.path.join(ROOT, "tools", "coresrv", "coresrv.py")
PY = "/usr/bin/python3"
sys.path.insert(0, os.path.join(ROOT, "tools", "coresrv"))
import cs_auth  # noqa: E402

CRED = {k: os.environ.get(k, v) for k, v in cs_auth.DEFAULT_CREDENTIALS.items()}
OPERATOR = {"Authorization": "Bearer " + CRED["RD_CORE_TOKEN"]}
VIEWER = {"Authorization": "Bearer " + CRED["RD_CORE_VIEWER_TOKEN"]}
APIKEY = {"X-API-Key": CRED["RD_CORE_API_KEY"]}


def env_file():
    f = os.environ.get("RD_CORESRV_ENV_FILE")
    if f:
        return f
    d = os.environ.get("RD_STACK_DIR")
    if not d or not os.path.exists(os.path.join(d, "env")):
        raise RuntimeError("the local stack is not running: source DIR/env (RD_STACK_DIR) first")
    return os.path.join(d, "env")


def stack_env():
    import importlib
    sys.path.insert(0, os.path.join(ROOT, "tools", "coresrv"))
    coresrv = importlib.import_module("coresrv")
    env = dict(os.environ)
    env.update(coresrv.parse_env_file(env_file()))
    return env


def call(url, method="POST", body=None, headers=None, timeout=10, raw=None):
    """Return (status, parsed JSON body or None, headers)."""
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    req = urllib.request.Request(url, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    for k, v in (headers or {}).items():
        req.add_header(k, v)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            text = r.read()
            return r.status, (json.loads(text) if text.strip() else None), dict(r.headers)
    except urllib.error.HTTPError as e:
        text = e.read()
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = text
        return e.code, parsed, dict(e.headers)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


class Server:
    """A private coresrv instance (special flags); stop() kills only this process."""

    def __init__(self, system, *args, bind="127.0.0.1", use_env=True, log=None):
        self.port = free_port()
        self.url = "http://%s:%d" % ("127.0.0.1" if bind in ("127.0.0.1", "0.0.0.0") else bind,
                                     self.port)
        cmd = [PY, CORESRV, "--system", system, "--port", str(self.port), "--bind", bind,
               "--quiet"]
        if use_env:
            cmd += ["--env-file", env_file()]
        cmd += ["--log", log or os.devnull] + list(args)
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.time() + 10
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("coresrv exited: %s" % self.proc.stderr.read().decode())
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError("coresrv did not listen within 10 s")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stderr:
            self.proc.stderr.close()


_shared = {}


def core_url(system):
    """The stack's server for SYSTEM (RD_CORE_URL_<SYSTEM>), else a private instance."""
    u = os.environ.get("RD_CORE_URL_" + system.upper())
    if u:
        return u.rstrip("/")
    if system not in _shared:
        import atexit
        _shared[system] = Server(system)
        atexit.register(_shared[system].stop)
    return _shared[system].url


def actions(url):
    st, body, _ = call(url + "/_coresrv/log", "GET")
    assert st == 200
    return body["actions"]


def applied_count(url, key=None, route=None):
    return sum(1 for a in actions(url) if a["applied"] and (key is None or a["key"] == key)
               and (route is None or a["route"] == route))


def pg_connect(system):
    import psycopg2
    env = stack_env()
    conn = psycopg2.connect(env["RD_PG_ADMIN_DSN_" + system.upper()])
    conn.autocommit = True
    if system == "attune2":
        with conn.cursor() as c:
            c.execute("SET search_path TO attune, public")
    if system == "tasker":
        with conn.cursor() as c:
            c.execute("SET search_path TO tasker, public")
    return conn


def redis_client():
    import redis
    return redis.Redis.from_url(stack_env()["RD_REDIS_URL"], decode_responses=True)


def reload_fixtures(name):
    """Reset the stack's deterministic fixture data (tests/stack/fixtures.py)."""
    import stack_fixtures
    stack_fixtures.reload(name, stack_env())
