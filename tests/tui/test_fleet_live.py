"""The fleet view in a real terminal (pexpect + pyte) against the local stack, with the
demo's five systems (scripts/demo-config.sh): every system gets a line from its own
background session, Enter opens the system under the cursor without reconnecting, q goes
back to the fleet, `:system` still works.

Needs the stack env (tests/stack/stack.sh start DIR && . DIR/env); fails without it.
"""
import os
import subprocess

import pytest

from lib.term import ROOT, LiveTerm as Term, assert_restored
from lib.term import Term as BaseTerm

SYSTEMS = ["attune", "attune-era1", "tasker", "alakai", "openagents"]


@pytest.fixture(autouse=True)
def stack_env():
    if not os.environ.get("RD_STACK_DIR"):
        pytest.fail("needs the local stack env (tests/stack/stack.sh start DIR; . DIR/env)")


class FleetTerm(Term):
    """Term with the demo config instead of test_live's two systems."""

    def __init__(self, tmp_path, cols=132, rows=30):
        conf = tmp_path / "demo.conf"
        env_file = os.path.join(os.environ["RD_STACK_DIR"], "env")
        text = subprocess.run(["bash", os.path.join(ROOT, "scripts", "demo-config.sh"), env_file],
                              check=True, capture_output=True, text=True).stdout
        conf.write_text(text)
        # RD_* and the stack's AWS_SHARED_CREDENTIALS_FILE (the demo's Alakai reads its SQS
        # queue with the stack's made-up keys)
        BaseTerm.__init__(self, conf, cols=cols, rows=rows, keep=("RD_", "AWS_"))


def fleet_rows(t):
    """The system names of the fleet table, top to bottom."""
    lines = t.screen.display
    start = next(i for i, l in enumerate(lines) if l.startswith("STATE "))
    names = []
    for l in lines[start + 1:]:
        parts = l.split()
        if len(parts) < 2 or parts[1] not in SYSTEMS:
            break
        names.append(parts[1])
    return names


def cursor_system(t):
    """The system on the cursor row (the default theme's cursor is black on cyan)."""
    for y, line in enumerate(t.screen.display):
        parts = line.split()
        if len(parts) >= 2 and parts[1] in SYSTEMS and t.screen.buffer[y][0].bg == "cyan":
            return parts[1]
    return None


def test_fleet_shows_every_system_and_enter_opens_one(tmp_path):
    t = FleetTerm(tmp_path)
    t.wait_for("Fleet  5 systems, worst first")
    assert "redrive fleet: 5 systems" in t.screen.display[0]
    # every system answers through its own session: no line left "connecting" / "none yet"
    for _ in range(60):
        t.pump(0.25)
        text = t.text()
        if "connecting" not in text and "none yet" not in text and "wait " not in text:
            break
    rows = fleet_rows(t)
    assert sorted(rows) == sorted(SYSTEMS), t.text()
    for name in SYSTEMS:
        line = next(l for l in t.screen.display if l.split()[1:2] == [name])
        assert " ok " in line, line   # its sources answered
    # worst first: levels never get better going up the table, once a level has held for
    # two polls (a row moves then, not on every change: fleet_place_update)
    order = {"DOWN": 4, "FAIL": 3, "warn": 2, "wait": 1, "ok": 0}

    def worst_first():
        names = fleet_rows(t)
        levels = [order[next(l for l in t.screen.display if l.split()[1:2] == [n]).split()[0]]
                  for n in names]
        return levels == sorted(levels, reverse=True) and names
    rows = t.wait_until(worst_first, secs=12, what="worst first within two polls")

    # Enter on the second row opens that system (the cursor follows a system when the order
    # changes, so the one under it is the one Enter opens)
    t.send("j")
    target = cursor_system(t)
    assert target in SYSTEMS, t.text()
    t.send("\r")
    t.wait_for("Overview  %s" % target)
    assert t.screen.display[0].startswith(" redrive %s " % target), t.screen.display[0]
    t.wait_for("updated")      # the warm model: a source line with its last answer
    t.send("2")
    t.wait_for("Executions")
    t.send("q")                 # executions -> overview
    t.send("q")                 # overview -> the fleet
    t.wait_for("Fleet  5 systems")
    t.send(":system alakai\r")  # still works, from anywhere
    t.wait_for("Overview  alakai")
    t.wait_for("redis")
    t.send("0")
    t.wait_for("Fleet  5 systems")
    t.send("q")
    t.wait_for("quit redrive? y: quit, any other key: stay")
    t.send("y")
    assert t.finish() == 0
    assert_restored(t.raw)
