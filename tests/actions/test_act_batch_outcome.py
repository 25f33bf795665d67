"""Issue 35, a redrive that knows whether it worked: each retry the core accepted followed in
the store to the attempt it made (Attune's successor in the chain) and counted (succeeded,
failed again in the same error group, new error, running); `redrive batch show --json`
compared whole with what the store's own SQL says; the canary (--canary N) pausing the
batch when the core makes retries fail again and going on when they succeed; the breaker
pausing a batch mid-way once 20 outcomes are in; a paused batch's resume saying why and its
outcome so far. Real store (attune2), a private reference core server whose retries are made
to end (POST /_coresrv/outcome), the journal in a private state dir."""
import json
import os
import re
import signal

import pytest

import actlib
from test_act_batch import PAGE, batches, core, insert_bulk, sent  # noqa: F401
from test_act_batch_resume import start_batch


def outcome(c, result):
    st, body = actlib.http_json("POST", c.url + "/_coresrv/outcome?result=" + result)
    assert st == 200 and body == {"outcome": result}, body


def show(a, bid):
    p = a.run("batch", "show", bid, "--json")
    assert p.returncode == 0, p.stdout + p.stderr
    return json.loads(p.stdout)


def record_lines(a, bid):
    rec = os.path.join(str(a.tmpdir), "state", "redrive", "batches", bid + ".batch")
    with open(rec) as f:
        return [json.loads(l) for l in f if l.strip()]


def store_outcomes(ids):
    """What the store's own SQL says of each retried execution: its successor's outcome in
    the chain (same root, retry_count one more), failed again = the successor's error equal
    to the retried attempt's own (the fixtures' errors differ by a number only within a
    group, and the test's failures copy the text)."""
    rows = actlib.admin_sql(
        "SELECT e.id::text, s.status::text, s.result->>'error', e.result->>'error'"
        "  FROM execution e LEFT JOIN execution s"
        "    ON s.original_execution = COALESCE(e.original_execution, e.id)"
        "   AND s.retry_count = e.retry_count + 1"
        " WHERE e.id = ANY(%s::bigint[])", ([int(i) for i in ids],))
    out = {}
    for eid, st, err, orig in rows:
        if st is None:
            out[eid] = "unread"
        elif st == "completed":
            out[eid] = "succeeded"
        elif st in ("failed", "cancelled", "timeout", "abandoned"):
            out[eid] = "failed_again" if err == orig else "new_error"
        else:
            out[eid] = "running"
    return out


def test_show_counts_equal_the_stores_own_sql(act, core):
    ids, _ = insert_bulk("widget melted", 30, exhausted_every=0)
    a = act("attune2", core=core.url, page_size=PAGE)
    p = a.run("retry", "--status", "failed", "--filter", "widget melted", "--rate", "500",
              "--concurrency", "4", "--yes")
    assert p.returncode == 0, p.stdout + p.stderr
    assert sorted(sent(core)) == sorted(ids)
    [b] = batches(a)
    # the successors the core wrote (requested), ended in the store as a worker would
    succ = dict(actlib.admin_sql(
        "SELECT e.id::text, s.id FROM execution e JOIN execution s"
        "  ON s.original_execution = COALESCE(e.original_execution, e.id)"
        " AND s.retry_count = e.retry_count + 1 WHERE e.id = ANY(%s::bigint[])",
        ([int(i) for i in ids],)))
    assert sorted(succ) == sorted(ids)
    order = sorted(ids, key=int)
    ok, again, new = order[:9], order[9:17], order[17:22]      # the other 8 stay requested
    actlib.admin_sql("UPDATE execution SET status = 'completed', result = '{\"ok\":true}'"
                     " WHERE id = ANY(%s::bigint[])", ([succ[i] for i in ok],))
    actlib.admin_sql("UPDATE execution s SET status = 'failed', result = e.result FROM execution e"
                     " WHERE s.id = ANY(%s::bigint[]) AND s.original_execution = e.id",
                     ([succ[i] for i in again],))
    actlib.admin_sql("UPDATE execution SET status = 'timeout',"
                     " result = '{\"error\":\"worker heartbeat lost on node 7\"}'"
                     " WHERE id = ANY(%s::bigint[])", ([succ[i] for i in new],))
    truth = store_outcomes(ids)
    assert sorted(truth.values()).count("succeeded") == 9
    got = show(a, b["id"])
    rec = record_lines(a, b["id"])
    item_ids = [r[0] for r in rec if isinstance(r, list)]
    count = {k: sum(1 for v in truth.values() if v == k)
             for k in ("succeeded", "failed_again", "new_error", "running", "unread")}
    assert count == {"succeeded": 9, "failed_again": 8, "new_error": 5, "running": 8,
                     "unread": 0}, count
    expect = {
        "id": b["id"], "system": "attune2", "action": "retry", "state": "done",
        "pause_reason": None, "total": 30, "sent": 30, "ok": 30, "failed": 0, "unknown": 0,
        "held": 0, "rate": 500, "concurrency": 4, "selection": "status=failed text=widget melted",
        "outcome": dict(count, read=True, why=None, queries=1),
        "items": [{"item": n, "id": i, "parent": None, "state": "ok", "outcome": truth[i]}
                  for n, i in enumerate(item_ids)],
    }
    assert got == expect
    # the text form says the same figures
    p = a.run("batch", "show", b["id"])
    assert p.returncode == 0, p.stderr
    assert ("  outcome (the store, now): 9 succeeded, 8 failed again, 5 new errors, 8 running, "
            "0 not yet in the store; 36% of the finished failed again") in p.stdout.splitlines(), p.stdout


def test_canary_pauses_when_the_core_makes_retries_fail_again(act, core):
    ids, _ = insert_bulk("gizmo jammed", 40, exhausted_every=0)
    outcome(core, "failed_again")
    a = act("attune2", core=core.url, page_size=PAGE)
    p = a.run("retry", "--status", "failed", "--filter", "gizmo jammed", "--rate", "200",
              "--canary", "5", "--canary-wait", "20s", "--yes")
    assert p.returncode == 1, p.stdout + p.stderr
    assert len(sent(core)) == 5, "the canary only"
    [b] = batches(a)
    reason = ("canary: 5 of 5 finished retries failed again in the same error group "
              "(100% > 50%): 0 succeeded, 5 failed again, 0 new errors, 0 running, "
              "0 not yet in the store")
    err = p.stderr.splitlines()
    assert "redrive: canary: 5 first, their outcome waited for up to 20s; the rest only if at most 50% fail again" in err, p.stderr
    assert "redrive: batch %s: %s" % (b["id"], reason) in err, p.stderr
    got = show(a, b["id"])
    assert (got["state"], got["pause_reason"], got["sent"], got["ok"], got["total"]) == \
        ("paused", reason, 5, 5, 40), got
    assert got["outcome"] == {"read": True, "why": None, "succeeded": 0, "failed_again": 5,
                              "new_error": 0, "running": 0, "unread": 0, "queries": 1}
    paused = [r for r in record_lines(a, b["id"]) if isinstance(r, dict) and r.get("control") == "paused"]
    assert len(paused) == 1 and paused[0]["reason"] == reason
    assert b["state"] == "paused"
    # resume asks again, with why and the outcome so far; the count typed is refused empty
    p = a.run("batch", "resume", b["id"])
    assert p.returncode == 2, p.stderr          # not a terminal, no --yes: nothing sent
    assert "redrive: batch %s is paused: %s" % (b["id"], reason) in p.stderr.splitlines()
    assert ("redrive: its outcome so far (the store, now): 0 succeeded, 5 failed again, 0 new "
            "errors, 0 running, 0 not yet in the store; 100% of the finished failed again") \
        in p.stderr.splitlines(), p.stderr
    assert len(sent(core)) == 5


def test_canary_goes_on_when_retries_succeed(act, core):
    ids, _ = insert_bulk("doohickey bent", 30, exhausted_every=0)
    outcome(core, "succeeded")
    a = act("attune2", core=core.url, page_size=PAGE)
    p = a.run("retry", "--status", "failed", "--filter", "doohickey bent", "--rate", "200",
              "--canary", "6", "--canary-wait", "20s", "--yes")
    assert p.returncode == 0, p.stdout + p.stderr
    assert ("redrive: canary: 0 of 6 finished retries failed again in the same error group "
            "(0% <= 50%): 6 succeeded, 0 failed again, 0 new errors, 0 running, 0 not yet in "
            "the store: going on") in p.stderr.splitlines(), p.stderr
    assert sorted(sent(core)) == sorted(ids)
    [b] = batches(a)
    got = show(a, b["id"])
    assert (got["state"], got["sent"], got["ok"]) == ("done", 30, 30)
    assert got["outcome"] == {"read": True, "why": None, "succeeded": 30, "failed_again": 0,
                              "new_error": 0, "running": 0, "unread": 0, "queries": 1}


def test_canary_of_new_errors_goes_on_they_are_not_failing_again(act, core):
    ids, _ = insert_bulk("thingamajig cracked", 20, exhausted_every=0)
    outcome(core, "new_error")
    a = act("attune2", core=core.url, page_size=PAGE, batch_canary=4, batch_canary_wait="20s",
            batch_max_refail="0%")
    p = a.run("retry", "--status", "failed", "--filter", "thingamajig cracked", "--rate", "200",
              "--yes")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "(0% <= 0%): 0 succeeded, 0 failed again, 4 new errors" in p.stderr, p.stderr
    assert len(sent(core)) == 20
    [b] = batches(a)
    assert show(a, b["id"])["outcome"]["new_error"] == 20


def test_breaker_pauses_mid_batch_and_resume_asks_again(act, core):
    ids, _ = insert_bulk("sprocket sheared", 150, exhausted_every=0)
    outcome(core, "failed_again")
    a = act("attune2", core=core.url, page_size=50)
    p = a.run("retry", "--status", "failed", "--filter", "sprocket sheared", "--rate", "20",
              "--yes", timeout=120)
    assert p.returncode == 1, p.stdout + p.stderr
    n = len(sent(core))
    assert 20 <= n < 150, n
    [b] = batches(a)
    got = show(a, b["id"])
    assert got["state"] == "paused" and got["sent"] == n, got
    assert re.fullmatch(r"breaker: (\d+) of \1 finished retries failed again in the same error "
                        r"group \(100% > 50%\): 0 succeeded, \1 failed again, 0 new errors, "
                        r"\d+ running, \d+ not yet in the store", got["pause_reason"]), got
    assert int(got["pause_reason"].split()[1]) >= 20
    assert "redrive: batch %s: %s: not sending the rest" % (b["id"], got["pause_reason"]) \
        in p.stderr.splitlines(), p.stderr
    assert got["outcome"]["failed_again"] == n        # every one failed again, by now
    # resumed once the core's retries succeed: asked again (--yes), the rest sent, done
    outcome(core, "succeeded")
    p = a.run("batch", "resume", b["id"], "--rate", "200", "--yes", timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "redrive: batch %s is paused: %s" % (b["id"], got["pause_reason"]) in p.stderr.splitlines()
    assert "redrive: its outcome so far (the store, now): 0 succeeded, %d failed again" % n in p.stderr
    assert sorted(sent(core)) == sorted(ids)
    got = show(a, b["id"])
    assert (got["state"], got["pause_reason"], got["sent"]) == ("done", None, 150)
    assert (got["outcome"]["failed_again"], got["outcome"]["succeeded"]) == (n, 150 - n)


def test_guard_options_are_checked(act, core):
    a = act("attune2", core=core.url, page_size=PAGE)
    for opt, val, msg in (("--canary", "-1", "redrive: --canary: a count of items sent first, 0 to 1000000: -1"),
                          ("--canary-wait", "soon", "redrive: --canary-wait: a duration up to 24h (30s, 5m): soon"),
                          ("--max-refail", "150%", "redrive: --max-refail: a share from 0 to 100 (50%): 150%")):
        p = a.run("retry", "--status", "failed", "--filter", "nothing like it", opt, val, "--yes")
        assert p.returncode == 2 and msg in p.stderr.splitlines(), (opt, p.stderr)
    p = a.run("retry", "1", "--canary", "3", "--yes")
    assert p.returncode == 2
    assert "redrive: --canary, --canary-wait and --max-refail go with --status, --group or --dlq" in p.stderr
    assert sent(core) == {}


# ---- the other systems: Tasker's step state, OpenAgents' job row, Alakai's next attempt ----

ALAKAI_IDS = ["oc-%02d" % i for i in range(6)]


def alakai_seed():
    """Six Alakai tasks whose only attempt failed with a plain error (the fixture's hostile
    records carry bytes the core cannot copy as they are)."""
    import redis
    r = redis.Redis.from_url(os.environ["RD_REDIS_URL"])
    for i, t in enumerate(ALAKAI_IDS):
        r.hset("alakai-executions:" + t, "1", json.dumps({
            "status": "failed", "attempt": 1, "errorCode": "E_RENDER",
            "errorMessage": "renderer crashed on page %d" % (i + 3),
            "taskSnapshot": {"taskId": t, "type": "render"},
            "dispatchedAt": "2026-12-07T10:00:00.000Z", "resolvedAt": "2026-12-07T10:01:00.000Z"}))
    return r


def store_truth(system, ids, before):
    """Each item's outcome as the store says it (its own reading, not redrive's), against the
    error each had before the retry (before: id -> text)."""
    out = {}
    if system == "attune1":
        rows = actlib.admin_sql(
            "SELECT (s.config->>'retry_of'), s.status::text, s.result->>'error' FROM execution s"
            " WHERE s.config->>'retry_of' = ANY(%s)", (ids,),
            dsn_var="RD_PG_ADMIN_DSN_ATTUNE1", search_path="public")
        done, bad = ("completed",), ("failed",)
    elif system == "tasker":
        rows = actlib.admin_sql(
            "SELECT s.workflow_step_uuid::text, t.to_state, s.results->'error'->>'message'"
            "  FROM workflow_steps s JOIN workflow_step_transitions t"
            "    ON t.workflow_step_uuid = s.workflow_step_uuid AND t.most_recent"
            " WHERE s.workflow_step_uuid::text = ANY(%s)", (ids,),
            dsn_var="RD_PG_ADMIN_DSN_TASKER", search_path="tasker, public")
        done, bad = ("complete",), ("error",)
    elif system == "openagents":
        rows = actlib.admin_sql(
            "SELECT job_id, lower(status), COALESCE(error->>'message', error #>> '{}')"
            "  FROM jobs WHERE job_id = ANY(%s)", (ids,),
            dsn_var="RD_PG_ADMIN_DSN_OPENAGENTS", search_path="public")
        done, bad = ("completed",), ("failed",)
    else:
        import redis
        r = redis.Redis.from_url(os.environ["RD_REDIS_URL"])
        rows = []
        for t in ids:
            rec = json.loads(r.hget("alakai-executions:" + t, "2"))
            rows.append((t, rec["status"], rec["errorMessage"]))
        done, bad = ("succeeded",), ("failed",)
    for eid, st, err in rows:
        out[eid] = ("succeeded" if st in done else
                    ("failed_again" if err == before[eid] else "new_error") if st in bad else
                    "running")
    return out


def errors_before(system):
    """Every execution's error now (Tasker and OpenAgents retry in place: read before)."""
    if system == "attune1":
        return dict(actlib.admin_sql(
            "SELECT id::text, COALESCE(result->>'error', result->>'message') FROM execution",
            dsn_var="RD_PG_ADMIN_DSN_ATTUNE1", search_path="public"))
    if system == "tasker":
        return dict(actlib.admin_sql(
            "SELECT workflow_step_uuid::text, results->'error'->>'message' FROM workflow_steps",
            dsn_var="RD_PG_ADMIN_DSN_TASKER", search_path="tasker, public"))
    if system == "openagents":
        return dict(actlib.admin_sql(
            "SELECT job_id, COALESCE(error->>'message', error #>> '{}') FROM jobs",
            dsn_var="RD_PG_ADMIN_DSN_OPENAGENTS", search_path="public"))
    return {t: "renderer crashed on page %d" % (i + 3) for i, t in enumerate(ALAKAI_IDS)}


@pytest.mark.parametrize("system,status,select", [
    ("attune1", "failed", ()), ("tasker", "error", ()), ("openagents", "failed", ()),
    ("alakai", "failed", ("--filter", "renderer crashed"))])
@pytest.mark.parametrize("mode", ["succeeded", "failed_again", "new_error"])
def test_outcome_of_every_system_equals_the_store(act, stack, tmp_path, system, status, select,
                                                  mode):
    actlib.reload_fixture(system)
    if system == "alakai":
        alakai_seed()
    c = actlib.CoreServer(system, tmp_path)
    try:
        outcome(c, mode)
        a = act(system, core=c.url)
        before = errors_before(system)
        p = a.run("retry", "--status", status, *select, "--rate", "200", "--yes")
        [b] = batches(a)
        got = show(a, b["id"])
        ids = [i["id"] for i in got["items"] if i["state"] == "ok"]
        assert len(ids) >= 2 and got["ok"] == len(ids), (p.stderr, got)
        if system == "alakai":
            assert sorted(ids) == ALAKAI_IDS
        truth = store_truth(system, ids, before)
        assert set(truth.values()) == {mode}, truth
        assert {i["id"]: i["outcome"] for i in got["items"] if i["state"] == "ok"} == truth
        want = {k: 0 for k in ("succeeded", "failed_again", "new_error", "running", "unread")}
        want[mode] = len(ids)
        assert got["outcome"] == dict(want, read=True, why=None, queries=1)
    finally:
        c.stop()
        actlib.reload_fixture(system)


def test_reading_is_bounded_a_query_a_page_of_500(act, core):
    """1,201 accepted retries read in 3 queries (500 a page), never one a item."""
    ids, _ = insert_bulk("flange warped", 1201, exhausted_every=0)
    a = act("attune2", core=core.url, page_size=1000)
    p = a.run("retry", "--status", "failed", "--filter", "flange warped", "--rate", "1000",
              "--concurrency", "16", "--yes", timeout=240)
    assert p.returncode == 0, p.stderr[-2000:]
    [b] = batches(a)
    got = show(a, b["id"])
    assert (got["ok"], got["outcome"]["running"], got["outcome"]["queries"]) == (1201, 1201, 3)
    assert {i["outcome"] for i in got["items"]} == {"running"}
    assert store_outcomes(ids) == {i: "running" for i in ids}


def test_running_batch_is_shown_running_and_not_resumed_twice(act, core):
    """While a process sends a batch it holds the running lock: `batch show` says running,
    a second resume is refused and sends nothing; once stopped (Ctrl-C) it is open again."""
    insert_bulk("cog slipped", 40, exhausted_every=0)
    a = act("attune2", core=core.url, page_size=PAGE)
    p = start_batch(a, "retry", "--status", "failed", "--filter", "cog slipped", "--rate", "4",
                    "--concurrency", "1", "--yes")
    try:
        for _ in range(3):
            assert p.stdout.readline(), p.stderr.read()
        [b] = batches(a)
        assert b["state"] == "running", b
        got = show(a, b["id"])
        assert got["state"] == "running" and 3 <= got["sent"] < 40, got
        n = len(sent(core))
        r = a.run("batch", "resume", b["id"], "--yes")
        assert r.returncode == 1, r.stderr
        assert ("redrive: not sent: batch %s: it is running (in this console or another redrive)" % b["id"]
                in r.stderr.splitlines()), r.stderr
        assert len(sent(core)) <= n + 1            # only the running process's next one
    finally:
        p.send_signal(signal.SIGINT)
        p.wait(20)
    assert p.returncode == 128 + signal.SIGINT, p.stderr
    got = show(a, b["id"])
    assert got["state"] == "open" and got["sent"] < 40, got


def test_a_pause_written_by_another_process_stops_a_cli_run_and_resume_uses_its_pace(act, core):
    """One kind of pause: a control line written by another redrive (the console's P) stops
    the CLI's run at its next part; batch list, show and resume read the same paused state
    and reason; resume goes on at the rate and window the record says last."""
    insert_bulk("gear stripped", 600, exhausted_every=0)
    a = act("attune2", core=core.url, page_size=PAGE)
    p = start_batch(a, "retry", "--status", "failed", "--filter", "gear stripped", "--rate", "200",
                    "--concurrency", "2", "--yes")
    try:
        for _ in range(3):
            assert p.stdout.readline(), p.stderr.read()
        [b] = batches(a)
        assert b["state"] == "running", b
        opened = [r for r in record_lines(a, b["id"]) if isinstance(r, dict) and r.get("control") == "open"]
        assert len(opened) == 1 and (opened[0]["rate"], opened[0]["concurrency"]) == (200, 2), opened
        rec = os.path.join(str(a.tmpdir), "state", "redrive", "batches", b["id"] + ".batch")
        with open(rec, "a") as f:
            f.write(json.dumps({"control": "paused", "at": "2026-12-07T00:00:00Z", "operator": "ops",
                                "rate": 7, "concurrency": 3,
                                "reason": "paused by an operator (P in :batches)"}) + "\n")
        p.wait(60)
    finally:
        if p.poll() is None:
            p.send_signal(signal.SIGINT)
            p.wait(20)
    assert p.returncode == 1, p.stderr.read()
    [b] = batches(a)
    assert b["state"] == "paused" and b["done"] < 600, b
    got = show(a, b["id"])
    assert (got["state"], got["pause_reason"], got["rate"], got["concurrency"]) == \
        ("paused", "paused by an operator (P in :batches)", 7, 3), got
    r = a.run("batch", "resume", b["id"])            # no terminal, no --yes: says and asks
    assert r.returncode == 2, r.stderr
    err = r.stderr.splitlines()
    assert "redrive: batch %s is paused: paused by an operator (P in :batches)" % b["id"] in err, r.stderr
    assert any(l.startswith("redrive: %d to send: " % (600 - b["done"])) and "7" in l for l in err), r.stderr


def test_a_hostile_paused_line_is_shown_sanitized_and_a_bad_one_is_damage(act, core):
    insert_bulk("axle bent", 12, exhausted_every=0)
    a = act("attune2", core=core.url, page_size=PAGE)
    p = a.run("retry", "--status", "failed", "--filter", "axle bent", "--rate", "500",
              "--canary", "3", "--canary-wait", "2s", "--yes")
    assert p.returncode == 1, p.stderr             # running successors: no outcome in 2 s
    [b] = batches(a)
    got = show(a, b["id"])
    assert got["state"] == "paused" and got["pause_reason"].startswith(
        "canary: no outcome of its 3 retries within 2s (0 succeeded, 0 failed again, 0 new "
        "errors, 3 running, 0 not yet in the store)"), got
    rec = os.path.join(str(a.tmpdir), "state", "redrive", "batches", b["id"] + ".batch")
    with open(rec, "a") as f:
        f.write(json.dumps({"control": "paused", "at": "2026-12-07T00:00:00Z", "operator": "x",
                            "reason": "evil \x1b]0;owned\x07 \u202e done"}) + "\n")
    t = a.run("batch", "show", b["id"])
    assert t.returncode == 0, t.stderr
    assert "  paused: evil \u241b]0;owned\u2407 <U+202E> done" in t.stdout.splitlines(), t.stdout
    assert "\x1b" not in t.stdout and "\u202e" not in t.stdout
    with open(rec, "a") as f:
        f.write(json.dumps({"control": "paused", "at": "2026-12-07T00:00:01Z", "reason": 7}) + "\n")
    lines = len(open(rec).read().splitlines())      # the bad line is the last
    t = a.run("batch", "show", b["id"])
    assert t.returncode == 1, t.stderr
    assert "is damaged: line %d: a control line that cannot be read" % lines in t.stderr, t.stderr


def test_a_resolve_batch_has_no_outcome_and_no_breaker(act, stack, tmp_path):
    actlib.reload_fixture("tasker")
    c = actlib.CoreServer("tasker", tmp_path)
    try:
        a = act("tasker", core=c.url)
        p = a.run("resolve", "--dlq", "--dlq-reason", "staleness_timeout", "--canary", "1",
                  "--yes")
        assert p.returncode == 2 and "unknown argument '--canary'" in p.stderr, p.stderr
        p = a.run("resolve", "--dlq", "--dlq-reason", "staleness_timeout", "--yes")
        assert p.returncode == 0, p.stdout + p.stderr
        assert "breaker" not in p.stderr and "outcome" not in p.stderr, p.stderr
        [b] = batches(a)
        r = a.run("batch", "show", b["id"], "--json")
        assert r.returncode == 3, r.stderr
        got = json.loads(r.stdout)
        assert got["action"] == "resolve" and got["ok"] == 1
        assert got["outcome"] == {"read": False, "why": "a resolve batch has no outcome to "
                                  "follow (retries only)", "succeeded": 0, "failed_again": 0,
                                  "new_error": 0, "running": 0, "unread": 0, "queries": 0}
        assert [i["outcome"] for i in got["items"]] == ["none"]
    finally:
        c.stop()
        actlib.reload_fixture("tasker")
