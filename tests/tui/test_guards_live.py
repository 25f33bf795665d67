"""Every retry path is guarded like the group retry (core/guard.h, docs/error-groups.md), in
a real terminal (pexpect + pyte) against the local stack, with a private reference core
server whose request log says what was sent: a single row, marked rows, the retry chain
and the DLQ view show the breakdown first, send only the eligible executions, and send an
ineligible one only with the override and a typed count (journaled). The footer offers only
the actions the profile has.

Needs the stack env (tests/stack/stack.sh start DIR && . DIR/env); fails without it.
"""
import json
import os
import re
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "actions"))
import actlib  # noqa: E402
from lib.term import LiveTerm as Term  # noqa: E402,F401
from lib.term import Term as BaseTerm  # noqa: E402

MARKED = [950, 951, 952, 953, 954, 955]   # 950 eligible (0/3), the others budget exhausted (3/3)
TASK6 = "00000000-0000-4000-8000-100000000006"
STEP9 = "00000000-0000-4000-8000-200000000009"   # task 6's failed step: 1 of 3 attempts


@pytest.fixture(autouse=True)
def stack_env():
    if not os.environ.get("RD_STACK_DIR") or not os.environ.get("RD_PG_ADMIN_DSN_ATTUNE2"):
        pytest.fail("needs the local stack env (tests/stack/stack.sh start DIR; . DIR/env)")


class ConfTerm(Term):
    """Term with one system of the given config lines."""

    def __init__(self, tmp_path, system, lines, args=(), cols=120, rows=32):
        conf = tmp_path / ("%s.conf" % system)
        conf.write_text('[system "%s"]\n%s\n' % (system, "\n".join(lines)))
        BaseTerm.__init__(self, conf, args, cols=cols, rows=rows, keep=("RD_", "AWS_"))


def attune2(tmp_path, core, *extra, args=()):
    e = os.environ
    return ConfTerm(tmp_path, "attune2", ["profile = attune", "store = " + e["RD_PG_DSN_ATTUNE2"],
                                          "broker = " + e["RD_RABBIT_MGMT_URL"], "broker_user = " + e["RD_RABBIT_USER"],
                                          "broker_password = env:RD_RABBIT_PASSWORD", "core = " + core,
                                          "auth = bearer", "token = env:RD_CORE_TOKEN"] + list(extra), args=args)


def tasker(tmp_path, core):
    """Tasker, its worker's /health probed at the core server's (it answers one)."""
    return ConfTerm(tmp_path, "tasker", ["profile = tasker", "store = " + os.environ["RD_PG_DSN_TASKER"],
                                         "core = " + core, "auth = bearer", "token = env:RD_CORE_TOKEN",
                                         "workers = " + core])


def retries(core):
    """The retries the core received (a Tasker step's reset_for_retry is its "step" action)."""
    return [a for a in core.actions() if a["action"] in ("retry", "step")]


def outcomes(tmp_path):
    path = tmp_path / "state" / "redrive" / "journal.jsonl"
    if not path.exists():
        return []
    return [j for j in (json.loads(x) for x in path.read_text().splitlines() if x.strip())
            if j.get("code") != "pending"]


@pytest.fixture
def attune_core(tmp_path):
    actlib.reload_fixture("attune2")
    for k, xid in enumerate(MARKED):
        spent = 0 if xid == 950 else 3
        actlib.admin_sql("INSERT INTO execution (id, action, action_ref, config, env_vars, executor, status, result,"
                         " created, updated, retry_count, max_retries, worker, started_at)"
                         " SELECT %s, action, action_ref, config, env_vars, executor, 'failed', %s,"
                         " now() - make_interval(secs => %s), now(), %s, 3, worker, now() - interval '1 minute'"
                         " FROM execution WHERE id = 2",
                         (xid, json.dumps({"error": "boom %d" % xid}), 1 + k, spent))
    core = actlib.CoreServer("attune2", tmp_path)
    yield core
    core.stop()
    actlib.reload_fixture("attune2")


def test_marked_rows_send_only_the_eligible(tmp_path, attune_core):
    t = attune2(tmp_path, attune_core.url)
    t.wait_for("postgresql")
    t.send("2")
    t.wait_for("955")
    t.send(" " * 6)                                   # mark the six newest rows
    t.wait_for("6 marked")
    t.send("r")
    t.wait_for("breakdown: 1 eligible, 5 ineligible (not sent), 0 loop retries")
    t.wait_for("951: not sent: budget exhausted (3/3 retries)")
    t.wait_for("y: confirm 1 (5 not sent)")
    t.send("y")
    t.wait_for("retry: 1 of 1 succeeded", secs=15)
    assert [a["target"] for a in retries(attune_core)] == ["950"]
    assert [(j["targets"], j["code"], "override" in j) for j in outcomes(tmp_path)] == [(["950"], "ok", False)]
    t.send("n")
    t.quit()


def test_single_ineligible_needs_the_override_and_a_typed_count(tmp_path, attune_core):
    t = attune2(tmp_path, attune_core.url)
    t.wait_for("postgresql")
    t.send("2")
    t.wait_for("955")
    t.send("G")                                       # the oldest row: execution 1, completed
    t.wait_for("eligible: no - status completed")
    t.send("r")
    t.wait_for("breakdown: 0 eligible, 1 ineligible (not sent), 0 loop retries")
    t.wait_for("1: not sent: status completed (only failed executions retry)")
    t.wait_for("O: override, send 1 anyway (type the count)")
    t.send("y")
    t.wait_for("retry: no eligible target: nothing was sent")
    assert retries(attune_core) == []
    t.send("O")
    t.wait_for("type 1 and Enter to retry 1")
    assert retries(attune_core) == []
    t.send("1\r")
    t.wait_for("retry: 0 of 1 succeeded", secs=15)   # sent: the core answers 409
    sent = retries(attune_core)
    assert [(a["target"], a["status"]) for a in sent] == [("1", 409)], sent
    j = outcomes(tmp_path)
    assert len(j) == 1 and j[0]["targets"] == ["1"] and j[0]["override"] == "ineligible", j
    t.send("n")
    t.quit()


def test_retry_chain_refreshes_after_a_retry(tmp_path, attune_core):
    t = attune2(tmp_path, attune_core.url)
    t.wait_for("postgresql")
    t.send(":chain 950\r")
    t.wait_for("Retry chain of 950")
    t.send("r")
    t.wait_for("breakdown: 1 eligible, 0 ineligible (not sent), 0 loop retries")
    t.send("y")
    t.wait_for("retry: 1 of 1 succeeded", secs=15)
    new = actlib.admin_sql("SELECT id FROM execution WHERE (config ->> 'retry_of')::bigint = 950")
    assert new and len(new) == 1, new
    t.send("n")                                       # close the dialog; no refresh key pressed
    t.wait_for(" %d " % new[0][0])                    # the new attempt is in the chain
    t.quit()


def test_dlq_retry_names_the_execution_and_is_guarded(tmp_path, attune_core):
    t = attune2(tmp_path, attune_core.url)
    t.wait_for("postgresql")
    t.send("5")
    t.wait_for("attune.dlx.queue")
    t.send("r")
    t.wait_for("from the store for its retry eligibility")
    xid = re.search(r"reading (\d+) from the store", t.text()).group(1)
    ref = actlib.admin_sql("SELECT action_ref, status::text FROM execution WHERE id = %s", (int(xid),))[0]
    t.send("r")
    t.wait_for("retry 1 execution on attune2?")
    t.wait_for("target:")
    box = t.text().split("target:", 1)[1]             # the dialog's target line: id and action
    target = box.splitlines()[1]
    assert re.search(r"\b%s  %s\b" % (xid, re.escape(ref[0])), target), target
    assert "attune.dlx.queue" not in target, target
    t.wait_for("breakdown: ")
    if ref[1] != "failed":
        t.wait_for("%s: not sent: status %s" % (xid, ref[1]))
    t.send("n")
    t.wait_for("retry cancelled: nothing was sent")
    assert retries(attune_core) == []
    t.quit()


@pytest.fixture
def tasker_core(tmp_path):
    actlib.reload_fixture("tasker")
    core = actlib.CoreServer("tasker", tmp_path)
    yield core
    core.stop()
    actlib.reload_fixture("tasker")


def test_tasker_dlq_retry_uses_the_task_step_route(tmp_path, tasker_core):
    t = tasker(tmp_path, tasker_core.url)
    t.wait_for("postgresql")
    t.send("5")
    t.wait_for("staleness")                           # task 6's entry (the 4th, newest first)
    t.send("jjj")
    t.send("r")
    t.wait_for("reading %s from the store" % STEP9)
    t.send("r")
    t.wait_for("breakdown: 1 eligible, 0 ineligible (not sent), 0 loop retries")
    t.send("y")
    t.wait_for("retry: 1 of 1 succeeded", secs=15)
    sent = retries(tasker_core)
    assert [(a["route"], a["status"]) for a in sent] == [("/v1/tasks/%s/workflow_steps/%s" % (TASK6, STEP9), 202)], sent
    t.send("n")
    t.quit()


def test_tasker_chain_retry_targets_the_step(tmp_path, tasker_core):
    """A step's chain lists its transitions: the retry still targets the step."""
    t = tasker(tmp_path, tasker_core.url)
    t.wait_for("postgresql")
    t.send(":chain %s\r" % STEP9)
    t.wait_for("Retry chain of %s" % STEP9)
    t.send("r")
    t.wait_for("breakdown: 1 eligible, 0 ineligible (not sent), 0 loop retries")
    t.wait_for("   %s  " % STEP9)                     # the target line: the step's id
    t.send("y")
    t.wait_for("retry: 1 of 1 succeeded", secs=15)
    sent = retries(tasker_core)
    assert [(a["route"], a["status"]) for a in sent] == [("/v1/tasks/%s/workflow_steps/%s" % (TASK6, STEP9), 202)], sent
    t.send("n")
    t.quit()


def test_footer_offers_only_the_profiles_actions(tmp_path, tasker_core):
    t = tasker(tmp_path, tasker_core.url)
    t.wait_for("postgresql")
    t.send("3")
    t.wait_for("Workers  1 shown")
    footer = t.screen.display[-1]
    assert "? help" in footer, footer
    for gone in (" drain ", " undrain ", " deactivate ", " activate "):
        assert gone not in footer, footer
    t.send("D")
    t.wait_for("this system's profile has no 'drain' action")
    t.quit()
