"""The DLQ size after a restart (issue 23): the last-known snapshot's DLQ total is replaced
by the live one, never added to it, and says "cached" with its age until the live answer
arrives. Three starts of the console on the same config (OpenAgents in PostgreSQL, whose
DLQ holds 2 on the stack), the second against a store that never answers.

Needs the stack env (tests/stack/stack.sh start DIR && . DIR/env); fails without it.
"""
import os
import re
import socket
import time

import pytest

from test_lastknown import Term, cache_files

SYSTEM = "lk-openagents"


@pytest.fixture(autouse=True)
def stack_env():
    if not os.environ.get("RD_PG_DSN_OPENAGENTS"):
        pytest.fail("needs the local stack env (tests/stack/stack.sh start DIR; . DIR/env)")


def write_config(tmp_path, store):
    conf = tmp_path / "config"
    conf.write_text('[system "%s"]\nprofile = openagents\nstore = %s\n' % (SYSTEM, store))
    return conf


def dlq_line(t):
    return next((l for l in t.screen.display if "DLQ size" in l), "")


def live_dlq(t):
    """The overview's DLQ size once every source answered and the mark is gone."""
    t.wait_for("postgresql ok", secs=15)
    end = time.time() + 10
    while time.time() < end and ("cached" in dlq_line(t) or "DLQ size -" in dlq_line(t)):
        t.pump(0.2)
    t.pump(1.0)   # a few more polls: a sum would show by now
    m = re.search(r"DLQ size (\S+)", dlq_line(t))
    assert m, t.text()
    return m.group(1), dlq_line(t)


def test_dlq_size_is_replaced_by_the_live_one_after_a_restart(tmp_path):
    conf = write_config(tmp_path, os.environ["RD_PG_DSN_OPENAGENTS"])
    t = Term(tmp_path, conf)
    first, line = live_dlq(t)
    assert first == "2", line
    end = time.time() + 10
    while not cache_files(tmp_path) and time.time() < end:
        t.pump(0.1)
    t.quit()
    assert cache_files(tmp_path)

    # live again, twice: 2 each time (the bug read 4, then 6), and no mark left
    for _ in range(2):
        t = Term(tmp_path, conf)
        size, line = live_dlq(t)
        assert size == "2" and "cached" not in line, line
        t.child.send("\x12")             # ^r: still the live size
        t.pump(1.5)
        assert re.search(r"DLQ size 2 ", dlq_line(t) + " "), dlq_line(t)
        t.quit()

    # the store silent: the cached total, marked as cached with its age
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    s.listen(16)
    try:
        write_config(tmp_path, "host=127.0.0.1 port=%d dbname=openagents user=redrive_ro "
                               "connect_timeout=60" % s.getsockname()[1])
        t = Term(tmp_path, conf)
        t.wait_for("DLQ size 2 (cached ")
        assert re.search(r"DLQ size 2 \(cached \d+s ago\)", dlq_line(t)), dlq_line(t)
        t.quit()
    finally:
        s.close()
