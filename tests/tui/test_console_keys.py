"""Small expectations of the console's keys (issue 23), in a real terminal (pexpect + pyte)
against the local stack (tests/stack, attune2): q on the top view asks before quitting
(confirm_quit), `:` commands complete with Tab and recall with Up, and `:export` without a
path writes under the user's data directory and names the absolute path.
"""
import glob
import re
import os

from lib.term import LiveTerm as Term


def status(t):
    return t.screen.display[-2]


def test_q_on_the_top_view_asks_before_quitting(tmp_path):
    t = Term(tmp_path)
    t.wait_for("postgresql ok")
    t.send("2")
    t.wait_for("Executions")
    t.send("qq")                        # back to the overview, then the question
    t.wait_for("quit redrive? y: quit, any other key: stay")
    t.send("q")                         # a third q stays: repeated presses never walk out
    t.wait_for("not quitting")
    assert t.child.isalive()
    t.send("q")
    t.wait_for("quit redrive?")
    t.send("y")
    assert t.finish() == 0


def test_confirm_quit_false_quits_at_once(tmp_path):
    t = Term(tmp_path, extra_conf="confirm_quit = false\n")
    t.wait_for("postgresql ok")
    t.send("q")
    assert t.finish() == 0


def test_command_mode_tab_completion_and_history(tmp_path):
    t = Term(tmp_path)
    t.wait_for("postgresql ok")
    t.send(":exp\t")
    assert status(t).startswith(":export   export export!"), status(t)
    t.send("\x15sys\t")                 # ctrl-u, then one match: the name and a blank
    assert status(t).rstrip() == ":system", status(t)
    t.send("\x1b")
    t.send(":wor\t\r")
    t.wait_for("Workers  7 shown")
    t.send("1")
    t.wait_for("Overview")
    t.send(":\x1bOA")                   # Up: the last command line
    assert status(t).rstrip() == ":workers", status(t)
    t.send("\r")
    t.wait_for("Workers  7 shown")
    t.send("Q")
    assert t.finish() == 0


def test_export_without_a_path_goes_to_the_data_directory(tmp_path):
    t = Term(tmp_path, cols=200)
    t.wait_for("postgresql ok")
    t.send("3")
    t.wait_for("Workers  7 shown")
    t.send(":export\r")
    t.wait_for("exported the workers view to /")
    files = glob.glob(str(tmp_path / ".local/share/redrive/exports/redrive-workers-*.csv"))
    assert len(files) == 1, files
    assert "exported the workers view to %s (csv)" % files[0] in t.text(), t.text()
    with open(files[0]) as f:
        assert f.readline().startswith("id,name,status,health")
    assert oct(os.stat(os.path.dirname(files[0])).st_mode & 0o777) == oct(0o700)
    t.send("Q")
    assert t.finish() == 0


def test_f_opens_a_status_picker_with_counts(tmp_path):
    t = Term(tmp_path)
    t.wait_for("postgresql ok")
    t.send("2")
    t.wait_for("26/26 rows")
    t.send("f")
    t.wait_for("status filter: enter picks, esc closes")
    box = [l for l in t.screen.display if re.search(r"  (any status|failed|running|completed) +\d+ ", l)]
    picked = {re.search(r"  (any status|failed|running|completed) +(\d+) ", l).group(1):
              int(re.search(r"  (any status|failed|running|completed) +(\d+) ", l).group(2)) for l in box}
    assert picked == {"any status": 26, "failed": 13, "running": 2, "completed": 3}, t.text()
    rows = [i for i, l in enumerate(t.screen.display) if re.search(r"  any status +\d+ ", l)]
    failed = [i for i, l in enumerate(t.screen.display) if re.search(r"  failed +13 ", l)]
    assert len(rows) == 1 and len(failed) == 1, t.text()
    t.send("j" * (failed[0] - rows[0]) + "\r")
    t.wait_for("filter: status=failed")
    t.wait_for("13/13 rows")
    t.send("f")
    t.wait_for("status filter:")
    t.send("\x1b")                      # escape closes, the filter stays
    t.pump(0.5)
    assert "status filter:" not in t.text() and "filter: status=failed" in t.text()
    t.send("Q")
    assert t.finish() == 0
