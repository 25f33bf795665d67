"""A full disk in the middle of a resumable batch (docs/error-groups.md, redrive(1) BATCHES):
the disk fills up while an item's "pending" line is written (a short write, then ENOSPC),
so that item is refused and never sent; the disk has room again for the next item's
pending line, whose request reaches the core; redrive is killed before its outcome.

A fragment left by the short write would glue the next pending line to it: read back as
garbage, that item would count as never sent and a resume would send it again with a new
Idempotency-Key (applied twice). The journal keeps no fragment, the item is unknown: held
back by a resume, re-sent only with --resend-unknown and then with the key of its pending
line (the core applies it once). An LD_PRELOAD shim (tests/actions/diskfull.c) is the
disk; the reference core server's request log is the judge. Real store (attune2)."""
import json
import os
import signal
import subprocess
import time

import actlib
from test_act_batch import batches, core, insert_bulk, sent  # noqa: F401

SHIM = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    actlib.redrive_bin()))), "tests", "actions", "libdiskfull.so")


def record_targets(a, bid):
    rec = os.path.join(str(a.tmpdir), "state", "redrive", "batches", bid + ".batch")
    with open(rec) as f:
        return [json.loads(l)[0] for l in f if l.startswith("[")]


def run_until_held(a, mark, *args):
    """redrive under the shim until it sits in the held write, then kill -9."""
    env = dict(os.environ, XDG_STATE_HOME=os.path.join(str(a.tmpdir), "state"), TZ="UTC",
               LANG="C.UTF-8", LD_PRELOAD=SHIM,
               RD_FULL_CUT='"code":"pending"|"item":1}',     # item 1: the disk fills up
               RD_FULL_FREE='"code":"pending"|"item":2}',    # item 2: room again
               RD_FULL_HOLD='"code":"ok"|"item":2}',         # killed before item 2's outcome
               RD_FULL_MARK=str(mark),
               ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0")
    p = subprocess.Popen([actlib.redrive_bin(), "--config", a.config] + list(args),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                         stdin=subprocess.DEVNULL)
    deadline = time.time() + 30
    while not mark.exists() and time.time() < deadline and p.poll() is None:
        time.sleep(0.05)
    held = mark.exists()
    p.send_signal(signal.SIGKILL)
    out, err = p.communicate(timeout=10)
    assert held, "never reached item 2's outcome line: rc %s\n%s%s" % (p.returncode, out, err)
    return err


def test_full_disk_mid_line_never_sends_an_item_twice(act, core, tmp_path):
    assert os.path.exists(SHIM), SHIM
    ids, _ = insert_bulk("diskfull boom", 6, exhausted_every=0)
    a = act("attune2", core=core.url, page_size=10)
    # one request at a time: the shim's lines come in the items' order
    err = run_until_held(a, tmp_path / "held", "retry", "--status", "failed", "--filter",
                         "diskfull boom", "--rate", "100", "--concurrency", "1", "--yes")
    assert "No space left on device" in err, err
    [b] = batches(a)
    t = record_targets(a, b["id"])
    assert len(t) == 6 and sorted(t) == sorted(ids)
    first = sent(core)
    assert first == {t[0]: 1, t[2]: 1}, first            # item 1 refused, item 2 applied
    [k2] = [x["key"] for x in core.actions() if x["target"] == t[2]]
    assert (b["total"], b["ok"], b["failed"], b["unknown"], b["state"]) == (6, 1, 0, 1, "open"), b

    # the journal: every line whole (the short write truncated back)
    with open(actlib.journal_path(tmp_path)) as f:
        raw = f.read()
    assert raw.endswith("\n")
    lines = [json.loads(l) for l in raw.splitlines()]
    assert [(j["item"], j["code"]) for j in lines if j.get("batch") == b["id"]] == \
        [(0, "pending"), (0, "ok"), (2, "pending")]
    assert [j["idempotency_key"] for j in lines if j.get("item") == 2] == [k2]

    # a resume sends the items never sent, holds item 2 back
    r = a.run("batch", "resume", b["id"], "--rate", "500", "--yes")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "redrive: held back: 1 unknown: may have reached the core (sent, no outcome): not " \
        "re-sent" in r.stderr
    assert sent(core) == {x: 1 for x in t}, sent(core)
    [b2] = batches(a)
    assert (b2["ok"], b2["unknown"], b2["state"]) == (5, 1, "open"), b2

    # --resend-unknown: item 2 again, with the key of its pending line: applied once
    r = a.run("batch", "resume", b["id"], "--resend-unknown", "--yes")
    assert r.returncode == 0, r.stdout + r.stderr
    again = [(x["key"], x["applied"], x["replayed"]) for x in core.actions() if x["target"] == t[2]]
    assert again == [(k2, True, False), (k2, False, True)], again
    assert sent(core) == {**{x: 1 for x in t}, t[2]: 2}
    [b3] = batches(a)
    assert (b3["ok"], b3["unknown"], b3["state"]) == (6, 0, "done"), b3
