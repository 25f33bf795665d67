"""Memory stays flat for a large batch (issue 24): the CLI's peak RSS with a 20,000-item
selection / batch record within a small bound of the same with 2,000 items. The selection
streams the store's pages into the record; a resume reads the record and the journal as
streams (one byte of state per item). Real store (attune2), a private core server."""
import json
import os
import subprocess
import time

import pytest

import actlib

BOUND_KB = 1536           # 20k vs 2k: at most 1.5 MiB more (a per-item struct would be ~14 MiB)


@pytest.fixture
def core(stack, tmp_path):
    actlib.reload_fixture("attune2")
    c = actlib.CoreServer("attune2", tmp_path)
    yield c
    c.stop()
    actlib.reload_fixture("attune2")


def peak_rss_kb(a, *args):
    """Runs redrive; (exit code, stderr, its own peak RSS in KiB). Started by GNU time: a
    child forked from pytest would report pytest's pages too (kept at exec), see
    tests/integration/test_redis_costs.py."""
    env = dict(os.environ, XDG_STATE_HOME=os.path.join(str(a.tmpdir), "state"), TZ="UTC",
               LANG="C.UTF-8")
    rssf = os.path.join(str(a.tmpdir), "mem.rss")
    p = subprocess.run(["/usr/bin/time", "-o", rssf, "-f", "%M", actlib.redrive_bin(),
                        "--config", a.config] + list(args), stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL, env=env,
                       timeout=120)
    with open(rssf) as f:
        kb = int(f.read().strip().splitlines()[-1])
    return p.returncode, p.stderr, kb


def fake_batch(a, bid, n, live_ids):
    """A record of n items (the last len(live_ids) real executions, the rest ids that were
    'sent' before: an ok outcome in the journal for each)."""
    state = os.path.join(str(a.tmpdir), "state", "redrive")
    os.makedirs(os.path.join(state, "batches"), mode=0o700, exist_ok=True)
    rec = os.path.join(state, "batches", bid + ".batch")
    now = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())   # within batch_max_age
    head = {"batch": bid, "system": "attune2", "action": "retry", "reason": None,
            "selection": "status=failed", "created": now, "operator": None}
    done = n - len(live_ids)
    fd = os.open(rec, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(json.dumps(head, separators=(",", ":")) + "\n")
        for i in range(n):
            eid = live_ids[i - done] if i >= done else str(9000000 + i)
            f.write(json.dumps([eid, None, None, 1, None]) + "\n")
        f.write('{"total":%d}\n' % n)
    fd = os.open(os.path.join(state, "journal.jsonl"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(fd, "a") as f:
        for i in range(done):
            line = {"time": "2026-01-01T00:00:00.000Z", "operator": "t", "system": "attune2",
                    "action": "retry", "targets": [str(9000000 + i)],
                    "idempotency_key": "%032x" % i, "http_status": 0, "result": "sending",
                    "code": "pending", "batch": bid, "item": i}
            f.write(json.dumps(line, separators=(",", ":")) + "\n")
            line.update(code="ok", http_status=202, result="retried")
            f.write(json.dumps(line, separators=(",", ":")) + "\n")


def test_resume_memory_flat_20k_vs_2k(act, core, tmp_path):
    live = [str(r[0]) for r in actlib.admin_sql(
        "INSERT INTO execution (action_ref, status, result, retry_count, max_retries)"
        " SELECT 'mem.job', 'failed', '{\"error\": \"mem boom\"}', 0, 3"
        " FROM generate_series(1, 6) RETURNING id")]
    rss = {}
    for n, bid, ids in ((2000, "00000000000002aa", live[:3]), (20000, "00000000000020bb", live[3:])):
        a = act("attune2", core=core.url)
        fake_batch(a, bid, n, ids)
        rc, err, kb = peak_rss_kb(a, "batch", "resume", bid, "--rate", "500", "--yes")
        assert rc == 0, err
        assert "3 of %d never sent" % n in err, err
        rss[n] = kb
        rc, err, _ = peak_rss_kb(a, "batch", "list", "--json")
        assert rc == 0, err
    sent = sorted(x["target"] for x in core.actions() if x["action"] == "retry")
    assert sent == sorted(live)
    assert rss[20000] - rss[2000] <= BOUND_KB, rss


def test_selection_memory_flat_20k_vs_2k(act, core):
    rss = {}
    for n, text in ((2000, "small sel"), (20000, "large sel")):
        actlib.admin_sql(
            "INSERT INTO execution (action_ref, status, result, retry_count, max_retries, created)"
            " SELECT 'mem.job', 'failed', jsonb_build_object('error', %s), 0, 3,"
            " now() - interval '1 millisecond' * g FROM generate_series(1, %s) g", (text, n))
        a = act("attune2", core=core.url, page_size=1000)
        # without --yes and no terminal: the whole selection is made, then refused
        rc, err, kb = peak_rss_kb(a, "retry", "--status", "failed", "--filter", text)
        assert rc == 2, err
        assert "redrive: breakdown: %d eligible, 0 ineligible (not sent), 0 loop retries" % n in err, err
        rss[n] = kb
    assert rss[20000] - rss[2000] <= BOUND_KB, rss
