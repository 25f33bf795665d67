"""Each auth mode of SPEC §4 against the reference core: identity, caching, expiry, refresh,
re-login, refusals. Requests here retry nonexistent executions (404): nothing is mutated."""
import os
import re
import stat
import sys

import pytest

import actlib
from conftest import keys_of

MISSING = "424242"


def identities(core, keys):
    return [e["identity"] for e in actlib.core_actions(core) if e.get("key") in keys]


def write_script(tmp_path, name, body):
    p = tmp_path / name
    p.write_text("#!/bin/sh\n" + body)
    p.chmod(0o700)
    return str(p)


def test_bearer_env_identity(act):
    a = act("attune1")
    p = a.run("retry", MISSING, "--yes", "--force")
    assert "no such execution" in p.stdout
    assert identities(a.core, keys_of(p.stdout)) == ["alice"]
    assert a.journal()[-1]["operator"] == "alice"


def test_bearer_file_private_ok(act, tmp_path):
    f = tmp_path / "tok"
    f.write_text(os.environ["RD_CORE_TOKEN"] + "\n")
    f.chmod(0o600)
    a = act("attune1", token="file:%s" % f)
    p = a.run("retry", MISSING, "--yes", "--force")
    assert "no such execution" in p.stdout, p.stdout + p.stderr


def test_bearer_file_group_readable_refused(act, tmp_path):
    f = tmp_path / "tok"
    f.write_text(os.environ["RD_CORE_TOKEN"] + "\n")
    f.chmod(0o640)
    a = act("attune1", token="file:%s" % f)
    before = len(actlib.core_actions(a.core))
    p = a.run("retry", MISSING, "--yes", "--force")
    # found when the system is opened: a config error with file:line, nothing sent
    assert p.returncode == 2, p.stdout + p.stderr
    assert "%s:" % a.config in p.stderr and "token" in p.stderr and "group/world" in p.stderr
    assert len(actlib.core_actions(a.core)) == before


def test_token_command_cached(act, tmp_path):
    count = tmp_path / "count"
    cmd = write_script(tmp_path, "tok.sh", 'echo x >> "%s"; printf "%%s\\n" "$RD_CORE_TOKEN"\n'
                       % count)
    a = act("attune1", auth="token-command", token_command=cmd, token=None, rate_limit=20)
    p = a.run("retry", "424241", "424242", "424243", "--yes", "--force")
    assert p.stdout.count("no such execution") == 3, p.stdout + p.stderr
    assert count.read_text().count("x") == 1
    assert identities(a.core, keys_of(p.stdout)) == ["alice"] * 3


def test_token_command_rerun_after_401(act, tmp_path):
    count = tmp_path / "count"
    cmd = write_script(tmp_path, "tok.sh", 'echo x >> "%s"\n'
                       'if [ "$(wc -l < "%s")" -le 1 ]; then echo stale-token; '
                       'else printf "%%s\\n" "$RD_CORE_TOKEN"; fi\n' % (count, count))
    a = act("attune1", auth="token-command", token_command=cmd, token=None)
    p = a.run("retry", MISSING, "--yes", "--force")
    assert "no such execution" in p.stdout, p.stdout + p.stderr
    assert count.read_text().count("x") == 2


def test_token_command_same_token_after_401_not_resent(act, tmp_path):
    """A 401 re-runs the token command once; the same token again means no second POST."""
    count = tmp_path / "count"
    cmd = write_script(tmp_path, "tok.sh", 'echo x >> "%s"; echo stale-token\n' % count)
    srv = actlib.CoreServer("attune1", tmp_path)
    try:
        a = act("attune1", core=srv.url, auth="token-command", token_command=cmd, token=None)
        p = a.run("retry", MISSING, "--yes", "--force")
        assert p.returncode == 1
        assert "unauthorized: not authorized (HTTP 401" in p.stdout, p.stdout + p.stderr
        assert count.read_text().count("x") == 2
        log = [e for e in srv.actions() if e["route"].endswith("/executions/%s/retry" % MISSING)]
        assert [e["status"] for e in log] == [401]
    finally:
        srv.stop()


def test_token_command_jwt_exp(act, tmp_path):
    count = tmp_path / "count"
    mint = "%s %s mint-token --sub cmd-user --ttl 2" % (
        actlib.PY, os.path.join(actlib.ROOT, "tools", "coresrv", "coresrv.py"))
    cmd = write_script(tmp_path, "tok.sh", 'echo x >> "%s"; %s\n' % (count, mint))
    a = act("attune1", auth="token-command", token_command=cmd, token=None, rate_limit=1)
    p = a.run("retry", "424241", "424242", "424243", "424244", "--yes", "--force")
    assert p.stdout.count("no such execution") == 4, p.stdout + p.stderr
    assert count.read_text().count("x") >= 2        # re-run when the JWT neared exp
    assert set(identities(a.core, keys_of(p.stdout))) == {"cmd-user"}
    assert a.journal()[-1]["operator"] == "cmd-user"


def test_token_command_failure(act, tmp_path):
    cmd = write_script(tmp_path, "tok.sh", "echo nope >&2; exit 3\n")
    a = act("attune1", auth="token-command", token_command=cmd, token=None)
    p = a.run("retry", MISSING, "--yes", "--force")
    assert p.returncode == 1
    assert "token_command: command exited with status 3" in p.stdout


def test_jwt_login_refresh_and_relogin(act, tmp_path):
    srv = actlib.CoreServer("attune1", tmp_path, "--jwt-ttl", "2", "--refresh-ttl", "30",
                            quiet=False)
    try:
        a = act("attune1", core=srv.url, auth="jwt-login", token=None,
                login=os.environ["RD_CORE_LOGIN"], password="env:RD_CORE_PASSWORD",
                rate_limit=1)
        p = a.run("retry", "424241", "424242", "424243", "424244", "--yes", "--force")
        assert p.stdout.count("no such execution") == 4, p.stdout + p.stderr
        log = srv.access_log()
        assert log.count("POST /auth/login") == 1
        assert log.count("POST /auth/refresh") >= 1
        assert set(identities(srv.url, keys_of(p.stdout))) == {"ops"}
        assert a.journal()[-1]["operator"] == "ops"
    finally:
        srv.stop()
    srv = actlib.CoreServer("attune1", tmp_path, "--jwt-ttl", "1", "--refresh-ttl", "1",
                            quiet=False)
    try:
        pwcmd = write_script(tmp_path, "pw.sh", 'printf "%s\\n" "$RD_CORE_PASSWORD"\n')
        a = act("attune1", core=srv.url, auth="jwt-login", token=None,
                login=os.environ["RD_CORE_LOGIN"], password="cmd:" + pwcmd, rate_limit=0.5)
        p = a.run("retry", "424241", "424242", "--yes", "--force")
        assert p.stdout.count("no such execution") == 2, p.stdout + p.stderr
        assert srv.access_log().count("POST /auth/login") == 2   # refresh expired → login
    finally:
        srv.stop()


def test_jwt_login_bad_password(act):
    a = act("attune1", auth="jwt-login", token=None, login=os.environ["RD_CORE_LOGIN"],
            password="env:WRONG_PW")
    p = a.run("retry", MISSING, "--yes", "--force", env={"WRONG_PW": "definitely-wrong"})
    assert p.returncode == 1
    # the login's status, and no HTTP status of its own: the retry never left
    assert re.fullmatch(r"%s: unauthorized: not authorized: login refused for 'ops' \(HTTP 401\) "
                        r"\(not sent, key [0-9a-f]{32}\)\n" % re.escape(MISSING), p.stdout), p.stdout
    assert "definitely-wrong" not in p.stdout + p.stderr


def test_api_key_identity(act):
    a = act("tasker", auth="api-key", token="env:RD_CORE_API_KEY")
    p = a.run("retry", "00000000-0000-4000-8000-100000000099/00000000-0000-4000-8000-"
              "200000000099", "--yes", "--force")
    assert p.returncode == 1 and "not_found" in p.stdout, p.stdout + p.stderr
    assert identities(a.core, keys_of(p.stdout)) == ["tasker-bot"]


def test_dev_user_local_loopback(act):
    a = act("attune1", auth="dev-user", token=None, dev_user="carol", local=True)
    p = a.run("retry", MISSING, "--yes", "--force")
    assert "no such execution" in p.stdout, p.stdout + p.stderr
    assert identities(a.core, keys_of(p.stdout)) == ["dev:carol"]
    assert a.journal()[-1]["operator"] == "dev:carol"


def assert_config_refused(a, p, line, message):
    """The config parser refuses the system: exit 2, `file:line: message`, nothing sent."""
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert p.stderr.splitlines()[0] == "%s:%d: %s" % (a.config, line, message), p.stderr
    assert p.stdout == "", p.stdout


def test_dev_user_refused_unless_local(act):
    before = len(actlib.core_actions(os.environ["RD_CORE_URL_ATTUNE1"]))
    a = act("attune1", auth="dev-user", token=None, dev_user="carol", local=False)
    p = a.run("retry", MISSING, "--yes", "--force")
    assert_config_refused(a, p, 5, "auth = dev-user needs the system marked 'local = true'")
    a = act("attune1", core="https://core.example.invalid", auth="dev-user", token=None,
            dev_user="carol", local=True)
    p = a.run("retry", MISSING, "--yes", "--force")
    assert_config_refused(a, p, 5, "auth = dev-user is only allowed with a loopback core URL")
    assert len(actlib.core_actions(os.environ["RD_CORE_URL_ATTUNE1"])) == before


def test_plain_http_non_loopback_refused(act):
    a = act("attune1", core="http://192.0.2.1:9")
    p = a.run("retry", MISSING, "--yes", "--force")
    assert_config_refused(a, p, 4, "'core' uses plain http:// to '192.0.2.1', which is not a "
                          "loopback host (localhost, 127.0.0.0/8, ::1): use https:// "
                          "(or set insecure = yes, shown in the banner)")
    a = act("attune1", core="http://192.0.2.1:9", insecure=True)
    p = a.run("retry", MISSING, "--yes", "--force", env={"REDRIVE_ACTION_TIMEOUT_MS": "1000"})
    assert p.returncode == 1
    assert "refusing" not in p.stderr
    assert "unreachable" in p.stdout


def test_auth_none_gets_401(act):
    a = act("attune1", auth="none", token=None)
    p = a.run("retry", MISSING, "--yes", "--force")
    assert p.returncode == 1 and "not authorized" in p.stdout


@pytest.mark.parametrize("text,why", [("1e999", "out of range (not a finite number)"),
                                      ("-5", "below 0")])
def test_jwt_login_bad_expires_in_refused(act, tmp_path, text, why):
    """A token response whose expires_in is not finite or below 0 is refused, said, and
    nothing is sent (before: 1e999 made a token that never expired, -5 was ignored)."""
    srv = actlib.CoreServer("attune1", tmp_path, "--expires-in", text, quiet=False)
    try:
        a = act("attune1", core=srv.url, auth="jwt-login", token=None,
                login=os.environ["RD_CORE_LOGIN"], password="env:RD_CORE_PASSWORD")
        p = a.run("retry", MISSING, "--yes", "--force")
        assert p.returncode == 1, p.stdout + p.stderr
        assert ("login: the core's token response has expires_in %s; its token is not used"
                % why) in p.stdout, p.stdout + p.stderr
        log = srv.access_log()
        assert log.count("POST /auth/login") == 1
        assert "/retry" not in log and "/executions" not in log, log
    finally:
        srv.stop()
