"""The write-ahead journal (issue 11): an action is journaled as `pending` before it is
sent, completed with its outcome, and recorded as `unknown: may have been applied` when
redrive stops while it is in flight (SIGTERM, SIGHUP, exit)."""
import os
import signal
import subprocess
import time

import pytest

import actlib
from conftest import assert_no_secrets


@pytest.fixture(scope="module", autouse=True)
def reload_around():
    yield
    if actlib.have_stack():
        actlib.reload_fixture("attune1")


def journal_lines(tmp_path):
    return actlib.read_journal(tmp_path)


def wait_for_action(srv, route_end, secs=15):
    end = time.time() + secs
    while time.time() < end:
        got = [e for e in srv.actions() if e["route"].endswith(route_end)]
        if got:
            return got
        time.sleep(0.1)
    raise AssertionError("the core never saw %s" % route_end)


def start_retry(a, *ids):
    env = dict(os.environ, XDG_STATE_HOME=os.path.join(str(a.tmpdir), "state"), LANG="C.UTF-8")
    return subprocess.Popen([actlib.redrive_bin(), "--config", a.config, "retry"] + list(ids) +
                            ["--yes"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_signal_with_request_in_flight_is_journaled(act, tmp_path, sig):
    # the core applies the retry, then never answers: the request may have been applied
    actlib.reload_fixture("attune1")   # 2 not retried yet: eligible, so sent (core/guard.h)
    srv = actlib.CoreServer("attune1", tmp_path, "--stall-route", r"/retry$", "--stall-seconds", "0")
    try:
        a = act("attune1", core=srv.url)
        proc = start_retry(a, "2")
        (entry,) = wait_for_action(srv, "/executions/2/retry")
        time.sleep(0.2)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=15)
        assert proc.returncode == 128 + sig, (proc.returncode, out, err)
        assert_no_secrets(out, err)
        lines = journal_lines(tmp_path)
        assert len(lines) == 2, lines
        pending, done = lines
        assert pending["code"] == "pending" and pending["action"] == "retry", pending
        assert pending["targets"] == ["2"], pending
        # who the core says we are is known before the request leaves, and the outcome
        # names the operator its pending line named (issue 21)
        assert pending["operator"] == done["operator"] == "alice", (pending, done)
        assert pending["idempotency_key"] == entry["key"] and len(entry["key"]) == 32
        assert pending["system"] == "attune1" and pending["http_status"] == 0
        assert done["code"] == "unknown" and done["idempotency_key"] == entry["key"], done
        assert done["result"].startswith("unknown: may have been applied"), done
        assert done["targets"] == ["2"] and done["action"] == "retry"
        raw = open(actlib.journal_path(tmp_path)).read()
        assert os.environ["RD_CORE_TOKEN"] not in raw
    finally:
        srv.stop()


def test_pending_then_outcome(act, tmp_path):
    a = act("attune1")
    p = a.run("retry", "424242", "--yes", "--force")
    assert p.returncode == 1 and "not_found" in p.stdout, p.stdout + p.stderr
    lines = journal_lines(tmp_path)
    assert [l["code"] for l in lines] == ["pending", "not_found"], lines
    assert lines[0]["idempotency_key"] == lines[1]["idempotency_key"]
    assert lines[1]["http_status"] == 404


def test_journal_tail_folds_pending_and_outcome(act, tmp_path):
    """The reader shows one row per action with its latest state."""
    import json
    jp = os.path.join(str(tmp_path), "j.jsonl")
    recs = [
        {"time": "t1", "operator": "o", "system": "s", "action": "retry", "targets": ["1"],
         "idempotency_key": "a" * 32, "http_status": 0, "result": "sending", "code": "pending"},
        {"time": "t2", "operator": "o", "system": "s", "action": "retry", "targets": ["2"],
         "idempotency_key": "b" * 32, "http_status": 0, "result": "sending", "code": "pending"},
        {"time": "t3", "operator": "o", "system": "s", "action": "retry", "targets": ["1"],
         "idempotency_key": "a" * 32, "http_status": 202, "result": "retried", "code": "ok"},
        {"time": "t4", "operator": "o", "system": "s", "action": "retry", "targets": ["3"],
         "idempotency_key": None, "http_status": 0, "result": "read-only", "code": "refused"},
        # a deliberate re-send of 1 with the same key: a second action, a second row
        {"time": "t5", "operator": "o", "system": "s", "action": "retry", "targets": ["1"],
         "idempotency_key": "a" * 32, "http_status": 0, "result": "sending", "code": "pending"},
        {"time": "t6", "operator": "o", "system": "s", "action": "retry", "targets": ["1"],
         "idempotency_key": "a" * 32, "http_status": 0,
         "result": "unknown: may have been applied", "code": "unknown"},
    ]
    with open(jp, "w") as f:
        for r in recs:
            f.write(json.dumps(r) + "\n")
    out = subprocess.run([actlib.probe_bin(), "journal-tail", jp, "10"], capture_output=True,
                         text=True, check=True).stdout.splitlines()
    rows = [json.loads(l) for l in out]
    assert rows[-1] == {"ok": True, "n": 4}, rows
    assert [(r["code"], r["http_status"]) for r in rows[:-1]] == [
        ("pending", 0), ("ok", 202), ("refused", 0), ("unknown", 0)], rows


# ---- issue 21: durable, cannot be hijacked ---------------------------------------------

def retry_sent(srv_url, route_end="/executions/2/retry"):
    return [e for e in actlib.core_actions(srv_url) if e["route"].endswith(route_end)]


def test_pending_and_outcome_name_the_same_operator(act, tmp_path):
    """The pending line used to say "unknown (local user root)" while its outcome said
    "alice": /auth/me was still on its way when the request left. The pending line now
    waits for it (a few seconds at most), and the outcome names whom its pending line
    named."""
    a = act("attune1")
    for _ in range(3):               # each run is a new process: a new race each time
        p = a.run("retry", "424242", "--yes", "--force")
        assert p.returncode == 1 and "not_found" in p.stdout, p.stdout + p.stderr
    lines = journal_lines(tmp_path)
    assert [l["code"] for l in lines] == ["pending", "not_found"] * 3, lines
    assert [l["operator"] for l in lines] == ["alice"] * 6, lines


def test_a_fifo_at_the_journal_path_is_refused_quickly(act, tmp_path):
    srv = actlib.CoreServer("attune1", tmp_path)
    try:
        a = act("attune1", core=srv.url)
        jp = actlib.journal_path(tmp_path)
        os.makedirs(os.path.dirname(jp), mode=0o700)
        os.mkfifo(jp, 0o600)
        t0 = time.monotonic()
        # not a.run: it reads the journal afterwards, and reading a FIFO waits for a writer
        p = actlib.run_redrive(["--config", a.config, "retry", "2", "--yes", "--force"], timeout=15,
                               tmpdir=tmp_path)
        assert time.monotonic() - t0 < 10
        assert p.returncode == 1, (p.returncode, p.stdout, p.stderr)
        assert ("refusing to act without an audit journal: journal %s is not a regular file "
                "(a FIFO)" % jp) in p.stdout + p.stderr, p.stdout + p.stderr
        assert retry_sent(srv.url) == []
    finally:
        srv.stop()


def test_a_journal_of_another_user_is_refused(act, tmp_path):
    if os.geteuid() != 0:
        pytest.skip("chown to another user needs root (CI runs as root)")
    import pwd
    nobody = pwd.getpwnam("nobody").pw_uid
    a = act("attune1")
    jp = actlib.journal_path(tmp_path)
    os.makedirs(os.path.dirname(jp), mode=0o700)
    with open(jp, "w") as f:
        f.write("")
    os.chmod(jp, 0o600)
    os.chown(jp, nobody, -1)
    p = a.run("retry", "424242", "--yes", "--force")
    assert p.returncode == 1, (p.returncode, p.stdout, p.stderr)
    assert "journal %s is owned by uid %d, not by you (uid 0)" % (jp, nobody) in \
        p.stdout + p.stderr, p.stdout + p.stderr
    assert os.path.getsize(jp) == 0


@pytest.mark.parametrize("how", ["symlink", "world-writable"])
def test_an_untrusted_state_directory_is_refused(act, tmp_path, how):
    srv = actlib.CoreServer("attune1", tmp_path)
    try:
        a = act("attune1", core=srv.url)
        state = os.path.join(str(tmp_path), "state", "redrive")
        os.makedirs(os.path.dirname(state), mode=0o700)
        if how == "symlink":      # to a 0777 directory of another user
            other = os.path.join(str(tmp_path), "other")
            os.mkdir(other)
            os.chmod(other, 0o777)
            if os.geteuid() == 0:
                import pwd
                os.chown(other, pwd.getpwnam("nobody").pw_uid, -1)
            os.symlink(other, state)
            why = "state directory %s is not a directory (a symbolic link)" % state
        else:
            os.mkdir(state)
            os.chmod(state, 0o777)
            why = ("state directory %s is group/world writable (mode 777): chmod go-w it"
                   % state)
        p = a.run("retry", "2", "--yes", "--force", timeout=15)
        assert p.returncode == 1, (p.returncode, p.stdout, p.stderr)
        assert "refusing to act without an audit journal: " + why in p.stdout + p.stderr, \
            p.stdout + p.stderr
        assert retry_sent(srv.url) == []
        assert os.listdir(state) == []
    finally:
        srv.stop()


def test_the_pending_line_is_synced_before_the_request(act, tmp_path):
    """fdatasync after the pending line, and a failed one refuses the action with the
    reason: with fdatasync failing (an LD_PRELOAD shim, tests/actions/failsync.c) nothing
    is sent."""
    shim = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
        actlib.redrive_bin()))), "tests", "actions", "libfailsync.so")
    assert os.path.exists(shim), shim
    srv = actlib.CoreServer("attune1", tmp_path)
    try:
        a = act("attune1", core=srv.url)
        p = a.run("retry", "2", "--yes", "--force", env={"LD_PRELOAD": shim})
        jp = actlib.journal_path(tmp_path)
        assert p.returncode == 1, (p.returncode, p.stdout, p.stderr)
        assert ("not sent: the journal cannot be written (cannot sync journal %s to disk: "
                "Input/output error)" % jp) in p.stdout + p.stderr, p.stdout + p.stderr
        assert retry_sent(srv.url) == []
        # the control: the same run without the shim sends it (whatever the core answers:
        # an earlier test may have retried execution 2 already)
        p = a.run("retry", "2", "--yes", "--force")
        assert "journal" not in p.stdout + p.stderr, p.stdout + p.stderr
        assert len(retry_sent(srv.url)) == 1
    finally:
        srv.stop()
