"""Every directory on the way to the state directory is checked (security issue 32, after
OpenSSH's safe_path): a service account with HOME under a directory another user owns or
a group can write gets a refusal naming the path and the reason, before anything is sent
or written; batches/ is checked like the state directory, and a batch record that is a
symbolic link is never followed (neither read nor appended to)."""
import json
import os
import pwd

import pytest

import actlib

NOBODY = pwd.getpwnam("nobody").pw_uid


def need_root():
    if os.geteuid() != 0:
        pytest.fail("chown to another user needs root (CI runs as root)")


def untrusted_parent(tmp_path, how):
    """tmp_path/parent: owned by nobody (0755) or ours and group-writable (0775)."""
    need_root()
    parent = tmp_path / "parent"
    parent.mkdir(mode=0o755)
    if how == "nobody":
        os.chown(parent, NOBODY, NOBODY)
        reason = "is owned by uid %d, not by you (uid 0) or root" % NOBODY
    else:
        os.chmod(parent, 0o775)
        reason = "is group/world writable (mode 0775): chmod go-w it"
    return parent, "the directory %s %s" % (parent, reason)


@pytest.mark.parametrize("how", ["nobody", "group-writable"])
def test_home_under_an_untrusted_parent_is_refused(act, tmp_path, how):
    parent, reason = untrusted_parent(tmp_path, how)
    home = parent / "home"
    home.mkdir(mode=0o700)            # ours, 0700: only its parent is wrong
    srv = actlib.CoreServer("attune1", tmp_path)
    try:
        a = act("attune1", core=srv.url)
        env = {"HOME": str(home), "XDG_STATE_HOME": ""}
        p = a.run("retry", "424242", "--yes", "--force", env=env, timeout=15)
        state = home / ".local" / "state" / "redrive"
        want = "refusing to act without an audit journal: state directory %s: %s" % (state, reason)
        assert p.returncode == 1, (p.returncode, p.stdout, p.stderr)
        assert want in p.stdout + p.stderr, p.stdout + p.stderr
        assert [e for e in actlib.core_actions(srv.url) if e["route"].endswith("/retry")] == []
        assert os.listdir(home) == []   # nothing made under it
        # batch list reads STATE/batches: refused with the same reason, not "no batches"
        p = a.run("batch", "list", "--json", env=env)
        assert p.returncode != 0, (p.returncode, p.stdout, p.stderr)
        want = "batches directory %s/batches: %s" % (state, reason)
        assert want in p.stderr, p.stderr
        assert p.stdout == "", p.stdout
    finally:
        srv.stop()


def test_a_group_writable_batches_directory_is_refused(act, tmp_path):
    a = act("attune1")
    d = tmp_path / "state" / "redrive" / "batches"
    d.mkdir(parents=True, mode=0o700)
    os.chmod(d, 0o770)
    p = a.run("batch", "list", "--json")
    assert p.returncode != 0, (p.returncode, p.stdout, p.stderr)
    assert ("batches directory %s is group/world writable (mode 770): chmod go-w it" % d) \
        in p.stderr, p.stderr
    assert p.stdout == ""


def test_a_symlinked_batch_record_is_not_followed(act, tmp_path):
    a = act("attune1")
    d = tmp_path / "state" / "redrive" / "batches"
    d.mkdir(parents=True, mode=0o700)
    bid = "0123456789abcdef"
    elsewhere = tmp_path / "elsewhere.batch"
    head = {"batch": bid, "system": "attune1", "action": "retry", "reason": "r",
            "selection": "ids", "created": "2026-01-01T00:00:00.000Z", "operator": "op"}
    text = json.dumps(head) + "\n" + json.dumps(["2", None, None, 0, None]) + "\n" + \
        json.dumps({"total": 1}) + "\n"
    elsewhere.write_text(text)
    os.chmod(elsewhere, 0o600)
    os.symlink(elsewhere, d / (bid + ".batch"))
    p = a.run("batch", "list", "--json")
    assert p.returncode == 0, (p.returncode, p.stdout, p.stderr)
    assert json.loads(p.stdout) == [], p.stdout
    p = a.run("batch", "abandon", bid, "--yes")
    assert p.returncode == 1, (p.returncode, p.stdout, p.stderr)
    want = "redrive: cannot open batch record %s: Too many levels of symbolic links" % \
        (d / (bid + ".batch"))
    assert want in p.stderr, p.stderr
    assert elsewhere.read_text() == text       # never appended to
