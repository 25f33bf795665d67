"""Security issue 32: credentials never go through a proxy from the environment.

Plain http:// is allowed only to loopback (and the ECS endpoint), so such a request is
sent direct whatever http_proxy / ALL_PROXY say (CURLOPT_NOPROXY "*"): a login, a bearer
token or the broker's Basic auth never reach a proxy in clear. https through a configured
proxy stays allowed, and `check` names the proxy each endpoint goes through.

The "proxy" is a recorder (actlib.ProxyRecorder) answering 502: every variable libcurl
reads points at it, the actions still succeed against the stack's reference core, and
the recorder must have received nothing at all.
"""
import json
import os
import subprocess

import pytest

import actlib

MISSING = "424242"


@pytest.fixture
def proxy():
    p = actlib.ProxyRecorder()
    yield p
    p.close()


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    env_file = os.path.join(os.environ["RD_STACK_DIR"], "env")
    text = subprocess.run(["bash", os.path.join(actlib.ROOT, "scripts", "demo-config.sh"),
                           env_file], capture_output=True, check=True).stdout.decode()
    p = tmp_path_factory.mktemp("proxy") / "demo.conf"
    p.write_text(text)
    return str(p)


def check_lines(out):
    """{check: message} of one system's text output."""
    res = {}
    for ln in out.splitlines():
        if ln.startswith("  ") and ": " in ln:
            what, msg = ln[4:].split(": ", 1)
            res[what.strip()] = msg
    return res


def test_jwt_login_never_through_the_proxy(act, proxy, tmp_path):
    srv = actlib.CoreServer("attune1", tmp_path, quiet=False)
    try:
        a = act("attune1", core=srv.url, auth="jwt-login", token=None,
                login=os.environ["RD_CORE_LOGIN"], password="env:RD_CORE_PASSWORD")
        p = a.run("retry", MISSING, "--yes", "--force", env=proxy.env())
        assert "no such execution" in p.stdout, p.stdout + p.stderr
        assert srv.access_log().count("POST /auth/login") == 1
    finally:
        srv.stop()
    assert proxy.received() == []


def test_bearer_never_through_the_proxy(act, proxy):
    a = act("attune1")
    p = a.run("retry", MISSING, "--yes", "--force", env=proxy.env())
    assert "no such execution" in p.stdout, p.stdout + p.stderr
    assert a.journal()[-1]["operator"] == "alice"
    assert proxy.received() == []


def test_dev_user_never_through_the_proxy(act, proxy):
    a = act("attune1", auth="dev-user", dev_user="proxy-test", local=True, token=None)
    p = a.run("retry", MISSING, "--yes", "--force", env=proxy.env())
    assert "no such execution" in p.stdout, p.stdout + p.stderr
    assert proxy.received() == []


def test_snapshot_and_check_never_through_the_proxy(demo, proxy, tmp_path):
    """The broker's management API (Basic auth over loopback http) and the core's login."""
    env = dict(proxy.env(), LANG="C.UTF-8", LC_ALL="C.UTF-8")
    p = actlib.run_redrive(["--config", demo, "--system", "attune", "snapshot", "--json"],
                           env_extra=env, tmpdir=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    snap = json.loads(p.stdout)
    assert {s["name"]: s["state"] for s in snap["sources"]} == {"postgresql": "ok",
                                                                "rabbitmq": "ok"}
    assert snap["core"]["state"] == "ok" and snap["core"]["identity"], snap["core"]
    c = actlib.run_redrive(["--config", demo, "check", "--system", "attune"], env_extra=env,
                           tmpdir=tmp_path)
    assert c.returncode == 0, c.stdout + c.stderr
    lines = check_lines(c.stdout)
    direct = "direct, no proxy (plain http never goes through one)"
    assert lines["core proxy"] == direct and lines["broker proxy"] == direct, c.stdout
    assert lines["identity"].startswith("the core says "), c.stdout
    assert proxy.received() == []


def https_check(tmp_path, env):
    cfg = actlib.write_config(tmp_path, "remote", profile="attune",
                              store=os.environ["RD_PG_DSN_ATTUNE1"],
                              core="https://core.redrive.invalid:8443", auth="none")
    return actlib.run_redrive(["--config", cfg, "check"], tmpdir=tmp_path,
                              env_extra=dict(env, LANG="C.UTF-8", LC_ALL="C.UTF-8"))


def test_check_names_the_https_proxy(proxy, tmp_path):
    """The line says what libcurl does: the recorder sees the CONNECT for the core."""
    with_pw = "http://user:pw-not-shown@127.0.0.1:%d" % proxy.port
    c = https_check(tmp_path, proxy.env(https_proxy=with_pw))
    lines = check_lines(c.stdout)
    assert lines["core proxy"] == "through the proxy http://127.0.0.1:%d (https_proxy)" \
        % proxy.port, c.stdout
    assert "pw-not-shown" not in c.stdout + c.stderr
    got = proxy.received()
    assert got and all(g.startswith(b"CONNECT core.redrive.invalid:8443 ") for g in got), got


def test_check_proxy_fallbacks(proxy, tmp_path):
    """As libcurl reads them: an empty variable is unset, all_proxy / ALL_PROXY come after
    https_proxy / HTTPS_PROXY, no_proxy names hosts and their subdomains."""
    unset = {v: "" for v in proxy.env()}
    c = https_check(tmp_path, dict(unset, ALL_PROXY="proxy.corp.invalid:3128"))
    assert check_lines(c.stdout)["core proxy"] == \
        "through the proxy http://proxy.corp.invalid:3128 (ALL_PROXY)", c.stdout
    c = https_check(tmp_path, proxy.env(no_proxy="localhost, .redrive.invalid"))
    assert check_lines(c.stdout)["core proxy"] == \
        "direct, no proxy (the host is in no_proxy)", c.stdout
    c = https_check(tmp_path, proxy.env(NO_PROXY="127.0.0.0/8 redrive.invalid"))
    assert check_lines(c.stdout)["core proxy"] == \
        "direct, no proxy (the host is in NO_PROXY)", c.stdout
    c = https_check(tmp_path, unset)
    assert check_lines(c.stdout)["core proxy"] == \
        "direct, no proxy (none set in the environment)", c.stdout
    assert proxy.received() == []
