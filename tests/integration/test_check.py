"""redrive check: the doctor, against the local stack (tests/stack/README.md).

The demo config (scripts/demo-config.sh) must be check-clean: every line ✓, exit 0. A dead
Redis port, a wrong core token and an unset env: secret each give their own ✗ line with a
fix and exit 3; usage and configuration errors exit 2. --json says the same as the text.
"""
import json
import os
import re
import subprocess

import pytest

from snaphelp import ROOT, assert_clean_text, need_env, rd_bin, write_config

SECRET_VARS = ("RD_CORE_TOKEN", "RD_CORE_API_KEY", "RD_CORE_PASSWORD", "RD_RABBIT_PASSWORD")
OK, WARN, FAIL = "\u2713", "!", "\u2717"


class Run:
    def __init__(self, p):
        self.rc = p.returncode
        self.out = p.stdout.decode("utf-8")
        self.err = p.stderr.decode("utf-8", "replace")

    @property
    def json(self):
        return json.loads(self.out)


def check(config, *args, lang="C.UTF-8", env_extra=None):
    env = dict(os.environ, TZ="UTC", LANG=lang, LC_ALL=lang, NO_COLOR="1",
               REDRIVE_PROFILES=os.path.join(ROOT, "profiles"))
    env.update(env_extra or {})
    p = subprocess.run([rd_bin(), "--config", config, "check"] + list(args),
                       capture_output=True, timeout=60, env=env)
    r = Run(p)
    for name in SECRET_VARS:                  # never a secret's value
        v = os.environ.get(name)
        if v:
            assert v not in r.out and v not in r.err, "%s leaked" % name
    assert_clean_text(r.out)
    return r


def lines_of(out):
    """{system: [(mark, check, rest)]} of the text output; None = the global lines."""
    res, cur = {}, None
    for ln in out.splitlines():
        m = re.match(r"system (\S+) \(profile (\S+)\)$", ln)
        if m:
            cur = m.group(1)
            res[cur] = []
            continue
        m = re.match(r"  (\S+)\s+([^:]+): (.*)$", ln)
        if m:
            res.setdefault(cur, []).append(m.groups())
    return res


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    need_env("RD_STACK_DIR", "RD_PG_DSN_TASKER", "RD_REDIS_URL", "RD_CORE_URL_TASKER")
    text = subprocess.run(["bash", os.path.join(ROOT, "scripts", "demo-config.sh"),
                           os.path.join(os.environ["RD_STACK_DIR"], "env")],
                          capture_output=True, check=True).stdout.decode()
    p = tmp_path_factory.mktemp("check") / "demo.conf"
    p.write_text(text)
    return str(p)


def test_demo_config_is_check_clean(demo):
    r = check(demo)
    assert r.rc == 0, r.out + r.err
    assert r.err == ""
    got = lines_of(r.out)
    assert set(got) == {None, "attune", "attune-era1", "tasker", "alakai", "openagents"}
    for system, lines in got.items():
        assert lines, system
        bad = [ln for ln in lines if ln[0] != OK]
        assert not bad, (system, bad)
    assert r.out.rstrip().endswith("0 failed, 0 warnings")
    checks = {s: {ln[1]: ln[2] for ln in lines} for s, lines in got.items()}
    for s in ("attune", "attune-era1", "tasker", "openagents"):
        assert re.match(r"PostgreSQL 1\d\.\d+.*, connected$", checks[s]["store"]), checks[s]
        assert checks[s]["read-only"].startswith("session is read-only")
    assert checks["attune"]["profile"].startswith("attune-era2")
    assert checks["attune-era1"]["profile"].startswith("attune-era1")
    assert re.match(r"Redis 7\.\d+\.\d+, connected$", checks["alakai"]["store"])
    assert checks["alakai"]["keyspace events"].startswith("notifications on")
    assert re.match(r"RabbitMQ 3\.\d+\.\d+, \d+ queues read$", checks["attune"]["broker"])
    assert "attune.dlx.queue" in checks["attune"]["dlq"]
    assert "pgmq not installed" in checks["tasker"]["features"]
    # Tasker without a broker: its DLQ is tasks_dlq only, never "on the broker"
    assert re.fullmatch(r"pgmq not installed \(the queues panel stays empty\), DLQ in the store \(\d+ pending\)",
                        checks["tasker"]["features"]), checks["tasker"]["features"]
    # Alakai's DLQ: its store's dead letters and SQS, never "no DLQ"
    assert re.fullmatch(r"DLQ in the store \(\d+ pending\) and on SQS", checks["alakai"]["features"]), \
        checks["alakai"]["features"]
    assert checks["attune"]["features"] == "pgmq not installed, DLQ on the broker", checks["attune"]
    assert checks["tasker"]["identity"] == "the core says tasker-bot (role operator, via api-key)"
    assert checks["alakai"]["identity"].startswith("the core says dev:demo-operator")
    assert checks["attune"]["identity"].startswith("the core says ")
    assert checks["tasker"]["token"] == "env:RD_CORE_API_KEY resolves"
    assert checks[None]["dns"] == "libcurl resolves names without blocking"


def test_json_says_what_the_text_says(demo):
    t, j = check(demo), check(demo, "--json")
    assert t.rc == j.rc == 0
    doc = j.json
    assert doc["ok"] is True and doc["failed"] == 0 and doc["warnings"] == 0
    text = lines_of(t.out)
    marks = {"ok": OK, "warning": WARN, "failed": FAIL}

    def as_lines(checks):
        return [(marks[c["status"]], c["check"],
                 c["message"] + (" - fix: " + c["fix"] if c["fix"] else "")) for c in checks]
    assert as_lines(doc["checks"]) == text[None]
    assert [s["name"] for s in doc["systems"]] == [s for s in text if s]
    for s in doc["systems"]:
        assert as_lines(s["checks"]) == text[s["name"]], s["name"]


def test_one_system_and_ascii(demo):
    r = check(demo, "--system", "tasker", lang="C")
    assert r.rc == 0, r.out + r.err
    assert list(lines_of(r.out)) == [None, "tasker"]
    assert r.out.isascii()
    assert all(ln[0] == "ok" for ln in lines_of(r.out)["tasker"])
    r2 = check(demo, "--ascii", "--system=tasker")
    assert r2.out == r.out


@pytest.fixture(scope="module")
def broken(tmp_path_factory):
    need_env("RD_PG_DSN_OPENAGENTS", "RD_PG_DSN_ATTUNE2", "RD_RABBIT_MGMT_URL")
    e = os.environ
    return write_config(tmp_path_factory.mktemp("broken"), {
        "deadredis": {"profile": "alakai", "store": "redis://127.0.0.1:1/0",
                      "core": e["RD_CORE_URL_ALAKAI"], "auth": "dev-user",
                      "dev_user": "demo-operator", "local": "true"},
        "badtoken": {"profile": "openagents", "store": e["RD_PG_DSN_OPENAGENTS"],
                     "core": e["RD_CORE_URL_OPENAGENTS"], "auth": "bearer",
                     "token": "env:RD_CHECK_WRONG_TOKEN"},
        "badpass": {"profile": "attune", "store": e["RD_PG_DSN_ATTUNE2"],
                    "core": e["RD_CORE_URL_ATTUNE2"], "auth": "jwt-login",
                    "login": e["RD_CORE_LOGIN"], "password": "env:RD_CHECK_WRONG_TOKEN"},
        "deadcore": {"profile": "attune", "store": e["RD_PG_DSN_ATTUNE2"],
                     "core": "http://127.0.0.1:1", "auth": "jwt-login",
                     "login": e["RD_CORE_LOGIN"], "password": "env:RD_CHECK_WRONG_TOKEN"},
        "nopass": {"profile": "attune", "store": e["RD_PG_DSN_ATTUNE2"],
                   "broker": e["RD_RABBIT_MGMT_URL"], "broker_user": e["RD_RABBIT_USER"],
                   "broker_password": "env:NOPE", "dlq": "attune.dlx.queue",
                   "core": e["RD_CORE_URL_ATTUNE2"], "auth": "bearer",
                   "token": "env:RD_CORE_TOKEN"},
    })


def test_each_problem_has_its_line(broken):
    r = check(broken, env_extra={"RD_CHECK_WRONG_TOKEN": "not-the-token", "NOPE": ""})
    # an unusable secret reference is a configuration error (exit 2), named by file:line,
    # and the other systems are still checked
    assert r.rc == 2, r.out + r.err
    got = lines_of(r.out)
    fails = {s: [(c, m) for mk, c, m in lines if mk == FAIL] for s, lines in got.items() if s}
    assert len(fails["deadredis"]) == 1
    c, m = fails["deadredis"][0]
    assert c == "store" and "Connection refused" in m and " - fix: is the server running" in m
    assert fails["badtoken"] == [("identity", "the core refused the credentials (HTTP 401)"
                                  " - fix: check the credentials for auth = (token, "
                                  "login/password)")]
    # a login the core refused: the core answered, so the fix is the password, never
    # "is the core running"; a core that does not answer is named by its address
    assert fails["badpass"] == [("identity", "credentials: login refused for '%s' (HTTP 401)"
                                 " - fix: check login and password for auth = jwt-login (the "
                                 "core refused them)" % os.environ["RD_CORE_LOGIN"])]
    ((what, msg),) = fails["deadcore"]
    assert what == "identity" and msg.startswith("credentials: login: core unreachable: ")
    assert msg.endswith(" - fix: is the core running at 127.0.0.1:1 (core =)?"), msg
    (cfg,) = fails["nopass"]
    assert cfg[0] == "config" and re.search(
        r'config:\d+: system "nopass": broker_password: environment variable NOPE is empty'
        r' - fix: correct that line of the config$', cfg[1]), cfg
    assert re.search(r'config:\d+: system "nopass": broker_password: environment variable '
                     r'NOPE is empty', r.err), r.err
    # what works is still said to work
    ok = {s: {c for mk, c, m in lines if mk == OK} for s, lines in got.items() if s}
    assert {"store", "read-only", "auth"} <= ok["badtoken"]
    assert "identity" in ok["deadredis"]
    assert r.out.rstrip().endswith("5 failed, 0 warnings")
    j = check(broken, "--json", env_extra={"RD_CHECK_WRONG_TOKEN": "not-the-token"})
    assert j.rc == 2 and j.json["ok"] is False and j.json["failed"] == 5


def test_usage_and_config_errors(demo, tmp_path):
    r = check(demo, "--system", "nope")
    assert r.rc == 2 and "no system named 'nope'" in r.err and r.out == ""
    r = check(demo, "--frobnicate")
    assert r.rc == 2 and "unknown argument" in r.err
    bad = tmp_path / "bad.conf"
    bad.write_text('[system "x"]\nprofile = tasker\nstore = %s\ntoken = literal-secret\n'
                   % os.environ["RD_PG_DSN_TASKER"])
    r = check(str(bad))
    assert r.rc == 2 and "bad.conf:4:" in r.err and r.out == ""
    r = check(str(tmp_path / "missing.conf"))
    assert r.rc == 2
