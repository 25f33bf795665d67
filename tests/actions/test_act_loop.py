"""The CLI's retry-loop breaker (as the console's, tests/tui/test_groups_live.py): `redrive
retry` reads each execution from the store, journals its error fingerprint and attempt with
the retry, and leaves out a manual retry of a failure that already failed again the same way
after a manual retry, unless --override-loop (journaled as overridden). Real store (attune2),
a private reference core server, the journal in a private state dir."""
import json

import pytest

import actlib

ERROR = "Ledger service returned 503 for batch %d"
FP = "Ledger service returned <n> for batch <n>"
XID = 901



@pytest.fixture
def failed_execution(stack):
    actlib.reload_fixture("attune2")
    actlib.admin_sql("INSERT INTO execution (id, action, action_ref, config, env_vars, executor, status, result,"
        " created, updated, retry_count, max_retries, worker, started_at)"
        " SELECT %s, action, action_ref, config, env_vars, executor, 'failed', %s,"
        " now() - interval '2 minutes', now() - interval '1 minute', 0, 3, worker,"
        " now() - interval '100 seconds' FROM execution WHERE id = 2",
        (XID, json.dumps({"error": ERROR % 7000})))
    yield
    actlib.reload_fixture("attune2")


def outcomes(act):
    return act.journal()


def test_cli_retry_loop_is_left_out_unless_overridden(act, tmp_path, failed_execution):
    core = actlib.CoreServer("attune2", tmp_path)
    try:
        a = act("attune2", core=core.url)
        p = a.run("retry", str(XID), "--yes")
        assert p.returncode == 0, p.stdout + p.stderr
        first = outcomes(a)[-1]
        assert first["targets"] == [str(XID)] and first["code"] == "ok", first
        assert first["fp"] == FP and first["attempt"] == 1 and "override" not in first, first

        # the core made a new execution of 901; it fails again the same way: a loop
        new = actlib.admin_sql("SELECT id FROM execution WHERE (config ->> 'retry_of')::bigint = %s", (XID,))
        assert new and len(new) == 1, new
        nid = new[0][0]
        actlib.admin_sql("UPDATE execution SET status = 'failed', result = %s, retry_count = 1, updated = now()"
            " WHERE id = %s", (json.dumps({"error": ERROR % 9999}), nid))
        n_journal = len(outcomes(a))
        p = a.run("retry", str(nid), "--yes")
        assert p.returncode == 1, p.stdout + p.stderr
        assert ("redrive: %d: manual retry #2 of the same failure (it failed again the same way "
                "after 1 manual retry): skipped; --override-loop retries it anyway\n" % nid) in p.stderr
        assert [x for x in core.actions() if x["action"] == "retry" and x["target"] == str(nid)] == []
        assert len(outcomes(a)) == n_journal            # nothing sent, nothing journaled

        p = a.run("retry", str(nid), "--yes", "--override-loop")
        assert p.returncode == 0, p.stdout + p.stderr
        sent = [x for x in core.actions() if x["action"] == "retry" and x["target"] == str(nid)]
        assert len(sent) == 1 and sent[0]["status"] == 202, sent
        last = outcomes(a)[-1]
        assert last["targets"] == [str(nid)] and last["code"] == "ok", last
        assert last["override"] == "loop_retry" and last["fp"] == FP and last["attempt"] == 2, last
    finally:
        core.stop()


def test_cli_retry_without_a_readable_store_is_held_unless_forced(act, tmp_path):
    """The store down: the eligibility is unknown, so the retry is not sent (core/guard.h);
    --force sends it without the checks, journaled as an override."""
    core = actlib.CoreServer("attune2", tmp_path)
    try:
        a = act("attune2", core=core.url, store="host=127.0.0.1 port=%d dbname=x user=x"
                % actlib.free_port())
        p = a.run("retry", "2", "--yes")
        assert p.returncode == 1, p.stdout + p.stderr
        assert "redrive: 2: not sent: eligibility unknown: cannot read it (postgresql: " in p.stderr, p.stderr
        assert "; --force sends it anyway" in p.stderr, p.stderr
        assert [x["target"] for x in core.actions() if x["action"] == "retry"] == []
        p = a.run("retry", "2", "--yes", "--force")
        assert [x["target"] for x in core.actions() if x["action"] == "retry"] == ["2"]
        last = outcomes(a)[-1]
        assert "fp" not in last and last["override"] == "ineligible", last
    finally:
        core.stop()
