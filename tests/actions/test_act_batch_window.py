"""Issue 35, first part: a batch keeps a window of requests in flight (--concurrency,
batch_concurrency), measured at the reference core server (its in-flight count and its
action log's times), never faster than --rate; the write-ahead rule per item, an abort and
a kill; the pace and ETA before the confirmation; a record bound to its store and core;
open batches' targets left out of a new selection; held-back targets counted by reason;
resume asking for the typed count. Real store (attune2), private core servers, the journal
in a private state dir."""
import json
import os
import pty
import re
import signal
import time
from datetime import datetime, timedelta, timezone

import pytest

import actlib
from test_act_batch import PAGE, batches, core, insert_bulk, sent  # noqa: F401
from test_act_batch_resume import kill_after, start_batch


def inflight(c, reset=False):
    if reset:
        actlib.http_json("POST", c.url + "/_coresrv/reset")
    st, body = actlib.http_json("GET", c.url + "/_coresrv/inflight")
    assert st == 200, body
    return body


def latency(c, ms):
    st, body = actlib.http_json("POST", c.url + "/_coresrv/latency?ms=%d" % ms)
    assert st == 200, body


def retry_times(c):
    """Epoch seconds at which the core answered each retry (its action log), sorted."""
    out = []
    for a in c.actions():
        if a["action"] == "retry":
            t = datetime.strptime(a["time"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)
            out.append(t.timestamp())
    return sorted(out)


def record_path(a, bid):
    return os.path.join(str(a.tmpdir), "state", "redrive", "batches", bid + ".batch")


def edit_header(a, bid, fn):
    path = record_path(a, bid)
    with open(path) as f:
        lines = f.read().splitlines()
    head = json.loads(lines[0])
    fn(head)
    lines[0] = json.dumps(head)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def test_window_of_eight_against_a_slow_core_keeps_the_rate(act, core):
    """Against a core answering in 100 ms, --rate 50 --concurrency 8 reaches ~50/s (one
    request at a time could not pass 10/s), never more than 8 in flight, never faster than
    the rate; each execution sent once; the pace and ETA said before sending."""
    ids, _ = insert_bulk("window boom", 120, exhausted_every=0)
    a = act("attune2", core=core.url, page_size=50)
    latency(core, 100)
    inflight(core, reset=True)
    p = a.run("retry", "--status", "failed", "--filter", "window boom", "--rate", "50",
              "--concurrency", "8", "--yes", timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "redrive: 120 to send: rate 50/s, 8 in flight at most, ETA 2s (at the rate, if the " \
           "core keeps up)" in p.stderr.splitlines(), p.stderr
    got = sent(core)
    assert sorted(got) == sorted(ids) and set(got.values()) == {1}
    m = inflight(core)
    assert 4 <= m["max"] <= 8, m          # a window, and never wider than asked
    t = retry_times(core)
    rate = (len(t) - 1) / (t[-1] - t[0])
    # ~50/s on a quiet machine; one request at a time cannot pass 10/s against this core:
    # twice that is the floor on a loaded one; never above the rate
    assert 20 <= rate <= 52, rate
    # never faster than the rate over any second (a little slack for the server's clock)
    j = 0
    for i in range(len(t)):
        while t[i] - t[j] > 1.0:
            j += 1
        assert i - j + 1 <= 53, (i - j + 1)


def test_concurrency_bounds_and_config_key(act, core, tmp_path):
    insert_bulk("bounds boom", 30, exhausted_every=0)
    a = act("attune2", core=core.url, page_size=PAGE)
    for bad in ("65", "0", "-1", "many", "8x"):
        p = a.run("retry", "--status", "failed", "--filter", "bounds boom", "--concurrency", bad,
                  "--yes")
        assert p.returncode == 2, p.stderr
        assert "redrive: --concurrency: requests in flight at once, 1 to 64: " + bad in p.stderr
    assert sent(core) == {} and batches(a) == []
    p = a.run("retry", "2", "--concurrency", "4", "--yes")
    assert p.returncode == 2 and "--concurrency go with --status, --group or --dlq" in p.stderr
    big = act("attune2", core=core.url, page_size=PAGE, batch_concurrency=100)
    p = big.run("retry", "--status", "failed", "--filter", "bounds boom", "--yes")
    assert p.returncode != 0 and "batch_concurrency must be from 1 to 64" in p.stderr, p.stderr
    # the config key is the default, the flag wins; measured at the core
    latency(core, 100)
    two = act("attune2", core=core.url, page_size=PAGE, batch_concurrency=2)
    inflight(core, reset=True)
    p = two.run("retry", "--status", "failed", "--filter", "bounds boom", "--rate", "200", "--yes")
    assert p.returncode == 0, p.stderr
    assert "2 in flight at most" in p.stderr
    assert inflight(core)["max"] == 2
    assert len(sent(core)) == 30


def test_kill_with_a_window_in_flight_leaves_them_unknown(act, core, tmp_path):
    """kill -9 with several requests in flight: every request the core saw had its pending
    line on disk first; the ones in flight are unknown, not re-sent by a plain resume, and
    --resend-unknown re-sends exactly them with their keys (applied at most once)."""
    ids, _ = insert_bulk("killwin boom", 40, exhausted_every=0)
    a = act("attune2", core=core.url, page_size=PAGE)
    latency(core, 400)
    p = start_batch(a, "retry", "--status", "failed", "--filter", "killwin boom", "--rate", "100",
                    "--concurrency", "6", "--yes")
    kill_after(p, 8)
    time.sleep(0.6)                       # the requests in flight reach the core's log
    lines = actlib.read_journal(tmp_path)
    pending = {l["targets"][0]: l["idempotency_key"] for l in lines if l.get("code") == "pending"}
    outcome = {l["targets"][0] for l in lines if l.get("code") != "pending"}
    seen = sent(core)
    assert set(seen) <= set(pending), "a request left before its pending line was on disk"
    [b] = batches(a)
    assert 1 <= b["unknown"] <= 6, b      # at most the window was in flight
    assert b["unknown"] == len(set(pending) - outcome)
    latency(core, 0)
    r = a.run("batch", "resume", b["id"], "--rate", "500", "--yes", "--verbose")
    assert "held back: %d unknown: may have reached the core" % b["unknown"] in r.stderr
    named = sorted(re.findall(r"^redrive:   item \d+: (\S+): unknown \(may have reached the core\)$",
                              r.stderr, re.M))
    assert named == sorted(set(pending) - outcome), r.stderr
    again = sent(core)
    assert all(again[t] == seen.get(t, 0) for t in set(pending) - outcome), "unknown re-sent unasked"
    r = a.run("batch", "resume", b["id"], "--resend-unknown", "--yes")
    assert r.returncode in (0, 1), r.stderr
    keys = {x["target"]: x["key"] for x in core.actions() if x["action"] == "retry"}
    for t in set(pending) - outcome:
        assert keys[t] == pending[t]      # with its key
    applied = [x["target"] for x in core.actions() if x["action"] == "retry" and x["applied"]]
    assert sorted(applied) == sorted(ids)  # each applied exactly once
    [b2] = batches(a)
    assert b2["state"] == "done" and b2["ok"] == 40, b2


def test_abort_stops_what_has_not_left(act, core, tmp_path):
    ids, _ = insert_bulk("abortwin boom", 60, exhausted_every=0)
    a = act("attune2", core=core.url, page_size=PAGE)
    latency(core, 200)
    p = start_batch(a, "retry", "--status", "failed", "--filter", "abortwin boom", "--rate", "20",
                    "--concurrency", "4", "--yes")
    for _ in range(5):
        assert p.stdout.readline()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=20)
    assert p.returncode == 128 + signal.SIGINT, err
    assert "interrupted: not sending the rest" in err
    first = sent(core)
    assert 5 <= len(first) <= 12, len(first)   # what had left finished; the rest did not leave
    [b] = batches(a)
    assert b["unknown"] == 0 and b["ok"] == len(first), b
    latency(core, 0)
    r = a.run("batch", "resume", b["id"], "--rate", "500", "--concurrency", "8", "--yes")
    assert r.returncode == 0, r.stderr
    got = sent(core)
    assert sorted(got) == sorted(ids) and set(got.values()) == {1}


def open_batch(a, text, n=20):
    """A batch left open: killed after its first answer at 1 request a second."""
    ids, _ = insert_bulk(text, n, exhausted_every=0)
    p = start_batch(a, "retry", "--status", "failed", "--filter", text, "--rate", "1", "--yes")
    kill_after(p, 1)
    [b] = [x for x in batches(a) if x["state"] == "open"]
    return ids, b


def test_resume_elsewhere_is_refused_naming_both(act, core, tmp_path):
    ids, b = open_batch(act("attune2", core=core.url, page_size=PAGE), "bound boom")
    other = actlib.CoreServer("attune2", tmp_path)
    try:
        before = sent(core)
        # the same system name, another core
        a2 = act("attune2", core=other.url, page_size=PAGE)
        r = a2.run("batch", "resume", b["id"], "--yes")
        assert r.returncode == 1, r.stderr
        sysid = actlib.admin_sql("SELECT system_identifier::text FROM pg_control_system()")[0][0]
        here = "postgresql system %s db attune2" % sysid
        assert ("refused: batch %s was made against store %s, core %s; system attune2 here points "
                "at store %s, core %s: nothing sent" % (b["id"], here, core.url, here, other.url)) \
            in r.stderr, r.stderr
        assert "core %s: nothing sent" % other.url in r.stderr
        # another store (attune1's database) under the name attune2
        a3 = act("attune2", core=core.url, page_size=PAGE, store=os.environ["RD_PG_DSN_ATTUNE1"])
        r = a3.run("batch", "resume", b["id"], "--yes")
        assert r.returncode == 1, r.stderr
        assert ("refused: batch %s was made against store %s, core %s; system attune2 here points "
                "at store postgresql system %s db attune1, core %s: nothing sent"
                % (b["id"], here, core.url, sysid, core.url)) in r.stderr, r.stderr
        head = json.loads(open(record_path(a2, b["id"])).readline())
        assert head["store"] == here and head["core"] == core.url
        assert sent(other) == {} and sent(core) == before
        # the record's own config: resumed
        a1 = act("attune2", core=core.url, page_size=PAGE)
        r = a1.run("batch", "resume", b["id"], "--rate", "500", "--yes")
        assert r.returncode == 0, r.stderr
        assert sorted(sent(core)) == sorted(ids)
    finally:
        other.stop()


def test_old_record_without_identity_resumes_with_a_warning_and_max_age(act, core, tmp_path):
    a = act("attune2", core=core.url, page_size=PAGE)
    ids, b = open_batch(a, "aged boom")

    def old(h):
        h.pop("store", None)
        h.pop("core", None)
        t = datetime.now(timezone.utc) - timedelta(hours=30)
        h["created"] = t.strftime("%Y-%m-%dT%H:%M:%S.000Z")
    edit_header(a, b["id"], old)
    before = sent(core)
    r = a.run("batch", "resume", b["id"], "--yes")
    assert r.returncode == 1, r.stderr
    assert "redrive: batch %s is 30.0 h old (batch_max_age 24.0 h)" % b["id"] in r.stderr
    assert "--force resumes it anyway" in r.stderr and sent(core) == before
    young = act("attune2", core=core.url, page_size=PAGE, batch_max_age="2d")
    r = young.run("batch", "resume", b["id"], "--rate", "500", "--yes")
    assert r.returncode == 0, r.stderr
    assert ("warning: batch %s was made before batch records named their store and core: not "
            "checked; resumed against store postgresql system " % b["id"]) in r.stderr, r.stderr
    assert sorted(sent(core)) == sorted(ids)


def test_force_resumes_an_aged_record(act, core, tmp_path):
    a = act("attune2", core=core.url, page_size=PAGE)
    ids, b = open_batch(a, "forced boom")
    edit_header(a, b["id"], lambda h: h.update(
        created=(datetime.now(timezone.utc) - timedelta(days=3)).strftime("%Y-%m-%dT%H:%M:%S.000Z")))
    r = a.run("batch", "resume", b["id"], "--rate", "500", "--force", "--yes")
    assert r.returncode == 0, r.stderr
    assert sorted(sent(core)) == sorted(ids) and set(sent(core).values()) == {1}


def test_a_new_selection_leaves_an_open_batchs_items_out(act, core, tmp_path):
    a = act("attune2", core=core.url, page_size=PAGE)
    ids, b = open_batch(a, "overlap boom")
    left = b["total"] - b["ok"] - b["failed"]
    before = sent(core)
    p = a.run("retry", "--status", "failed", "--filter", "overlap boom", "--rate", "500", "--yes")
    assert "redrive: %d of these are in open batch %s: left out" % (left, b["id"]) in \
        p.stderr.splitlines(), p.stderr
    assert sent(core) == before           # nothing sent twice, nothing sent by the new one
    assert p.returncode == 1              # nothing left to send
    # the console's whole-set retry (--select-only) is told the same
    p = a.run("retry", "--status", "failed", "--filter", "overlap boom", "--select-only")
    rows = [json.loads(l) for l in p.stdout.splitlines()]
    assert {"open": "%d of these are in open batch %s: left out" % (left, b["id"])} in rows
    end = [r for r in rows if "batch" in r and "send" in r][0]
    assert end["left_out"] == left and end["send"] == 0
    # once the open batch is done, nothing is left out
    r = a.run("batch", "resume", b["id"], "--rate", "500", "--yes")
    assert r.returncode == 0, r.stderr
    p = a.run("retry", "--status", "failed", "--filter", "overlap boom", "--select-only")
    assert "left out" not in p.stdout


def test_held_back_counted_by_reason_ids_with_verbose(act, core):
    ids, bad = insert_bulk("reason boom", 30)         # every 10th: budget exhausted
    a = act("attune2", core=core.url, page_size=PAGE)
    p = a.run("retry", "--status", "failed", "--filter", "reason boom", "--rate", "500", "--yes")
    err = p.stderr.splitlines()
    assert "redrive: held back: 3 budget exhausted (--verbose names each)" in err, p.stderr
    assert not [l for l in err if "not sent: budget exhausted" in l], p.stderr
    ids2, bad2 = insert_bulk("verbose boom", 20)
    p = a.run("retry", "--status", "failed", "--filter", "verbose boom", "--rate", "500", "--yes",
              "--verbose")
    err = p.stderr.splitlines()
    assert "redrive: held back: 2 budget exhausted" in err, p.stderr
    for x in bad2:
        assert "redrive: %s: not sent: budget exhausted (3/3 retries); --force sends it anyway" % x in err


def test_resume_asks_for_the_typed_count_with_pace(act, core, tmp_path):
    a = act("attune2", core=core.url, page_size=PAGE, confirm_over=5)
    ids, b = open_batch(a, "typed boom")
    n = b["total"] - b["ok"] - b["failed"] - b["unknown"]
    before = sent(core)

    def resume(answer, *more):
        master, slave = pty.openpty()
        os.write(master, answer)
        r = a.run("batch", "resume", b["id"], "--rate", "40", "--concurrency", "3", *more,
                  stdin=slave)
        os.close(slave)
        os.close(master)
        return r
    r = resume(b"y\n")
    assert r.returncode == 1, r.stderr
    assert "redrive: %d to send: rate 40/s, 3 in flight at most, ETA 0s" % n in r.stderr
    assert "resume: type %d to send %d: " % (n, n) in r.stderr
    assert "not confirmed: nothing sent" in r.stderr and sent(core) == before
    r = resume(b"%d\n" % n)
    assert r.returncode == 0, r.stderr
    assert sorted(sent(core)) == sorted(ids)
