"""Every status-code path of SPEC §3, presented as specified, plus the safety rules:
no automatic re-send, idempotent re-send, read-only, non-TTY refusal, frozen selections."""
import os
import pty
import time

import pytest

import actlib
from conftest import core_entries, keys_of


@pytest.fixture(scope="module", autouse=True)
def reload_around():
    if actlib.have_stack():
        actlib.reload_fixture("attune1")
        actlib.reload_fixture("alakai")
    yield
    if actlib.have_stack():
        actlib.reload_fixture("attune1")
        actlib.reload_fixture("alakai")


def test_401_static_token_is_not_resent(act, tmp_path):
    srv = actlib.CoreServer("attune1", tmp_path)
    try:
        a = act("attune1", core=srv.url, token="env:BAD_TOKEN")
        p = a.run("retry", "2", "--yes", env={"BAD_TOKEN": "not-a-valid-token"})
        assert p.returncode == 1
        assert "unauthorized: not authorized (HTTP 401" in p.stdout
        # exactly one send: reading env:BAD_TOKEN again gives the same token, so a second
        # POST could only be refused the same way
        log = [e for e in srv.actions() if e["route"].endswith("/executions/2/retry")]
        assert [e["status"] for e in log] == [401]
        assert a.journal()[-1]["code"] == "unauthorized"
    finally:
        srv.stop()


def test_403_viewer(act):
    a = act("attune1", token="env:RD_CORE_VIEWER_TOKEN")
    p = a.run("retry", "2", "--yes")
    assert p.returncode == 1
    assert "forbidden: your role may not retry executions (HTTP 403" in p.stdout
    p = a.run("drain", "1", "--yes", "--force")
    assert "your role may not drain workers" in p.stdout


def test_404(act):
    p = act("attune1").run("retry", "424242", "--yes", "--force")
    assert p.returncode == 1
    assert "not_found: no such execution (HTTP 404" in p.stdout


def test_409_status_and_budget(act):
    a = act("attune1")
    p = a.run("retry", "1", "7", "--yes", "--force")
    assert p.returncode == 1
    lines = p.stdout.splitlines()
    assert lines[0].startswith("1: conflict_status: cannot retry execution in status "
                               "'completed' (HTTP 409")
    assert lines[1].startswith("7: conflict_budget: retry budget exhausted (HTTP 409")


def test_alakai_409s(act):
    a = act("alakai")
    p = a.run("retry", "task-running", "task-failed-exhausted", "--yes", "--force")
    assert "cannot retry execution in status 'running'" in p.stdout
    assert "conflict_budget: retry budget exhausted" in p.stdout


def test_502_store_unreadable(act, tmp_path):
    srv = actlib.CoreServer("alakai", tmp_path, "--redis-url", "redis://127.0.0.1:1/0")
    try:
        p = act("alakai", core=srv.url).run("retry", "task-failed-retryable", "--yes")
        assert p.returncode == 1
        assert "bad_gateway: core could not read the store (HTTP 502" in p.stdout
    finally:
        srv.stop()


def test_unreachable_not_applied(act):
    port = actlib.free_port()
    a = act("attune1", core="http://127.0.0.1:%d" % port)
    p = a.run("retry", "2", "--yes")
    assert p.returncode == 1
    assert "unreachable: core unreachable (not applied)" in p.stdout
    assert a.journal()[-1]["code"] == "unreachable"


def test_timeout_never_resent(act, tmp_path):
    srv = actlib.CoreServer("attune1", tmp_path, "--stall-route", r"/retry$",
                            "--stall-seconds", "0", "--stall-mode", "after")
    try:
        a = act("attune1", core=srv.url)
        t0 = time.time()
        p = a.run("retry", "2", "--yes", env={"REDRIVE_ACTION_TIMEOUT_MS": "1500"})
        assert time.time() - t0 < 20
        assert p.returncode == 1
        assert "maybe_applied: core unreachable" in p.stdout
        assert "may or may not have been applied; re-send with the same key" in p.stdout
        (key,) = keys_of(p.stdout)
        time.sleep(0.5)
        entries = [e for e in srv.actions() if e["route"].endswith("/retry")]
        assert len(entries) == 1 and entries[0]["key"] == key and entries[0]["applied"]
        j = a.journal()[-1]
        assert j["code"] == "maybe_applied" and j["idempotency_key"] == key
    finally:
        srv.stop()
    actlib.reload_fixture("attune1")


def test_resend_same_key_applies_once(act):
    actlib.reload_fixture("attune1")
    a = act("attune1")
    p = a.run("retry", "2", "--yes")
    assert p.returncode == 0, p.stdout
    (key,) = keys_of(p.stdout)
    p2 = a.run("retry", "2", "--yes", "--idempotency-key", key)
    assert p2.returncode == 0, p2.stdout
    assert keys_of(p2.stdout) == [key]
    entries = core_entries(a.core, key)
    assert len(entries) == 2
    assert sum(1 for e in entries if e["applied"]) == 1
    assert sum(1 for e in entries if e["replayed"]) == 1
    actlib.reload_fixture("attune1")


def test_read_only_refuses(act):
    a = act("attune1")
    before = len(actlib.core_actions(a.core))
    p = a.run("--read-only", "retry", "2", "--yes")
    assert p.returncode == 1
    assert "read-only" in p.stderr
    a2 = act("attune1", read_only=True)
    p = a2.run("retry", "2", "--yes")
    assert p.returncode == 1 and "read-only" in p.stderr
    assert len(actlib.core_actions(a.core)) == before
    assert a.journal()[-1]["code"] == "refused"


def test_non_tty_without_yes_refuses(act):
    a = act("attune1")
    before = len(actlib.core_actions(a.core))
    p = a.run("retry", "2")
    assert p.returncode == 2
    assert "not a terminal" in p.stderr
    assert len(actlib.core_actions(a.core)) == before


def test_tty_confirmation_declined(act):
    a = act("attune1")
    before = len(actlib.core_actions(a.core))
    master, slave = pty.openpty()
    os.write(master, b"n\n")
    p = a.run("retry", "2", "11", stdin=slave)
    os.close(slave)
    os.close(master)
    assert p.returncode == 1
    assert "retry 2 executions on attune1" in p.stderr and "  11" in p.stderr
    assert len(actlib.core_actions(a.core)) == before


def test_frozen_selection_item_changed_in_between(act):
    """The operator selected 2 and 4; before the batch runs 4 is retried elsewhere: the
    batch reports 409 for 4 and does not retry it again."""
    actlib.reload_fixture("attune1")
    a = act("attune1")
    st, _ = actlib.http_json("POST", a.core + "/api/v1/executions/4/retry", {},
                             {"Authorization": "Bearer " + os.environ["RD_CORE_TOKEN"]})
    assert st == 202
    p = a.run("retry", "2", "4", "--yes", "--force")   # sent as selected, whatever the store says now
    assert p.returncode == 1
    lines = p.stdout.splitlines()
    assert lines[0].startswith("2: ok: retried")
    assert lines[1].startswith("4: conflict_status: execution already retried as")
    k4 = keys_of(lines[1])[0]
    assert len(core_entries(a.core, k4)) == 1
    actlib.reload_fixture("attune1")


def test_rate_limited(act):
    a = act("attune1", rate_limit=5)
    t0 = time.time()
    p = a.run("retry", *[str(900 + i) for i in range(8)], "--yes", "--force")
    dt = time.time() - t0
    assert p.returncode == 1 and p.stdout.count("no such execution") == 8
    assert dt >= 7 / 5 - 0.1


def test_journal_mode_and_reader(act, tmp_path):
    a = act("attune1")
    jp = actlib.journal_path(tmp_path)
    os.makedirs(os.path.dirname(jp), exist_ok=True)
    with open(jp, "w") as f:
        f.write("not json\n")
    os.chmod(jp, 0o644)
    p = a.run("retry", "424242", "--yes", "--force")
    assert p.returncode == 1
    assert os.stat(jp).st_mode & 0o777 == 0o600
    import subprocess
    out = subprocess.run([actlib.probe_bin(), "journal-tail", jp, "10"], capture_output=True,
                         text=True).stdout.splitlines()
    import json
    rows = [json.loads(l) for l in out]
    assert rows[0]["malformed"] is True
    assert rows[1]["action"] == "retry" and rows[1]["code"] == "not_found"
    assert rows[-1] == {"ok": True, "n": 2}
    missing = subprocess.run([actlib.probe_bin(), "journal-tail", jp + ".none", "10"],
                             capture_output=True, text=True).stdout
    assert json.loads(missing) == {"ok": True, "n": 0}


def test_journal_dir_mode(act, tmp_path):
    a = act("attune1")
    a.run("retry", "424242", "--yes", "--force")
    d = os.path.dirname(actlib.journal_path(tmp_path))
    assert os.stat(d).st_mode & 0o777 == 0o700


def test_tty_confirmation_accepted(act):
    a = act("attune1")
    master, slave = pty.openpty()
    os.write(master, b"y\n")
    p = a.run("retry", "424242", "--force", stdin=slave)
    os.close(slave)
    os.close(master)
    assert "Proceed? [y/N]" in p.stderr
    assert "not_found: no such execution" in p.stdout


def test_sigint_aborts_rest(act):
    import signal
    import subprocess
    a = act("attune1", rate_limit=1)
    env = dict(os.environ, XDG_STATE_HOME=os.path.join(str(a.tmpdir), "state"))
    proc = subprocess.Popen([actlib.redrive_bin(), "--config", a.config, "retry",
                             "900", "901", "902", "903", "904", "905", "--yes", "--force"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, stdin=subprocess.DEVNULL)
    time.sleep(1.5)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 128 + signal.SIGINT
    assert "interrupted" in err
    assert out.count("aborted: aborted before sending") >= 3
    assert out.count("not_found") >= 1
    # aborted items were never sent, so they are not journaled
    assert len(a.journal()) == out.count("not_found")
