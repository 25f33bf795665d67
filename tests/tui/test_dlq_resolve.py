"""Resolving a Tasker DLQ entry from the console (issue 24, dead letters): `V` on an entry of
the store's DLQ opens the confirmation, `y` sends the core's DLQ update (PATCH
/v1/dlq/entry/{id}) and the entry's row in tasks_dlq is resolved by the core, nothing else
changes; on a system whose profile has no resolve route the dialog refuses."""
import json
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


def test_resolved_entry_leaves_at_once_and_is_not_resolved_twice(tmp_path):
    """Issue 34: the resolved entry leaves the list without ^r; when a store read still lists
    it (here: the row made pending again behind the console's back, as a read from before
    the resolve would), V refuses it locally: one update sent, one journaled."""
    fx.reload("tasker")
    core = actlib.CoreServer("tasker", tmp_path)
    try:
        t = CoreTaskerTerm(tmp_path, core.url)
        t.wait_for("postgresql ok")
        t.send("5")
        t.wait_for("DLQ  4 peeked of 4")
        assert t.screen.display[3].split()[0].endswith("00001"), t.text()
        t.send("V")
        t.wait_for("resolve 1 DLQ entry on tasker")
        t.send("y")
        t.wait_for("resolve: 1 of 1 succeeded")
        t.send("\x1b")
        t.wait_for("DLQ  3 peeked of 3")               # no ^r: gone at once, the store read again
        assert not any(l.split() and l.split()[0].endswith("00001") for l in t.screen.display[3:8]), t.text()
        with psycopg2.connect(os.environ["RD_PG_ADMIN_DSN_TASKER"]) as c, c.cursor() as cur:
            cur.execute("UPDATE tasker.tasks_dlq SET resolution_status = 'pending' WHERE dlq_entry_uuid = %s",
                        (ENTRY1,))
        t.send("\x12")                                # ^r: the store lists it again
        t.wait_for("DLQ  4 peeked of")                 # (its count follows at the next poll)
        t.wait_until(lambda: t.screen.display[3].split()[0].endswith("00001"), what="entry 1 listed again")
        t.send("k")                                   # the cursor followed entry 3: up to entry 1
        t.send("V")
        t.wait_for("was resolved already from this console (see the journal): not sent again")
        assert "resolve 1 DLQ entry on tasker" not in t.text(), t.text()
        got = [a for a in core.actions() if a["action"] == "dlq_update"]
        assert [(a["target"], a["status"]) for a in got] == [(ENTRY1, 200)], got
        with open(os.path.join(str(tmp_path), "state", "redrive", "journal.jsonl")) as f:
            lines = [json.loads(l) for l in f if l.strip()]
        assert [l["targets"] for l in lines if l.get("action") == "resolve" and l.get("code") == "ok"] == \
            [[ENTRY1]], lines
        t.send("Q")
        assert t.finish() == 0
    finally:
        core.stop()
        fx.reload("tasker")
