"""The Redis (Alakai) store as deployed (issue 9): AUTH with requirepass and with an ACL
user, credentials as secret references (store_password, or the whole store as
env:REDIS_URL), TLS through the bridge (rediss://, store_cacert, client certificates,
store_insecure), and each failure with its own clear error, on time, without the password.

Servers: the stack's secured Redis servers when its env has them (RD_REDIS_AUTH_PORT …,
tests/stack/README.md "Secured servers"), else private redis-server processes started
here with an openssl-made CA (the same layout). The data is our own, under a prefix of
its own, written with the admin user and removed at the end."""
import json
import os
import select
import shutil
import socket
import subprocess
import tempfile
import time

import pytest

from snaphelp import ROOT, rd_bin, snapshot, write_config

PREFIX = "rdsec-test"
ACL_RULES = ("~* &* -@all +@read +@connection -@admin +info +config|get "
             "+acl|whoami +time +psubscribe +punsubscribe +subscribe +unsubscribe")
TASKS = {
    "sec-failed": {"status": "failed", "attempt": 1, "errorCode": "E_SEC",
                   "errorMessage": "denied by the test", "dispatchedAt": "2026-01-01T00:00:00Z",
                   "resolvedAt": "2026-01-01T00:00:01Z"},
    "sec-ok": {"status": "succeeded", "attempt": 1, "dispatchedAt": "2026-01-01T00:01:00Z",
               "resolvedAt": "2026-01-01T00:01:01Z"},
    "sec-running": {"status": "running", "attempt": 1, "dispatchedAt": "2099-01-01T00:02:00Z"},
}
SERVED = ("auth", "tls", "tls_selfsigned")     # the servers holding our data
DEADLINE = 3          # the source's connect deadline (RS_CONNECT_TIMEOUT)
MARGIN = 4            # process start, profile load, one poll


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def read_secret(path):
    with open(path) as f:
        return f.read().strip()


def write_secret(d, name, value):
    p = os.path.join(d, name)
    fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(value)
    return p


# ---- the servers ---------------------------------------------------------------------

def openssl(d, *args):
    subprocess.run(["openssl", *args], cwd=d, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE)


def make_pki(d):
    """ca.crt signs server.crt (127.0.0.1, localhost), client.crt and expired.crt;
    selfsigned.crt is its own issuer; wrong-ca.crt signed nothing."""
    san = "subjectAltName=IP:127.0.0.1,DNS:localhost"
    key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    openssl(d, "req", "-x509", *key, "-keyout", "ca.key", "-out", "ca.crt", "-days", "30",
            "-subj", "/CN=rdsec-test-ca")
    openssl(d, "req", "-x509", *key, "-keyout", "wrong-ca.key", "-out", "wrong-ca.crt",
            "-days", "30", "-subj", "/CN=rdsec-wrong-ca")
    openssl(d, "req", *key, "-keyout", "server.key", "-out", "server.csr", "-subj",
            "/CN=localhost", "-addext", san)
    with open(os.path.join(d, "san.ext"), "w") as f:
        f.write(san + "\n")
    openssl(d, "x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
            "-CAcreateserial", "-out", "server.crt", "-days", "30", "-extfile", "san.ext")
    openssl(d, "req", *key, "-keyout", "client.key", "-out", "client.csr", "-subj",
            "/CN=rdsec-client")
    openssl(d, "x509", "-req", "-in", "client.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
            "-CAcreateserial", "-out", "client.crt", "-days", "30")
    # expired: valid for one day in 2020, right CA, right names (openssl ca sets the dates)
    os.makedirs(os.path.join(d, "db"))
    open(os.path.join(d, "db", "index.txt"), "w").close()
    with open(os.path.join(d, "db", "serial"), "w") as f:
        f.write("1000\n")
    with open(os.path.join(d, "ca.cnf"), "w") as f:
        f.write("[ca]\ndefault_ca = rd\n[rd]\ndir = .\ndatabase = db/index.txt\n"
                "serial = db/serial\nnew_certs_dir = db\ncertificate = ca.crt\n"
                "private_key = ca.key\ndefault_md = sha256\npolicy = any\n"
                "copy_extensions = copy\nunique_subject = no\n[any]\ncommonName = supplied\n")
    openssl(d, "ca", "-batch", "-config", "ca.cnf", "-in", "server.csr", "-out",
            "expired.crt", "-startdate", "20200101000000Z", "-enddate", "20200102000000Z",
            "-notext")
    openssl(d, "req", "-x509", "-key", "server.key", "-out", "selfsigned.crt", "-days", "30",
            "-subj", "/CN=localhost", "-addext", san)
    for name in os.listdir(d):
        if name.endswith(".key"):
            os.chmod(os.path.join(d, name), 0o600)


class Private:
    """redis-server processes of our own, laid out as the stack's secured servers."""

    def __init__(self, d):
        self.d, self.procs = d, []

    def start(self, name, conf):
        port = free_port()
        wd = os.path.join(self.d, "redis-" + name)
        os.makedirs(wd)
        conf = conf.replace("@PORT@", str(port))
        conf += ("bind 127.0.0.1\nsave \"\"\nappendonly no\nnotify-keyspace-events KEA\n"
                 "dir %s\nlogfile %s/redis.log\n" % (wd, wd))
        path = os.path.join(wd, "redis.conf")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)   # holds passwords
        with os.fdopen(fd, "w") as f:
            f.write(conf)
        p = subprocess.Popen([shutil.which("redis-server") or "/usr/bin/redis-server", path],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        self.procs.append(p)
        end = time.monotonic() + 10
        while time.monotonic() < end:
            assert p.poll() is None, open(os.path.join(wd, "redis.log")).read()[-2000:]
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                return port
            except OSError:
                time.sleep(0.05)
        pytest.fail("redis-server %s did not listen" % name)

    def stop(self):
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


class Secured:
    """Ports, files and admin clients of the secured servers."""

    def __init__(self):
        self.private = None
        self.tmp = tempfile.mkdtemp(prefix="rdsec-")
        os.chmod(self.tmp, 0o700)
        e = os.environ
        if e.get("RD_REDIS_AUTH_PORT") and e.get("RD_REDIS_TLS_PORT"):
            self.auth_port = int(e["RD_REDIS_AUTH_PORT"])
            self.auth_pw_file = e["RD_REDIS_AUTH_PASSWORD_FILE"]
            self.acl_user = e["RD_REDIS_ACL_USER"]
            self.acl_pw_file = e["RD_REDIS_ACL_PASSWORD_FILE"]
            self.tls = {n: int(e["RD_REDIS_%s_PORT" % n.upper()])
                        for n in ("tls", "tls_expired", "tls_selfsigned")}
            self.ca, self.wrong_ca = e["RD_TLS_CA"], e["RD_TLS_WRONG_CA"]
            self.client_cert, self.client_key = e["RD_TLS_CLIENT_CERT"], e["RD_TLS_CLIENT_KEY"]
        else:
            self._start_private()
        self.auth_pw = read_secret(self.auth_pw_file)
        self.acl_pw = read_secret(self.acl_pw_file)

    def _start_private(self):
        d = os.path.join(self.tmp, "srv")
        os.makedirs(d)
        make_pki(d)
        self.private = Private(d)
        self.auth_pw_file = write_secret(self.tmp, "auth_pw", os.urandom(16).hex())
        self.acl_pw_file = write_secret(self.tmp, "acl_pw", os.urandom(16).hex())
        self.acl_user = "rd_ro"
        user = "user rd_ro on >%s %s\n" % (read_secret(self.acl_pw_file), ACL_RULES)
        self.auth_port = self.private.start(
            "auth", "port @PORT@\nrequirepass %s\n" % read_secret(self.auth_pw_file) + user)
        tls = ("port 0\ntls-port @PORT@\ntls-cert-file %s/%%s\ntls-key-file %s/server.key\n"
               "tls-ca-cert-file %s/ca.crt\ntls-auth-clients optional\n" % (d, d, d)) + user
        self.tls = {n: self.private.start(n, tls % c) for n, c in
                    (("tls", "server.crt"), ("tls_expired", "expired.crt"),
                     ("tls_selfsigned", "selfsigned.crt"))}
        self.ca, self.wrong_ca = d + "/ca.crt", d + "/wrong-ca.crt"
        self.client_cert, self.client_key = d + "/client.crt", d + "/client.key"

    def admin(self, name):
        import redis
        if name == "auth":
            return redis.Redis(host="127.0.0.1", port=self.auth_port, password=self.auth_pw,
                               socket_timeout=10)
        verify = name == "tls"          # the others serve certificates that do not verify
        return redis.Redis(host="127.0.0.1", port=self.tls[name], ssl=True,
                           ssl_ca_certs=self.ca if verify else None,
                           ssl_cert_reqs="required" if verify else "none", socket_timeout=10)

    def secrets(self):
        return [self.auth_pw, self.acl_pw]

    def close(self):
        if self.private:
            self.private.stop()
        shutil.rmtree(self.tmp, ignore_errors=True)


def load(c):
    for k in c.scan_iter(match=PREFIX + ":*"):
        c.delete(k)
    for task, rec in TASKS.items():
        c.hset("%s:%s" % (PREFIX, task), "1", json.dumps(rec))


@pytest.fixture(scope="module")
def sec():
    s = Secured()
    try:
        for name in SERVED:
            load(s.admin(name))
        yield s
    finally:
        for name in SERVED:
            try:
                c = s.admin(name)
                for k in c.scan_iter(match=PREFIX + ":*"):
                    c.delete(k)
            except Exception:      # a server already gone: nothing to clean
                pass
        s.close()


# ---- helpers --------------------------------------------------------------------------

def cfg(tmp_path, store, name="a", **keys):
    c = {"profile": "alakai", "store": store, "core": "http://127.0.0.1:9", "auth": "none",
         "prefix": PREFIX}
    c.update(keys)
    return write_config(tmp_path, {name: c})


def run(sec, path, *args, env=None, secrets=(), timeout=30):
    """snapshot --json (or args), with env added; its whole output (stdout and stderr)
    must be free of every password we know and of the extra secrets."""
    e = dict(os.environ)
    os.environ.update(env or {})
    try:
        s = snapshot(path, "a", *(args or ("--json",)), timeout=timeout)
    finally:
        os.environ.clear()
        os.environ.update(e)
    for pw in sec.secrets() + list(secrets):
        assert pw not in s.out and pw not in s.err, "a password was printed"
    return s


def assert_reads(s):
    assert s.rc == 0, (s.rc, s.err, s.out[:2000])
    src = s.source("redis")
    assert src["state"] == "ok" and src["error"] is None, src
    got = {e["id"]: e["status"] for e in s.json["executions"]}
    assert got == {t: r["status"] for t, r in TASKS.items()}, got
    return src


def assert_fails(s, *words, elapsed=DEADLINE + MARGIN):
    assert s.rc == 3, (s.rc, s.err, s.out[:2000])
    src = s.source("redis")
    assert src["state"] == "down", src
    for w in words:
        assert w in src["error"], (w, src["error"])
    assert s.elapsed < elapsed, s.elapsed
    return src["error"]


def url(port, tls=False, host="127.0.0.1", cred=""):
    return "%s://%s%s:%d/0" % ("rediss" if tls else "redis", cred, host, port)


# ---- reading through AUTH -------------------------------------------------------------

def test_acl_user_reads(sec, tmp_path):
    p = cfg(tmp_path, url(sec.auth_port), store_user=sec.acl_user,
            store_password="file:" + sec.acl_pw_file)
    assert_reads(run(sec, p))


def test_requirepass_reads(sec, tmp_path):
    p = cfg(tmp_path, url(sec.auth_port), store_password="file:" + sec.auth_pw_file)
    assert_reads(run(sec, p))


def test_password_from_env_and_cmd(sec, tmp_path):
    p = cfg(tmp_path, url(sec.auth_port), store_user=sec.acl_user,
            store_password="env:RDSEC_PW")
    assert_reads(run(sec, p, env={"RDSEC_PW": sec.acl_pw}))
    p = cfg(tmp_path, url(sec.auth_port), store_user=sec.acl_user,
            store_password="cmd:cat " + sec.acl_pw_file)
    assert_reads(run(sec, p))


def test_store_url_from_env_with_credentials(sec, tmp_path):
    p = cfg(tmp_path, "env:RDSEC_REDIS_URL")
    u = url(sec.auth_port, cred="%s:%s@" % (sec.acl_user, sec.acl_pw))
    assert_reads(run(sec, p, env={"RDSEC_REDIS_URL": u}))
    u = url(sec.auth_port, cred=":%s@" % sec.auth_pw)        # requirepass form
    assert_reads(run(sec, p, env={"RDSEC_REDIS_URL": u}))
    # TLS + ACL user from the reference, CA from the config
    p = cfg(tmp_path, "env:RDSEC_REDIS_URL", store_cacert=sec.ca)
    u = url(sec.tls["tls"], tls=True, cred="%s:%s@" % (sec.acl_user, sec.acl_pw))
    assert_reads(run(sec, p, env={"RDSEC_REDIS_URL": u}))


def test_store_reference_unset_is_its_own_error(sec, tmp_path):
    # a reference that cannot resolve is a configuration error, named by file:line
    p = cfg(tmp_path, "env:RDSEC_NOT_SET_ANYWHERE")
    s = run(sec, p)
    assert s.rc == 2, (s.rc, s.err)
    assert '/config:3: system "a": store: environment variable RDSEC_NOT_SET_ANYWHERE is not set' \
        in s.err, s.err


def test_literal_credentials_in_config_refused_with_file_line(sec, tmp_path):
    p = cfg(tmp_path, url(sec.auth_port, cred="rd_ro:notapassword@"))
    s = run(sec, p)
    assert s.rc == 2, (s.rc, s.err)
    # line 3: [system], profile, store
    assert "%s:3: credentials in the store URL are not supported" % p in s.err, s.err
    assert "notapassword" not in s.err and "notapassword" not in s.out


def test_tls_keys_need_rediss(sec, tmp_path):
    p = cfg(tmp_path, url(sec.auth_port), store_cacert=sec.ca, store_insecure="yes")
    s = run(sec, p)
    assert s.rc == 2
    assert "%s:7: 'store_cacert' needs a rediss:// store" % p in s.err, s.err
    assert "%s:8: 'store_insecure' needs a rediss:// store" % p in s.err, s.err


# ---- authentication and permission errors --------------------------------------------

def test_wrong_password_names_the_user_not_the_password(sec, tmp_path):
    wrong = write_secret(str(tmp_path), "wrong", "wrong-" + os.urandom(8).hex())
    p = cfg(tmp_path, url(sec.auth_port), store_user=sec.acl_user, store_password="file:" + wrong)
    s = run(sec, p, secrets=[read_secret(wrong)])
    err = assert_fails(s, "authentication failed for user '%s' (WRONGPASS)" % sec.acl_user)
    # and in the text output too
    t = run(sec, p, "--view", "overview", secrets=[read_secret(wrong)])
    assert t.rc == 3 and "authentication failed for user" in t.out, t.out
    # requirepass form: the default user
    p = cfg(tmp_path, url(sec.auth_port), store_password="file:" + wrong)
    assert_fails(run(sec, p), "authentication failed for user 'default' (WRONGPASS)")
    assert "WRONGPASS" in err


def test_missing_password_says_what_to_set(sec, tmp_path):
    p = cfg(tmp_path, url(sec.auth_port))
    assert_fails(run(sec, p), "requires authentication (NOAUTH): set store_password")


def test_missing_permission_names_user_and_command(sec, tmp_path):
    admin = sec.admin("auth")
    pw = os.urandom(12).hex()
    admin.execute_command("ACL", "SETUSER", "rdsec_noread", "reset", "on", ">" + pw, "~*",
                          "+@connection", "+scan", "+config|get", "+hlen", "+memory|usage",
                          "+hstrlen")
    try:
        pwf = write_secret(str(tmp_path), "np", pw)
        p = cfg(tmp_path, url(sec.auth_port), store_user="rdsec_noread",
                store_password="file:" + pwf)
        s = run(sec, p, secrets=[pw])
        err = assert_fails(s, "user 'rdsec_noread' lacks permission for", "(NOPERM)")
        assert "HGETALL" in err or "HMGET" in err, err
    finally:
        admin.execute_command("ACL", "DELUSER", "rdsec_noread")


# ---- TLS -----------------------------------------------------------------------------

def test_tls_with_the_right_ca(sec, tmp_path):
    p = cfg(tmp_path, url(sec.tls["tls"], tls=True), store_cacert=sec.ca)
    src = assert_reads(run(sec, p))
    assert "certificate verified" in src["tls"] and src["tls_verified"] is True, src
    # by name: verified against DNS:localhost
    p = cfg(tmp_path, url(sec.tls["tls"], tls=True, host="localhost"), store_cacert=sec.ca)
    assert "localhost" in assert_reads(run(sec, p))["tls"]


def test_tls_acl_user_with_client_certificate(sec, tmp_path):
    p = cfg(tmp_path, url(sec.tls["tls"], tls=True), store_cacert=sec.ca,
            store_cert=sec.client_cert, store_key=sec.client_key, store_user=sec.acl_user,
            store_password="file:" + sec.acl_pw_file)
    assert_reads(run(sec, p))


def test_tls_errors_are_each_their_own(sec, tmp_path):
    errs = {}
    p = cfg(tmp_path, url(sec.tls["tls"], tls=True), store_cacert=sec.wrong_ca)
    errs["wrong ca"] = assert_fails(run(sec, p), "TLS: certificate verify failed",
                                    "certificate chain")
    p = cfg(tmp_path, url(sec.tls["tls_expired"], tls=True), store_cacert=sec.ca)
    errs["expired"] = assert_fails(run(sec, p), "certificate has expired")
    p = cfg(tmp_path, url(sec.tls["tls_selfsigned"], tls=True), store_cacert=sec.ca)
    errs["self-signed"] = assert_fails(run(sec, p), "self-signed certificate")
    closed = free_port()
    p = cfg(tmp_path, url(closed, tls=True), store_cacert=sec.ca)
    errs["refused tls"] = assert_fails(run(sec, p), "connect: connection refused")
    p = cfg(tmp_path, url(closed))
    errs["refused"] = assert_fails(run(sec, p), "onnection refused")
    p = cfg(tmp_path, url(sec.tls["tls"], tls=True), store_cacert=str(tmp_path / "nope.pem"))
    errs["no ca file"] = assert_fails(run(sec, p), "TLS setup: cannot read CA file")
    assert len(set(errs.values())) == len(errs), errs
    assert "in certificate chain" not in errs["self-signed"]


def test_tls_handshake_stall_hits_the_deadline(sec, tmp_path):
    lsock = socket.socket()
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(8)                   # accepts (backlog), never says a word
    try:
        p = cfg(tmp_path, url(lsock.getsockname()[1], tls=True), store_cacert=sec.ca)
        assert_fails(run(sec, p), "TLS handshake did not finish within 3 s")
    finally:
        lsock.close()


def test_insecure_reads_and_says_so(sec, tmp_path):
    p = cfg(tmp_path, url(sec.tls["tls_selfsigned"], tls=True), store_insecure="yes")
    src = assert_reads(run(sec, p))
    assert src["tls_verified"] is False and "NOT verified" in src["tls"], src


def check_run(path, *args):
    env = dict(os.environ, TZ="UTC", LANG="C.UTF-8", LC_ALL="C.UTF-8", NO_COLOR="1",
               REDRIVE_PROFILES=os.path.join(ROOT, "profiles"))
    p = subprocess.run([rd_bin(), "--config", path, "check"] + list(args), capture_output=True,
                       text=True, timeout=60, env=env)
    assert p.returncode in (0, 3), (p.returncode, p.stdout, p.stderr)   # the core is not up
    return p.stdout


def tls_lines(text):
    return [ln for ln in text.splitlines() if "redis: TLS" in ln]


UNVERIFIED = ("encrypted, but TLS NOT VERIFIED: the server's certificate and host name are "
              "not checked")
UNVERIFIED_FIX = "remove store_insecure and set store_cacert = your CA"


def test_insecure_is_a_warning_in_check_and_the_text_snapshot(sec, tmp_path):
    """check used to print "✓ store tls: encrypted, certificate and host name verified"
    for store_insecure (issue 21): the line now comes from the connection's own state."""
    p = cfg(tmp_path, url(sec.tls["tls_selfsigned"], tls=True), store_insecure="yes")
    text = check_run(p)
    assert "  ! store tls: %s - fix: %s\n" % (UNVERIFIED, UNVERIFIED_FIX) in text, text
    assert "host name verified" not in text, text
    checks = json.loads(check_run(p, "--json"))["systems"][0]["checks"]
    assert [c for c in checks if c["check"] == "store tls"] == [
        {"check": "store tls", "status": "warning", "message": UNVERIFIED,
         "fix": UNVERIFIED_FIX}], checks
    snap = run(sec, p, "--view", "overview")
    assert snap.rc == 0, (snap.rc, snap.err)
    assert tls_lines(snap.out) == ["WARNING: redis: TLS NOT VERIFIED (the server's certificate "
                                   "and host name are not checked)"], snap.out


def test_verified_tls_says_so_in_check_and_the_text_snapshot(sec, tmp_path):
    p = cfg(tmp_path, url(sec.tls["tls"], tls=True), store_cacert=sec.ca)
    text = check_run(p)
    assert "  \u2713 store tls: encrypted, certificate and host name verified\n" in text, text
    snap = run(sec, p, "--view", "overview")
    assert snap.rc == 0, (snap.rc, snap.err)
    assert tls_lines(snap.out) == ["redis: TLS verified (certificate and host name)"], snap.out
    assert "NOT VERIFIED" not in snap.out


# ---- live: no stall, re-AUTH on reconnect ---------------------------------------------

class Watch:
    def __init__(self, config, env=None):
        build = os.path.dirname(os.path.dirname(os.path.dirname(rd_bin())))
        exe = os.path.join(build, "tests", "integration", "rd-source-watch")
        e = dict(os.environ, TZ="UTC", REDRIVE_PROFILES=os.path.join(ROOT, "profiles"))
        e.update(env or {})
        self.p = subprocess.Popen([exe, config, "a"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, env=e, text=True, bufsize=1)
        self.out = []
        got = self.line(15)
        assert got == "ready", got

    def line(self, timeout):
        r, _, _ = select.select([self.p.stdout], [], [], timeout)
        assert r, "rd-source-watch did not answer within %s s" % timeout
        ln = self.p.stdout.readline().strip()
        self.out.append(ln)
        return ln

    def ask(self, cmd, timeout=30):
        self.p.stdin.write(cmd + "\n")
        self.p.stdin.flush()
        return self.line(timeout)

    def close(self):
        if self.p.poll() is None:
            self.p.stdin.write("quit\n")
            self.p.stdin.flush()
            try:
                self.p.wait(5)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()


def test_stalling_tls_server_never_stalls_the_loop(sec, tmp_path):
    lsock = socket.socket()
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(8)
    try:
        p = cfg(tmp_path, url(lsock.getsockname()[1], tls=True), store_cacert=sec.ca)
        w = Watch(p)                  # "ready" = the source answered (down) already
        try:
            worst = 0
            end = time.monotonic() + 2 * DEADLINE + 1     # across a retry's handshake
            while time.monotonic() < end:
                t0 = time.monotonic()
                got = w.ask("count failed", timeout=2)
                worst = max(worst, time.monotonic() - t0)
                assert got.startswith("count "), got
                time.sleep(0.1)
            assert worst < 0.5, worst
            got = w.ask("state redis down 1")
            assert got.startswith("ok") and "TLS handshake did not finish" in got, got
        finally:
            w.close()
    finally:
        lsock.close()


def test_auth_resent_on_every_reconnect(sec, tmp_path):
    p = cfg(tmp_path, url(sec.tls["tls"], tls=True), store_cacert=sec.ca,
            store_user=sec.acl_user, store_password="file:" + sec.acl_pw_file, poll="1s")
    admin = sec.admin("tls")
    w = Watch(p)
    try:
        assert w.ask("state redis ok 10").startswith("ok")
        assert w.ask("exec sec-running running 5").startswith("ok")
        for round_ in range(2):
            killed = admin.execute_command("CLIENT", "KILL", "USER", sec.acl_user)
            assert killed >= 1, killed                 # main (+ subscription)
            status = "failed" if round_ == 0 else "running"
            rec = dict(TASKS["sec-running"], status=status)
            admin.hset(PREFIX + ":sec-running", "1", json.dumps(rec))
            got = w.ask("exec sec-running %s 15" % status)
            assert got.startswith("ok"), got
            assert w.ask("state redis ok 15").startswith("ok")
        # both connections came back authenticated as the ACL user
        names = [c for c in admin.client_list() if c.get("user") == sec.acl_user]
        assert len(names) >= 1, admin.client_list()
    finally:
        w.close()
        load(admin)
    assert not any(pw in "\n".join(w.out) for pw in sec.secrets())


def test_insecure_banner_on_the_top_bar(tmp_path):
    """The console's top bar says TLS NOT VERIFIED for store_insecure, and only then."""
    tui = os.path.join(ROOT, "tests", "tui")
    home = str(tmp_path)
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TZ": "UTC",
           "TERM": "xterm-256color", "HOME": home, "XDG_STATE_HOME": home + "/state",
           "REDRIVE_NOW": "1767225600", "REDRIVE_HEADLESS": "132x40",
           "REDRIVE_PROFILES": os.path.join(ROOT, "profiles"),
           "REDRIVE_HEADLESS_MODEL": os.path.join(tui, "fixtures", "empty.json"),
           "REDRIVE_HEADLESS_KEYS": os.path.join(tui, "scripts", "overview.keys")}
    tops = {}
    for insecure in ("yes", "no"):
        p = cfg(tmp_path, "rediss://127.0.0.1:1/0", store_insecure=insecure)
        r = subprocess.run([rd_bin(), "--config", p], env=env, capture_output=True, timeout=20)
        assert r.returncode == 0, r.stderr
        tops[insecure] = r.stdout.decode().splitlines()[0]
    assert "TLS NOT VERIFIED" in tops["yes"], tops
    assert "TLS NOT VERIFIED" not in tops["no"], tops
