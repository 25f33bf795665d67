"""Memory stays flat for a 20,000-item whole-set retry from the console (issue 24,
src/ui/setretry.c): the store selects in a child process, the console holds counts and a
few lines, the run reads the record part by part. One console retries everything its
filter matches twice, 2,000 then 20,000 executions (each run aborted after a moment, the
rest left resumable); its peak RSS may grow by at most a small bound between the two (a
per-item struct would be megabytes). Real store (attune2), a private core server.

Needs the stack env (tests/stack/stack.sh start DIR && . DIR/env); fails without it.
"""
import time

from setlib import actlib, batch_list, core, stack_env  # noqa: F401
from lib.term import LiveTerm as Term

BOUND_KB = 1536


def peak_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        return int([ln for ln in f if ln.startswith("VmHWM:")][0].split()[1])


def test_console_memory_flat_20k_vs_2k(tmp_path, core):
    for n, text in ((2000, "memsmall"), (20000, "memlarge")):
        actlib.admin_sql(
            "INSERT INTO execution (action_ref, status, result, retry_count, max_retries, created)"
            " SELECT 'mem.job', 'failed', jsonb_build_object('error', %s), 0, 3,"
            " now() - interval '1 millisecond' * g FROM generate_series(1, %s) g", (text, n))
    t = Term(tmp_path, cols=140, rows=36, core=core.url, extra_conf="page_size = 1000\nrate_limit = 100\n")
    t.wait_for("postgresql")
    peak = {}
    for n, text in ((2000, "memsmall"), (20000, "memlarge")):
        t.send(":filter status=failed text=%s\r" % text)
        t.wait_for("text=%s" % text)
        t.send("R")
        t.wait_for("breakdown: %d eligible, 0 ineligible (not sent), 0 loop retries" % n, secs=40)
        t.send("c")                               # no canary (dlg_canary.c): the run itself measured
        t.send("0\r")
        t.wait_for("canary: none: everything is sent at once")
        t.send("y")
        t.send("%d\r" % n)
        t.wait_for("retry: ", secs=10)
        time.sleep(1.0)
        t.send("x")
        t.wait_for("the rest not sent: redrive batch resume", secs=10)
        t.send("n")
        peak[n] = peak_kb(t.child.pid)
    assert [b["total"] for b in batch_list(tmp_path)] == [2000, 20000]
    assert all(b["state"] == "open" for b in batch_list(tmp_path))
    assert peak[20000] - peak[2000] <= BOUND_KB, peak
    t.send(":q\r")
    assert t.finish() == 0
    t = Term(tmp_path, cols=140, rows=36, core=core.url)   # a restart offers them
    t.wait_for("2 unfinished batches: retry on attune2")
    t.send(":q\r")
    assert t.finish() == 0
