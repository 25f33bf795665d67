"""Store-wide retries as resumable batches (docs/error-groups.md, redrive(1) BATCHES):
`redrive retry --status S --filter TEXT` and `--group FINGERPRINT` select across every
page of the store, guarded (ineligible executions never reach the core unasked), frozen
into a batch record; `redrive batch list|resume|abandon`; a kill -9 mid-batch then a
resume sends every execution exactly once (the reference core server's request log).
Real store (attune2), a private reference core server, the journal in a private state dir.
"""
import json
import os
import signal
import subprocess
import time
from collections import Counter

import pytest

import actlib

N = 25                  # more than two pages (page_size 10)
PAGE = 10
EXHAUSTED_EVERY = 10    # every 10th has retry_count 3 of max_retries 3: ineligible


def insert_bulk(text, n, exhausted_every=EXHAUSTED_EVERY):
    """n failed executions with error 'TEXT id G', newest first by G; their ids, and the
    ids of the ineligible ones."""
    rows = actlib.admin_sql(
        "INSERT INTO execution (action_ref, status, result, retry_count, max_retries, created,"
        " updated) SELECT 'bulk.job', 'failed', jsonb_build_object('error', %s || ' id ' || g),"
        " CASE WHEN %s > 0 AND g %% %s = 0 THEN 3 ELSE 0 END, 3,"
        " now() - interval '1 second' * g, now() FROM generate_series(1, %s) g"
        " RETURNING id, retry_count", (text, exhausted_every, max(exhausted_every, 1), n))
    ids = [str(r[0]) for r in rows]
    bad = [str(r[0]) for r in rows if r[1] == 3]
    return ids, bad


@pytest.fixture
def core(stack, tmp_path):
    actlib.reload_fixture("attune2")
    c = actlib.CoreServer("attune2", tmp_path)
    yield c
    c.stop()
    actlib.reload_fixture("attune2")


def sent(core):
    return Counter(a["target"] for a in core.actions() if a["action"] == "retry")


def batches(a):
    p = a.run("batch", "list", "--json")
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_status_filter_retry_covers_every_page_and_holds_back_ineligible(act, core):
    ids, bad = insert_bulk("bulk boom", N)
    a = act("attune2", core=core.url, page_size=PAGE)
    p = a.run("retry", "--status", "failed", "--filter", "bulk boom", "--rate", "500", "--yes")
    assert p.returncode == 1, p.stdout + p.stderr          # 25 held back: not all sent
    err = p.stderr.splitlines()
    assert "redrive: selected 25 executions (status=failed text=bulk boom) from 3 pages of the store" in err, p.stderr
    assert "redrive: breakdown: 23 eligible, 2 ineligible (not sent), 0 loop retries" in err, p.stderr
    assert "redrive: %s: not sent: budget exhausted (3/3 retries); --force sends it anyway" % bad[0] in err
    got = sent(core)
    assert sorted(got) == sorted(set(ids) - set(bad)), "eligible ids, every page"
    assert set(got.values()) == {1}
    assert not set(bad) & set(got), "an ineligible execution reached the core unasked"
    [b] = batches(a)
    assert (b["system"], b["action"], b["total"], b["done"], b["ok"], b["failed"], b["unknown"],
            b["state"]) == ("attune2", "retry", 23, 23, 23, 0, 0, "done"), b
    assert b["selection"] == "status=failed text=bulk boom"
    items = [j for j in a.journal() if j.get("batch") == b["id"]]
    assert sorted(j["item"] for j in items) == list(range(23))
    rec = os.path.join(str(a.tmpdir), "state", "redrive", "batches", b["id"] + ".batch")
    assert os.stat(rec).st_mode & 0o777 == 0o600


def test_since_window_stops_at_its_start(act, core):
    ids, _ = insert_bulk("windowed boom", 40, exhausted_every=0)   # created 1..40 s ago
    a = act("attune2", core=core.url, page_size=PAGE)
    p = a.run("retry", "--status", "failed", "--filter", "windowed boom", "--since", "12s",
              "--rate", "500", "--yes")
    assert p.returncode == 0, p.stdout + p.stderr
    got = sent(core)
    # the newest ~12 (the window is read on the clock: allow the seconds the run took)
    assert 9 <= len(got) <= 12 and set(got) <= set(ids[:12]), sorted(got)
    assert ", to the window's start" in p.stderr


def fingerprint_of(a, text):
    p = a.run("snapshot", "--json", "--filter", text)
    assert p.returncode == 0, p.stderr
    execs = json.loads(p.stdout)["executions"]
    fps = {e["fingerprint"] for e in execs}
    assert len(fps) == 1, fps
    return fps.pop()


def test_group_retry_sends_the_whole_group_only(act, core):
    group, gbad = insert_bulk("gadget failed", 24)
    other, _ = insert_bulk("sprocket jammed", 15, exhausted_every=0)
    a = act("attune2", core=core.url, page_size=PAGE)
    fp = fingerprint_of(a, "gadget failed")
    assert fp != fingerprint_of(a, "sprocket jammed")
    p = a.run("retry", "--group", fp, "--rate", "500", "--yes")
    assert p.returncode == 1, p.stdout + p.stderr          # the exhausted ones held back
    assert "redrive: breakdown: 22 eligible, 2 ineligible (not sent), 0 loop retries" in p.stderr.splitlines(), p.stderr
    got = sent(core)
    assert sorted(got) == sorted(set(group) - set(gbad)) and set(got.values()) == {1}
    assert not set(other) & set(got)
    [b] = batches(a)
    assert b["total"] == 22 and b["ok"] == 22 and b["selection"] == "group=" + fp


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


def test_selection_refused_without_yes_sends_nothing_and_keeps_no_record(act, core):
    insert_bulk("quiet boom", 20, exhausted_every=0)
    a = act("attune2", core=core.url, page_size=PAGE)
    p = a.run("retry", "--status", "failed", "--filter", "quiet boom")
    assert p.returncode == 2, p.stderr
    assert "refusing to retry without --yes" in p.stderr
    assert sent(core) == Counter() and batches(a) == []
    p = a.run("retry", "7", "--status", "failed", "--yes")
    assert p.returncode == 2 and "not both" in p.stderr
    p = a.run("retry", "--status", "failed", "--since", "soon", "--yes")
    assert p.returncode == 2 and "--since: not a duration" in p.stderr


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
