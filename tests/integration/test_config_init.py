"""`redrive config init`: the commented template of each profile is written 0600, never
over an existing file; it passes the config parser, and `redrive check` names its
placeholders (the store's environment variable) as what to fill in; secrets appear only
as references. No services needed."""
import os
import re
import stat
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("RD_BIN", os.path.join(ROOT, "build", "src", "cli", "redrive"))
PROFILES = ["attune", "tasker", "alakai", "openagents"]
# keys each template must carry (set or commented out), by what the profile uses
COMMON = {"profile", "store", "queues", "core", "auth", "token", "cacert", "banner", "read_only", "poll",
          "journal_syslog"}
KEYS = {
    "attune": COMMON | {"schema", "store_sslmode", "store_sslrootcert", "broker", "broker_user",
                        "broker_password", "broker_vhost", "dlq"},
    "tasker": COMMON | {"schema", "store_sslmode", "store_sslrootcert", "broker", "broker_user",
                        "broker_password", "broker_vhost", "dlq", "workers"},
    "alakai": COMMON | {"store_user", "store_password", "store_cacert", "prefix", "max_retries", "orphan_after",
                        "sweep_budget", "sqs_queue_url", "sqs_region", "aws_profile"},
    "openagents": COMMON | {"schema", "store_sslmode", "store_sslrootcert"},
}


def run(*args, env_extra=None, cwd=None):
    env = {"PATH": "/usr/bin:/bin", "HOME": cwd or "/nonexistent", "LC_ALL": "C.UTF-8", "TERM": "dumb",
           "REDRIVE_PROFILES": os.path.join(ROOT, "profiles")}
    env.update(env_extra or {})
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=30, env=env, cwd=cwd)


@pytest.mark.parametrize("profile", PROFILES)
def test_template_parses_and_check_names_the_placeholders(tmp_path, profile):
    path = tmp_path / "sub" / "dir" / "config"
    r = run("config", "init", "--profile", profile, "--system", "prod eu", str(path))
    assert r.returncode == 0, r.stderr
    assert r.stdout == ("wrote %s (mode 0600)\nnext: fill in its placeholders, then run: "
                        "redrive --config %s check\n" % (path, path))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    text = path.read_text()
    keys = set(re.findall(r"^(?:# )?([a-z_]+) = ", text, re.M))
    assert keys == KEYS[profile]
    # every key has its meaning on the line before it
    for k in keys:
        assert re.search(r"^# %s: .+\n(?:#.*\n)*(?:# )?%s = " % (k, k), text, re.M), k
    # secrets only as references
    for k in ("store", "store_password", "broker_password", "token"):
        m = re.search(r"^(?:# )?%s = (.*)$" % k, text, re.M)
        if m:
            assert m.group(1).startswith("env:REDRIVE_PROD_EU_"), (k, m.group(1))
    set_lines = [l for l in text.splitlines() if l and not l.startswith("#")]
    assert set_lines == ['[system "prod eu"]', "profile = %s" % profile, "store = env:REDRIVE_PROD_EU_STORE"]
    # the parser takes it; check names the one placeholder to fill in, nothing else
    c = run("--config", str(path), "check")
    assert c.returncode == 2, c.stdout + c.stderr
    line = text.splitlines().index("store = env:REDRIVE_PROD_EU_STORE") + 1
    assert c.stderr == ('%s:%d: system "prod eu": store: environment variable REDRIVE_PROD_EU_STORE is not set\n'
                        % (path, line))
    assert "1 failed, 0 warnings" in c.stdout


def test_never_overwrites(tmp_path):
    path = tmp_path / "config"
    path.write_text("# mine\n")
    os.chmod(path, 0o640)
    r = run("config", "init", "--profile", "tasker", str(path))
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == ("redrive config init: %s exists: not overwritten (check it with `redrive check`)\n" % path)
    assert path.read_text() == "# mine\n" and stat.S_IMODE(path.stat().st_mode) == 0o640
    # a symbolic link is not followed either
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "elsewhere")
    r = run("config", "init", str(link))
    assert r.returncode == 2 and not (tmp_path / "elsewhere").exists()


def test_defaults_and_errors(tmp_path):
    # no PATH: --config, else the default path under HOME; the default profile is attune
    r = run("config", "init", cwd=str(tmp_path))
    want = tmp_path / ".config" / "redrive" / "config"
    assert r.returncode == 0 and r.stdout.startswith("wrote %s (mode 0600)\n" % want), r.stderr
    assert "profile = attune\n" in want.read_text() and '[system "attune"]\n' in want.read_text()
    r = run("--config", str(tmp_path / "c2"), "config", "init", "--profile", "openagents")
    assert r.returncode == 0 and "profile = openagents\n" in (tmp_path / "c2").read_text()
    r = run("config", "init", "--profile", "nope", str(tmp_path / "c3"))
    assert r.returncode == 2 and "nope" in r.stderr and not (tmp_path / "c3").exists()
    r = run("config", "init", "--system", 'a"b', str(tmp_path / "c4"))
    assert r.returncode == 2 and "bad system name" in r.stderr and not (tmp_path / "c4").exists()
    r = run("config", "init", "--frob", str(tmp_path / "c5"))
    assert r.returncode == 2 and "unknown argument '--frob'" in r.stderr
    r = run("config", "nope")
    assert r.returncode == 2 and r.stderr.startswith("usage: redrive config init")
