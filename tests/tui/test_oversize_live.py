"""A task hash past the field cap shows on screen as such (issue 32): the console's
executions view lists it with the state "oversized" and says why in its error column
(`hash with N fields (more than 64): not read`); the task beside it reads as ever.
Against the stack's Redis, a private db. Needs the stack env; fails without it.
"""
import json
import os
import time

import pytest

from test_guards_live import ConfTerm
from test_live import stack_env  # noqa: F401  (the fixture)

DB, PREFIX = 14, "oversize-tui"


@pytest.fixture
def store():
    import redis
    r = redis.Redis(host="127.0.0.1", port=int(os.environ["RD_REDIS_PORT"]), db=DB)
    r.flushdb()
    t = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 120))
    rec = {"status": "failed", "attempt": 1, "errorCode": "E", "errorMessage": "plain boom",
           "taskSnapshot": {"taskId": "task-ok", "type": "tui.job"}, "dispatchedAt": t, "resolvedAt": t}
    r.hset(PREFIX + ":task-ok", "1", json.dumps(rec))
    r.hset(PREFIX + ":task-wide", mapping={str(i): "x" for i in range(1, 501)})
    yield
    r.flushdb()


def test_oversized_task_on_screen(tmp_path, store):
    t = ConfTerm(tmp_path, "over", ["profile = alakai", "store = redis://127.0.0.1:%s/%d"
                                    % (os.environ["RD_REDIS_PORT"], DB), "prefix = " + PREFIX,
                                    "core = http://127.0.0.1:9", "auth = none", "core_probe = 0"],
                 cols=160)
    t.wait_for("redis")
    t.send("2")
    t.wait_for("task-wide", secs=15)
    t.wait_for("task-ok")
    row = [ln.split() for ln in t.screen.display if "task-wide" in ln]
    assert len(row) == 1, row
    assert row[0][:3] == ["task-wide", "-", "oversized"], row     # id, name, state
    assert " ".join(row[0]).endswith("- - hash with 500 fields (more than 64): not read"), row
    ok = [ln for ln in t.screen.display if "task-ok" in ln]
    assert len(ok) == 1 and "failed" in ok[0] and "oversized" not in ok[0], ok
    t.quit()
