"""Issue 35: the journal's group commit. A batch keeps a window of requests in flight and
each item has its "pending" line on disk before its request leaves (the write-ahead
rule), then its outcome line. Written one line and one fdatasync at a time, a disk whose
sync takes 30 ms capped the batch at ~16 items a second (two syncs an item, in series on
the writer thread), whatever the window. The writer now appends every line queued while
the last sync ran and syncs them all at once (src/actions/jwriter.c): the syncs per item
fall with the window, and no request leaves before the sync that covers its line.

Machine-independent: an LD_PRELOAD shim (tests/actions/slowsync.c) makes each journal sync
take 30 ms and logs it (the journal's size, the time it returned); the reference core
server's action log says when each request arrived and with which key. Real store
(attune2), a private core server."""
import json
import os

import actlib
from test_act_batch import batches, core, insert_bulk, sent  # noqa: F401

SHIM = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    actlib.redrive_bin()))), "tests", "actions", "libslowsync.so")
N = 96


def syncs(log):
    """[(journal bytes covered, epoch seconds the sync returned)] in order."""
    if not os.path.exists(log):
        return []
    with open(log) as f:
        return [(int(a), float(b)) for a, b in (l.split() for l in f if l.strip())]


def test_window_shares_its_syncs_and_keeps_the_write_ahead_rule(act, core, tmp_path):
    assert os.path.exists(SHIM), SHIM
    ids, _ = insert_bulk("groupsync boom", N, exhausted_every=0)
    a = act("attune2", core=core.url, page_size=50)
    log = str(tmp_path / "syncs.log")
    p = a.run("retry", "--status", "failed", "--filter", "groupsync boom", "--rate", "1000",
              "--concurrency", "8", "--yes", timeout=180,
              env={"LD_PRELOAD": SHIM, "RD_SYNC_MS": "30", "RD_SYNC_LOG": log,
                   "ASAN_OPTIONS": os.environ.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0"})
    assert p.returncode == 0, p.stdout + p.stderr
    got = sent(core)
    assert sorted(got) == sorted(ids) and set(got.values()) == {1}, got
    [b] = batches(a)
    assert (b["total"], b["ok"], b["unknown"], b["state"]) == (N, N, 0, "done"), b

    # every line whole, two per item: pending then its outcome
    path = actlib.journal_path(tmp_path)
    raw = open(path, "rb").read()
    assert raw.endswith(b"\n")
    ends, lines, at = [], [], 0
    for l in raw.split(b"\n")[:-1]:
        at += len(l) + 1
        lines.append(json.loads(l))
        ends.append(at)
    mine = [(j, e) for j, e in zip(lines, ends) if j.get("batch") == b["id"]]
    assert sorted(j["code"] for j, _ in mine).count("pending") == N
    assert len(mine) == 2 * N, len(mine)

    s = syncs(log)
    assert s, "the shim logged no journal sync (not preloaded?)"
    per_item = len(s) / N
    print("journal syncs: %d for %d items (%.2f an item)" % (len(s), N, per_item))
    # one line and one sync at a time: 2.0 (and ~16 items/s on this disk); a window of 8
    # shares its syncs: a few a round of the window
    assert per_item <= 0.5, "%.2f journal syncs per item (%d for %d items)" % (per_item, len(s), N)
    assert s[-1][0] == len(raw), "the last line written was synced"

    # the write-ahead rule, per item: its request reached the core only after a sync that
    # covered its pending line had returned
    from datetime import datetime, timezone
    pend_end = {j["idempotency_key"]: e for j, e in mine if j["code"] == "pending"}
    for x in core.actions():
        if x["action"] != "retry":
            continue
        end = pend_end[x["key"]]
        covering = [t for size, t in s if size >= end]
        assert covering, "no sync covered the pending line of %s" % x["target"]
        arrived = datetime.strptime(x["time"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(
            tzinfo=timezone.utc).timestamp()
        assert covering[0] <= arrived + 0.002, (x, covering[0], arrived)
