"""Each view keeps its own filter (issue 23): a search typed in one view never changes
another's rows, the title says what filters the view, `C` clears it in every view, and
Enter on a worker lists the executions the store records for that worker's id.

Real terminal (pexpect + pyte) against the local stack (tests/stack): attune2 holds 26
executions, DLQ messages on attune.dlx.queue and 2 on orders_dlq, and worker 1
(worker-healthy) ran 10 of the executions.
"""
import re

from lib.term import LiveTerm as Term


def title(t):
    return t.screen.display[1]


def test_a_search_filters_only_the_view_it_was_typed_in(tmp_path):
    t = Term(tmp_path, cols=120)
    t.wait_for("postgresql ok")
    t.send("2")
    t.wait_for("26/26 rows")
    t.send("7")
    t.wait_for("Error groups")
    t.send(":groups 30d\r")         # the store's groups of every fixture failure
    t.wait_for("last 30d: 13 groups")
    t.send("/payments\r")
    t.wait_for("filter: text=payments")
    assert "Error groups  last 30d: 2 shown of 13 groups" in title(t), title(t)
    t.send("2")                     # the executions: all 26 rows, no filter
    t.wait_for("Executions")
    t.pump(1.0)
    assert "26/26 rows" in title(t) and "filter" not in title(t), title(t)
    t.send("7")                     # the groups kept theirs
    t.wait_for("filter: text=payments")
    t.send("5")
    t.wait_for("attune.dlx.queue")
    t.send("/orders\r")             # the DLQ's own rows, not the executions
    t.wait_for("filter: text=orders")
    assert re.match(r"DLQ  2 shown of \d+ peeked of \d+  filter: text=orders", title(t)), title(t)
    rows = [l for l in t.screen.display[3:12] if l.strip()]
    assert len(rows) == 2 and all(l.startswith("orders_dlq#") for l in rows), rows
    t.send("2")
    t.wait_for("Executions")
    t.pump(1.0)
    assert "26/26 rows" in title(t) and "filter" not in title(t), title(t)
    t.send("Q")
    assert t.finish() == 0


def test_clear_filter_works_in_every_view(tmp_path):
    t = Term(tmp_path)
    t.wait_for("postgresql ok")
    t.send("5")
    t.wait_for("attune.dlx.queue")
    t.send("/orders\r")
    t.wait_for("DLQ  2 shown of")
    t.send("C")
    t.wait_for("filter cleared")
    assert re.match(r"DLQ  \d+ peeked of", title(t)) and "filter" not in title(t), title(t)
    t.send("3")
    t.wait_for("Workers")
    t.send("/worker-st\r")
    t.wait_for("filter: text=worker-st")
    assert "Workers  1 shown of" in title(t), title(t)
    t.send("C")
    t.wait_for("filter cleared")
    assert "filter" not in title(t) and "1 shown" not in title(t), title(t)
    t.send("1")
    t.wait_for("Overview")
    t.send("C")
    t.wait_for("no filter in the overview view: nothing to clear")
    assert "does nothing" not in t.text()
    t.send("Q")
    assert t.finish() == 0


def test_enter_on_a_worker_lists_the_executions_recording_its_id(tmp_path):
    t = Term(tmp_path)
    t.wait_for("postgresql ok")
    t.send("3")
    t.wait_for("worker-healthy")
    t.send("/worker-healthy\r")
    t.wait_for("Workers  1 shown of")
    t.send("\r")
    t.wait_for("filter: worker=1")
    t.wait_for("10/10 rows")
    shown = [l for l in t.screen.display[3:14] if re.match(r"  \d+ ", l)]
    assert len(shown) == 10, t.text()
    assert "no executions" not in t.text()
    t.send("Q")
    assert t.finish() == 0
