"""Resolving a Tasker DLQ entry from the console (issue 24, dead letters): `V` on an entry of
the store's DLQ opens the confirmation, `y` sends the core's DLQ update (PATCH
/v1/dlq/entry/{id}) and the entry's row in tasks_dlq is resolved by the core, nothing else
changes; on a system whose profile has no resolve route the dialog refuses."""
import os
import sys

import psycopg2

import pyte_rep  # noqa: F401
import stack_fixtures as fx
from test_dlq_scale import TaskerTerm

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "actions"))
import actlib  # noqa: E402

# the fixture's pending entries, newest first: 1 (190 min), 3 (210), 5 (290), 4 (380)
ENTRY1 = "00000000-0000-4000-8000-300000000001"


def states():
    with psycopg2.connect(os.environ["RD_PG_DSN_TASKER"]) as c, c.cursor() as cur:
        cur.execute("SELECT dlq_entry_uuid::text, resolution_status::text, resolved_by FROM tasker.tasks_dlq")
        return {r[0]: (r[1], r[2]) for r in cur.fetchall()}


class CoreTaskerTerm(TaskerTerm):
    """Tasker's console with its core (the reference core server at url)."""

    def __init__(self, tmp_path, url):
        super().__init__(tmp_path)
        conf = tmp_path / "config"             # the parent's config has no core: again with one
        conf.write_text(conf.read_text() + "core = %s\nauth = bearer\ntoken = env:RD_CORE_TOKEN\n" % url)
        self.respawn()


def test_resolve_an_entry_from_the_dlq_view(tmp_path):
    fx.reload("tasker")
    core = actlib.CoreServer("tasker", tmp_path)
    try:
        before = states()
        assert before[ENTRY1][0] == "pending"
        t = CoreTaskerTerm(tmp_path, core.url)
        t.wait_for("postgresql ok")
        t.send("5")
        t.wait_for("DLQ  4 peeked of 4")
        assert t.screen.display[3].split()[0].endswith("00001"), t.text()   # the newest: entry 1
        # (r / V on a group of the DLQ act on the whole set: test_dlq_set.py)
        t.send("V")
        t.wait_for("resolve 1 DLQ entry on tasker")
        t.send("y")
        t.wait_for("resolve: 1 of 1 succeeded")
        t.send("\x1b")
        got = [a for a in core.actions() if a["action"] == "dlq_update"]
        assert [(a["target"], a["status"]) for a in got] == [(ENTRY1, 200)], got
        after = states()
        assert after[ENTRY1][0] == "manually_resolved" and after[ENTRY1][1], after[ENTRY1]
        assert {k: v for k, v in after.items() if k != ENTRY1} == {k: v for k, v in before.items() if k != ENTRY1}
        t.send("Q")
        assert t.finish() == 0
    finally:
        core.stop()
        fx.reload("tasker")
