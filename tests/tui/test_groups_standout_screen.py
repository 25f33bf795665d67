"""The groups view's line of what stands out (issue 36, item 1), in a real terminal (pexpect
+ pyte) against attune2's store: a concentrated group (18 of 20 on one worker and one action
of its own) and a spread one (25 failures over the window's workers and actions). The
selected group's line under the list is compared whole; tab picks an item (in brackets),
enter lists the group's members on it (the executions view's filter: fingerprint and
worker), and the spread group says nothing stands out.

Needs the stack env (tests/stack/stack.sh start DIR && . DIR/env); fails without it.
"""
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "integration"))
import test_groups_standout as data  # noqa: E402
from lib.term import Term, need_stack  # noqa: E402

attune_incident = data.attune_incident


def pct(share):
    p = share * 100
    return "%.0f" % p if p >= 10 or p == 0 else "%.1f" % p if p >= 0.1 else "%.2f" % p


@pytest.fixture
def console(tmp_path, attune_incident):
    need_stack("RD_PG_DSN_ATTUNE2")
    conf = tmp_path / "config"
    conf.write_text('[system "a"]\nprofile = attune-era2\nstore = %s\ncore = http://127.0.0.1:9\n'
                    'auth = none\nread_only = true\n' % os.environ["RD_PG_DSN_ATTUNE2"])
    t = Term(conf, cols=132, rows=32, env={"REDRIVE_PROFILES": os.path.join(data.HERE, "..", "..", "profiles")})
    yield t, attune_incident
    if t.child.isalive():
        t.quit()


def line_with(t, needle):
    rows = [ln.rstrip() for ln in t.screen.display if needle in ln]
    assert len(rows) == 1, t.text()
    return rows[0]


def test_groups_view_stands_out_line_pick_and_filter(console):
    t, workers = console
    win = data.attune_window()
    n_act = sum(1 for r in win if r["action"] == "ingest.parse")
    n_wk = sum(1 for r in win if r["worker"] == str(workers[2]))
    t.wait_for("postgresql")
    t.send("7")
    t.wait_for(data.SPREAD_FP)
    t.wait_for(data.CONC_FP)
    # the cursor is on the biggest group: the spread one
    t.wait_for("nothing stands out: spread like its window")
    t.send("j")
    # against the hour's other executions (the window less the group's 20 failures)
    act = "90 %% ingest.parse (%s %% of the hour's other executions)" % pct((n_act - 18) / (len(win) - 20))
    wk = "90 %% on worker %d (%s %%)" % (workers[2], pct((n_wk - 18) / (len(win) - 20)))
    want = "stands out: %s \u00b7 %s  (tab: pick one)" % (act, wk)
    t.wait_for(want)
    assert line_with(t, "stands out:") == want
    t.send("\t")
    t.wait_for("[" + act + "]")
    assert line_with(t, "stands out:") == "stands out: [%s] \u00b7 %s  enter: its members on it" % (act, wk)
    t.send("\t")
    assert line_with(t, "stands out:") == "stands out: %s \u00b7 [%s]  enter: its members on it" % (act, wk)
    t.send("\r")
    t.wait_for("worker=%d" % workers[2])
    # the 18 members on that worker, no other execution
    rows = lambda: [ln.split() for ln in t.screen.display if " failed " in ln]  # noqa: E731
    t.wait_until(lambda: len(rows()) == 18, what="the 18 members on the worker")
    assert "18/18 rows" in t.text()
    assert all(r[1] == "ingest.parse" and r[7] == str(workers[2]) and r[8:11] == ["Parser", "choked", "on"]
               for r in rows()), t.text()
    # back to the groups: tab past the last item picks none, then the first (the action)
    t.send("\x1b")
    t.wait_for("[" + wk + "]")
    t.send("\t")
    t.wait_for("(tab: pick one)")
    t.send("\t")
    t.wait_for("[" + act + "]")
    t.send("\r")
    t.wait_for("text=ingest.parse")
    t.wait_until(lambda: len(rows()) == 18, what="the 18 members of the action")
    assert all(r[1] == "ingest.parse" for r in rows()), t.text()


def test_groups_view_onset_line_and_history_marks(tmp_path):
    """The selected group's onset under it, against the console's own ring (loaded from
    its history file at start), and the history view's mark of it."""
    import time
    need_stack("RD_PG_ADMIN_DSN_ATTUNE2")
    data.stack_fixtures.reload("attune2")
    try:
        now = time.time()
        onset = (int(now) // 60) * 60 - 300
        data.insert_at([(70000 + k, "ledger.write", data.ONSET_ERR % (100 + k), onset + 7 + k * 20) for k in range(6)] +
                       [(70100 + k, "cache.fill", data.OTHER_ERR % k, onset + 40 + k) for k in range(3)])
        samples = [(st, 3 if st * 10 < onset - 30 else 7, 10 if st * 10 < onset - 20 else 50)
                   for st in range((onset - 240) // 10, (onset + 120) // 10)]
        data.write_history(str(tmp_path), "a", samples, [((onset - 50) // 10, "u", "worker-7"),
                                                         ((onset + 10) // 10, "d", "worker-%1B%5B2J-evil")])
        conf = tmp_path / "config"
        conf.write_text('[system "a"]\nprofile = attune-era2\nstore = %s\ncore = http://127.0.0.1:9\n'
                        'auth = none\nread_only = true\n' % os.environ["RD_PG_DSN_ATTUNE2"])
        t = Term(conf, cols=160, rows=32,
                 env={"REDRIVE_PROFILES": os.path.join(data.HERE, "..", "..", "profiles")})
        try:
            t.wait_for("postgresql")
            t.send("7")
            t.wait_for(data.ONSET_FP)
            t.send("/Ledger\r")
            want = ("started %s \u2014 %s worker worker-7 unhealthy \u00b7 %s worker worker-\u241b[2J-evil draining"
                    " \u00b7 queue billing depth \u00d75 \u00b7 DLQ +4 \u00b7 1 other group started"
                    % (data.hhmm(onset), data.hhmm(onset - 50), data.hhmm(onset + 10)))
            t.wait_for(want)
            assert "\x1b[2J" not in t.text()
            gid = [ln.split()[0] for ln in t.screen.display if data.ONSET_FP in ln and "failed" not in ln][0]
            t.send("\x1b")
            t.send(":history\r")
            t.wait_for("History  a")
            t.wait_for("^ onset: ")
            title = [ln for ln in t.screen.display if ln.startswith("History  a")][0]
            assert ("%s %s" % (gid, data.hhmm(onset))) in title, title
            # each chart's time axis carries the marks ('^'), five minutes before "now"
            axes = [ln for ln in t.screen.display if "-60m" in ln]
            assert axes and all("^" in ln for ln in axes), t.text()
        finally:
            if t.child.isalive():
                t.quit()
    finally:
        data.stack_fixtures.reload("attune2")
