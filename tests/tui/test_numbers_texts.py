"""Smaller wrong texts of issue 23, each through the console on the real stack: the DLQ
peek note names what a peek does to THIS system's DLQ (none for a store's table), `:theme
nosuch` is the command's error (not a configuration problem, not printed again on exit),
and `[` after a jump to an id goes back to the newest executions instead of claiming
this is the first page.

Needs the stack env (tests/stack/stack.sh start DIR && . DIR/env); fails without it.
"""
import os
import re
import subprocess

import pexpect
import pytest

from test_lastknown import Term as ConfTerm
from lib.term import LiveTerm as Term

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
RABBIT_NOTE = "peeking a RabbitMQ queue requeues its messages"
SQS_NOTE = "peeking SQS receives messages (visibility timeout 0, receive count +1)"


@pytest.fixture(autouse=True)
def stack_env():
    if not os.environ.get("RD_STACK_DIR"):
        pytest.fail("needs the local stack env (tests/stack/stack.sh start DIR; . DIR/env)")


def demo_system(tmp_path, name):
    """The demo configuration (scripts/demo-config.sh) with only `name` kept."""
    text = subprocess.run(["bash", os.path.join(ROOT, "scripts", "demo-config.sh"),
                           os.path.join(os.environ["RD_STACK_DIR"], "env")],
                          check=True, capture_output=True, text=True).stdout
    sections = re.split(r"(?m)^(?=\[system )", text)
    keep = [s for s in sections if s.startswith('[system "%s"]' % name)]
    assert len(keep) == 1, name
    p = tmp_path / "config"
    p.write_text(keep[0])
    return p


@pytest.mark.parametrize("system,note", [("tasker", None), ("openagents", None),
                                         ("alakai", SQS_NOTE), ("attune", RABBIT_NOTE)])
def test_dlq_peek_note_is_the_systems_own(tmp_path, system, note):
    t = ConfTerm(tmp_path, demo_system(tmp_path, system), cols=160)
    t.wait_for("Overview")
    t.child.send("5")
    t.wait_for("DLQ  ")
    t.pump(1.0)
    title = next(l for l in t.screen.display if l.startswith("DLQ  "))
    if note is None:
        assert "peeking" not in title, title
    else:
        assert note in title, title
        other = RABBIT_NOTE if note == SQS_NOTE else SQS_NOTE
        assert other not in title, title
    t.quit()


def test_theme_command_error_is_the_commands(tmp_path):
    t = Term(tmp_path, cols=120, rows=30)
    t.wait_for("Overview")
    t.send(":theme nosuch\r")
    t.wait_for(":theme nosuch: ")
    t.pump(0.5)
    assert "Problems in the configuration files" not in t.text(), t.text()
    t.send("Q")
    t.child.expect(pexpect.EOF, timeout=10)
    rest = t.child.before.decode(errors="replace") if t.child.before else ""
    t.child.close()
    assert t.child.exitstatus == 0
    assert "nosuch" not in rest, rest     # nothing printed again on exit


def top_ids(t):
    return [l.split()[0] for l in t.screen.display[3:8] if l.split() and l.split()[0].isdigit()]


def test_prev_page_after_a_jump_goes_to_the_newest(tmp_path):
    t = Term(tmp_path, cols=120, rows=30, extra_conf="page_size = 5\n")
    t.wait_for("Overview")
    t.send("2")
    t.wait_for("Executions")
    t.pump(1.0)
    newest = top_ids(t)
    assert len(newest) == 5, t.text()
    t.send("#3\r")
    t.pump(2.0)
    assert top_ids(t)[:1] == ["3"], t.text()
    t.send("[")
    t.wait_for("back to the newest executions")
    t.pump(2.0)
    assert top_ids(t) == newest, t.text()
    assert "left the view" not in t.text(), t.text()
    t.send("[")   # now it is
    t.wait_for("this is the first page")
    t.send("Q")
    assert t.finish() == 0


def test_tasker_dead_letter_names_its_task_and_no_fake_count(tmp_path):
    """A tasks_dlq entry: no count is known ("-", never -1), and its task is in the store:
    the linked chain is the task's steps' transitions, not "no record in the store"."""
    t = ConfTerm(tmp_path, demo_system(tmp_path, "tasker"), cols=160, rows=40)
    t.wait_for("Overview")
    t.child.send("5")
    t.wait_for("DLQ  ")
    t.pump(1.0)
    t.child.send("\r")
    t.wait_for("DLQ entry ")
    t.wait_for(" attempt(s)", secs=10)   # not "loading..."
    text = t.text()
    assert "count -  from " in text, text
    assert "count -1" not in text and "no record in the store" not in text, text
    m = re.search(r"linked retry chain of (\S+): (\d+) attempt\(s\)", text)
    assert m and int(m.group(2)) > 0, text
    t.quit()
