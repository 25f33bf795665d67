"""The journal is written off the event loop (src/actions/jwriter.c), and the write-ahead
rule still holds. An LD_PRELOAD shim (tests/actions/gatesync.c) makes fdatasync wait until
a gate file exists: a disk as slow as the test wants. While a retry's "pending" line waits
for the disk, the console answers its keys (the batch put away, another view opened) and
the core has received nothing; once the line is on disk the request leaves. Stopped while
the line waits, the console exits after writing it, with an outcome that says the request
was never sent. Real store (attune2), a private core server.

Needs the stack env (tests/stack/stack.sh start DIR && . DIR/env); fails without it.
"""
import json
import os
import signal

import pytest

from lib.term import ROOT, LiveTerm as Term
from test_set_retry import core, insert, sent, stack_env  # noqa: F401

SHIM = os.path.join(os.environ.get("RD_BUILD", os.path.join(ROOT, "build")), "tests", "actions", "libgatesync.so")


def journal(tmp_path):
    p = tmp_path / "state" / "redrive" / "journal.jsonl"
    return [json.loads(x) for x in p.read_text().splitlines()] if p.exists() else []


@pytest.fixture
def opened(tmp_path):
    """Whatever happens in the test, the gate opens and the console goes at the end (a
    console stuck in fdatasync would otherwise outlive it)."""
    made = []
    yield made
    (tmp_path / "gate").touch()
    for t in made:
        t.child.terminate(force=True)


def start_retry(tmp_path, core, text, opened):
    gate = tmp_path / "gate"
    assert os.path.exists(SHIM), SHIM
    [eid], _ = insert(text + " %d", 1, exhausted_every=0)
    t = Term(tmp_path, cols=140, rows=36, core=core.url,
             extra_env={"LD_PRELOAD": SHIM, "RD_SYNC_GATE": str(gate),
                        # an ASan build (RD_BIN) accepts a preloaded shim ahead of its runtime
                        "ASAN_OPTIONS": os.environ.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0"})
    opened.append(t)
    t.wait_for("postgresql")
    t.send(":filter status=failed text=%s\r" % text)
    t.wait_for("text=%s" % text)
    t.wait_for("%s 1" % text)
    t.send("r")
    t.wait_for("retry 1 execution on attune2")
    t.send("y")
    t.wait_for("retry: 0/1 done")
    return t, gate, eid


def test_the_loop_answers_while_the_pending_line_waits_for_the_disk(tmp_path, core, opened):
    t, gate, eid = start_retry(tmp_path, core, "Gatesync", opened)
    t.send("\x1b")                                 # the loop is free: the dialog goes away
    t.wait_for("the retry batch goes on in the background")
    t.send("3")
    t.wait_for("Workers")
    t.send("2")
    t.wait_for("Executions")
    assert sent(core) == {}, "nothing leaves before its pending line is on disk"
    assert [x["code"] for x in journal(tmp_path)] == ["pending"], "written, its sync still waiting"
    gate.touch()
    t.wait_for("retry batch: 1/1 done, 1 ok, 0 failed  (:batch)", secs=20)
    assert sent(core) == {eid: 1}
    lines = [(x["targets"], x["code"]) for x in journal(tmp_path)]
    assert lines == [([eid], "pending"), ([eid], "ok")], lines
    t.send("Q")
    assert t.finish() == 0


def test_stopped_while_the_line_waits_the_request_never_leaves(tmp_path, core, opened):
    t, gate, eid = start_retry(tmp_path, core, "Gatestop", opened)
    t.child.kill(signal.SIGTERM)                   # redrive stops while the line waits
    t.pump(1.0)
    assert t.child.isalive(), "the exit writes the queued lines first"
    gate.touch()
    t.finish()
    assert sent(core) == {}
    lines = [(x["targets"], x["code"], x["result"]) for x in journal(tmp_path)]
    assert lines == [([eid], "pending", "sending"),
                     ([eid], "aborted", "not applied: redrive stopped before sending it")], lines
