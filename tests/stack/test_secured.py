"""The stack's production-shaped servers (issue 9) are configured as documented: Redis with
requirepass and a read-only ACL user, Redis over TLS (good, expired, self-signed and
wrong-host certificates, wrong CA, client certificates), PostgreSQL TLS + a SCRAM role,
RabbitMQ management over HTTPS, and the alternative schemas / partial permissions.

Redis replies are checked on the wire (a tiny RESP client below), so the exact error codes a
C client sees (NOAUTH, WRONGPASS, NOPERM) are what is asserted. Passwords are read from their
files and never appear in an assertion message."""
import glob
import json
import os
import socket
import ssl
import stat
import subprocess

import pytest

import stack_fixtures as fx
from stack_fixtures import stacklib

HOST = "127.0.0.1"


@pytest.fixture(scope="module")
def env():
    e = stacklib.load_env()
    fx.reload("attune_alt", e)
    fx.reload("attune_public", e)
    fx.reload("openagents_notags", e)
    fx.reload("openagents", e)
    fx.reload("alakai_secured", e)
    return e


def secret(env, name):
    return stacklib.read_secret(env[name])


# ---- a minimal RESP client (exact replies, errors included) --------------------------------
class Resp:
    def __init__(self, sock):
        self.sock = sock
        self.buf = b""

    def _line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("connection closed by the server")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _exact(self, n):
        while len(self.buf) < n + 2:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("connection closed by the server")
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def read(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            return ("ERR", rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            return None if n < 0 else self._exact(n)
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self.read() for _ in range(n)]
        raise ValueError("unexpected RESP line %r" % line[:40])

    def call(self, *args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        self.sock.sendall(out)
        return self.read()

    def close(self):
        self.sock.close()


def tls_context(cafile=None, verify=True, check_hostname=True, client=None):
    ctx = ssl.create_default_context(cafile=cafile) if verify else ssl._create_unverified_context()
    if verify:
        ctx.check_hostname = check_hostname
    if client:
        ctx.load_cert_chain(*client)
    return ctx


def resp_connect(port, ctx=None, server_hostname=HOST):
    s = socket.create_connection((HOST, port), timeout=5)
    if ctx is not None:
        try:
            s = ctx.wrap_socket(s, server_hostname=server_hostname)
        except BaseException:
            s.close()
            raise
    return Resp(s)


def is_err(reply, code):
    return isinstance(reply, tuple) and reply[0] == "ERR" and reply[1].split(" ", 1)[0] == code


def tls_port(env, name):
    return int(env["RD_REDIS_%s_PORT" % name.upper().replace("-", "_")])


# ---- the environment and the secrets ----------------------------------------------------------
def test_env_and_secret_files(env):
    base = int(env["RD_PORT_BASE"])
    assert env["RD_REDIS_AUTH_URL"] == "redis://127.0.0.1:%d/0" % (base + 20)
    for i, name in enumerate(("TLS", "TLS_EXPIRED", "TLS_SELFSIGNED", "TLS_WRONGHOST")):
        assert env["RD_REDIS_%s_PORT" % name] == str(base + 21 + i)
        assert env["RD_REDIS_%s_URL" % name] == "rediss://127.0.0.1:%d/0" % (base + 21 + i)
    assert env["RD_RABBIT_MGMT_HTTPS_URL"] == "https://127.0.0.1:%d" % (base + 25)
    assert env["RD_REDIS_ACL_USER"] == "rd_ro" and env["RD_PG_SCRAM_USER"] == "rd_scram"
    d = env["RD_STACK_DIR"]
    files = [env[k] for k in ("RD_REDIS_AUTH_PASSWORD_FILE", "RD_REDIS_ACL_PASSWORD_FILE",
                              "RD_PG_SCRAM_PASSWORD_FILE")]
    pws = []
    for f in files:
        st = os.stat(f)
        assert stat.S_IMODE(st.st_mode) == 0o600, f
        pw = stacklib.read_secret(f)
        assert len(pw) == 32 and pw.isalnum(), "%s: not a 32-character password" % f
        pws.append(pw)
    assert len(set(pws)) == 3
    for f in (env["RD_TLS_CLIENT_KEY"],) + tuple(glob.glob(os.path.join(d, "redis-*", "redis.conf"))):
        assert stat.S_IMODE(os.stat(f).st_mode) == 0o600, f
    # never written anywhere but the secret files and the servers' private configs
    leaks = []
    for root, _, names in os.walk(d):
        for n in names:
            p = os.path.join(root, n)
            if p in files or p.endswith("/redis.conf") or "/pg/data/" in p \
                    or "/mnesia/" in p or not os.path.isfile(p) or os.path.islink(p):
                continue
            try:
                with open(p, "rb") as f:
                    data = f.read(4 << 20)
            except OSError:
                continue
            leaks += [p for pw in pws if pw.encode() in data]
    assert leaks == [], "a password was written to: %s" % leaks


# ---- Redis: requirepass + ACL user -----------------------------------------------------------
def test_redis_auth_required(env):
    r = resp_connect(int(env["RD_REDIS_AUTH_PORT"]))
    try:
        assert is_err(r.call("PING"), "NOAUTH")
        assert is_err(r.call("HLEN", "alakai-executions:task-overlap"), "NOAUTH")
        assert is_err(r.call("AUTH", "not-the-password"), "WRONGPASS")
        assert is_err(r.call("AUTH", "rd_ro", "not-the-password"), "WRONGPASS")
        assert is_err(r.call("AUTH", "nosuchuser", secret(env, "RD_REDIS_ACL_PASSWORD_FILE")), "WRONGPASS")
        assert is_err(r.call("PING"), "NOAUTH")
        assert r.call("AUTH", secret(env, "RD_REDIS_AUTH_PASSWORD_FILE")) == "OK"   # requirepass
        assert r.call("PING") == "PONG"
        assert r.call("HLEN", "alakai-executions:task-overlap") == 2
        assert r.call("SET", "rd-test-admin-can-write", "1") == "OK"
        assert r.call("DEL", "rd-test-admin-can-write") == 1
    finally:
        r.close()


# Commands the Redis source (src/sources/redis_*.c) and `redrive check` send.
ACL_ALLOWED = [
    ("SELECT", "0"), ("PING",), ("SCAN", "0", "MATCH", "alakai-executions:*", "COUNT", "100"),
    ("TYPE", "alakai-executions:task-overlap"), ("HKEYS", "alakai-executions:task-overlap"),
    ("HLEN", "alakai-executions:task-overlap"), ("HMGET", "alakai-executions:task-overlap", "1", "2"),
    ("HGETALL", "alakai-executions:task-overlap"), ("HGET", "alakai-executions:task-overlap", "1"),
    ("HSTRLEN", "alakai-executions:task-oversized", "1"),
    ("MEMORY", "USAGE", "alakai-executions:task-overlap"),
    ("CONFIG", "GET", "notify-keyspace-events"), ("INFO", "server"), ("DBSIZE",),
    ("CLIENT", "SETNAME", "redrive"), ("CLIENT", "INFO"), ("ECHO", "x"), ("ACL", "WHOAMI"), ("TIME",),
]
# Sent on the wire: harmless even if the ACL were wrong (a probe key, a client id that does
# not exist), each must come back NOPERM.
ACL_DENIED = [
    ("SET", "rd-acl-probe", "1"), ("HSET", "rd-acl-probe", "1", "x"), ("HSETNX", "rd-acl-probe", "1", "x"),
    ("DEL", "rd-acl-probe"), ("UNLINK", "rd-acl-probe"), ("EXPIRE", "rd-acl-probe", "1"),
    ("CONFIG", "SET", "notify-keyspace-events", "KEA"), ("EVAL", "return redis.call('set','rd-acl-probe','1')", "0"),
    ("PUBLISH", "rd-acl-probe", "m"), ("ACL", "LIST"), ("CLIENT", "KILL", "ID", "999999"), ("CLIENT", "LIST"),
    ("KEYS", "rd-acl-probe*"),
]
# Only asked through ACL DRYRUN (destructive if they ran).
ACL_DENIED_DRYRUN = [
    ("FLUSHDB",), ("FLUSHALL",), ("SHUTDOWN",), ("DEBUG", "SLEEP", "0"), ("CLIENT", "PAUSE", "1"),
    ("MONITOR",), ("SCRIPT", "FLUSH"), ("SWAPDB", "0", "1"), ("HDEL", "alakai-executions:task-overlap", "1"),
    ("CONFIG", "SET", "requirepass", "x"), ("ACL", "SETUSER", "rd_ro", "+@all"), ("REPLICAOF", "NO", "ONE"),
]


@pytest.mark.parametrize("server", ["auth", "tls"])
def test_redis_acl_user_reads_only(env, server):
    ctx = None if server == "auth" else tls_context(env["RD_TLS_CA"])
    port = int(env["RD_REDIS_AUTH_PORT"]) if server == "auth" else tls_port(env, "tls")
    r = resp_connect(port, ctx)
    try:
        assert r.call("AUTH", env["RD_REDIS_ACL_USER"], secret(env, "RD_REDIS_ACL_PASSWORD_FILE")) == "OK"
        assert r.call("ACL", "WHOAMI") == b"rd_ro"
        got = {}
        for cmd in ACL_ALLOWED:
            reply = r.call(*cmd)
            got[cmd[0] + " " + cmd[1] if cmd[0] in ("MEMORY", "CONFIG", "CLIENT") else cmd[0]] = reply
            assert not (isinstance(reply, tuple) and reply[0] == "ERR"), (cmd, reply)
        assert got["HLEN"] == 2
        ov = got["HGETALL"]
        assert sorted(ov[0::2]) == [b"1", b"2"]
        assert {json.loads(v)["status"] for v in ov[1::2]} == {"running"}
        assert got["HSTRLEN"] > 1 << 20
        assert got["CONFIG GET"] == [b"notify-keyspace-events", b"AKE"]
        assert got["TYPE"] == "hash"
        assert b"redis_version:7." in got["INFO"]
        for cmd in ACL_DENIED:
            # KEYS is a read command: allowed by +@read (it is the console's job not to use it)
            reply = r.call(*cmd)
            if cmd[0] == "KEYS":
                assert isinstance(reply, list), reply
                continue
            assert is_err(reply, "NOPERM"), (cmd, reply)
        assert r.call("HLEN", "alakai-executions:task-overlap") == 2   # nothing was written
        assert r.call("EXISTS", "rd-acl-probe") == 0
        # keyspace notifications may be subscribed to (the console's live updates)
        assert r.call("PSUBSCRIBE", "__keyspace@0__:alakai-executions:*") == \
            [b"psubscribe", b"__keyspace@0__:alakai-executions:*", 1]
    finally:
        r.close()


def test_redis_acl_rules_as_configured(env):
    """ACL DRYRUN (as the admin) agrees with what the wire showed, for every command above."""
    r = resp_connect(int(env["RD_REDIS_AUTH_PORT"]))
    try:
        assert r.call("AUTH", secret(env, "RD_REDIS_AUTH_PASSWORD_FILE")) == "OK"
        for cmd in ACL_ALLOWED + [("PSUBSCRIBE", "__keyspace@0__:*")]:
            assert r.call("ACL", "DRYRUN", "rd_ro", *cmd) == "OK", cmd
        for cmd in ACL_DENIED + ACL_DENIED_DRYRUN:
            reply = r.call("ACL", "DRYRUN", "rd_ro", *cmd)
            assert (reply == "OK") == (cmd[0] == "KEYS"), (cmd, reply)
        users = r.call("ACL", "USERS")
        assert users == [b"default", b"rd_ro"]
    finally:
        r.close()


def test_redis_auth_with_redis_py(env):
    """The fixtures are there, through an ordinary client library with username+password."""
    r = stacklib.redis_secured(env, "auth", user="acl")
    keys = sorted(k.decode() for k in r.scan_iter(match="alakai-executions:*", count=100))
    hashes = [k.split(":", 1)[1] for k in keys if r.type(k) == b"hash"]
    assert hashes == sorted(fx.ALAKAI_TASKS)
    import redis
    with pytest.raises(redis.exceptions.NoPermissionError):
        r.set("rd-x", "1")
    r.close()


# ---- Redis over TLS --------------------------------------------------------------------------
def test_redis_tls_refuses_plain_tcp(env):
    for name in ("tls", "tls-expired", "tls-selfsigned", "tls-wronghost"):
        r = resp_connect(tls_port(env, name))
        try:
            # closed at once (a timeout would be an OSError, not a ConnectionError)
            with pytest.raises(ConnectionError):
                reply = r.call("PING")
                raise AssertionError("%s answered plain text: %r" % (name, reply))
        finally:
            r.close()


def test_redis_tls_verified_with_the_ca(env):
    for hostname in (HOST, "localhost"):
        r = resp_connect(tls_port(env, "tls"), tls_context(env["RD_TLS_CA"]), hostname)
        try:
            assert r.sock.version() in ("TLSv1.2", "TLSv1.3")
            cert = r.sock.getpeercert()
            assert ("IP Address", HOST) in cert["subjectAltName"]
            assert ("DNS", "localhost") in cert["subjectAltName"]
            assert r.call("PING") == "PONG"          # the default user needs no password here
            assert r.call("HLEN", "alakai-executions:task-failed-exhausted") == 2
        finally:
            r.close()


def test_redis_tls_client_certificate(env):
    good = (env["RD_TLS_CLIENT_CERT"], env["RD_TLS_CLIENT_KEY"])
    r = resp_connect(tls_port(env, "tls"), tls_context(env["RD_TLS_CA"], client=good))
    try:
        assert r.call("PING") == "PONG"
    finally:
        r.close()
    # a client certificate the server's CA did not sign is refused (tls-auth-clients optional
    # still verifies what is sent)
    tls_dir = os.path.dirname(env["RD_TLS_CA"])
    bad = (os.path.join(tls_dir, "selfsigned.crt"), os.path.join(tls_dir, "server.key"))
    with pytest.raises((ssl.SSLError, ConnectionError)):
        r = resp_connect(tls_port(env, "tls"), tls_context(env["RD_TLS_CA"], client=bad))
        try:
            r.call("PING")   # TLS 1.3: the refusal arrives after the handshake
        finally:
            r.close()


@pytest.mark.parametrize("server,cafile,hostname,code,text", [
    # the server sends its chain (server + test CA): the untrusted root is "in the chain"
    ("tls", "RD_TLS_WRONG_CA", HOST, 19, "self-signed certificate in certificate chain"),
    ("tls-expired", "RD_TLS_CA", HOST, 10, "certificate has expired"),
    ("tls-selfsigned", "RD_TLS_CA", HOST, 18, "self-signed certificate"),
    ("tls-wronghost", "RD_TLS_CA", "localhost", 62, "Hostname mismatch"),
    ("tls-wronghost", "RD_TLS_CA", HOST, 64, "IP address mismatch"),
])
def test_redis_tls_verification_failures(env, server, cafile, hostname, code, text):
    with pytest.raises(ssl.SSLCertVerificationError) as ei:
        resp_connect(tls_port(env, server), tls_context(env[cafile]), hostname).close()
    assert ei.value.verify_code == code, ei.value
    assert text in ei.value.verify_message, ei.value


@pytest.mark.parametrize("server", ["tls-expired", "tls-selfsigned", "tls-wronghost"])
def test_redis_tls_bad_certs_serve_redis_when_unverified(env, server):
    """Each bad-certificate server is a real Redis (for an `insecure` mode) with the fixtures."""
    r = resp_connect(tls_port(env, server), tls_context(verify=False))
    try:
        assert r.call("PING") == "PONG"
        assert r.call("HLEN", "alakai-executions:task-overlap") == 2
    finally:
        r.close()


def test_certificates_as_documented(env):
    d = os.path.dirname(env["RD_TLS_CA"])

    def x509(name, *opts):
        r = subprocess.run(["openssl", "x509", "-in", os.path.join(d, name), "-noout"] + list(opts),
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        return r.stdout

    def verify(ca, name):
        r = subprocess.run(["openssl", "verify", "-CAfile", os.path.join(d, ca), os.path.join(d, name)],
                           capture_output=True, text=True)
        return r.returncode, r.stdout + r.stderr

    assert verify("ca.crt", "server.crt")[0] == 0
    assert verify("ca.crt", "client.crt")[0] == 0
    assert verify("ca.crt", "wronghost.crt")[0] == 0
    rc, out = verify("ca.crt", "expired.crt")
    assert rc != 0 and "certificate has expired" in out
    r = subprocess.run(["openssl", "x509", "-in", os.path.join(d, "expired.crt"), "-noout", "-checkend", "0"],
                       capture_output=True, text=True)
    assert (r.returncode, r.stdout) == (1, "Certificate will expire\n")
    assert "notAfter" in x509("expired.crt", "-enddate")
    rc, out = verify("wrong-ca.crt", "server.crt")
    assert rc != 0 and "unable to get local issuer certificate" in out
    rc, out = verify("ca.crt", "selfsigned.crt")
    assert rc != 0 and "self-signed certificate" in out
    assert "IP Address:127.0.0.1, DNS:localhost" in x509("server.crt", "-ext", "subjectAltName")
    assert "TLS Web Client Authentication" in x509("client.crt", "-ext", "extendedKeyUsage")
    assert "127.0.0.1" not in x509("wronghost.crt", "-ext", "subjectAltName")


def test_redis_cli_tls(env):
    port = str(tls_port(env, "tls"))
    ok = subprocess.run(["redis-cli", "--tls", "--cacert", env["RD_TLS_CA"], "-h", HOST, "-p", port,
                         "HLEN", "alakai-executions:task-overlap"], capture_output=True, text=True, timeout=10)
    assert (ok.returncode, ok.stdout) == (0, "2\n"), ok.stderr
    bad = subprocess.run(["redis-cli", "--tls", "--cacert", env["RD_TLS_WRONG_CA"], "-h", HOST, "-p", port,
                          "PING"], capture_output=True, text=True, timeout=10)
    assert "PONG" not in bad.stdout
    assert "certificate verify failed" in bad.stdout + bad.stderr


# ---- PostgreSQL: TLS and a SCRAM role ----------------------------------------------------------
def scram_dsn(env, **kw):
    parts = dict(p.split("=", 1) for p in env["RD_PG_SCRAM_DSN_ATTUNE2"].split())
    parts.update({k: str(v) for k, v in kw.items()})
    return " ".join("%s=%s" % kv for kv in parts.items())


def pg_error(dsn, password=None):
    import psycopg2
    try:
        conn = psycopg2.connect(dsn, password=password, connect_timeout=5) if password is not None \
            else psycopg2.connect(dsn, connect_timeout=5)
    except psycopg2.OperationalError as e:
        return str(e)
    conn.close()
    return None


def test_pg_scram_over_verified_tls(env):
    import psycopg2
    pw = secret(env, "RD_PG_SCRAM_PASSWORD_FILE")
    for host in (HOST, "localhost"):
        conn = psycopg2.connect(scram_dsn(env, host=host), password=pw, connect_timeout=5)
        cur = conn.cursor()
        cur.execute("SELECT ssl, version FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
        ssl_on, version = cur.fetchone()
        assert ssl_on is True and version in ("TLSv1.2", "TLSv1.3")
        cur.execute("SELECT current_user, count(*) FROM execution GROUP BY 1")
        assert cur.fetchone() == ("rd_scram", 26)
        cur.execute("SHOW default_transaction_read_only")
        assert cur.fetchone() == ("on",)
        with pytest.raises(psycopg2.Error):
            cur.execute("UPDATE execution SET status = 'failed' WHERE id = 1")
        conn.close()
    admin = stacklib.pg_server_admin(env)
    cur = admin.cursor()
    cur.execute("SELECT rolpassword LIKE 'SCRAM-SHA-256$4096:%' FROM pg_authid WHERE rolname = 'rd_scram'")
    assert cur.fetchone() == (True,)
    cur.execute("SHOW password_encryption")
    assert cur.fetchone() == ("scram-sha-256",)
    cur.execute("SHOW ssl")
    assert cur.fetchone() == ("on",)
    admin.close()


def test_pg_scram_refusals(env):
    pw = secret(env, "RD_PG_SCRAM_PASSWORD_FILE")
    err = pg_error(scram_dsn(env, sslmode="disable"), pw)
    assert err and 'pg_hba.conf rejects connection' in err and '"rd_scram"' in err and "no encryption" in err, err
    sock = env["RD_PG_HOST"]
    err = pg_error(scram_dsn(env, host=sock, sslmode="disable"), pw)
    assert err and 'pg_hba.conf rejects connection' in err and '"rd_scram"' in err, err
    err = pg_error(scram_dsn(env), "wrong-password")
    assert err and 'password authentication failed for user "rd_scram"' in err, err
    err = pg_error(scram_dsn(env), "")
    assert err and ("password" in err), err
    err = pg_error(scram_dsn(env, sslrootcert=env["RD_TLS_WRONG_CA"]), pw)
    assert err and "certificate verify failed" in err, err
    # the errors never echo the password
    for e in (pg_error(scram_dsn(env), "wrong-password"), pg_error(scram_dsn(env, sslmode="disable"), pw)):
        assert pw not in e


def test_pg_scram_with_psql_and_pgpassword(env):
    """libpq's own PGPASSWORD keeps working (and psql agrees with psycopg2)."""
    e = dict(os.environ, PGPASSWORD=secret(env, "RD_PG_SCRAM_PASSWORD_FILE"), PGCONNECT_TIMEOUT="5")
    r = subprocess.run(["psql", "-XAtq", "-d", env["RD_PG_SCRAM_DSN_ATTUNE2"], "-c",
                        "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()"],
                       capture_output=True, text=True, env=e, timeout=20)
    assert (r.returncode, r.stdout) == (0, "t\n"), r.stderr


def test_pg_trust_access_unchanged(env):
    """The other tests' access: redrive_ro over the socket and over TCP with or without TLS."""
    import psycopg2
    for dsn in (env["RD_PG_DSN_ATTUNE1"], env["RD_PG_TCP_DSN_ATTUNE1"] + " sslmode=disable",
                env["RD_PG_TCP_DSN_ATTUNE1"] + " sslmode=require"):
        conn = psycopg2.connect(dsn, connect_timeout=5)
        cur = conn.cursor()
        cur.execute("SELECT current_user, count(*) FROM execution GROUP BY 1")
        assert cur.fetchone() == ("redrive_ro", 26), dsn
        conn.close()


# ---- RabbitMQ management over HTTPS --------------------------------------------------------
def curl(env, url, *opts):
    return subprocess.run(["curl", "-sS", "-m", "10", "-u", "%s:%s" % (env["RD_RABBIT_USER"], env["RD_RABBIT_PASSWORD"]),
                           "-o", "-", "-w", "\n%{http_code}"] + list(opts) + [url],
                          capture_output=True, text=True, timeout=20)


def test_rabbit_management_https(env):
    r = curl(env, env["RD_RABBIT_MGMT_HTTPS_URL"] + "/api/overview", "--cacert", env["RD_TLS_CA"])
    assert r.returncode == 0, r.stderr
    body, code = r.stdout.rsplit("\n", 1)
    assert code == "200"
    assert json.loads(body)["node"] == "rd%s@localhost" % env["RD_PORT_BASE"]
    r = curl(env, env["RD_RABBIT_MGMT_HTTPS_URL"].replace("127.0.0.1", "localhost") + "/api/whoami",
             "--cacert", env["RD_TLS_CA"])
    assert r.returncode == 0 and r.stdout.endswith("\n200"), r.stderr
    r = curl(env, env["RD_RABBIT_MGMT_HTTPS_URL"] + "/api/overview", "--cacert", env["RD_TLS_WRONG_CA"])
    assert r.returncode == 60, (r.returncode, r.stderr)      # peer certificate cannot be verified
    r = curl(env, env["RD_RABBIT_MGMT_HTTPS_URL"].replace("https:", "http:") + "/api/overview")
    assert r.returncode != 0 or not r.stdout.endswith("\n200")
    # the same broker on both listeners
    https = {q["name"]: q["arguments"] for q in stacklib.Rabbit(env, https=True).queues()}
    http = {q["name"]: q["arguments"] for q in stacklib.Rabbit(env).queues()}
    assert https == http and "worker.5.executions" in https


# ---- schemas and partial permissions ------------------------------------------------------
def q(env, db, sql, args=(), dsn_key=None):
    import psycopg2
    conn = psycopg2.connect(env[dsn_key or "RD_PG_DSN_" + db.upper()])
    try:
        cur = conn.cursor()
        cur.execute(sql, args)
        return cur.fetchall()
    finally:
        conn.close()


def columns(env, db, schema, table):
    return {r[0] for r in q(env, db, "SELECT column_name FROM information_schema.columns"
                                     " WHERE table_schema = %s AND table_name = %s", (schema, table))}


ERA2_EXECUTION = {"retry_count", "max_retries", "retry_reason", "original_execution", "worker", "started_at"}
ERA2_WORKER = {"cordoned", "cordon_reason", "cordoned_by", "cordoned_at"}


@pytest.mark.parametrize("db,schema", [("attune_alt", "attune_alt"), ("attune_public", "public")])
def test_attune_era2_elsewhere(env, db, schema):
    assert env.get("RD_PG_SCHEMA_ATTUNE_ALT") == fx.ATTUNE_ALT_SCHEMA == "attune_alt"
    assert ERA2_EXECUTION <= columns(env, db, schema, "execution")
    assert ERA2_WORKER <= columns(env, db, schema, "worker")
    assert q(env, db, "SELECT to_regclass('attune.execution')") == [(None,)]
    assert q(env, db, "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'attune%%' ORDER BY 1") == \
        ([("attune_alt",)] if schema == "attune_alt" else [])
    # no database-level search_path: the console must apply the schema itself
    assert q(env, db, "SHOW search_path") == [('"$user", public',)]
    rows = q(env, db, "SELECT id, COALESCE(original_execution, id), retry_count FROM %s.execution" % schema)
    chains = {}
    for eid, root, rc in rows:
        chains.setdefault(root, []).append((rc, eid))
    assert {k: [e for _, e in sorted(v)] for k, v in chains.items()} == fx.ATTUNE_CHAINS
    assert q(env, db, "SELECT id, cordon_reason FROM %s.worker WHERE cordoned" % schema) == [(7, "kernel upgrade")]
    assert q(env, db, "SELECT count(*) FROM %s.healthy_workers" % schema)[0][0] >= 1


def test_openagents_without_job_tags(env):
    db = "openagents_notags"
    assert q(env, db, "SELECT to_regclass('public.job_tags')") == [(None,)]
    assert q(env, db, "SELECT to_regclass('public.tags')::text, to_regclass('public.job_dependencies')::text") == \
        [("tags", "job_dependencies")]
    assert q(env, db, "SELECT count(*) FROM jobs") == [(12,)]
    assert q(env, db, "SELECT count(*) FROM workers") == [(5,)]
    assert q(env, db, "SELECT status FROM jobs WHERE job_id = 'job-0002'") == [("FAILED",)]
    # the original still has it
    assert q(env, "openagents", "SELECT count(*) FROM job_tags")[0][0] > 0


def test_role_without_select_on_workers(env):
    import psycopg2
    key = "RD_PG_DSN_OPENAGENTS_NOWORKERS"
    assert "user=rd_noworkers" in env[key]
    for table, n in (("jobs", 12), ("tags", 7), ("job_dependencies", 1)):
        assert q(env, "openagents", "SELECT count(*) FROM %s" % table, dsn_key=key) == [(n,)], table
    assert q(env, "openagents", "SELECT count(*) FROM job_tags", dsn_key=key)[0][0] > 0
    conn = psycopg2.connect(env[key])
    cur = conn.cursor()
    with pytest.raises(psycopg2.errors.InsufficientPrivilege) as ei:
        cur.execute("SELECT count(*) FROM workers")
    assert "permission denied for table workers" in str(ei.value)
    conn.rollback()
    with pytest.raises(psycopg2.Error):
        cur.execute("UPDATE jobs SET status = 'failed' WHERE job_id = 'job-0001'")
    conn.close()
    assert q(env, "openagents", "SELECT has_table_privilege('rd_noworkers', 'workers', 'SELECT'),"
                                " has_table_privilege('redrive_ro', 'workers', 'SELECT')") == [(False, True)]
