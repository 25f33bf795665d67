"""Config and key files trusted like OpenSSH trusts its own (issue 21).

A config file owned by someone other than the user (or root), or writable by group or
others, is refused before anything in it runs: a `cmd:` secret in it would run as us. A
config readable by others that holds a credential written in it gets a warning. A TLS
client key (store_key, store_sslkey, or store_cert holding the key) gets the owner/mode
rule of `file:` secrets. Runs as root in CI: "another user" is nobody (chown).
No server is needed: the refusals come before any connection."""
import os
import pwd
import subprocess

import pytest

from snaphelp import ROOT, rd_bin

NOBODY = pwd.getpwnam("nobody").pw_uid
ME = os.geteuid()


def run(config, *args, timeout=30):
    env = dict(os.environ, TZ="UTC", LANG="C.UTF-8", LC_ALL="C.UTF-8", NO_COLOR="1",
               REDRIVE_PROFILES=os.path.join(ROOT, "profiles"))
    return subprocess.run([rd_bin(), "--config", config] + list(args), capture_output=True,
                          text=True, timeout=timeout, env=env, stdin=subprocess.DEVNULL)


def config_with_cmd(tmp_path, mode, owner=None):
    """A config whose token is a cmd: that leaves a mark when it runs."""
    mark = tmp_path / "cmd-ran"
    p = tmp_path / "config"
    p.write_text('[system "a"]\nprofile = tasker\nstore = host=127.0.0.1 port=1 dbname=x\n'
                 "core = http://127.0.0.1:9\nauth = bearer\ntoken = cmd:touch %s; echo tok\n"
                 % mark)
    os.chmod(p, mode)
    if owner is not None:
        os.chown(p, owner, -1)
    return str(p), mark


@pytest.mark.parametrize("cmd", [["check"], ["snapshot", "--json"]])
@pytest.mark.parametrize("mode,owner,why", [
    (0o644, NOBODY, "is owned by uid %d, not by you (uid %d)" % (NOBODY, ME)),
    (0o666, None, "is group/world writable (mode 666): chmod go-w it"),
    (0o620, None, "is group/world writable (mode 620): chmod go-w it"),
])
def test_untrusted_config_is_refused_before_a_cmd_runs(tmp_path, cmd, mode, owner, why):
    if ME != 0 and owner is not None:
        pytest.skip("chown to another user needs root (CI runs as root)")
    path, mark = config_with_cmd(tmp_path, mode, owner)
    r = run(path, *cmd)
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert "%s: config file %s %s; nothing in it is used" % (path, path, why) in r.stderr, r.stderr
    assert not mark.exists(), "the cmd: of a refused config ran"


def test_trusted_config_runs_its_cmd(tmp_path):
    """The control: the same file, ours and 0644, is used (its cmd: runs)."""
    path, mark = config_with_cmd(tmp_path, 0o644)
    r = run(path, "check")
    assert "nothing in it is used" not in r.stderr, r.stderr
    assert r.returncode == 3, (r.returncode, r.stdout, r.stderr)   # the store is not there
    assert mark.exists()


def test_a_fifo_as_config_is_refused_quickly(tmp_path):
    p = tmp_path / "config"
    os.mkfifo(p, 0o600)
    r = run(str(p), "check", timeout=10)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "config file %s is not a regular file (a FIFO)" % p in r.stderr, r.stderr


def inline_config(tmp_path, mode):
    p = tmp_path / "config"
    p.write_text('[system "a"]\nprofile = attune\nstore = host=127.0.0.1 port=1 dbname=x\n'
                 "broker = http://guest:hunter2@127.0.0.1:9/\nbroker_password = env:NOPE\n")
    os.chmod(p, mode)
    return str(p)


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604])
def test_readable_config_with_a_credential_warns(tmp_path, mode):
    path = inline_config(tmp_path, mode)
    r = run(path, "check")
    want = ("%s:4: warning: this file holds a credential and is readable by group/world "
            "(mode %03o): chmod 600 it, or reference the secret (env:NAME, file:PATH, "
            "cmd:COMMAND)" % (path, mode))
    assert want in r.stderr, r.stderr
    assert "hunter2" not in r.stderr + r.stdout
    assert "nothing in it is used" not in r.stderr       # a warning: the file is used


def test_private_config_with_a_credential_does_not_warn(tmp_path):
    path = inline_config(tmp_path, 0o600)
    r = run(path, "check")
    assert "warning: this file holds a credential" not in r.stderr, r.stderr


def test_readable_config_without_credentials_does_not_warn(tmp_path):
    path, _ = config_with_cmd(tmp_path, 0o644)
    r = run(path, "check")
    assert "warning: this file holds a credential" not in r.stderr, r.stderr


def key_config(tmp_path, key_mode, key_owner=None, with_key=True):
    cert, key = tmp_path / "client.pem", tmp_path / "client.key"
    cert.write_text("-----BEGIN CERTIFICATE-----\n")
    key.write_text("-----BEGIN PRIVATE KEY-----\n")
    os.chmod(cert, 0o644)
    target = key if with_key else cert
    os.chmod(target, key_mode)
    if key_owner is not None:
        os.chown(target, key_owner, -1)
    p = tmp_path / "config"
    lines = ['[system "a"]', "profile = alakai", "store = rediss://127.0.0.1:1/0",
             "store_cert = %s" % cert]
    if with_key:
        lines.append("store_key = %s" % key)
    p.write_text("\n".join(lines) + "\n")
    return str(p), str(target)


@pytest.mark.parametrize("mode,owner,with_key,why", [
    (0o644, None, True, "is group/world readable or writable (mode 644): chmod 600 it"),
    (0o640, None, True, "is group/world readable or writable (mode 640): chmod 600 it"),
    (0o600, NOBODY, True, "is owned by uid %d, not by you (uid %d)" % (NOBODY, ME)),
    # no store_key: the key is inside store_cert, which is then the secret
    (0o644, None, False, "is group/world readable or writable (mode 644): chmod 600 it"),
])
def test_client_key_is_checked_like_a_file_secret(tmp_path, mode, owner, with_key, why):
    if ME != 0 and owner is not None:
        pytest.skip("chown to another user needs root (CI runs as root)")
    path, key = key_config(tmp_path, mode, owner, with_key)
    r = run(path, "check")
    setting = "store_key" if with_key else "store_cert"
    line = 5 if with_key else 4
    want = '%s:%d: system "a": %s: client key %s %s' % (path, line, setting, key, why)
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert want in r.stderr, r.stderr


def test_private_client_key_passes_the_check(tmp_path):
    path, key = key_config(tmp_path, 0o600)
    r = run(path, "check")
    assert "client key" not in r.stderr + r.stdout, r.stderr
