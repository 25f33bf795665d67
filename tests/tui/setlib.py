"""What the console's whole-set tests share (test_set_retry.py, test_set_retry_mem.py,
test_dlq_set.py; src/ui/setretry.c): the stack check, a private reference core on a
freshly loaded attune2, what that core was sent, and the batches `redrive batch list`
lists and the batch files left in the state directory."""
import json
import os
import subprocess
import sys
import time
from collections import Counter

import psycopg2
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "actions"))
import actlib  # noqa: E402
from lib.term import BIN  # noqa: E402


@pytest.fixture(autouse=True)
def stack_env():
    if not os.environ.get("RD_PG_ADMIN_DSN_ATTUNE2") or not os.environ.get("RD_STACK_DIR"):
        pytest.fail("needs the local stack env (tests/stack/stack.sh start DIR; . DIR/env)")


@pytest.fixture
def core(tmp_path):
    """attune2's reference core server, the store reloaded before and after."""
    actlib.reload_fixture("attune2")
    c = actlib.CoreServer("attune2", tmp_path)
    yield c
    c.stop()
    actlib.reload_fixture("attune2")


def sent(core, action="retry"):
    """How many times the core was sent each target of action."""
    return Counter(a["target"] for a in core.actions() if a["action"] == action)


def batch_list(tmp_path):
    env = {k: v for k, v in os.environ.items() if k.startswith("RD_")}
    env.update(PATH="/usr/bin:/bin", HOME=str(tmp_path), XDG_STATE_HOME=str(tmp_path / "state"))
    p = subprocess.run([BIN, "--config", str(tmp_path / "config"), "batch", "list", "--json"],
                       env=env, capture_output=True, text=True, timeout=20)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def batch_files(tmp_path):
    d = tmp_path / "state" / "redrive" / "batches"
    return sorted(os.listdir(d)) if d.exists() else []


def escape_while_selecting(t, tmp_path, core, dsn_env, table, action="retry"):
    """With table locked (the store hangs), R starts the selection; escape stops it: nothing
    is sent, no batch is staged or left."""
    lock = psycopg2.connect(os.environ[dsn_env])
    try:
        lock.cursor().execute("LOCK TABLE %s IN ACCESS EXCLUSIVE MODE" % table)
        t.send("R")
        t.wait_for("selecting: 0 read, 0 selected", secs=10)
        t.wait_for("stop selecting (nothing is sent)")
        t.send("\x1b", wait=0.5)
        t.wait_for("retry: selection stopped: nothing was sent")
        assert "selecting:" not in t.text()
    finally:
        lock.rollback()
        lock.close()
    time.sleep(1.5)
    assert sent(core, action) == Counter()
    assert batch_files(tmp_path) == [] and batch_list(tmp_path) == []
