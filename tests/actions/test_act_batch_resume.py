"""Resumable batches (docs/error-groups.md, redrive(1) BATCHES): a kill -9 mid-batch, then
`redrive batch list` and `resume` send every execution exactly once (the reference core
server's request log); a pending item is never re-sent unasked, --resend-unknown sends
exactly it with its key; `abandon`; Tasker steps keep their task. Real stores, private core
servers, the journal in a private state dir."""
import json
import os
import signal
import subprocess
from collections import Counter

import pytest

import actlib
from test_act_batch import N, PAGE, batches, core, insert_bulk, sent  # noqa: F401


def start_batch(a, *args):
    env = dict(os.environ, XDG_STATE_HOME=os.path.join(str(a.tmpdir), "state"), TZ="UTC",
               LANG="C.UTF-8")
    return subprocess.Popen([actlib.redrive_bin(), "--config", a.config] + list(args),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            stdin=subprocess.DEVNULL)


def kill_after(p, lines):
    for _ in range(lines):
        assert p.stdout.readline(), p.stderr.read()
    p.send_signal(signal.SIGKILL)
    p.wait(10)


def test_kill9_then_resume_sends_each_exactly_once(act, core):
    ids, bad = insert_bulk("resume boom", N)
    want = sorted(set(ids) - set(bad))
    a = act("attune2", core=core.url, page_size=PAGE)
    p = start_batch(a, "retry", "--status", "failed", "--filter", "resume boom", "--rate", "100",
                    "--yes")
    kill_after(p, 6)
    [b] = batches(a)
    done = b["ok"] + b["failed"] + b["unknown"]
    assert b["state"] == "open" and b["total"] == 23 and 6 <= done < 23, b
    before = sent(core)
    assert len(before) >= 6
    r = a.run("batch", "resume", b["id"], "--rate", "500", "--yes")
    assert r.returncode == 0, r.stdout + r.stderr
    if b["unknown"]:
        assert "may have reached the core (sent, no outcome): not re-sent" in r.stderr
    got = sent(core)
    assert set(got.values()) == {1}, [k for k, v in got.items() if v > 1]
    # an item pending at the kill may not have reached the core: the rest all did, once
    assert set(got) <= set(want) and len(want) - len(got) <= b["unknown"], (len(got), b)
    [b2] = batches(a)
    assert b2["ok"] + b2["unknown"] == 23 and b2["failed"] == 0, b2
    # a second resume sends nothing
    r2 = a.run("batch", "resume", b["id"], "--yes")
    assert sent(core) == got
    if b2["unknown"]:
        # exactly the unknown ones, with their keys: the core applies each at most once
        r3 = a.run("batch", "resume", b["id"], "--resend-unknown", "--yes")
        assert r3.returncode == 0, r3.stderr
        again = sent(core)
        assert sorted(again) == want
        [b3] = batches(a)
        assert b3["ok"] == 23 and b3["state"] == "done", b3
    else:
        assert r2.returncode == 0 and "nothing to do" in r2.stderr, r2.stderr


def test_resume_never_resends_a_pending_item_unasked(act, core, tmp_path):
    """A pending line without an outcome (the request may have reached the core): a resume
    leaves it; --resend-unknown sends exactly it, with the key of its pending line."""
    ids, _ = insert_bulk("pending boom", 5, exhausted_every=0)
    a = act("attune2", core=core.url, page_size=PAGE)
    p = start_batch(a, "retry", "--status", "failed", "--filter", "pending boom", "--rate", "1",
                    "--yes")
    kill_after(p, 1)                     # one answered; the next waits for its 1 s pace
    [b] = batches(a)
    jpath = actlib.journal_path(tmp_path)
    lines = [json.loads(l) for l in open(jpath)]
    # forge the state of a kill -9 between a pending line and its answer for item 1
    item1 = [j for j in lines if j.get("item") == 1]
    assert item1 == [], item1
    fake = dict(lines[-1], code="pending", result="sending", http_status=0, item=1,
                targets=[ids[1]], idempotency_key="ab" * 16)
    with open(jpath, "a") as f:
        f.write(json.dumps(fake) + "\n")
    [b] = batches(a)
    assert (b["ok"], b["unknown"], b["done"]) == (1, 1, 2), b
    r = a.run("batch", "resume", b["id"], "--rate", "500", "--yes")
    assert r.returncode == 0, r.stderr
    got = sent(core)
    assert ids[1] not in got and sorted(got) == sorted(set(ids) - {ids[1]})
    r = a.run("batch", "resume", b["id"], "--resend-unknown", "--yes")
    assert r.returncode == 0, r.stderr
    assert [x["key"] for x in core.actions() if x["target"] == ids[1]] == ["ab" * 16]
    [b] = batches(a)
    assert (b["ok"], b["unknown"], b["state"]) == (5, 0, "done"), b


def test_abandon(act, core):
    ids, _ = insert_bulk("abandon boom", 15, exhausted_every=0)
    a = act("attune2", core=core.url, page_size=PAGE)
    p = start_batch(a, "retry", "--status", "failed", "--filter", "abandon boom", "--rate", "2",
                    "--yes")
    kill_after(p, 2)
    [b] = batches(a)
    r = a.run("batch", "abandon", b["id"])
    assert r.returncode == 0, r.stderr
    assert "redrive: batch %s abandoned: " % b["id"] in r.stderr
    n = len(sent(core))
    [b2] = batches(a)
    assert b2["state"] == "abandoned"
    r = a.run("batch", "resume", b["id"], "--yes")
    assert r.returncode == 1 and "was abandoned" in r.stderr
    assert len(sent(core)) == n
    r = a.run("batch", "resume", "0123456789abcdef", "--yes")
    assert r.returncode == 1 and "no batch 0123456789abcdef" in r.stderr
    r = a.run("batch", "resume", "nope", "--yes")
    assert r.returncode == 1 and "not a batch id" in r.stderr


@pytest.fixture
def tasker_core(stack, tmp_path):
    actlib.reload_fixture("tasker")
    c = actlib.CoreServer("tasker", tmp_path)
    yield c
    c.stop()
    actlib.reload_fixture("tasker")


def test_tasker_steps_across_pages_carry_their_task(act, tasker_core):
    """Tasker's route needs the step's task: the selection keeps it from the store's row."""
    a = act("tasker", core=tasker_core.url, page_size=3)
    p = a.run("retry", "--status", "error", "--rate", "500", "--yes")
    assert p.returncode == 1, p.stdout + p.stderr          # 3 ineligible held back
    assert "redrive: selected 5 executions (status=error) from 2 pages of the store" in p.stderr
    assert "redrive: breakdown: 2 eligible, 3 ineligible (not sent), 0 loop retries" in p.stderr
    routes = sorted(x["route"] for x in tasker_core.actions())
    assert routes == [
        "/v1/tasks/00000000-0000-4000-8000-100000000002/workflow_steps/00000000-0000-4000-8000-200000000003",
        "/v1/tasks/00000000-0000-4000-8000-100000000006/workflow_steps/00000000-0000-4000-8000-200000000009",
    ], routes
