#!/usr/bin/python3
"""redrive reference core API server: a test/demo fixture implementing the documented core
contract (SPEC §3/§4) for real against the local stack's stores. See README.md beside this file.
"""
import argparse
import hashlib
import json
import os
import re
import shlex
import sys
import threading
import time
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cs_auth  # noqa: E402
from cs_auth import AuthError, Authenticator  # noqa: E402
from cs_stores import OUTCOMES, ApiError, make_system  # noqa: E402

SYSTEMS = ("attune1", "attune2", "tasker", "alakai", "openagents")
MAX_BODY = 1 << 20


def parse_env_file(path):
    """Read a sourceable file of `export NAME=value` lines (shell quoting allowed)."""
    env = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            try:
                words = shlex.split(line, comments=True)
            except ValueError:
                continue
            if words and words[0] == "export":
                words = words[1:]
            for w in words:
                name, eq, value = w.partition("=")
                if eq and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                    env[name] = value
    return env


# ---- routes --------------------------------------------------------------------------------
# (method, path regex, handler name, kind, action label). kind: public | read | write.
def routes_for(system):
    r = [
        ("GET", r"/health", "health", "public", None),
        ("POST", r"/auth/login", "login", "public", None),
        ("POST", r"/auth/refresh", "refresh", "public", None),
        ("GET", r"/auth/me", "me", "read", None),
        ("POST", r"/executions/(?P<id>[^/]+)/retry", "retry", "write", "retry"),
        ("POST", r"/workers/(?P<id>[^/]+)/(?P<op>deactivate|activate|drain|undrain)",
         "worker", "write", "worker"),
    ]
    if system == "alakai":
        r.append(("POST", r"/dashboard/executions/(?P<id>[^/]+)/retry", "retry", "write", "retry"))
    if system.startswith("attune"):
        r += [
            ("POST", r"/api/v1/executions/(?P<id>[^/]+)/retry", "retry", "write", "retry"),
            ("POST", r"/api/v1/workers/(?P<id>[^/]+)/(?P<op>cordon|uncordon|deactivate|activate)",
             "worker", "write", "worker"),
            ("GET", r"/api/v1/executions/(?P<id>[^/]+)", "get_execution", "read", None),
            ("GET", r"/api/v1/workers/(?P<id>[^/]+)", "get_worker", "read", None),
        ]
    if system == "tasker":
        r += [
            ("PATCH", r"/v1/tasks/(?P<task>[^/]+)/workflow_steps/(?P<step>[^/]+)", "step",
             "write", "step"),
            ("GET", r"/v1/tasks/(?P<task>[^/]+)/workflow_steps", "steps", "read", None),
            ("GET", r"/v1/dlq", "dlq_list", "read", None),
            ("GET", r"/v1/dlq/stats", "dlq_stats", "read", None),
            ("PATCH", r"/v1/dlq/entry/(?P<id>[^/]+)", "dlq_update", "write", "dlq_update"),
        ]
    # Test hooks (loopback clients only, no credentials): see README.
    r += [
        ("GET", r"/_coresrv/log", "hook_log", "hook", None),
        ("POST", r"/_coresrv/reset", "hook_reset", "hook", None),
        ("POST", r"/_coresrv/latency", "hook_latency", "hook", None),
        ("GET", r"/_coresrv/inflight", "hook_inflight", "hook", None),
        ("POST", r"/_coresrv/outcome", "hook_outcome", "hook", None),
    ]
    return [(m, re.compile(p + r"/?"), h, k, a) for m, p, h, k, a in r]


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, addr, opts, env):
        self.opts = opts
        self.env = env
        creds = {k: env.get(k, os.environ.get(k, v)) for k, v in cs_auth.DEFAULT_CREDENTIALS.items()}
        self.auth = Authenticator(creds, opts.jwt_ttl, opts.refresh_ttl, opts.dev_user_enabled,
                                  opts.expires_in)
        self.system = make_system(opts.system, env, opts)
        self.routes = routes_for(opts.system)
        self.stall_re = re.compile(opts.stall_route) if opts.stall_route else None
        self.lock = threading.Lock()
        self.idem = {}          # (identity, key) -> entry dict
        self.actions = []       # in-memory action log
        self.log_path = opts.log
        self.stopping = threading.Event()
        self.latency = opts.latency_ms / 1000.0   # before answering a write route
        self.in_flight = 0                         # write requests being answered now
        self.max_in_flight = 0
        super().__init__(addr, Handler)

    def record(self, entry):
        line = json.dumps(entry, sort_keys=True)
        with self.lock:
            self.actions.append(entry)
            if len(self.actions) > 100000:
                del self.actions[:50000]
            if self.log_path:
                with open(self.log_path, "a", encoding="utf-8") as f:
                    f.write(line + "\n")


def now_iso():
    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + ".%03dZ" % int(t % 1 * 1000)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "redrive-coresrv/1"

    def log_message(self, fmt, *args):
        if not self.server.opts.quiet:
            sys.stderr.write("%s %s\n" % (now_iso(), fmt % args))

    # ---- plumbing ----------------------------------------------------------------------
    def read_body(self):
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            chunks, total = [], 0
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                total += size
                if total > MAX_BODY:
                    raise ApiError(413, "request body too large")
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(chunks)
        n = int(self.headers.get("Content-Length") or 0)
        if n > MAX_BODY:
            raise ApiError(413, "request body too large")
        return self.rfile.read(n) if n > 0 else b""

    def send_json(self, status, body, extra_headers=None):
        text = json.dumps(body)
        auth = self.server.auth
        if auth.expires_text:
            text = text.replace('"%s"' % auth.EXPIRES_MARK, auth.expires_text)
        data = text.encode() + b"\n"
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (extra_headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def do_GET(self):
        self.handle_any()

    def do_POST(self):
        self.handle_any()

    def do_PATCH(self):
        self.handle_any()

    def do_PUT(self):
        self.handle_any()

    def do_DELETE(self):
        self.handle_any()

    # ---- one request ---------------------------------------------------------------------
    def handle_any(self):
        srv = self.server
        split = urlsplit(self.path)
        path = split.path
        try:
            raw = self.read_body()
        except (ValueError, ApiError) as e:
            self.close_connection = True
            self.send_json(getattr(e, "status", 400), {"error": str(e) or "bad request body"})
            return
        stall = srv.stall_re is not None and srv.stall_re.search(path) is not None
        if stall and srv.opts.stall_mode == "before":
            self.stall()
            if srv.stall_forever:
                return
        status, body, hdrs = self.dispatch(path, split.query, raw)
        if stall and srv.opts.stall_mode == "after":
            self.stall()
            if srv.stall_forever:
                return
        self.send_json(status, body, hdrs)

    def stall(self):
        srv = self.server
        secs = srv.opts.stall_seconds
        if secs <= 0:
            srv.stopping.wait()          # never answer; the connection closes at shutdown
            self.close_connection = True
        else:
            srv.stopping.wait(secs)

    def dispatch(self, path, query, raw):
        srv = self.server
        method_match = False
        for method, rx, handler, kind, action in srv.routes:
            m = rx.fullmatch(path)
            if not m:
                continue
            method_match = True
            if method != self.command:
                continue
            params = {k: unquote(v) for k, v in m.groupdict().items()}
            return self.run_route(handler, kind, action, params, parse_qs(query), raw)
        if method_match:
            return 405, {"error": "method %s not allowed on %s" % (self.command, path)}, {}
        return 404, {"error": "no such route: %s %s" % (self.command, path)}, {}

    def unauthorized(self, msg):
        srv = self.server
        body = {"error": "dashboard_unauthorized"} if srv.opts.system == "alakai" \
            else {"error": "unauthorized: " + msg}
        return 401, body, {"WWW-Authenticate": 'Bearer realm="redrive-core", error="invalid_token"'}

    def run_route(self, handler, kind, action, params, query, raw):
        srv = self.server
        if kind == "hook":
            if not cs_auth.is_loopback(self.client_address[0]):
                return 403, {"error": "test hooks are for loopback clients only"}, {}
            return getattr(self, handler)(query)
        try:
            body = json.loads(raw) if raw.strip() else {}
        except ValueError:
            return 400, {"error": "invalid JSON body"}, {}
        if not isinstance(body, dict):
            return 400, {"error": "the body must be a JSON object"}, {}
        for v in params.values():
            if not v or len(v) > 256 or any(ord(ch) < 0x20 or 0x7f <= ord(ch) < 0xa0
                                             or ch == "\ufffd" for ch in v):
                return 400, {"error": "invalid identifier in path"}, {}
        ident = None
        if kind != "public":
            try:
                ident = srv.auth.authenticate(self.headers, self.client_address[0])
            except AuthError as e:
                if kind == "write":
                    self.log_action(None, action, params, None, 401, False, False)
                return self.unauthorized(str(e))
        if kind != "write":
            try:
                st, out = getattr(self, "r_" + handler)(params, query, body, ident)
                return st, out, {}
            except ApiError as e:
                return e.status, {"error": e.message}, {}
        if not ident.may_write:
            what = {"retry": "retry executions", "worker": "change workers",
                    "step": "change workflow steps", "dlq_update": "update DLQ entries"}[action]
            self.log_action(ident, action, params, None, 403, False, False)
            return 403, {"error": "your role '%s' may not %s" % (ident.role, what)}, {}
        key = self.headers.get("Idempotency-Key")
        fp = hashlib.sha256(b"%s %s\n" % (self.command.encode(), self.path.encode()) +
                            raw).hexdigest()
        slot = None
        if key:
            slot = (ident.name, key)
            with srv.lock:
                entry = srv.idem.get(slot)
                if entry is None:
                    srv.idem[slot] = {"fp": fp, "done": False}
            if entry is not None:
                if entry["fp"] != fp:
                    self.log_action(ident, action, params, key, 422, False, False)
                    return 422, {"error": "Idempotency-Key was already used for a different "
                                          "request"}, {}
                if not entry["done"]:
                    self.log_action(ident, action, params, key, 409, False, False)
                    return 409, {"error": "a request with this Idempotency-Key is still in "
                                          "progress"}, {}
                self.log_action(ident, action, params, key, entry["status"], False, True)
                return entry["status"], entry["body"], {"Idempotent-Replayed": "true"}
        applied = False
        with srv.lock:
            srv.in_flight += 1
            srv.max_in_flight = max(srv.max_in_flight, srv.in_flight)
        try:
            if srv.latency > 0:
                srv.stopping.wait(srv.latency)
            status, out = getattr(self, "r_" + handler)(params, query, body, ident)
            applied = bool(out.pop("_applied", 200 <= status < 300))
        except ApiError as e:
            status, out = e.status, {"error": e.message}
        except Exception as e:  # a bug or an unexpected store error: say so, keep serving
            traceback.print_exc()
            status, out = 500, {"error": "internal error: %s" % type(e).__name__}
        finally:
            with srv.lock:
                srv.in_flight -= 1
        if slot is not None:
            with srv.lock:
                if status in (401, 403, 429) or status >= 500:
                    srv.idem.pop(slot, None)     # not stored: a re-send may try again
                else:
                    srv.idem[slot] = {"fp": fp, "done": True, "status": status, "body": out}
        self.log_action(ident, action, params, key, status, applied, False)
        return status, out, {}

    def log_action(self, ident, action, params, key, status, applied, replayed):
        self.server.record({
            "time": now_iso(), "system": self.server.opts.system,
            "identity": ident.name if ident else None,
            "auth": ident.method if ident else None,
            "method": self.command, "route": urlsplit(self.path).path, "action": action,
            "target": params.get("id") or params.get("step") or None,
            "op": params.get("op"), "key": key, "status": status,
            "applied": applied, "replayed": replayed})

    # ---- handlers ------------------------------------------------------------------------
    def r_health(self, params, query, body, ident):
        return 200, {"status": "healthy", "system": self.server.opts.system}

    def r_login(self, params, query, body, ident):
        login, password = body.get("login"), body.get("password")
        role = self.server.auth.check_login(login, password)
        if role is None:
            return 401, {"error": "invalid login or password"}
        return 200, {"data": self.server.auth.issue(login, role)}

    def r_refresh(self, params, query, body, ident):
        try:
            data = self.server.auth.refresh(body.get("refresh_token"))
        except AuthError as e:
            return 401, {"error": "invalid refresh token: %s" % e}
        return 200, {"data": data}

    def r_me(self, params, query, body, ident):
        return 200, {"data": dict(ident.as_dict(), login=ident.name)}

    def r_retry(self, params, query, body, ident):
        return self.server.system.retry(params["id"], ident, body)

    def r_worker(self, params, query, body, ident):
        return self.server.system.worker_action(params["id"], params["op"], ident, body)

    def r_get_execution(self, params, query, body, ident):
        return 200, {"data": self.server.system.get_execution(params["id"])}

    def r_get_worker(self, params, query, body, ident):
        return 200, {"data": self.server.system.get_worker(params["id"])}

    def r_step(self, params, query, body, ident):
        return self.server.system.step_action(params["task"], params["step"], ident, body)

    def r_steps(self, params, query, body, ident):
        return 200, self.server.system.list_steps(params["task"])

    def r_dlq_list(self, params, query, body, ident):
        return 200, self.server.system.dlq_list(query)

    def r_dlq_stats(self, params, query, body, ident):
        return 200, self.server.system.dlq_stats()

    def r_dlq_update(self, params, query, body, ident):
        return self.server.system.dlq_update(params["id"], ident, body)

    def hook_log(self, query):
        with self.server.lock:
            return 200, {"actions": list(self.server.actions)}, {}

    def hook_reset(self, query):
        with self.server.lock:
            self.server.actions.clear()
            self.server.idem.clear()
            self.server.max_in_flight = self.server.in_flight
        return 200, {"reset": True}, {}

    def hook_latency(self, query):
        try:
            ms = float((query.get("ms") or ["0"])[0])
        except ValueError:
            return 400, {"error": "ms: a number of milliseconds"}, {}
        if not 0 <= ms <= 60000:
            return 400, {"error": "ms: from 0 to 60000"}, {}
        self.server.latency = ms / 1000.0
        return 200, {"latency_ms": ms}, {}

    def hook_outcome(self, query):
        """How the attempts a retry writes from now on end (the store's successor, written
        finished at once): running (the default: left as a retry leaves it), succeeded,
        failed_again (the same error as the attempt retried) or new_error."""
        want = (query.get("result") or ["running"])[0]
        if want not in OUTCOMES:
            return 400, {"error": "result: one of %s" % ", ".join(OUTCOMES)}, {}
        self.server.system.outcome = want
        return 200, {"outcome": want}, {}

    def hook_inflight(self, query):
        with self.server.lock:
            return 200, {"in_flight": self.server.in_flight, "max": self.server.max_in_flight}, {}


def mint_token(argv):
    ap = argparse.ArgumentParser(prog="coresrv.py mint-token",
                                 description="print an access JWT the core servers accept")
    ap.add_argument("--env-file")
    ap.add_argument("--sub", default="alice")
    ap.add_argument("--role", choices=("operator", "viewer"), default="operator")
    ap.add_argument("--ttl", type=int, default=900, help="seconds; may be negative (expired)")
    o = ap.parse_args(argv)
    env = dict(os.environ)
    if o.env_file:
        env.update(parse_env_file(o.env_file))
    secret = env.get("RD_CORE_JWT_SECRET", cs_auth.DEFAULT_CREDENTIALS["RD_CORE_JWT_SECRET"])
    now = int(time.time())
    print(cs_auth.jwt_encode({"sub": o.sub, "login": o.sub, "email": o.sub + "@redrive.test",
                              "role": o.role, "typ": "access", "iss": "redrive-coresrv",
                              "iat": now, "exp": now + o.ttl}, secret))
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["mint-token"]:
        return mint_token(argv[1:])
    ap = argparse.ArgumentParser(description="redrive reference core API server (test fixture)")
    ap.add_argument("--system", required=True, choices=SYSTEMS)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--bind", default="127.0.0.1")
    ap.add_argument("--env-file", help="sourceable env file of the local stack (DIR/env)")
    ap.add_argument("--log", help="action log (JSON lines); default DIR/core-<system>.log")
    ap.add_argument("--jwt-ttl", type=int, default=900, help="access token lifetime, seconds")
    ap.add_argument("--refresh-ttl", type=int, default=86400, help="refresh token lifetime")
    ap.add_argument("--expires-in", default=None,
                    help="tests: the token response's expires_in as JSON text, verbatim (1e999, -5)")
    ap.add_argument("--max-retries", type=int, default=None,
                    help="alakai MAX_RETRIES (default: env MAX_RETRIES or 1)")
    ap.add_argument("--prefix", default=None, help="alakai key prefix")
    ap.add_argument("--redis-url", default=None, help="override RD_REDIS_URL")
    ap.add_argument("--dsn", default=None, help="override RD_PG_ADMIN_DSN_<SYSTEM>")
    dev = ap.add_mutually_exclusive_group()
    dev.add_argument("--allow-dev-user", dest="dev_user", action="store_const", const="on")
    dev.add_argument("--no-dev-user", dest="dev_user", action="store_const", const="off")
    ap.add_argument("--stall-route", default=None, help="regex on the request path")
    ap.add_argument("--stall-seconds", type=float, default=0,
                    help="delay before answering a stalled route; 0 = never answer")
    ap.add_argument("--stall-mode", choices=("after", "before"), default="after",
                    help="apply the action then stall (after, default) or stall first")
    ap.add_argument("--latency-ms", type=float, default=0,
                    help="test hook: wait this long before answering a state-changing route")
    ap.add_argument("--quiet", action="store_true", help="no access log on stderr")
    opts = ap.parse_args(argv)

    env = dict(os.environ)
    if opts.env_file:
        env.update(parse_env_file(opts.env_file))
        if opts.log is None:
            opts.log = os.path.join(os.path.dirname(os.path.abspath(opts.env_file)),
                                    "core-%s.log" % opts.system)
    loop_bind = cs_auth.is_loopback(opts.bind) or opts.bind == "localhost"
    if opts.dev_user is None:
        opts.dev_user = "on" if loop_bind else "off"
    opts.dev_user_enabled = opts.dev_user == "on"
    srv = Server((opts.bind, opts.port), opts, env)
    srv.stall_forever = opts.stall_seconds <= 0
    sys.stderr.write("coresrv %s listening on %s:%d (dev-user %s)\n"
                     % (opts.system, opts.bind, opts.port, opts.dev_user))
    sys.stderr.flush()
    import signal

    def stop(signum, frame):
        srv.stopping.set()
        threading.Thread(target=srv.shutdown, daemon=True).start()
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        srv.serve_forever(poll_interval=0.2)
    finally:
        srv.stopping.set()
        srv.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
