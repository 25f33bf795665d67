"""Small helpers shared by the fixture loader, the simulator and the stack tests:
reading DIR/env, connecting to PostgreSQL / Redis, and the RabbitMQ management API
(plain urllib, no client library)."""
import base64
import hashlib
import hmac
import json
import os
import re
import shlex
import socket
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request

DBS = ("attune1", "attune2", "tasker", "openagents")
# the secured Redis servers (stack.sh: base+20..+24); tls-* present these certificates
REDIS_SECURED = ("auth", "tls", "tls-expired", "tls-selfsigned", "tls-wronghost")


def parse_env_file(path):
    """Read a sourceable file of `export NAME=value` lines."""
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


def load_env(env_file=None):
    """The stack environment: env_file if given, else os.environ (falling back to
    $RD_STACK_DIR/env for names missing from os.environ)."""
    if env_file:
        return parse_env_file(env_file)
    env = dict(os.environ)
    d = env.get("RD_STACK_DIR")
    if d and "RD_PG_ADMIN_DSN_ATTUNE1" not in env and os.path.exists(os.path.join(d, "env")):
        file_env = parse_env_file(os.path.join(d, "env"))
        file_env.update({k: v for k, v in env.items() if k not in file_env})
        env = file_env
    if "RD_PG_ADMIN_DSN_ATTUNE1" not in env:
        raise RuntimeError("stack environment not found: source DIR/env or pass --env-file")
    return env


def pg_admin(env, db, autocommit=False):
    import psycopg2
    conn = psycopg2.connect(env["RD_PG_ADMIN_DSN_" + db.upper()])
    conn.autocommit = autocommit
    return conn


def pg_ro(env, db):
    import psycopg2
    return psycopg2.connect(env["RD_PG_DSN_" + db.upper()])


def pg_server_admin(env):
    """Superuser connection to the maintenance database `postgres`."""
    import psycopg2
    dsn = re.sub(r"dbname=\S+", "dbname=postgres", env["RD_PG_ADMIN_DSN_ATTUNE1"])
    conn = psycopg2.connect(dsn)
    conn.autocommit = True
    return conn


def redis_client(env, decode=False):
    import redis
    return redis.Redis(host="127.0.0.1", port=int(env["RD_REDIS_PORT"]), db=0,
                       decode_responses=decode, socket_timeout=10)


def read_secret(path):
    """The content of a password file (as written by stack.sh: no trailing newline)."""
    with open(path, encoding="utf-8") as f:
        return f.read().strip()


def redis_secured(env, name, user=None, password=None, verify=True, cafile=None,
                  client_cert=False, decode=False):
    """A client of a secured Redis: name is one of REDIS_SECURED. Default: the admin
    (default user; the auth server's requirepass password). user="acl": the read-only ACL
    user. TLS servers are verified with the test CA unless verify=False."""
    import redis
    kw = dict(host="127.0.0.1", db=0, decode_responses=decode, socket_timeout=10)
    if user == "acl":
        user = env["RD_REDIS_ACL_USER"]
        password = read_secret(env["RD_REDIS_ACL_PASSWORD_FILE"]) if password is None else password
    if name == "auth":
        kw["port"] = int(env["RD_REDIS_AUTH_PORT"])
        if user is None and password is None:
            password = read_secret(env["RD_REDIS_AUTH_PASSWORD_FILE"])
    else:
        kw["port"] = int(env["RD_REDIS_%s_PORT" % name.upper().replace("-", "_")])
        kw.update(ssl=True, ssl_cert_reqs="required" if verify else "none",
                  ssl_ca_certs=(cafile or env["RD_TLS_CA"]) if verify else None)
        if client_cert:
            kw.update(ssl_certfile=env["RD_TLS_CLIENT_CERT"], ssl_keyfile=env["RD_TLS_CLIENT_KEY"])
    if user is not None:
        kw["username"] = user
    if password is not None:
        kw["password"] = password
    return redis.Redis(**kw)


def scram_verifier(password, iterations=4096, salt=None):
    """PostgreSQL's SCRAM-SHA-256 verifier for password (computed here so the plain password
    never reaches the server or its log)."""
    salt = salt or os.urandom(16)
    salted = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, iterations)
    client_key = hmac.new(salted, b"Client Key", hashlib.sha256).digest()
    stored_key = hashlib.sha256(client_key).digest()
    server_key = hmac.new(salted, b"Server Key", hashlib.sha256).digest()
    b64 = lambda b: base64.b64encode(b).decode()  # noqa: E731
    return "SCRAM-SHA-256$%d:%s$%s:%s" % (iterations, b64(salt), b64(stored_key), b64(server_key))


class Rabbit:
    """RabbitMQ management API client (vhost "/" by default). https=True: the HTTPS listener,
    verified with the test CA (or cafile)."""

    def __init__(self, env, vhost="/", https=False, cafile=None):
        self.base = env["RD_RABBIT_MGMT_HTTPS_URL" if https else "RD_RABBIT_MGMT_URL"].rstrip("/")
        self.ctx = ssl.create_default_context(cafile=cafile or env["RD_TLS_CA"]) if https else None
        tok = base64.b64encode(("%s:%s" % (env["RD_RABBIT_USER"], env["RD_RABBIT_PASSWORD"]))
                               .encode()).decode()
        self.auth = "Basic " + tok
        self.vhost = vhost
        self.v = urllib.parse.quote(vhost, safe="")

    def call(self, method, path, body=None, ok_missing=False, timeout=15):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method)
        req.add_header("Authorization", self.auth)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=timeout, context=self.ctx) as r:
                raw = r.read()
        except urllib.error.HTTPError as e:
            if ok_missing and e.code == 404:
                return None
            raise RuntimeError("%s %s -> %s %s" % (method, path, e.code, e.read()[:300])) from None
        return json.loads(raw) if raw else None

    @staticmethod
    def q(name):
        return urllib.parse.quote(name, safe="")

    def overview(self):
        return self.call("GET", "/api/overview")

    def queues(self):
        return self.call("GET", "/api/queues/%s" % self.v)

    def queue(self, name):
        return self.call("GET", "/api/queues/%s/%s" % (self.v, self.q(name)), ok_missing=True)

    def exchanges(self):
        return self.call("GET", "/api/exchanges/%s" % self.v)

    def declare_exchange(self, name, kind="direct", durable=True, arguments=None):
        self.call("PUT", "/api/exchanges/%s/%s" % (self.v, self.q(name)),
                  {"type": kind, "durable": durable, "auto_delete": False,
                   "arguments": arguments or {}})

    def delete_exchange(self, name):
        self.call("DELETE", "/api/exchanges/%s/%s" % (self.v, self.q(name)), ok_missing=True)

    def declare_queue(self, name, arguments=None, durable=True):
        self.call("PUT", "/api/queues/%s/%s" % (self.v, self.q(name)),
                  {"durable": durable, "auto_delete": False, "arguments": arguments or {}})

    def delete_queue(self, name):
        self.call("DELETE", "/api/queues/%s/%s" % (self.v, self.q(name)), ok_missing=True)

    def purge_queue(self, name):
        self.call("DELETE", "/api/queues/%s/%s/contents" % (self.v, self.q(name)), ok_missing=True)

    def bind(self, exchange, queue, routing_key):
        self.call("POST", "/api/bindings/%s/e/%s/q/%s" % (self.v, self.q(exchange), self.q(queue)),
                  {"routing_key": routing_key, "arguments": {}})

    def publish(self, exchange, routing_key, payload, properties=None):
        """payload: str (sent as string) or bytes (sent base64, may be invalid UTF-8)."""
        if isinstance(payload, bytes):
            body = {"payload": base64.b64encode(payload).decode(), "payload_encoding": "base64"}
        else:
            body = {"payload": payload, "payload_encoding": "string"}
        body.update({"properties": properties or {}, "routing_key": routing_key})
        r = self.call("POST", "/api/exchanges/%s/%s/publish" % (self.v, self.q(exchange or "amq.default")),
                      body)
        if not r or not r.get("routed"):
            raise RuntimeError("message to %s/%s was not routed" % (exchange, routing_key))

    def get(self, queue, count=10, ackmode="ack_requeue_true", truncate=50000):
        return self.call("POST", "/api/queues/%s/%s/get" % (self.v, self.q(queue)),
                         {"count": count, "ackmode": ackmode, "encoding": "auto",
                          "truncate": truncate})

    def wait_queue(self, name, pred, timeout=20.0, what=""):
        """Poll the queue's stats until pred(queue_json) is true."""
        deadline = time.monotonic() + timeout
        q = None
        while time.monotonic() < deadline:
            q = self.queue(name)
            if q is not None and pred(q):
                return q
            time.sleep(0.25)
        raise RuntimeError("queue %s: timed out waiting for %s (last: messages=%s)"
                           % (name, what, q and q.get("messages")))


# ---- private stacks (the lifecycle tests, the demo's exit test) ----------------------------
STACK_PORTS = 26   # base+0 .. base+25 (docs/contracts.md)


def port_open(port):
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


PORT_SPAN = 40   # stack.sh refuses a base whose +0 .. +40 meet the ephemeral range


def ephemeral_range():
    """The kernel's ephemeral port range (lo, hi), where outgoing connections get their
    local ports; None when it cannot be read."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            lo, hi = (int(x) for x in f.read().split())
        return lo, hi
    except (OSError, ValueError):
        return None


def in_ephemeral(base):
    r = ephemeral_range()
    return r is not None and base + PORT_SPAN >= r[0] and base <= r[1]


def free_base(offset):
    """A port base with nothing listening on its STACK_PORTS ports and none of its ports in
    the ephemeral range (stack.sh refuses those): the suite's base (RD_PORT_BASE) + offset,
    or the next hundreds (below the suite's base when those reach the range); None when
    none is free."""
    suite = int(os.environ.get("RD_PORT_BASE", "25400"))
    ups = [suite + offset + 100 * k for k in range(20)]
    downs = [suite - offset - 100 * k for k in range(20)]
    for base in ups + downs:
        if base < 1024 or in_ephemeral(base):
            continue
        if not any(port_open(base + i) for i in range(STACK_PORTS)):
            return base
    return None


def dir_processes(d):
    """(pid, command) of the processes whose command line or working directory is under d
    (stack.sh itself left out)."""
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit() or int(p) == os.getpid():
            continue
        try:
            with open("/proc/%s/cmdline" % p, "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
            cwd = os.readlink("/proc/%s/cwd" % p)
        except OSError:
            continue
        if "stack.sh" in cmd:
            continue
        if d + "/" in cmd or cwd == d or cwd.startswith(d + "/"):
            out.append((int(p), cmd[:120]))
    return out
