"""The TLS bridge (src/io/tlsbridge.c) against real redis-server TLS ports, driven by
rd-tls-probe (bridge + hiredis async on one libevent loop).

Everything is generated here with the openssl CLI in a temporary directory: a CA, a
server certificate for 127.0.0.1/localhost, a client certificate, a second unrelated CA,
an expired server certificate (`openssl ca -startdate/-enddate`) and a self-signed one.
The servers are private redis-server processes on free ports (--port 0: TLS only)."""
import os
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import time

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PROBE = os.environ.get("RD_TLS_PROBE",
                       os.path.join(ROOT, "build", "tests", "tls", "rd-tls-probe"))
REDIS = shutil.which("redis-server") or "/usr/bin/redis-server"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


CA_CNF = """[ca]
default_ca = rd
[rd]
dir = .
database = db/index.txt
serial = db/serial
new_certs_dir = db
certificate = ca.pem
private_key = ca.key
default_md = sha256
policy = anything
copy_extensions = copy
unique_subject = no
[anything]
commonName = supplied
"""

SAN = "subjectAltName=IP:127.0.0.1,DNS:localhost"


def make_pki(d):
    def ca(name, cn):
        openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key",
                "-out", f"{name}.pem", "-days", "30", "-subj", f"/CN={cn}", cwd=d)

    def csr(name, cn, san=True):
        extra = ["-addext", SAN] if san else []
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key",
                "-out", f"{name}.csr", "-subj", f"/CN={cn}", *extra, cwd=d)

    def sign(name, ca_name, ext=None):
        with open(os.path.join(d, f"{name}.ext"), "w") as f:
            f.write((ext or "") + "\n")
        openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca_name}.pem",
                "-CAkey", f"{ca_name}.key", "-CAcreateserial", "-out", f"{name}.pem",
                "-days", "30", "-extfile", f"{name}.ext", cwd=d)

    ca("ca", "rd-test-ca")
    ca("ca2", "rd-unrelated-ca")
    csr("srv", "localhost")
    sign("srv", "ca", SAN)
    csr("cli", "rd-client", san=False)
    sign("cli", "ca")
    csr("cli2", "rd-stranger", san=False)
    sign("cli2", "ca2")
    # expired: valid for one day in 2020, signed by the right CA, names right
    os.makedirs(os.path.join(d, "db"))
    open(os.path.join(d, "db", "index.txt"), "w").close()
    with open(os.path.join(d, "db", "serial"), "w") as f:
        f.write("1000\n")
    with open(os.path.join(d, "ca.cnf"), "w") as f:
        f.write(CA_CNF)
    csr("exp", "localhost")
    openssl("ca", "-batch", "-config", "ca.cnf", "-in", "exp.csr", "-out", "exp.pem",
            "-startdate", "20200101000000Z", "-enddate", "20200102000000Z", "-notext", cwd=d)
    # self-signed, names right
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "self.key",
            "-out", "self.pem", "-days", "30", "-subj", "/CN=localhost", "-addext", SAN, cwd=d)
    # an encrypted client key
    openssl("pkey", "-in", "cli.key", "-aes256", "-passout", "pass:secret-for-test",
            "-out", "cli-enc.key", cwd=d)
    for name in os.listdir(d):
        if name.endswith(".key"):
            os.chmod(os.path.join(d, name), 0o600)
    # a client key others can read: refused like a file: secret (issue 21)
    with open(os.path.join(d, "cli.key")) as src, open(os.path.join(d, "cli-open.key"), "w") as dst:
        dst.write(src.read())
    os.chmod(os.path.join(d, "cli-open.key"), 0o644)


def wait_port(port, proc, log):
    end = time.monotonic() + 10
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"redis-server exited: {open(log).read()[-2000:]}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"redis-server did not listen on {port}")


class Servers:
    def __init__(self, d):
        self.d = d
        self.procs = []
        self.ports = {}

    def start(self, name, cert, key, ca, auth="optional"):
        port = free_port()
        log = os.path.join(self.d, f"redis-{name}.log")
        wd = os.path.join(self.d, f"redis-{name}")
        os.makedirs(wd)
        args = [REDIS, "--port", "0", "--bind", "127.0.0.1", "--tls-port", str(port),
                "--tls-cert-file", os.path.join(self.d, cert),
                "--tls-key-file", os.path.join(self.d, key),
                "--tls-ca-cert-file", os.path.join(self.d, ca),
                "--tls-auth-clients", auth, "--dir", wd, "--save", "", "--appendonly", "no",
                "--logfile", log, "--daemonize", "no"]
        p = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        self.procs.append(p)
        wait_port(port, p, log)
        self.ports[name] = port

    def stop(self):
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


@pytest.fixture(scope="module")
def env():
    d = tempfile.mkdtemp(prefix="rd-tls-test.")
    srv = Servers(d)
    try:
        make_pki(d)
        srv.start("good", "srv.pem", "srv.key", "ca.pem")
        srv.start("mtls", "srv.pem", "srv.key", "ca.pem", auth="yes")
        srv.start("expired", "exp.pem", "exp.key", "ca.pem")
        srv.start("self", "self.pem", "self.key", "ca.pem")
        # trusts only ca2, so OpenSSL cannot append our CA: the server sends the leaf alone
        srv.start("leafonly", "srv.pem", "srv.key", "ca2.pem")
        yield srv
    finally:
        srv.stop()
        shutil.rmtree(d, ignore_errors=True)


class Result:
    def __init__(self, rc, out, elapsed):
        self.rc = rc
        self.elapsed = elapsed
        self.all = out.splitlines()
        self.ticks = [(i, int(ln.split()[1])) for i, ln in enumerate(self.all)
                      if ln.startswith("tick ")]
        self.lines = [ln for ln in self.all if not ln.startswith("tick ")]

    def kind(self, prefix):
        return [ln[len(prefix) + 1:] for ln in self.lines if ln.startswith(prefix + " ")]


def probe(env, *args, port=None, host="localhost", ca="ca.pem", timeout=20):
    cmd = [PROBE, "--addr", "127.0.0.1", "--port", str(port), "--host", host]
    if ca:
        cmd += ["--cacert", os.path.join(env.d, ca)]
    cmd += [os.path.join(env.d, a) if a.endswith((".pem", ".key")) else a for a in args]
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    r = Result(p.returncode, p.stdout, time.monotonic() - t0)
    assert p.stderr == "", p.stderr          # the bridge never prints anything
    return r


def assert_common_end(r, ok, conns_left=None):
    assert r.kind("dir-mode") == ["700"]
    assert r.kind("cleanup") == ["ok"], r.lines
    assert r.lines[-1] == ("done ok" if ok else "done fail"), r.lines
    assert r.rc == (0 if ok else 1), r.lines


def assert_fails_with(r, msg):
    """One bridge error, reported through the callback and again by tlsb_error() after
    hiredis saw its unix connection close."""
    assert r.kind("tlsb-error") == [msg], r.lines
    assert r.kind("error") == [msg], r.lines
    assert r.kind("disconnect") == ["0 Server closed the connection"], r.lines
    assert r.kind("reply") == ["0 0 (no reply)"], r.lines
    assert_common_end(r, ok=False)


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_ping_hgetall_with_the_right_ca(env, host):
    key = f"rd:h:{host}"                 # a fresh key per case: DEL answers 0
    r = probe(env, "PING", f"DEL {key}", f"HSET {key} a 1 b 2", f"HGETALL {key}",
              port=env.ports["good"], host=host)
    assert len(r.kind("up")) == 1
    assert re.fullmatch(r"TLSv1\.[23] \S+, certificate verified for " + re.escape(host),
                        r.kind("up")[0]), r.lines
    assert r.kind("reply") == ["0 0 PONG", "0 1 0", "0 2 2", "0 3 [a,1,b,2]"], r.lines
    assert r.kind("tlsb-error") == [] and r.kind("disconnect") == []
    assert_common_end(r, ok=True)


def test_two_connections_share_one_bridge(env):
    # the Redis source opens a second, subscribed connection through the same bridge
    r = probe(env, "--conns", "2", "PING", port=env.ports["good"])
    assert len(r.kind("up")) == 2, r.lines
    assert sorted(r.kind("reply")) == ["0 0 PONG", "1 0 PONG"], r.lines
    assert_common_end(r, ok=True)


BIG = 5 * 1024 * 1024


@pytest.mark.parametrize("buf,slow", [(None, None), ("65536", None), (None, "500"),
                                      ("65536", "500")])
def test_large_value_passes_intact_with_bounded_buffers(env, buf, slow):
    """5 MiB SET then GET. With --slow-read, hiredis stops reading while the GET reply
    arrives: the bridge must stop reading the TLS side rather than hold the value (without
    flow control its peak is the whole value)."""
    extra = (["--buffer", buf] if buf else []) + (["--slow-read", slow] if slow else [])
    r = probe(env, "--big", str(BIG), *extra, "PING", port=env.ports["good"])
    assert r.kind("reply") == ["0 0 PONG"], r.lines
    assert r.kind("big") == [f"ok {BIG}"], r.lines
    if slow:
        assert [ln for ln in r.lines if ln in ("pause", "resume")] == ["pause", "resume"]
    limit = int(buf or 1 << 20)
    peak = int(r.kind("peak")[0])
    assert 0 < peak <= limit + 65536, r.lines
    assert_common_end(r, ok=True)


def test_wrong_ca_server_sends_its_chain(env):
    port = env.ports["good"]
    r = probe(env, "PING", port=port, ca="ca2.pem")
    assert_fails_with(r, "TLS: certificate verify failed: self-signed certificate in "
                      "certificate chain; the server's certificate is not from a CA in "
                      f"the CA file (localhost:{port})")


def test_wrong_ca_server_sends_leaf_only(env):
    port = env.ports["leafonly"]
    r = probe(env, "PING", port=port, ca="ca2.pem")
    assert_fails_with(r, "TLS: certificate verify failed: unable to get local issuer "
                      "certificate; the server's certificate is not from a CA in the CA "
                      f"file (localhost:{port})")


def test_expired_certificate(env):
    port = env.ports["expired"]
    r = probe(env, "PING", port=port)
    assert_fails_with(r, f"TLS: certificate verify failed: certificate has expired "
                      f"(localhost:{port})")


def test_self_signed_certificate(env):
    port = env.ports["self"]
    r = probe(env, "PING", port=port)
    assert_fails_with(r, f"TLS: certificate verify failed: self-signed certificate "
                      f"(localhost:{port})")


def test_hostname_mismatch(env):
    port = env.ports["good"]
    r = probe(env, "PING", port=port, host="redis.example")
    assert_fails_with(r, f"TLS: certificate verify failed: hostname mismatch "
                      f"(redis.example:{port})")


def test_ip_address_mismatch(env):
    port = env.ports["good"]
    r = probe(env, "PING", port=port, host="127.0.0.2")
    assert_fails_with(r, f"TLS: certificate verify failed: IP address mismatch "
                      f"(127.0.0.2:{port})")


def test_system_store_does_not_trust_a_private_ca(env):
    port = env.ports["good"]
    r = probe(env, "PING", port=port, ca=None)
    assert_fails_with(r, "TLS: certificate verify failed: self-signed certificate in "
                      "certificate chain; the server's certificate is not from a CA in "
                      f"the CA file (localhost:{port})")


def test_insecure_connects_to_self_signed(env):
    r = probe(env, "--insecure", "PING", port=env.ports["self"], ca=None)
    assert len(r.kind("up")) == 1
    assert r.kind("up")[0].endswith(", certificate NOT verified (insecure)"), r.lines
    assert r.kind("reply") == ["0 0 PONG"], r.lines
    assert_common_end(r, ok=True)


def test_client_certificate_accepted(env):
    r = probe(env, "--cert", "cli.pem", "--key", "cli.key", "PING", port=env.ports["mtls"])
    assert r.kind("reply") == ["0 0 PONG"], r.lines
    assert_common_end(r, ok=True)


def test_client_certificate_missing(env):
    # TLS 1.3: our side of the handshake finishes, then the server's alert arrives
    port = env.ports["mtls"]
    r = probe(env, "PING", port=port)
    assert len(r.kind("up")) == 1
    assert_fails_with(r, "TLS: tlsv13 alert certificate required; the server wants a "
                      f"client certificate (localhost:{port})")


def test_client_certificate_from_another_ca(env):
    port = env.ports["mtls"]
    r = probe(env, "--cert", "cli2.pem", "--key", "cli2.key", "PING", port=port)
    assert_fails_with(r, "TLS: tlsv1 alert unknown ca; the server refused our client "
                      f"certificate (localhost:{port})")


def test_connection_refused(env):
    port = free_port()
    r = probe(env, "PING", port=port)
    assert_fails_with(r, f"connect: connection refused (localhost:{port})")


class Listener:
    """A TCP listener that accepts and then either says nothing or sends `greeting`."""

    def __init__(self, greeting=None):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.greeting = greeting
        self.conns = []
        self.stop = False
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def run(self):
        self.sock.settimeout(0.1)
        while not self.stop:
            try:
                c, _ = self.sock.accept()
            except OSError:
                continue
            self.conns.append(c)
            if self.greeting:
                c.sendall(self.greeting)

    def close(self):
        self.stop = True
        self.t.join()
        for c in self.conns:
            c.close()
        self.sock.close()


def test_stalled_handshake_hits_the_deadline_and_the_loop_keeps_running(env):
    lis = Listener()
    try:
        r = probe(env, "--timeout", "1", "PING", port=lis.port)
    finally:
        lis.close()
    assert len(lis.conns) == 1
    assert_fails_with(r, f"TLS handshake did not finish within 1 s (localhost:{lis.port})")
    err_at = r.all.index(f"tlsb-error TLS handshake did not finish within 1 s "
                         f"(localhost:{lis.port})")
    before = [ms for i, ms in r.ticks if i < err_at]
    # ticks every 100 ms all through the stall: the bridge never blocked the loop
    assert len(before) >= 8, r.all
    assert before[-1] >= 900, r.all
    gaps = [b - a for a, b in zip(before, before[1:])]
    assert gaps and max(gaps) < 300, gaps
    assert r.elapsed < 5


def test_plain_text_server(env):
    lis = Listener(greeting=b"-ERR this is not TLS\r\n")
    try:
        r = probe(env, "--timeout", "2", "PING", port=lis.port)
    finally:
        lis.close()
    assert_fails_with(r, f"TLS: wrong version number; is this a TLS port? "
                      f"(localhost:{lis.port})")


@pytest.mark.parametrize("args,ca,msg", [
    ([], "missing-ca.pem", "cannot read CA file {d}/missing-ca.pem: no such file or directory"),
    (["--cert", "cli.pem", "--key", "cli-enc.key"], "ca.pem",
     "client key {d}/cli-enc.key is encrypted: not supported"),
    (["--cert", "cli.pem", "--key", "srv.key"], "ca.pem",
     "client key {d}/srv.key does not match certificate {d}/cli.pem"),
    (["--cert", "cli.pem", "--key", "cli-open.key"], "ca.pem",
     "client key {d}/cli-open.key is group/world readable or writable (mode 644): chmod 600 it"),
    (["--cert", "nope.pem", "--key", "cli.key"], "ca.pem",
     "cannot read client certificate {d}/nope.pem: no such file or directory"),
])
def test_setup_errors(env, args, ca, msg):
    r = probe(env, *args, "PING", port=env.ports["good"], ca=ca)
    assert r.rc == 2, r.lines
    assert r.lines == ["setup-error " + msg.format(d=env.d)], r.lines


@pytest.mark.parametrize("server,ok", [("good", True), ("self", False)])
def test_free_inside_the_callback(env, server, ok):
    """The Redis source may drop the bridge from inside its callback: it must survive that
    (this runs under ASan too), close hiredis's side and remove its directory."""
    r = probe(env, "--free-in-callback", "PING", port=env.ports[server])
    assert r.kind("up" if ok else "tlsb-error") and r.lines.count("freed") == 1, r.lines
    assert r.kind("disconnect") == ["0 Server closed the connection"], r.lines
    assert r.kind("reply") == ["0 0 (no reply)"], r.lines
    assert r.kind("cleanup") == ["ok"] and r.lines[-1] == "done fail", r.lines


def test_server_closing_still_delivers_its_last_reply(env):
    # QUIT: Redis answers +OK, then closes; the reply must reach hiredis before the EOF
    r = probe(env, "PING", "QUIT", port=env.ports["good"])
    assert r.kind("reply") == ["0 0 PONG", "0 1 OK"], r.lines
    assert r.kind("tlsb-error") == [], r.lines
    assert r.kind("cleanup") == ["ok"], r.lines


def test_another_process_cannot_use_the_bridge(env):
    """While the probe holds a verified connection, another process of the same user
    (this test) connects to the bridge's socket: it is closed unread, no TLS connection
    is made for it (no PONG), and the probe's own connection carries on."""
    cmd = [PROBE, "--addr", "127.0.0.1", "--port", str(env.ports["good"]), "--host",
           "localhost", "--cacert", os.path.join(env.d, "ca.pem"), "PING",
           "BLPOP rd:tls:nothing 4", "PING"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        path, lines = None, []
        while True:
            ln = p.stdout.readline()
            assert ln, lines
            lines.append(ln.strip())
            if ln.startswith("path "):
                path = ln.split(" ", 1)[1].strip()
            if ln.startswith("reply 0 0 "):
                break
        assert lines[-1] == "reply 0 0 PONG", lines
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(2)                      # the probe blocks 4 s in BLPOP meanwhile
        s.connect(path)
        got = s.recv(64)                     # the bridge closes it at once (a bridged
        s.close()                            # connection would wait for a command)
        assert got == b"", got
        out, err = p.communicate(timeout=20)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    lines += out.splitlines()
    r = Result(p.returncode, "\n".join(lines), 0)
    assert err == ""
    assert r.kind("reply") == ["0 0 PONG", "0 1 (nil)", "0 2 PONG"], r.lines
    assert len(r.kind("up")) == 1 and r.kind("tlsb-error") == [], r.lines
    assert_common_end(r, ok=True)
