"""Real-terminal tests of the drain cockpit and the OSC 52 copy against the local stack and
a private reference core server: drain a worker from the workers view, the cockpit opens
with its in-flight executions, undrain is one key; the core server received both.

Needs the stack env (tests/stack/stack.sh start DIR && . DIR/env); fails without it."""
import base64
import os
import re
import signal
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "actions"))
import actlib  # noqa: E402
import stack_fixtures as fx  # noqa: E402
from lib.term import LiveTerm as Term, reload_attune2  # noqa: E402


@pytest.fixture(autouse=True)
def stack_env():
    if not os.environ.get("RD_PG_DSN_ATTUNE2"):
        pytest.fail("needs the local stack env (tests/stack/stack.sh start DIR; . DIR/env)")


def cockpit_rows(text):
    """Execution ids listed under the cockpit's running header, in screen order."""
    lines = text.splitlines()
    at = [i for i, l in enumerate(lines) if l.startswith("ID ") and "FINISH BY" in l]
    assert len(at) == 1, text
    ids = []
    for l in lines[at[0] + 1:]:
        m = re.match(r"(\d+)\s", l)
        if not m:
            break
        ids.append(m.group(1))
    return ids


def select_worker(t, name):
    """Workers view, the cursor on `name`: searched (the cursor follows the id), then the
    search cleared so nothing else is filtered."""
    t.send("3")
    t.wait_for("Workers")
    t.wait_for(name)
    t.send("/" + name + "\r")
    t.wait_for("1 shown of")
    t.send("/\x15\r")   # the search again, emptied (ctrl-u)
    t.wait_for("7 shown of 7")


def test_drain_opens_cockpit_and_undrain_is_one_key(tmp_path):
    fx.reload("attune2")
    fx.touch()
    srv = actlib.CoreServer("attune2", tmp_path)
    t = None
    try:
        t = Term(tmp_path, cols=120, rows=36, core=srv.url,
                 auth="auth = bearer\ntoken = env:RD_CORE_TOKEN\nexecution_timeout = 1h\n")
        t.wait_for("Overview")
        select_worker(t, "worker-healthy")
        t.send("D")
        t.wait_for("drain 1 worker on attune2 (PROD)?")
        t.wait_for("the drain cockpit opens and follows it until it is empty")
        # worker.1.executions has one consumer (the stack's AMQP consumer stands for it)
        t.wait_for("WARNING: last consumer of queue worker.1.executions")
        t.send("y")
        t.wait_for("drain: 1 of 1 succeeded", secs=10)
        t.send("n")   # close the results: the cockpit is underneath
        t.wait_for("Drain cockpit  worker-healthy (1)")
        t.wait_for("Running on this worker: 2")
        # ctrl-l: a whole-screen repaint, so that pyte's copy matches the terminal after the
        # dialog closed (pyte misses some of ncurses' partial updates)
        t.send("\x0c")
        t.pump(0.5)
        # the store's answer for worker 1, oldest first (the page on screen is not read)
        assert cockpit_rows(t.text()) == ["24", "14"], t.text()
        assert "expected finish = start + timeout 1h 00m" in t.text()
        t.wait_for("status draining", secs=10)   # the next poll reads the cordon back
        drains = [a for a in srv.actions() if a["route"].endswith("/cordon")]
        assert [(a["target"], a["status"]) for a in drains] == [("1", 200)], srv.actions()
        t.send("U")   # one key: no confirmation
        t.wait_for("undrain: 1 of 1 succeeded", secs=10)
        undrains = [a for a in srv.actions() if a["route"].endswith("/uncordon")]
        assert [(a["target"], a["status"]) for a in undrains] == [("1", 200)], srv.actions()
        assert [a["route"].rsplit("/", 1)[1] for a in srv.actions()] == ["cordon", "uncordon"]
        t.send("n")
        t.wait_for("status active", secs=10)
        t.send("Q")
        assert t.finish() == 0
    finally:
        if t and t.child.isalive():
            t.child.kill(signal.SIGKILL)
        srv.stop()
        reload_attune2()


def test_copy_writes_osc52_to_the_terminal(tmp_path):
    fx.touch()
    t = Term(tmp_path, cols=120, rows=36, auth="auth = none\nclipboard = osc52\n")
    try:
        t.wait_for("Overview")
        t.send(":cockpit worker-healthy\r")
        t.wait_for("Running on this worker: 2")
        first = cockpit_rows(t.text())[0]
        t.send("c")
        t.wait_for("copied 1 id to the clipboard (OSC 52)")
        seq = b"\x1b]52;c;" + base64.b64encode(first.encode()) + b"\x07"
        assert bytes(t.raw).count(seq) == 1, bytes(t.raw)[-400:]
        assert bytes(t.raw).count(b"\x1b]52;") == 1
        t.send("Q")
        assert t.finish() == 0
    finally:
        if t.child.isalive():
            t.child.kill(signal.SIGKILL)


def test_copy_without_osc52_shows_the_overlay(tmp_path):
    t = Term(tmp_path, cols=120, rows=36, auth="auth = none\n")
    try:
        t.wait_for("Overview")
        t.send(":cockpit worker-healthy\r")
        t.wait_for("Running on this worker")
        t.send("c")
        t.wait_for("copy: select the text with the mouse (any key closes)")
        assert b"\x1b]52;" not in bytes(t.raw)
        t.send("x")
        t.pump(0.5)
        assert "copy: select the text" not in t.text()
        t.send("Q")
        assert t.finish() == 0
    finally:
        if t.child.isalive():
            t.child.kill(signal.SIGKILL)


def test_cockpit_reads_the_workers_own_work_not_the_page(tmp_path):
    """The executions page filtered to nothing: the cockpit still lists what the store says
    runs on worker-healthy (queried by that worker) and the broker's count of its queue."""
    fx.touch()
    t = Term(tmp_path, cols=120, rows=36, auth="auth = none\n")
    try:
        t.wait_for("Overview")
        t.send("2")
        t.wait_for("Executions")
        t.send("/no-such-execution-anywhere\r")
        t.wait_for("no-such-execution-anywhere")
        t.send(":cockpit worker-healthy\r")
        t.wait_for("Running on this worker: 2")
        t.send("\x0c")
        t.pump(0.5)
        assert cockpit_rows(t.text()) == ["24", "14"], t.text()
        # the broker's own count of the worker's queue (earlier suites may have left messages)
        depth = fx.stacklib.Rabbit(fx.stacklib.load_env()).queue("worker.1.executions")["messages"]
        assert depth >= 1, depth
        assert "queue depth %d (worker.1.executions)   running 2/8   left %d" % (depth, depth + 2) \
            in t.text(), t.text()
        assert "can be stopped" not in t.text()
        t.send("Q")
        assert t.finish() == 0
    finally:
        if t.child.isalive():
            t.child.kill(signal.SIGKILL)
