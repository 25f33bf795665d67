"""The DLQ's dead letters as a set from the console (issue 24, "dead letters at scale";
docs/error-groups.md, src/ui/setretry.c): Tasker's tasks_dlq bigger than one page (130 bulk
entries, 50 a page), in a real terminal (pexpect + pyte) against the local stack and a
private reference core server whose request log says what was sent:
- `b` then `r` on a reason group retries the executions of EVERY entry of the reason, every
  page of the store's DLQ (not the 50 loaded), the eligible ones only, once each, as a batch
  `redrive batch list` lists; the breakdown comes first, the count is typed;
- `V` on a reason group resolves every entry of the reason through the core's dlq_update;
- `R` with a search retries what the search matches, every page; escape while the store is
  selecting stops it: nothing is sent, no batch is left.
Few requests (the reference core takes ~0.4 s a Tasker request on a loaded machine).

Needs the stack env (tests/stack/stack.sh start DIR && . DIR/env); fails without it.
"""
from collections import Counter

import pytest

import pyte_rep  # noqa: F401
import stack_fixtures as fx
from setlib import actlib, batch_files, batch_list, escape_while_selecting, sent, stack_env  # noqa: F401
from test_act_dlq import fill, uid
from test_dlq_resolve import CoreTaskerTerm, states

STALE = "00000000-0000-4000-8000-300000000004"   # the fixture's staleness_timeout entry


class FastTerm(CoreTaskerTerm):
    """Tasker's console with its core, sending at 200 a second."""

    def __init__(self, tmp_path, url):
        conf = tmp_path / "config"
        super().__init__(tmp_path, url)
        conf.write_text(conf.read_text() + "rate_limit = 200\n")
        self.respawn()


def open_dlq(t):
    t.wait_for("postgresql ok")
    t.send("5")
    t.wait_for("DLQ  50 peeked of")


@pytest.fixture
def dlq(tmp_path):
    """Tasker's DLQ filled past a page (test_act_dlq.fill), its core, and its console on the
    DLQ view: (rows, core, terminal)."""
    fx.reload("tasker")
    rows = fill()
    core = actlib.CoreServer("tasker", tmp_path)
    try:
        t = FastTerm(tmp_path, core.url)
        open_dlq(t)
        yield rows, core, t
    finally:
        core.stop()
        fx.reload("tasker")


def test_group_retry_and_resolve_cover_every_page(tmp_path, dlq):
    rows, core, t = dlq
    t.send("b")                                   # the store's counts, not the 50 loaded (issue 34)
    t.wait_for("DLQ by reason  4 groups of the store's 134 entries")
    assert [r.split()[:2] for r in t.screen.display[3:7]] == [
        ["worker_unavailable", "66"], ["max_retries_exceeded", "61"], ["staleness_timeout", "6"],
        ["dependency_cycle_detected", "1"]], t.text()
    t.send("r")                                   # the whole reason: 65 bulk entries + the fixture's
    t.wait_for("breakdown: 16 eligible, 50 ineligible (not sent), 0 loop retries", secs=30)
    t.wait_for("selected by the store: dlq reason=worker_unavailable, 66 read from 2 pages")
    t.wait_for("retry 66 DLQ entries' executions on tasker?")
    assert sent(core, "step") == Counter()        # the breakdown first: nothing yet
    t.wait_for("more than 10: confirm by typing the count")
    t.send("y")
    t.wait_for("type 16 and Enter to retry 16")
    t.send("16\r")
    t.wait_for("retry: 16 of 16 succeeded", secs=40)
    got = sent(core, "step")
    want = [rows[i][1] for i in rows if i % 2 == 0 and rows[i][2]]
    assert sorted(got) == sorted(want), "exactly the eligible steps of the reason, every page"
    assert set(got.values()) == {1}, "each sent once"
    [b] = batch_list(tmp_path)
    assert (b["system"], b["action"], b["total"], b["ok"], b["state"], b["selection"]) == \
        ("tasker", "retry", 16, 16, "done", "dlq reason=worker_unavailable"), b
    t.send("\x1b")
    t.wait_for("DLQ by reason  4 groups")
    before = states()
    t.send("jj")                                  # staleness_timeout: 2 loaded, 6 in the store
    t.send("V")
    t.wait_for("resolve 6 DLQ entries on tasker?", secs=30)
    t.wait_for("breakdown: 6 to resolve, 0 not resolvable (not sent)")
    assert "retr" not in t.text().split("resolve 6 DLQ entries")[1], "a resolve set's breakdown speaks of resolving"
    t.send("y")
    t.wait_for("resolve: 6 of 6 succeeded", secs=30)
    ours = {uid("8", i) for i in rows if i % 2 and i % 13 == 0} | {STALE}
    assert sent(core, "dlq_update") == Counter({e: 1 for e in ours})
    after = states()
    assert {e for e in after if after[e] != before[e]} == ours, "exactly the entries of the reason"
    assert all(after[e][0] == "manually_resolved" for e in ours)
    assert sorted(x["action"] for x in batch_list(tmp_path)) == ["resolve", "retry"]
    t.send("\x1b")
    # the resolved entries leave at once, no ^r (issue 34): the store's counts read again
    t.wait_for("DLQ by reason  3 groups of the store's 128 entries")
    assert "staleness_timeout" not in t.text(), t.text()
    t.send("Q")
    assert t.finish() == 0


def test_search_retry_and_escape_while_selecting(tmp_path, dlq):
    rows, core, t = dlq
    t.send("R")                                   # no search: never the whole DLQ
    t.wait_for("retry: retry every DLQ entry matching a search: search (/) or group (b) first")
    t.send(":retry-all 1h\r")
    t.wait_for("retry-all: the DLQ's set has no window: its search, every page")
    t.send("/800000000016\r")                     # entry 16 alone (its step is eligible)
    t.wait_for("DLQ  1 peeked")
    escape_while_selecting(t, tmp_path, core, "RD_PG_ADMIN_DSN_TASKER", "tasker.tasks_dlq", "step")
    t.send(":retry-all\r")                        # again, to the end
    t.wait_for("retry 1 DLQ entry's execution on tasker?", secs=30)
    t.wait_for("breakdown: 1 eligible, 0 ineligible (not sent), 0 loop retries")
    t.send("y")
    t.wait_for("retry: 1 of 1 succeeded", secs=30)
    assert sent(core, "step") == Counter({rows[16][1]: 1})
    [b] = batch_list(tmp_path)
    assert (b["action"], b["total"], b["ok"], b["selection"]) == ("retry", 1, 1, "dlq text=800000000016"), b
    t.send("\x1b")
    t.send("Q")
    assert t.finish() == 0


def test_a_set_of_ineligible_members_says_so_before_asking(tmp_path, dlq):
    """Issue 34: every step of max_retries_exceeded (the bulk ones, 3 of 3 attempts, and the
    fixture's) is ineligible: `r` on the group says so and asks nothing (it offered "retry
    61" and "y: confirm 0"); nothing is sent, no batch is left."""
    rows, core, t = dlq
    t.send("b")
    t.wait_for("DLQ by reason  4 groups of the store's 134 entries")
    t.send("j")                                   # max_retries_exceeded, 61 in the store
    assert t.screen.display[4].split()[:2] == ["max_retries_exceeded", "61"], t.text()
    t.send("r")
    t.wait_for("retry: nothing to send: all 61 DLQ entries' executions are ineligible "
               "(the DLQ's reason max_retries_exceeded)", secs=30)
    assert "retry 61" not in t.text() and "confirm 0" not in t.text(), t.text()
    assert sent(core, "step") == Counter()
    assert batch_list(tmp_path) == []
    t.send("Q")
    assert t.finish() == 0
