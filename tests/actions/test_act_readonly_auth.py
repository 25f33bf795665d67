"""Security issue 32: read-only never authenticates.

With --read-only or read_only = true, `snapshot` and `check` probe the core anonymously:
no POST /auth/login, no password or token command run, no bearer or dev-user header. A
private reference core (tools/coresrv) logs every request it gets; the password and the
token come from commands that leave a marker file when they run. A control run without
read-only logs in, so the same markers and log would show a login had there been one.
"""
import json
import os

import pytest

import actlib

SYSTEM = "attune1"


@pytest.fixture
def core(stack, tmp_path):
    srv = actlib.CoreServer(SYSTEM, tmp_path, quiet=False)
    yield srv
    srv.stop()


def marker_script(tmp_path, name, prints):
    """A command that leaves tmp_path/name.ran behind and prints the value of $prints."""
    marker = tmp_path / (name + ".ran")
    p = tmp_path / (name + ".sh")
    p.write_text('#!/bin/sh\necho ran >> "%s"\nprintf "%%s\\n" "$%s"\n' % (marker, prints))
    p.chmod(0o700)
    return str(p), marker


def config(tmp_path, core, mode, read_only_key=False):
    kv = dict(profile="attune", store=os.environ["RD_PG_DSN_ATTUNE1"], core=core.url, auth=mode)
    markers = []
    if mode == "jwt-login":
        cmd, m = marker_script(tmp_path, "password", "RD_CORE_PASSWORD")
        kv.update(login=os.environ["RD_CORE_LOGIN"], password="cmd:" + cmd)
        markers.append(m)
    elif mode == "token-command":
        cmd, m = marker_script(tmp_path, "token", "RD_CORE_TOKEN")
        kv.update(token_command=cmd)
        markers.append(m)
    elif mode == "dev-user":
        kv.update(dev_user="ro-operator", local=True)
    if read_only_key:
        kv["read_only"] = True
    return actlib.write_config(tmp_path, "%s-%s" % (SYSTEM, mode), **kv), markers


def run(tmp_path, conf, *args):
    return actlib.run_redrive(["--config", conf] + list(args), tmpdir=tmp_path,
                              env_extra={"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"})


def check_lines(out):
    res = {}
    for ln in out.splitlines():
        if ln.startswith("  ") and ": " in ln:
            what, msg = ln[4:].split(": ", 1)
            res[what.strip()] = msg
    return res


READ_ONLY = [pytest.param((), True, id="read_only-key"), pytest.param(("--read-only",), False,
                                                                       id="flag")]


@pytest.mark.parametrize("mode", ["jwt-login", "token-command"])
@pytest.mark.parametrize("flag,key", READ_ONLY)
def test_snapshot_read_only_is_anonymous(core, tmp_path, mode, flag, key):
    conf, markers = config(tmp_path, core, mode, read_only_key=key)
    p = run(tmp_path, conf, *flag, "snapshot", "--json")
    assert p.returncode == 0, p.stdout + p.stderr
    snap = json.loads(p.stdout)
    # up (an anonymous GET /auth/me answered 401), and no identity: nothing was sent
    assert snap["core"]["state"] == "ok" and snap["core"]["identity"] is None, snap["core"]
    log = core.access_log()
    assert "GET /auth/me" in log and "/auth/login" not in log, log
    assert [m for m in markers if m.exists()] == []


@pytest.mark.parametrize("mode", ["jwt-login", "token-command", "dev-user"])
@pytest.mark.parametrize("flag,key", READ_ONLY)
def test_check_read_only_is_anonymous(core, tmp_path, mode, flag, key):
    conf, markers = config(tmp_path, core, mode, read_only_key=key)
    p = run(tmp_path, conf, *flag, "check")
    assert p.returncode == 0, p.stdout + p.stderr
    lines = check_lines(p.stdout)
    assert lines["identity"] == ("not asked: read-only never logs in (the core answered an "
                                 "anonymous GET /auth/me with HTTP 401)"), p.stdout
    assert lines["auth"].startswith("read-only: actions are disabled"), p.stdout
    assert "password" not in lines and "token" not in lines, p.stdout
    log = core.access_log()
    assert "GET /auth/me" in log and "/auth/login" not in log, log
    assert [m for m in markers if m.exists()] == []


@pytest.mark.parametrize("mode", ["jwt-login", "token-command"])
def test_control_without_read_only_logs_in(core, tmp_path, mode):
    """The markers and the log do show a login when there is one."""
    conf, markers = config(tmp_path, core, mode)
    p = run(tmp_path, conf, "check")
    assert p.returncode == 0, p.stdout + p.stderr
    assert check_lines(p.stdout)["identity"].startswith("the core says "), p.stdout
    assert all(m.exists() for m in markers)
    assert ("POST /auth/login" in core.access_log()) == (mode == "jwt-login")
