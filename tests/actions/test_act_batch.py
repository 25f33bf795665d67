"""Store-wide retries as resumable batches (docs/error-groups.md, redrive(1) BATCHES):
`redrive retry --status S --filter TEXT` and `--group FINGERPRINT` select across every
page of the store, guarded (ineligible executions never reach the core unasked), frozen
into a batch record that `redrive batch list` shows. Resuming: test_act_batch_resume.py.
Real store (attune2), a private reference core server, the journal in a private state dir.
"""
import json
import time
import os
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
    assert "redrive: held back: 2 budget exhausted (--verbose names each)" in err, p.stderr
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
    assert 6 <= len(got) <= 12 and set(got) <= set(ids[:12]), sorted(got)
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


def test_select_only_stages_the_record_and_sends_nothing(act, core):
    """--select-only (the console's whole-set retry): JSON lines on stdout, the record staged
    as ID.batch.tmp (no batch until the console adopts it), nothing sent."""
    ids, bad = insert_bulk("staged boom", N)
    a = act("attune2", core=core.url, page_size=PAGE)
    p = a.run("retry", "--status", "failed", "--filter", "staged boom", "--select-only")
    assert p.returncode == 0, p.stdout + p.stderr
    lines = [json.loads(x) for x in p.stdout.splitlines() if x.startswith("{")]
    bid = lines[0]["started"]
    assert [x["read"] for x in lines if "pages" in x and "batch" not in x] == [10, 20, 25], lines
    held = [x["held"] for x in lines if "held" in x]
    assert held == ["%s: not sent: budget exhausted (3/3 retries)" % b for b in bad], held
    rep = lines[-1]
    assert (rep["batch"], rep["total"], rep["eligible"], rep["ineligible"], rep["loops"], rep["send"],
            rep["pages"], rep["selection"]) == (bid, 25, 23, 2, 0, 23, 3, "status=failed text=staged boom"), rep
    assert sent(core) == Counter() and batches(a) == []
    d = os.path.join(str(a.tmpdir), "state", "redrive", "batches")
    assert os.listdir(d) == [bid + ".batch.tmp"]
    # a staged record a day old is a crashed console's: `batch list` drops it; a fresh one stays
    p = a.run("retry", "--status", "failed", "--filter", "staged boom", "--select-only")
    assert p.returncode == 0, p.stdout + p.stderr
    fresh = json.loads(p.stdout.splitlines()[0])["started"]
    old = time.time() - 24 * 3600 - 60
    os.utime(os.path.join(d, bid + ".batch.tmp"), (old, old))
    assert batches(a) == []
    assert os.listdir(d) == [fresh + ".batch.tmp"]
    p = a.run("retry", "--filter", "x", "--select-only")
    assert p.returncode == 2 and "--filter, --since, --limit, --rate and --concurrency go with --status, --group or --dlq" in p.stderr
