"""The executions page with the cursor off the top row, on the real stack (issue 23).

New executions arrive while the cursor is on row 5: the page stays live (the new rows
appear above, the cursor stays on its execution) until the cursor's execution would
scroll off the screen; from then on the screen stays with it and the title says so,
"paused: N newer - g to go live", N being the executions newer than the top row shown,
kept up to date. `g` goes live: a cursor on the top row stays on the newest execution. A cursor pushed off the newest page altogether goes live
once, instead of "execution N left the view" on every poll.
"""
import os
import re
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "actions"))
import actlib  # noqa: E402
from lib.term import LiveTerm as Term  # noqa: E402

ROWS, COLS = 30, 120
FIRST_ID = 5000
PAUSED = re.compile(r"paused: (\d+) newer \u2014 g to go live")


@pytest.fixture(autouse=True)
def stack_env():
    if not os.environ.get("RD_PG_ADMIN_DSN_ATTUNE2") or not os.environ.get("RD_STACK_DIR"):
        pytest.fail("needs the local stack env (tests/stack/stack.sh start DIR; . DIR/env)")


@pytest.fixture
def attune2():
    actlib.reload_fixture("attune2")
    yield
    actlib.reload_fixture("attune2")


def insert(first, n, age_s=0):
    """n new failed executions, ids first.., the later id the newer."""
    actlib.admin_sql(
        "INSERT INTO execution (id, action, action_ref, config, env_vars, executor, status, result,"
        " created, updated, retry_count, max_retries, worker)"
        " SELECT %s + g, e.action, e.action_ref, e.config, e.env_vars, e.executor, 'failed', e.result,"
        " now() - make_interval(secs => %s) + g * interval '1 ms', now(), 0, 3, e.worker"
        " FROM execution e, generate_series(0, %s - 1) g WHERE e.id = 2",
        (first, age_s, n))


def newest_ids(n):
    return [str(r[0]) for r in actlib.admin_sql(
        "SELECT id FROM execution ORDER BY created DESC, id DESC LIMIT %s", (n,))]


def newer_than(exec_id):
    """Executions newer than exec_id in the store."""
    return actlib.admin_sql(
        "SELECT count(*) FROM execution WHERE (created, id) > (SELECT created, id FROM execution"
        " WHERE id = %s)", (int(exec_id),))[0][0]


def list_ids(t):
    """The ids of the execution rows on screen, top down (rows 3.. until the blank)."""
    ids = []
    for line in t.screen.display[3:]:
        parts = line.split()
        if not parts or not parts[0].isdigit():
            break
        ids.append(parts[0])
    return ids


def cursor_id(t):
    """The id on the cursor row (the default theme's cursor is black on cyan)."""
    for y in range(3, ROWS):
        parts = t.screen.display[y].split()
        if parts and parts[0].isdigit() and t.screen.buffer[y][2].bg == "cyan":
            return parts[0]
    return None


def wait_until(t, cond, secs=8):
    import time
    end = time.time() + secs
    while time.time() < end:
        t.pump(0.2)
        if cond():
            return True
    raise AssertionError(t.text())


def open_on_row_5(tmp_path, extra_conf=""):
    t = Term(tmp_path, cols=COLS, rows=ROWS, extra_conf="poll = 500ms\n" + extra_conf)
    t.wait_for("postgresql ok")
    t.send("2")
    t.wait_for("Executions  page 1")
    wait_until(t, lambda: list_ids(t)[:3] == newest_ids(3))
    t.send("jjjjj", 0.5)
    held = list_ids(t)[5]
    assert cursor_id(t) == held, t.text()
    return t, held


def test_new_rows_appear_above_and_the_cursor_stays_on_its_execution(tmp_path, attune2):
    t, held = open_on_row_5(tmp_path)
    insert(FIRST_ID, 3)
    wait_until(t, lambda: list_ids(t)[:3] == newest_ids(3))
    assert list_ids(t)[8] == held and cursor_id(t) == held, t.text()
    assert "paused" not in t.text(), t.text()
    t.send(":q\r")
    assert t.finish() == 0


def test_the_title_says_paused_with_the_store_count_and_g_goes_live(tmp_path, attune2):
    t, held = open_on_row_5(tmp_path)
    shown = len(list_ids(t))
    assert shown > 10, t.text()
    # more than the screen holds above the cursor: its execution would scroll off
    insert(FIRST_ID, shown)
    wait_until(t, lambda: PAUSED.search(t.text()) is not None)
    assert cursor_id(t) == held, t.text()
    top = list_ids(t)[0]
    n = int(PAUSED.search(t.text()).group(1))
    assert n == newer_than(top) and n > 0, (n, newer_than(top), t.text())
    # it keeps counting while paused; the rows on screen stay put
    insert(FIRST_ID + shown, 4)
    wait_until(t, lambda: PAUSED.search(t.text()) and int(PAUSED.search(t.text()).group(1)) == n + 4)
    assert list_ids(t)[0] == top and cursor_id(t) == held, t.text()
    t.send("g", 0.5)
    wait_until(t, lambda: list_ids(t)[:3] == newest_ids(3))
    assert "paused" not in t.text(), t.text()
    # live again: the cursor on the top row stays there, on the newest, whatever arrives
    insert(FIRST_ID + shown + 4, shown)
    wait_until(t, lambda: list_ids(t)[:3] == newest_ids(3))
    assert cursor_id(t) == newest_ids(1)[0] and "paused" not in t.text(), t.text()
    t.send(":q\r")
    assert t.finish() == 0


def test_pushed_off_the_newest_page_goes_live_once(tmp_path, attune2):
    t, held = open_on_row_5(tmp_path, extra_conf="page_size = 25\n")
    insert(FIRST_ID, 30)              # more than the page: the held execution leaves it
    wait_until(t, lambda: list_ids(t)[:3] == newest_ids(3))
    assert "execution %s left the page (newer ones pushed it out): live again" % held in t.text(), t.text()
    assert "paused" not in t.text(), t.text()
    insert(FIRST_ID + 30, 30)         # and again: no row of its is followed, nothing streams
    wait_until(t, lambda: list_ids(t)[:3] == newest_ids(3))
    assert "left the view" not in t.text(), t.text()
    assert "paused" not in t.text(), t.text()
    t.send(":q\r")
    assert t.finish() == 0
