"""A running batch put away (src/ui/dialog.c): escape on a whole-set retry's progress hides
the dialog, the views take the keys again while the batch goes on, the status line shows its
progress; a new action, a system switch or quitting is refused while it runs (quitting shows
it again); `:batch` shows it; once done its results are still there, and every eligible
execution reached the core exactly once. Real store (attune2), a private core server.

Needs the stack env (tests/stack/stack.sh start DIR && . DIR/env); fails without it.
"""
import re

from lib.term import LiveTerm as Term
from test_set_retry import batch_list, core, insert, sent, stack_env  # noqa: F401

N = 120
RATE = 20          # 6 s of sending: the checks below run while it goes on


def status_line(t):
    return t.screen.display[-2]


def test_batch_runs_in_the_background_and_the_views_answer(tmp_path, core):
    ids, _ = insert("Bgboom %d", N, exhausted_every=0)
    t = Term(tmp_path, cols=140, rows=36, core=core.url, extra_conf="page_size = 50\nrate_limit = %d\n" % RATE)
    t.wait_for("postgresql")
    t.send(":filter status=failed text=Bgboom\r")
    t.wait_for("text=Bgboom")
    t.send("R")
    t.wait_for("breakdown: %d eligible, 0 ineligible (not sent), 0 loop retries" % N, secs=40)
    t.send("c")                                   # over 100: no canary (dlg_canary.c), all at once
    t.send("0\r")
    t.wait_for("canary: none: everything is sent at once")
    t.send("y")
    t.send("%d\r" % N)
    t.wait_for("retry: ", secs=10)
    # the dialog says what escape does while it runs
    t.wait_for("x: abort the rest   Escape/n: on in the background (:batch shows it)")
    t.send("\x1b")
    t.wait_for("the retry batch goes on in the background: :batch shows it")
    assert "retry: " not in t.text(), "the dialog is put away"
    m = re.search(r"retry batch: (\d+)/%d done, (\d+) ok, 0 failed \.\.\.  \(:batch\)" % N, status_line(t))
    assert m and int(m.group(1)) < N, status_line(t)
    t.send("3")                                   # the views take the keys while it runs
    t.wait_for("Workers")
    t.send("2")
    t.wait_for("Executions")
    t.send("r")                                   # no second action while it runs
    t.wait_for("retry: the retry batch is still running (:batch shows it, x there aborts it)")
    t.send(":system alakai\r")
    t.wait_for("switching systems: the retry batch is still running")
    assert "PROD" in t.screen.display[0], "still on attune2"
    t.send("Q")                                   # quitting waits: the batch is shown again
    t.wait_for("quit: the retry batch is still running")
    t.wait_for("retry: ")
    assert t.child.isalive()
    t.send("\x1b")
    t.wait_for("goes on in the background")
    t.wait_for("retry batch: %d/%d done, %d ok, 0 failed  (:batch)" % (N, N, N), secs=30)
    assert sent(core) == {i: 1 for i in ids}, "every eligible execution once"
    t.send(":batch\r")                            # done while put away: its results are still there
    t.wait_for("retry: %d/%d done, %d ok, 0 failed" % (N, N, N))
    t.wait_for("ETA done")
    t.wait_for("Escape/n: close")
    assert "abort the rest" not in t.text(), "nothing left to abort"
    t.send("\x1b")
    t.pump(0.5)
    assert "(:batch)" not in status_line(t), "closed once done and dismissed"
    [b] = batch_list(tmp_path)
    assert (b["total"], b["ok"], b["state"]) == (N, N, "done"), b
    t.send("Q")
    assert t.finish() == 0


def test_batch_command_without_a_batch(tmp_path):
    t = Term(tmp_path, cols=120, rows=30)
    t.wait_for("postgresql")
    t.send(":batch\r")
    t.wait_for("no batch: nothing was put away")
    t.send("Q")
    assert t.finish() == 0

