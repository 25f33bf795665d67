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
        # who the core says we are may still be on its way when the request leaves
        assert pending["operator"] == "alice" or pending["operator"].startswith(
            "unknown (local user "), pending
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
