"""Error groups and the retry-loop breaker in a real terminal (pexpect + pyte) against the
local stack: attune2's store with six failures of one error (four retry-eligible, two not)
added, a private reference core server, the journal in a private HOME.

Needs the stack env (tests/stack/stack.sh start DIR && . DIR/env); fails without it.
"""
import json
import os
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "actions"))
import actlib  # noqa: E402
from lib.term import LiveTerm as Term, assert_restored  # noqa: E402

ERROR = "Ledger service returned 503 for batch %d"
FP = "Ledger service returned <n> for batch <n>"
ELIGIBLE = [901, 902, 904, 905]          # retry_count 0 of max 3
INELIGIBLE = [900, 903]                  # retry_count 3 of max 3: budget exhausted


@pytest.fixture(autouse=True)
def stack_env():
    if not os.environ.get("RD_PG_ADMIN_DSN_ATTUNE2") or not os.environ.get("RD_STACK_DIR"):
        pytest.fail("needs the local stack env (tests/stack/stack.sh start DIR; . DIR/env)")



@pytest.fixture
def ledger_group():
    actlib.reload_fixture("attune2")
    for k, xid in enumerate(sorted(ELIGIBLE + INELIGIBLE)):
        spent = 3 if xid in INELIGIBLE else 0
        actlib.admin_sql("INSERT INTO execution (id, action, action_ref, config, env_vars, executor, status, result,"
            " created, updated, retry_count, max_retries, worker, started_at)"
            " SELECT %s, action, action_ref, config, env_vars, executor, 'failed', %s,"
            " now() - make_interval(secs => %s), now() - make_interval(secs => %s), %s, 3, worker,"
            " now() - make_interval(secs => %s) FROM execution WHERE id = 2",
            (xid, json.dumps({"error": ERROR % (7000 + k)}), 120 + k, 60 + k, spent, 100 + k))
    yield
    actlib.reload_fixture("attune2")


def journal_lines(tmp_path):
    path = tmp_path / "state" / "redrive" / "journal.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def outcomes(lines):
    """The outcome line of every request (the pending lines are the write-ahead)."""
    return [x for x in lines if x.get("code") != "pending"]


def iso_s(t):
    return time.mktime(time.strptime(t[:19], "%Y-%m-%dT%H:%M:%S")) + int(t[20:23]) / 1000.0


def test_group_retry_typed_confirmation_and_loop_override(tmp_path, ledger_group):
    core = actlib.CoreServer("attune2", tmp_path)
    try:
        t = Term(tmp_path, cols=120, rows=32, core=core.url,
                 extra_conf="confirm_over = 3\nrate_limit = 4\n")
        t.wait_for("postgresql")
        t.send("7")
        t.wait_for("Error groups")
        t.wait_for(FP)
        row = [ln for ln in t.screen.display if FP in ln][0]
        assert row.split()[1:4] == ["6", "4", "0"], row         # (id) count, eligible, loops
        # the cursor is on the biggest group: this one
        t.send("r")
        t.wait_for("breakdown: 4 eligible, 2 ineligible (not sent), 0 loop retries")
        t.wait_for("more than 3: confirm by typing the count")
        t.send("y")
        t.wait_for("type 4 and Enter to retry 4")
        t.send("3\r")                                           # the wrong count sends nothing
        t.wait_for("typed '3', the count is 4: nothing was sent")
        assert [a for a in core.actions() if a["action"] == "retry"] == []
        t.send("4\r")
        t.wait_for("retry: 4/4 done, 4 ok, 0 failed", secs=20)
        t.wait_for("batch ")
        sent = [a for a in core.actions() if a["action"] == "retry"]
        assert sorted(int(a["target"]) for a in sent) == ELIGIBLE, sent
        assert all(a["status"] == 202 and a["applied"] for a in sent), sent
        # rate_limit = 4 per second: 3 intervals of 0.25 s between the sends (the core logs
        # after handling a request, so single gaps jitter; the span cannot be shorter)
        times = sorted(iso_s(a["time"]) for a in sent)
        assert times[-1] - times[0] >= 0.6, times
        done = outcomes(journal_lines(tmp_path))
        assert len(done) == 4, done
        batch = {x["batch"] for x in done}
        assert len(batch) == 1 and len(batch.pop()) == 16, done
        assert sorted(int(x["targets"][0]) for x in done) == ELIGIBLE
        assert all(x["code"] == "ok" and x["fp"] == FP and x["attempt"] == 1 and "override" not in x
                   for x in done), done
        t.send("n")                                             # close the finished dialog

        # The core made a new execution of 901; it fails again the same way: a loop.
        new = actlib.admin_sql("SELECT id FROM execution WHERE (config ->> 'retry_of')::bigint = 901")
        assert new and len(new) == 1, new
        nid = new[0][0]
        actlib.admin_sql("UPDATE execution SET status = 'failed', result = %s, retry_count = 1, updated = now()"
            " WHERE id = %s", (json.dumps({"error": ERROR % 9999}), nid))
        t.send("\x12")                                          # ctrl-r: refresh now
        t.send(":chain %d\r" % nid)
        t.wait_for("Retry chain of %d" % nid)
        t.wait_for("LOOP #2")
        t.wait_for("a retry now is manual retry #2 of the same failure")
        t.send("r")
        t.wait_for("%d: manual retry #2 of the same failure" % nid)
        t.wait_for("O: override the loop breaker")
        t.send("y")                                             # y alone does not send it
        t.wait_for("every target is a loop retry")
        time.sleep(0.5)
        assert [a for a in core.actions() if a["action"] == "retry" and a["target"] == str(nid)] == []
        t.send("O")
        t.wait_for("retry: 1 of 1 succeeded", secs=20)          # the status line
        again = [a for a in core.actions() if a["action"] == "retry" and a["target"] == str(nid)]
        assert len(again) == 1 and again[0]["status"] == 202, again
        last = outcomes(journal_lines(tmp_path))[-1]
        assert last["targets"] == [str(nid)] and last["code"] == "ok", last
        assert last["override"] == "loop_retry" and last["fp"] == FP and last["attempt"] == 2, last
        t.send("n")
        t.send(":q\r")
        assert t.finish() == 0
        assert_restored(t.raw)
    finally:
        core.stop()


def test_groups_cover_the_store_window_on_demand(tmp_path, ledger_group):
    """The view's groups are the store's, in a window: the last hour by default, `:groups
    6h` another; the title gives the window, the failures read and the age of the result."""
    t = Term(tmp_path, cols=160, rows=32)
    t.wait_for("postgresql")
    t.send("7")
    t.wait_for("Error groups  last 1h:")
    t.wait_for("computed ")
    t.wait_for(FP)
    row = [ln for ln in t.screen.display if FP in ln][0]
    assert row.split()[1:3] == ["6", "4"], row              # (id) count, eligible
    t.send(":groups 6h\r")
    t.wait_for("Error groups  last 6h:")
    t.send(":groups 6x\r")
    t.wait_for("groups: the window is a duration from 1m to 30d (e.g. 6h), not '6x'")
    t.send(":q\r")
    assert t.finish() == 0
