"""The Workers view as the store and the broker have it (issue 34), in a real terminal on
the local stack: DEPTH is the broker's count of the worker's queue (a worker in an error
loop reports 0 while its queue fills), the worker's own figure beside it, each named; a
cordoned worker the store then made inactive reads inactive, not draining.

Needs the stack env (tests/stack/stack.sh start DIR && . DIR/env); fails without it."""
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "stack"))
import stack_fixtures as fx  # noqa: E402
import stacklib  # noqa: E402
from lib.term import LiveTerm as Term  # noqa: E402

BIN = os.environ.get("RD_BIN", os.path.join(ROOT, "build", "src", "cli", "redrive"))


def admin(sql, *args):
    c = stacklib.pg_admin(os.environ, "attune2", autocommit=True)
    try:
        c.cursor().execute(sql, args)
    finally:
        c.close()


def row_of(text, name):
    rows = [l for l in text.splitlines() if l.startswith(name + " ")]
    assert len(rows) == 1, text
    return rows[0].split()


def test_depth_from_broker_and_inactive_beats_draining(tmp_path):
    fx.reload("attune2")
    fx.reload("rabbit")      # the worker queues' messages expire (x-message-ttl 5 min): again
    fx.touch()
    # worker 3 (worker.3.executions holds 60 at the broker) now reports an empty queue;
    # worker 7 (cordoned) was then deactivated: the store says inactive
    admin("UPDATE attune.worker SET capabilities = jsonb_set(capabilities, '{health,queue_depth}', '0') "
          "WHERE id = 3")
    admin("UPDATE attune.worker SET status = 'inactive' WHERE id = 7 AND cordoned")
    t = Term(tmp_path, cols=140, rows=30)
    try:
        t.send("3")
        t.wait_for("Workers")
        t.wait_until(lambda: re.search(r"\n%s .* 60 +0 " % fx.ATTUNE_WORKERS[3], t.text()),
                     what="the broker's 60 beside the worker's own 0")
        s = t.text()
        head = [l for l in s.splitlines() if l.startswith("NAME ")]
        assert len(head) == 1, s
        assert head[0].split()[:7] == ["NAME", "STATUS", "HEALTH", "REASON", "HB", "BROKER", "OWN"], s
        assert "(depth: BROKER the broker's count, OWN the worker's)" in s, s
        w7 = row_of(s, fx.ATTUNE_WORKERS[7])
        assert w7[1] == "inactive", s
        # worker 4: the broker's 120 beside its own 120
        assert re.search(r"\n%s .* 120 +120 " % fx.ATTUNE_WORKERS[4], s), s
        t.quit()
        # snapshot --json says the same: the broker's depth beside the worker's own
        p = subprocess.run([BIN, "--config",
                            str(tmp_path / "config"), "--system", "attune2", "snapshot", "--view", "workers",
                            "--json"], capture_output=True, timeout=60,
                           env=dict(os.environ, REDRIVE_PROFILES=os.path.join(ROOT, "profiles")))
        assert p.returncode == 0, p.stderr
        w = {x["id"]: x for x in json.loads(p.stdout)["workers"]}
        assert (w["3"]["broker_depth"], w["3"]["queue_depth"]) == (60, 0), w["3"]
        assert (w["4"]["broker_depth"], w["4"]["queue_depth"]) == (120, 120), w["4"]
        assert w["7"]["status"] == "inactive", w["7"]
    finally:
        t.close()
        fx.reload("attune2")
