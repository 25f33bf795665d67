"""Credentials leave only for hosts that may have them (issue 21), through the real binary.

* A credential-bearing URL (core, broker, sqs_*) over plain http:// to a host that is not
  loopback — "127.0.0.1.evil.example" included, which the old prefix test took for
  loopback — and a user:password@ in core/broker/workers/sqs URLs are configuration errors:
  exit 2, file:line, the key named, the value never echoed. `insecure = yes` lets plain
  http through and the console's top bar says " insecure ".
* A store given as a reference (store = env:DATABASE_URL): `check`, `snapshot` and
  `snapshot --json` never print any part of its value (host, port, user, database, a
  password cut at an unescaped '@', a ?password= query), they name the part instead.
* At send time: the whoami probe and the jwt-login request toward a non-loopback plain-http
  core never carry the credential, even on a config that never went through the parser
  (tests/actions/act_probe.c); with insecure they do (the server is reachable).
* The ECS container credentials endpoint: a refused one is a ✗ line in `check`.
"""
import http.server
import json
import os
import subprocess
import threading

import pytest

from snaphelp import ROOT, rd_bin

PROBE = os.path.join(os.path.dirname(rd_bin()), "..", "..", "tests", "actions", "rd-act-probe")
SECRET = "Secr3t"


def base_env(tmp_path, extra=None):
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TZ": "UTC",
           "NO_COLOR": "1", "HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state"),
           "XDG_CACHE_HOME": str(tmp_path / "cache"),
           "REDRIVE_PROFILES": os.path.join(ROOT, "profiles")}
    env.update(extra or {})
    return env


def redrive(tmp_path, config_text, *args, env=None, timeout=30):
    cfg = tmp_path / "config"
    cfg.write_text(config_text)
    cfg.chmod(0o600)   # a config others can read that holds a credential gets a warning
    p = subprocess.run([rd_bin(), "--config", str(cfg)] + list(args), capture_output=True,
                       timeout=timeout, env=base_env(tmp_path, env))
    return p.returncode, p.stdout.decode("utf-8"), p.stderr.decode("utf-8", "replace"), str(cfg)


# ---- configuration errors ----------------------------------------------------------------

BAD = """[system "a"]
profile = attune
store = host=/tmp
core = http://127.0.0.1.evil.example:8080
broker = http://guest:Secr3tPw@127.0.0.1:15672
workers = http://w1.example:8000, http://ops:Secr3tW@127.0.0.1:9
sqs_queue_url = http://127.0.0.1:4566/1/q, http://sqs.evil.example/1/q
sqs_endpoint = https://ops:Secr3tE@sqs.example
"""


def test_config_errors_exit_2_with_file_line(tmp_path):
    rc, out, err, cfg = redrive(tmp_path, BAD, "check")
    assert rc == 2, (rc, out, err)
    assert out == ""
    want = [
        "%s:4: 'core' uses plain http:// to '127.0.0.1.evil.example', which is not a loopback "
        "host (localhost, 127.0.0.0/8, ::1): use https:// (or set insecure = yes, shown in the "
        "banner)" % cfg,
        "%s:5: 'broker' must not hold a user name or password (user:password@): give "
        "credentials in their own keys, as references (env:NAME)" % cfg,
        "%s:8: 'sqs_endpoint' must not hold a user name or password (user:password@): give "
        "credentials in their own keys, as references (env:NAME)" % cfg,
        "%s:7: 'sqs_queue_url' uses plain http:// to 'sqs.evil.example', which is not a "
        "loopback host (localhost, 127.0.0.0/8, ::1): use https:// (or set insecure = yes, "
        "shown in the banner)" % cfg,
        "%s:6: 'workers' must not hold a user name or password (user:password@): give "
        "credentials in their own keys, as references (env:NAME)" % cfg,
        "%s: no system configured" % cfg,
    ]
    assert err.splitlines() == want, err
    assert SECRET not in err


def test_config_errors_refuse_the_console_too(tmp_path):
    rc, out, err, cfg = redrive(tmp_path, BAD, "snapshot", "--json")
    assert rc == 2 and out == "" and "%s:4: 'core' uses plain http://" % cfg in err, err


def headless_top(tmp_path, config_text):
    keys = tmp_path / "keys"
    keys.write_text("dump\n")
    rc, out, err, _ = redrive(tmp_path, config_text, env={
        "TERM": "xterm-256color", "REDRIVE_NOW": "1767225600", "REDRIVE_HEADLESS": "200x30",
        "REDRIVE_HEADLESS_MODEL": os.path.join(ROOT, "tests", "tui", "fixtures", "attune.json"),
        "REDRIVE_HEADLESS_KEYS": str(keys)})
    assert rc == 0 and err == "", (rc, err)
    return out.split("--\n")[0].splitlines()[0]


PLAIN = """[system "a"]
profile = attune
store = postgresql://redrive_ro@127.0.0.1:1/attune
core = http://core.example:8080
auth = bearer
token = env:RD_TOKEN
"""


def test_insecure_yes_lets_plain_http_through_and_the_banner_says_so(tmp_path):
    rc, _, err, cfg = redrive(tmp_path, PLAIN, "check")
    assert rc == 2 and "%s:4: 'core' uses plain http:// to 'core.example'" % cfg in err, err
    assert " insecure " in headless_top(tmp_path, PLAIN + "insecure = yes\n")
    loop = PLAIN.replace("http://core.example:8080", "http://127.0.0.1:8080")
    assert " insecure " not in headless_top(tmp_path, loop)


# ---- referenced secrets never printed ------------------------------------------------------

STORE_CASES = [
    # (profile, the referenced value, the part named in the message)
    ("attune", "postgresql://u:Secr3t@Tail@127.0.0.1:5432/db",
     'could not resolve host "the password part of env:DATABASE_URL@the host part of '
     'env:DATABASE_URL"'),
    ("attune", "postgresql://u@Secr3tHost.invalid/db",
     'could not resolve host "the host part of env:DATABASE_URL"'),
    ("attune", "host=Secr3tKv.invalid dbname=Secr3tDb user=Secr3tUser",
     'could not resolve host "the host part of env:DATABASE_URL"'),
    ("attune", "postgresql://Secr3tUser@127.0.0.1:1/db",
     'connection to server at "the host part of env:DATABASE_URL", port the port part of '
     'env:DATABASE_URL failed'),
    ("attune", "host=127.0.0.1 sslmode=Secr3t",
     'invalid sslmode value: "the sslmode part of env:DATABASE_URL"'),
    ("alakai", "redis://:Secr3t@127.0.0.1:6379/0?password=Secr3tQ",
     "store (env:DATABASE_URL): bad database number in the URL's path"),
    ("alakai", "redis+unix:///tmp/Secr3t.sock?password=Secr3tU",
     "store (env:DATABASE_URL): unsupported query in the URL (only ?db=N)"),
    ("alakai", "redis://:pw@Secr3tHost.invalid:6379/0",
     'redis env:DATABASE_URL: could not resolve host "the host part of env:DATABASE_URL"'),
    ("alakai", "redis://127.0.0.1:1/0, redis://Secr3tB.invalid:6379/0",
     'redis URL 2 of env:DATABASE_URL: could not resolve host "the host part of '
     'env:DATABASE_URL"'),
]


@pytest.mark.parametrize("profile,value,named", STORE_CASES)
def test_referenced_store_never_printed(tmp_path, profile, value, named):
    cfg = '[system "a"]\nprofile = %s\nstore = env:DATABASE_URL\n' % profile
    env = {"DATABASE_URL": value}
    rc, out, err, _ = redrive(tmp_path, cfg, "check", env=env)
    assert rc == 3, (rc, out, err)
    store = [ln for ln in out.splitlines() if ln.startswith("  \u2717 store: ")]
    assert len(store) == 1 and named in store[0], out
    rc2, out2, err2, _ = redrive(tmp_path, cfg, "snapshot", env=env)
    rc3, out3, err3, _ = redrive(tmp_path, cfg, "snapshot", "--json", env=env)
    assert rc2 == 3 and rc3 == 3, (rc2, err2, rc3, err3)
    src = json.loads(out3)["sources"][0]
    assert src["state"] == "down" and named in src["error"], src
    for text in (out, err, out2, err2, out3, err3):
        assert SECRET not in text, text
    if "@Tail@" in value:
        assert store[0].endswith("(encode @ in the password as %40) - fix: check the role "
                                 "and its password (store_password, .pgpass)"), store[0]


# ---- send time -------------------------------------------------------------------------------

class Core:
    """A stand-in core on 127.0.0.1 that records what reaches it. Reached as
    http://0.0.0.0:PORT, a host the loopback rule does not accept."""

    def __init__(self):
        self.hits = []
        rec = self.hits

        class H(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def reply(self, body):
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                rec.append(("GET", self.path, self.headers.get("Authorization") or ""))
                self.reply(b'{"data":{"identity":"ops"}}')

            def do_POST(self):
                n = int(self.headers.get("Content-Length") or 0)
                rec.append(("POST", self.path, self.rfile.read(n).decode()))
                self.reply(b'{"data":{"access_token":"opaque-token-1","expires_in":3600}}')

        self.srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = "http://0.0.0.0:%d" % self.srv.server_address[1]
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()

    def close(self):
        self.srv.shutdown()
        self.srv.server_close()


@pytest.fixture
def core():
    c = Core()
    yield c
    c.close()


def probe(*args):
    env = dict(os.environ, RD_PROBE_TOKEN="Secr3tTok", RD_PROBE_PASSWORD="Secr3tPw")
    p = subprocess.run([PROBE] + list(args), capture_output=True, text=True, timeout=30,
                       env=env)
    assert p.returncode == 0, p.stderr
    lines = [json.loads(ln) for ln in p.stdout.splitlines()]
    assert lines[-1] == {"calls": 1}, lines
    assert SECRET not in p.stdout + p.stderr
    return lines[0]


REFUSED = ("credentials not sent over plain http:// to a host that is not loopback: use "
           "https:// (or insecure = yes)")


def test_whoami_never_carries_the_token_to_a_remote_plain_http_core(core):
    r = probe("whoami", core.url, "bearer")
    assert r == {"ok": False, "http_status": 0, "identity": "", "why": REFUSED}
    assert core.hits == []
    r = probe("whoami", core.url, "bearer", "--insecure", "yes")   # reachable: it was the rule
    assert r["ok"] and r["identity"] == "ops", r
    assert ("GET", "/auth/me", "Bearer Secr3tTok") in core.hits


def test_login_never_carries_the_password_to_a_remote_plain_http_core(core):
    r = probe("whoami", core.url, "jwt-login")
    assert r == {"ok": False, "http_status": 0, "identity": "",
                 "why": "credentials: login request not sent: " + REFUSED}
    assert core.hits == []
    r = probe("whoami", core.url, "jwt-login", "--insecure", "yes")
    assert r["ok"], r
    assert core.hits[0] == ("POST", "/auth/login", '{"login":"ops","password":"Secr3tPw"}')


def test_http_client_refuses_credentials_it_is_handed(core):
    p = subprocess.run([PROBE, "http", "GET", core.url + "/x", "--credential", "yes",
                        "--header", "Authorization: Bearer Secr3tTok"],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 1 and p.stderr == "http_start failed: %s\n" % REFUSED, p.stderr
    p = subprocess.run([PROBE, "http", "GET", core.url.replace("0.0.0.0", "127.0.0.1") + "/x",
                        "--credential", "yes", "--header", "Authorization: Bearer Secr3tTok"],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr
    assert core.hits == [("GET", "/x", "Bearer Secr3tTok")]


# ---- ECS container credentials ----------------------------------------------------------------

def test_check_names_a_refused_ecs_endpoint(tmp_path):
    cfg = ('[system "a"]\nprofile = alakai\nstore = redis://127.0.0.1:1/0\n'
           'sqs_queue_url = http://127.0.0.1:1/123456789012/q\nsqs_region = us-east-1\n')
    env = {"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "@creds.evil.example:80/x",
           "AWS_EC2_METADATA_DISABLED": "true"}
    rc, out, err, _ = redrive(tmp_path, cfg, "check", env=env)
    assert rc == 3, (rc, out, err)
    want = ("  \u2717 sqs ecs endpoint: AWS_CONTAINER_CREDENTIALS_RELATIVE_URI refused: it "
            "must start with '/' - fix: fix the variable or unset it (docs/config.md, SQS "
            "credentials); the next provider was tried")
    assert want in out.splitlines(), out
    assert "evil" not in out + err
