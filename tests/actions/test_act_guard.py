"""`redrive retry` and `redrive drain` are guarded like the console's group retry
(core/guard.h, docs/error-groups.md): the breakdown first, only eligible executions sent,
the others named with the reason and sent only with --force (journaled as an override),
exit 1 when anything was held back. A drain shows the console's warnings and is refused
without --force. Real store (attune2), a private reference core server (its request log
says what was sent), the journal in a private state dir."""
import pytest

import actlib

ELIGIBLE = "2"          # failed, retry_count 0 of max_retries 3
COMPLETED = "1"         # completed
EXHAUSTED = "7"         # failed, retry_count 2 of max_retries 2
MISSING = "424242"      # no such execution


@pytest.fixture
def core(stack, tmp_path):
    actlib.reload_fixture("attune2")
    c = actlib.CoreServer("attune2", tmp_path)
    yield c
    c.stop()
    actlib.reload_fixture("attune2")


def sent(core, action="retry"):
    return sorted(a["target"] for a in core.actions() if a["action"] == action)


def routes(core):
    return [a["route"] for a in core.actions()]


def test_retry_sends_only_eligible_and_names_the_rest(act, core):
    a = act("attune2", core=core.url)
    p = a.run("retry", ELIGIBLE, COMPLETED, EXHAUSTED, MISSING, "--yes")
    assert p.returncode == 1, p.stdout + p.stderr
    assert sent(core) == [ELIGIBLE]
    assert p.stderr.splitlines() == [
        "redrive: breakdown: 1 eligible, 3 ineligible (not sent), 0 loop retries",
        "redrive: 1: not sent: status completed (only failed executions retry); --force sends it anyway",
        "redrive: 7: not sent: budget exhausted (2/2 retries); --force sends it anyway",
        "redrive: 424242: not sent: no such execution in the store; --force sends it anyway",
    ], p.stderr
    assert p.stdout.startswith("2: ok: "), p.stdout
    j = a.journal()
    assert [x["targets"] for x in j] == [[ELIGIBLE]] and j[0]["code"] == "ok" and "override" not in j[0], j


def test_retry_of_only_ineligible_sends_nothing(act, core):
    a = act("attune2", core=core.url)
    p = a.run("retry", COMPLETED, "--yes")
    assert p.returncode == 1, p.stdout + p.stderr
    assert "redrive: breakdown: 0 eligible, 1 ineligible (not sent), 0 loop retries\n" in p.stderr
    assert sent(core) == [] and p.stdout == "" and a.journal() == []


def test_force_sends_the_ineligible_journaled_as_override(act, core):
    a = act("attune2", core=core.url)
    p = a.run("retry", ELIGIBLE, COMPLETED, "--yes", "--force")
    assert sent(core) == [COMPLETED, ELIGIBLE], p.stderr
    assert p.returncode == 1, p.stdout + p.stderr       # the completed one gets a 409
    assert "1: conflict_status: " in p.stdout, p.stdout
    j = {x["targets"][0]: x for x in a.journal()}
    assert j[COMPLETED].get("override") == "ineligible", j
    assert "override" not in j[ELIGIBLE], j


def test_drain_shows_the_warnings_and_needs_force(act, core, stack):
    a = act("attune2", core=core.url, broker=stack["RD_RABBIT_MGMT_URL"], broker_user=stack["RD_RABBIT_USER"],
            broker_password="env:RD_RABBIT_PASSWORD")
    p = a.run("drain", "1", "--yes")
    assert p.returncode == 1, p.stdout + p.stderr
    assert "redrive: WARNING: last consumer of queue worker.1.executions" in p.stderr, p.stderr
    assert "redrive: 1: not drained: " in p.stderr and "; --force drains it anyway" in p.stderr, p.stderr
    assert routes(core) == [] and a.journal() == []
    p = a.run("drain", "1", "--yes", "--force")
    assert p.returncode == 0, p.stdout + p.stderr
    assert routes(core) == ["/api/v1/workers/1/cordon"]
    j = a.journal()
    assert len(j) == 1 and j[0]["override"] == "drain_warning" and j[0]["code"] == "ok", j


def test_drain_of_the_last_healthy_worker_for_its_work(act, core, stack):
    """Every worker but 3 is made inactive here: 3 is the last one taking its work."""
    actlib.admin_sql("UPDATE worker SET status = 'inactive' WHERE id <> 3")
    a = act("attune2", core=core.url)
    p = a.run("drain", "3", "--yes")
    assert p.returncode == 1, p.stdout + p.stderr
    assert p.stderr.splitlines() == [
        "redrive: WARNING: no other healthy compatible worker: every other compatible worker (6) is unhealthy"
        " or not taking work",
        "redrive: 3: not drained: 1 warning; --force drains it anyway"], p.stderr
    assert routes(core) == []
    p = a.run("deactivate", "3", "--yes")
    assert p.returncode == 1 and "redrive: 3: not deactivated: 1 warning" in p.stderr, p.stderr
    assert routes(core) == []


def test_drain_without_warnings_is_sent(act, core):
    a = act("attune2", core=core.url)
    p = a.run("drain", "3", "--yes")
    assert p.returncode == 0 and p.stderr == "", p.stdout + p.stderr
    assert routes(core) == ["/api/v1/workers/3/cordon"]
