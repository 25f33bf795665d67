"""A task hash past the field cap is never asked for whole (issue 32): the sweep asks each
key's size first (HLEN, pipelined per batch) and sends HGETALL only for hashes of at most
64 fields, so the Redis server never builds the reply of a hostile 200,000-field hash
(~13 MB; ~66 MB at 1,000,000 fields). The task is listed as oversized with its field count,
the tasks beside it are read as ever.

Against the Redis of the local stack (a private db): `redrive snapshot --json` (one full
sweep) while a MONITOR connection records every command the server runs, and INFO
commandstats before and after. Needs the stack env; fails without it.
"""
import json
import os
import threading
import time

import pytest

from snaphelp import by_id, need_env, snapshot, write_config

DB, PREFIX = 13, "oversize-alakai"
N = 40                               # ordinary tasks beside the huge one
HUGE_FIELDS = 200_000


def record(task, status, t):
    return json.dumps({"status": status, "attempt": 1, "errorCode": "E" if status == "failed" else None,
                       "errorMessage": "boom %s" % task if status == "failed" else None,
                       "taskSnapshot": {"taskId": task, "type": "over.job"},
                       "dispatchedAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t)),
                       "resolvedAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t + 1))})


def clear(r):
    keys = list(r.scan_iter(match=PREFIX + ":*", count=5000))
    if keys:
        r.unlink(*keys)


class Monitor:
    """Every command the server runs in db DB, as MONITOR lines, until stop()."""
    def __init__(self, r):
        self.r, self.lines, self.ready = r, [], threading.Event()
        self.th = threading.Thread(target=self.run, daemon=True)
        self.th.start()
        assert self.ready.wait(5), "MONITOR did not start"

    def run(self):
        with self.r.monitor() as m:
            self.ready.set()
            for cmd in m.listen():
                if cmd["command"] == "ECHO oversize-monitor-stop":
                    return
                if int(cmd.get("db", -1)) == DB:
                    self.lines.append(cmd["command"])

    def stop(self):
        self.r.echo("oversize-monitor-stop")
        self.th.join(10)
        assert not self.th.is_alive(), "MONITOR did not stop"
        return self.lines


@pytest.fixture
def store(tmp_path):
    import redis
    need_env("RD_REDIS_PORT")
    r = redis.Redis(host="127.0.0.1", port=int(os.environ["RD_REDIS_PORT"]), db=DB)
    clear(r)
    now = time.time() - 600
    pipe = r.pipeline(transaction=False)
    expect = {}
    for i in range(N):
        st = "failed" if i % 4 == 0 else "succeeded"
        expect["task-%03d" % i] = st
        pipe.hset("%s:task-%03d" % (PREFIX, i), "1", record("task-%03d" % i, st, now + i))
    pipe.hset("%s:task-edge" % PREFIX, mapping={str(a): record("task-edge", "failed", now) for a in range(1, 65)})
    expect["task-edge"] = "failed"   # 64 fields: the cap itself, read
    pipe.execute()
    r.eval("for i = 1, %d do redis.call('HSET', KEYS[1], i, 'x') end" % HUGE_FIELDS, 1,
           "%s:task-huge" % PREFIX)
    assert r.hlen("%s:task-huge" % PREFIX) == HUGE_FIELDS
    cfg = write_config(tmp_path, {"over": {
        "profile": "alakai", "store": "redis://127.0.0.1:%s/%d" % (os.environ["RD_REDIS_PORT"], DB),
        "prefix": PREFIX, "core": "http://127.0.0.1:9", "auth": "none", "max_retries": "2",
        "core_probe": "0"}})
    yield r, cfg, expect
    clear(r)


def calls(r):
    return {k: v["calls"] for k, v in r.info("commandstats").items()}


def test_huge_hash_is_never_fetched(store):
    r, cfg, expect = store
    before = calls(r)
    mon = Monitor(r)
    s = snapshot(cfg, "over", "--json", "--view", "executions", timeout=60)
    lines = mon.stop()
    after = calls(r)
    assert s.rc == 0, s.err

    huge = "%s:task-huge" % PREFIX
    hgetall = [ln for ln in lines if ln.startswith("HGETALL ")]
    hlen = [ln for ln in lines if ln.startswith("HLEN ")]
    assert "HGETALL " + huge not in hgetall, "the huge hash was asked for whole"
    assert "HLEN " + huge in hlen, hlen
    # every other task: its size, then its hash; nothing twice (one sweep, no rehash here)
    others = sorted("%s:%s" % (PREFIX, t) for t in expect)
    assert sorted(hgetall) == ["HGETALL " + k for k in others], hgetall
    assert sorted(hlen) == sorted(["HLEN " + k for k in others] + ["HLEN " + huge]), hlen
    d = {k: after.get(k, 0) - before.get(k, 0) for k in after}
    assert d.get("cmdstat_hgetall") == len(others), d   # no other client asks HGETALL here
    assert d.get("cmdstat_hlen") == len(others) + 1, d

    ex = by_id(json.loads(s.out)["executions"])
    assert set(ex) == set(expect) | {"task-huge"}, sorted(ex)
    h = ex["task-huge"]
    assert h["oversized"] is True and h["malformed"] is False, h
    assert h["status"] == "unknown", h
    assert h["error"] == "hash with %d fields (more than 64): not read" % HUGE_FIELDS, h
    assert {t: ex[t]["status"] for t in expect} == expect
    assert all(ex[t]["oversized"] is False and ex[t]["malformed"] is False for t in expect)
    assert ex["task-000"]["error"] == "boom task-000"

    # the text snapshot says it on the task's row
    s = snapshot(cfg, "over", "--view", "executions", timeout=60)
    assert s.rc == 0, s.err
    row = [ln for ln in s.out.splitlines() if ln.startswith("task-huge ")]
    assert len(row) == 1 and "[oversized] hash with 200000 fields (more than 64): not read" in row[0], row
