"""The console's whole-set retry (src/ui/setretry.c) and issue 35: before the count is
typed the dialog shows the rate, the window of requests in flight and the ETA, and the
targets already in another open batch of the system are left out, naming it. In a real
terminal (pexpect + pyte) against the local stack and a private reference core server whose
request log says what was sent; the open batch is made by the CLI and killed.

Needs the stack env (tests/stack/stack.sh start DIR && . DIR/env); fails without it.
"""
import os
import re
import signal
import subprocess

from setlib import actlib, batch_list, core, sent, stack_env  # noqa: F401
from lib.term import BIN, LiveTerm as Term
from test_set_retry import insert

CONF = "page_size = 10\nrate_limit = 200\nbatch_concurrency = 6\n"


def open_cli_batch(tmp_path, text):
    """A CLI batch over the executions matching text, killed after its first answer (1/s)."""
    env = {k: v for k, v in os.environ.items() if k.startswith("RD_")}
    env.update(PATH="/usr/bin:/bin", HOME=str(tmp_path), XDG_STATE_HOME=str(tmp_path / "state"),
               LANG="C.UTF-8", TZ="UTC")
    p = subprocess.Popen([BIN, "--config", str(tmp_path / "config"), "--system", "attune2", "retry",
                          "--status", "failed", "--filter", text, "--rate", "1", "--yes"],
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         stdin=subprocess.DEVNULL)
    assert p.stdout.readline(), p.stderr.read()
    p.send_signal(signal.SIGKILL)
    p.wait(10)
    [b] = [x for x in batch_list(tmp_path) if x["state"] == "open"]
    return b


def test_dialog_shows_the_pace_and_leaves_an_open_batchs_targets_out(tmp_path, core):
    a_ids, _ = insert("Doohickey A cracked %d", 10, exhausted_every=0)
    b_ids, _ = insert("Doohickey B cracked %d", 15, exhausted_every=0)
    t = Term(tmp_path, cols=140, rows=40, core=core.url, extra_conf=CONF)
    t.wait_for("postgresql")
    b = open_cli_batch(tmp_path, "Doohickey A")
    left = b["total"] - b["ok"] - b["failed"]
    assert b["total"] == 10 and left >= 8, b
    first = sent(core)
    t.send(":filter status=failed text=Doohickey\r")
    t.wait_for("Doohickey B cracked")
    t.send("R")
    t.wait_for("%d of these are in open batch %s: left out" % (left, b["id"]), secs=30)
    t.wait_for("rate 200/s, 6 in flight at most, ETA 0s (at the rate, if the core keeps up)")
    screen = "\n".join(t.screen.display)
    n = int(re.search(r"frozen as batch [0-9a-f]{16}: (\d+) to send", screen).group(1))
    assert n == 15, screen                 # the B's; the A's are the open batch's
    assert sent(core) == first             # nothing yet
    t.wait_for("more than 10: confirm by typing the count")
    t.send("y")
    t.wait_for("type %d and Enter to retry %d" % (n, n))
    t.send("%d\r" % n)
    t.wait_for("retry: %d/%d done, %d ok, 0 failed" % (n, n, n), secs=30)
    got = sent(core)
    assert sorted(set(got) - set(first)) == sorted(b_ids), "the B's, none of the open batch's"
    assert set(got.values()) == {1}
    t.send("n")
    t.send(":q\r")
    assert t.finish() == 0
