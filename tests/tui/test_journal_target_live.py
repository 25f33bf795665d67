"""A single action names its target in the journal as the operator named it (issue 37):
an OpenAgents job retried from the console is `job-0002` in the journal file and in the
journal view, as its row showed it, not `batch-1/job-0002` (its batch, which the retry
route does not use). In a real terminal (pexpect + pyte) against the local stack, with a
private reference core server.

Needs the stack env (tests/stack/stack.sh start DIR && . DIR/env); fails without it.
"""
import json
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "actions"))
import actlib  # noqa: E402
from lib.term import Term  # noqa: E402


@pytest.fixture(autouse=True)
def stack_env():
    if not os.environ.get("RD_STACK_DIR") or not os.environ.get("RD_PG_DSN_OPENAGENTS"):
        pytest.fail("needs the local stack env (tests/stack/stack.sh start DIR; . DIR/env)")


@pytest.fixture
def oa_core(tmp_path):
    actlib.reload_fixture("openagents")
    core = actlib.CoreServer("openagents", tmp_path)
    yield core
    core.stop()
    actlib.reload_fixture("openagents")


def journal(tmp_path):
    path = tmp_path / "state" / "redrive" / "journal.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


@pytest.mark.parametrize("cols,rows", [(80, 24), (160, 45)])
def test_a_single_retry_names_its_target_as_shown(tmp_path, oa_core, cols, rows):
    conf = tmp_path / "oa.conf"
    conf.write_text('[system "openagents"]\nprofile = openagents\nstore = %s\ncore = %s\n'
                    'auth = bearer\ntoken = env:RD_CORE_TOKEN\n' % (os.environ["RD_PG_DSN_OPENAGENTS"], oa_core.url))
    t = Term(conf, cols=cols, rows=rows, home=str(tmp_path))
    t.wait_for("postgresql")
    t.send("2")
    t.wait_for("job-0002")
    t.send("#job-0002\r")                              # the cursor on job-0002
    t.wait_for("PDF renderer crashed")
    t.send("r")
    t.wait_for("y: confirm")
    t.send("y")
    t.wait_for("retry: 1 of 1 succeeded", secs=15)
    t.send("n")
    done = [j for j in journal(tmp_path) if j.get("code") == "ok"]
    assert [(j["action"], j["targets"]) for j in done] == [("retry", ["job-0002"])], done
    assert "batch" not in done[0]
    t.send("6")                                       # the journal view: its row as the operator saw it
    t.wait_for("Journal  1 action recorded")
    row = next(l for l in t.screen.display if " retry " in l)
    assert " job-0002 " in row and "batch-1/" not in row, t.text()
    t.send("Q")
    assert t.finish() == 0
