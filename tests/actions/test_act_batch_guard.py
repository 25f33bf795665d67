"""Issue 35, the guard again at send time: a batch's items are read again from the store, a
page a query, just before they leave; what was handled meanwhile (a successor made by
someone else, succeeded, its budget used, gone) is held back with its reason, journaled as
held (so no later resume sends it either) and summarised by reason on the CLI (each named
with --verbose). Counted at the reference core server: those items never reach it. Real
stores (attune2, openagents, Alakai's Redis), private core servers, the journal in a
private state dir."""
import json
import os
import signal
import uuid

import pytest

import actlib
from test_act_batch import batches, core, insert_bulk, sent  # noqa: F401
from test_act_batch_resume import start_batch


def interrupt_after(p, lines):
    """Ctrl-C once `lines` results are out: what is in flight finishes, the rest stays."""
    for _ in range(lines):
        assert p.stdout.readline(), p.stderr.read()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=30)
    assert p.returncode == 128 + signal.SIGINT, err
    return err


def show(a, bid):
    p = a.run("batch", "show", bid, "--json")
    assert p.returncode == 0, p.stdout + p.stderr
    return json.loads(p.stdout)


def not_sent(a, bid):
    return sorted((i["id"] for i in show(a, bid)["items"] if i["state"] == "not_sent"), key=str)


def held_lines(a, bid):
    """The journal's held lines of the batch: {target: result}."""
    out = {}
    for j in actlib.read_journal(a.tmpdir):
        if j.get("batch") == bid and j.get("code") == "held":
            assert j["targets"][0] not in out, j        # held once, never again
            assert j.get("http_status", 0) == 0 and not j.get("idempotency_key"), j
            out[j["targets"][0]] = j["result"]
    return out


def summary_line(bid, reasons, verbose=False):
    return ("redrive: batch %s: held back at send time, no longer eligible in the store: %s "
            "(never sent%s)" % (bid, reasons, "" if verbose else "; --verbose names each"))


def test_attune_items_handled_meanwhile_are_held_back_and_never_sent(act, core):
    ids, _ = insert_bulk("guard boom", 30, exhausted_every=0)
    a = act("attune2", core=core.url, page_size=50)
    p = start_batch(a, "retry", "--status", "failed", "--filter", "guard boom", "--rate", "2",
                    "--concurrency", "1", "--yes")
    interrupt_after(p, 3)
    [b] = batches(a)
    bid = b["id"]
    left = not_sent(a, bid)
    assert b["state"] == "open" and len(left) >= 20, b
    before = sent(core)
    assert not set(before) & set(left)
    # meanwhile, in the store: someone else retried 5 (a successor in the chain), 3
    # succeeded, 2 used their budget, 1 was deleted
    sup, done, spent, gone = left[0:5], left[5:8], left[8:10], left[10:11]
    actlib.admin_sql(
        "INSERT INTO execution (action_ref, status, retry_count, max_retries,"
        " original_execution, created, updated) SELECT action_ref, 'requested',"
        " retry_count + 1, max_retries, COALESCE(original_execution, id), now(), now()"
        " FROM execution WHERE id = ANY(%s::bigint[])", ([int(i) for i in sup],))
    actlib.admin_sql("UPDATE execution SET status = 'completed' WHERE id = ANY(%s::bigint[])",
                     ([int(i) for i in done],))
    actlib.admin_sql("UPDATE execution SET retry_count = 3 WHERE id = ANY(%s::bigint[])",
                     ([int(i) for i in spent],))
    actlib.admin_sql("DELETE FROM execution WHERE id = ANY(%s::bigint[])",
                     ([int(i) for i in gone],))
    held = set(sup + done + spent + gone)
    r = a.run("batch", "resume", bid, "--rate", "500", "--yes")
    assert r.returncode == 1, r.stdout + r.stderr            # not every item was sent
    err = r.stderr.splitlines()
    assert summary_line(bid, "5 superseded, 3 now completed, 2 budget exhausted, "
                        "1 not in the store") in err, r.stderr
    assert "redrive: batch %s: %d of %d retried" % (bid, len(left) - 11, len(left) - 11) in err, \
        r.stderr
    got = sent(core)
    new = got - before
    assert sorted(new, key=str) == sorted(set(left) - held, key=str), new
    assert set(got.values()) == {1} and not held & set(got), got
    assert held_lines(a, bid) == dict(
        [(i, "held back: no longer eligible: superseded by a later attempt") for i in sup] +
        [(i, "held back: no longer eligible: status completed (only failed executions retry)")
         for i in done] +
        [(i, "held back: no longer eligible: budget exhausted (3/3 retries)") for i in spent] +
        [(i, "held back: no longer eligible: no such execution in the store") for i in gone])
    [b2] = batches(a)
    assert (b2["state"], b2["held"], b2["done"], b2["total"]) == ("done", 11, 30, 30), b2
    assert {i["id"]: i["state"] for i in show(a, bid)["items"] if i["id"] in held} == \
        {i: "held" for i in held}
    # a second resume sends none of them either, even once they are eligible again
    actlib.admin_sql("UPDATE execution SET status = 'failed' WHERE id = ANY(%s::bigint[])",
                     ([int(i) for i in done],))
    r2 = a.run("batch", "resume", bid, "--rate", "500", "--yes")
    assert r2.returncode == 0 and "nothing to do" in r2.stderr, r2.stderr
    assert "redrive: 11 held back at send time earlier (no longer eligible in the store): " \
           "never sent" in r2.stderr.splitlines(), r2.stderr
    assert sent(core) == got


def test_attune_store_wide_retry_checks_before_sending_and_a_fresh_batch_holds_nothing(act, core):
    """A batch sent at once after its selection: every part read again (nothing changed,
    nothing held), one query a part; the exit code and the summary as before."""
    ids, _ = insert_bulk("fresh boom", 12, exhausted_every=0)
    a = act("attune2", core=core.url, page_size=50)
    p = a.run("retry", "--status", "failed", "--filter", "fresh boom", "--rate", "500", "--yes")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "held back at send time" not in p.stderr, p.stderr
    assert sorted(sent(core)) == sorted(ids)
    [b] = batches(a)
    assert (b["state"], b["held"], b["ok"]) == ("done", 0, 12), b


OA_DSN = dict(dsn_var="RD_PG_ADMIN_DSN_OPENAGENTS", search_path="public")


@pytest.fixture
def oa_core(stack, tmp_path):
    actlib.reload_fixture("openagents")
    c = actlib.CoreServer("openagents", tmp_path)
    yield c
    c.stop()
    actlib.reload_fixture("openagents")


def test_openagents_items_handled_meanwhile_are_held_back_named_with_verbose(act, oa_core):
    jobs = ["guard-%02d-%s" % (i, uuid.uuid4().hex[:8]) for i in range(24)]
    for i, j in enumerate(jobs):
        actlib.admin_sql(
            "INSERT INTO jobs (job_id, name, status, max_retries, retry_count, created_at,"
            " updated_at, error) VALUES (%s, 'guard.job', 'failed', 3, 0,"
            " extract(epoch FROM now()) - %s, extract(epoch FROM now()) - %s,"
            " json_build_object('message', 'gasket blew ' || %s))", (j, i, i, i), **OA_DSN)
    a = act("openagents", core=oa_core.url, page_size=50)
    p = start_batch(a, "retry", "--status", "failed", "--filter", "gasket blew", "--rate", "2",
                    "--concurrency", "1", "--yes")
    interrupt_after(p, 2)
    [b] = batches(a)
    bid = b["id"]
    assert b["total"] == 24, b
    left = not_sent(a, bid)
    assert len(left) >= 15 and set(left) <= set(jobs), left
    before = sent(oa_core)
    # meanwhile: 4 retried by someone else (queued again, one more retry counted), 2
    # completed, 3 with their budget used
    queued, done, spent = left[0:4], left[4:6], left[6:9]
    actlib.admin_sql("UPDATE jobs SET status = 'queued', retry_count = retry_count + 1"
                     " WHERE job_id = ANY(%s)", (queued,), **OA_DSN)
    actlib.admin_sql("UPDATE jobs SET status = 'COMPLETED' WHERE job_id = ANY(%s)", (done,),
                     **OA_DSN)
    actlib.admin_sql("UPDATE jobs SET retry_count = 3 WHERE job_id = ANY(%s)", (spent,),
                     **OA_DSN)
    r = a.run("batch", "resume", bid, "--rate", "500", "--verbose", "--yes")
    assert r.returncode == 1, r.stdout + r.stderr
    err = r.stderr.splitlines()
    assert summary_line(bid, "4 now queued, 3 budget exhausted, 2 now completed",
                        verbose=True) in err, r.stderr
    item_of = {i["id"]: i["item"] for i in show(a, bid)["items"]}
    named = sorted(l for l in err if l.startswith("redrive:   item "))
    assert named == sorted(
        ["redrive:   item %d: %s: held back: status queued (only failed jobs retry)"
         % (item_of[j], j) for j in queued] +
        ["redrive:   item %d: %s: held back: status completed (only failed jobs retry)"
         % (item_of[j], j) for j in done] +
        ["redrive:   item %d: %s: held back: budget exhausted (3/3 retries)"
         % (item_of[j], j) for j in spent]), r.stderr
    held = set(queued + done + spent)
    got = sent(oa_core)
    assert sorted(got - before) == sorted(set(left) - held)
    assert set(got.values()) == {1} and not held & set(got), got
    assert set(held_lines(a, bid)) == held
    r2 = a.run("batch", "resume", bid, "--yes")
    assert r2.returncode == 0 and "nothing to do" in r2.stderr, r2.stderr
    assert sent(oa_core) == got


def test_a_profile_without_the_recheck_query_sends_nothing_and_loses_nothing(act, oa_core,
                                                                            tmp_path):
    """The store cannot be asked (here: a profile without [query recheck]): nothing of the
    part leaves, the run says why, every item stays for a resume."""
    for i in range(6):
        actlib.admin_sql(
            "INSERT INTO jobs (job_id, name, status, max_retries, retry_count, created_at,"
            " error) VALUES (%s, 'guard.job', 'failed', 3, 0, extract(epoch FROM now()) - %s,"
            " json_build_object('message', 'valve stuck ' || %s))",
            ("valve-%d" % i, i, i), **OA_DSN)
    src = open(os.path.join(actlib.ROOT, "profiles", "openagents.profile")).read()
    head, rest = src.split("[query recheck optional]\n", 1)
    prof = tmp_path / "norecheck.profile"
    prof.write_text(head + rest[rest.index("\n["):].lstrip("\n"))
    assert "recheck" not in prof.read_text()
    a = act("openagents", core=oa_core.url, page_size=50, profile=str(prof))
    p = a.run("retry", "--status", "failed", "--filter", "valve stuck", "--rate", "500", "--yes")
    assert p.returncode == 1, p.stdout + p.stderr
    assert "redrive: stopped: not checked against the store: profile openagents has no " \
           "[query recheck]: the batch cannot be checked against the store" \
           in p.stderr.splitlines(), p.stderr
    assert sent(oa_core) == {}
    [b] = batches(a)
    assert (b["state"], b["total"], b["done"], b["held"]) == ("open", 6, 0, 0), b


def test_alakai_superseded_and_succeeded_tasks_are_held_back(act, stack, tmp_path):
    import redis
    actlib.reload_fixture("alakai")
    r = redis.Redis.from_url(os.environ["RD_REDIS_URL"])
    tasks = ["gd-%02d" % i for i in range(16)]
    for i, t in enumerate(tasks):
        r.hset("alakai-executions:" + t, "1", json.dumps({
            "status": "failed", "attempt": 1, "errorCode": "E_INK",
            "errorMessage": "ink ran dry on tray %d" % i,
            "taskSnapshot": {"taskId": t, "type": "print"},
            "dispatchedAt": "2026-12-07T10:00:00.000Z", "resolvedAt": "2026-12-07T10:01:00.000Z"}))
    c = actlib.CoreServer("alakai", tmp_path)
    try:
        a = act("alakai", core=c.url)
        p = start_batch(a, "retry", "--status", "failed", "--filter", "ink ran dry", "--rate",
                        "2", "--concurrency", "1", "--yes")
        interrupt_after(p, 2)
        [b] = batches(a)
        bid = b["id"]
        assert b["total"] == 16, b
        left = not_sent(a, bid)
        assert len(left) >= 8, left
        before = sent(c)
        sup, done = left[0:3], left[3:5]
        for t in sup:       # someone else retried it: attempt 2 running
            r.hset("alakai-executions:" + t, "2", json.dumps({
                "status": "running", "attempt": 2, "dispatchedAt": "2026-12-07T11:00:00.000Z",
                "taskSnapshot": {"taskId": t, "type": "print"}}))
        for t in done:      # its attempt resolved as succeeded after all
            rec = json.loads(r.hget("alakai-executions:" + t, "1"))
            rec["status"] = "succeeded"
            r.hset("alakai-executions:" + t, "1", json.dumps(rec))
        res = a.run("batch", "resume", bid, "--rate", "500", "--yes")
        assert res.returncode == 1, res.stdout + res.stderr
        assert summary_line(bid, "3 superseded, 2 now succeeded") in res.stderr.splitlines(), \
            res.stderr
        held = set(sup + done)
        got = sent(c)
        assert sorted(got - before) == sorted(set(left) - held)
        assert set(got.values()) == {1} and not held & set(got), got
        assert held_lines(a, bid) == dict(
            [(t, "held back: no longer eligible: superseded by attempt 2") for t in sup] +
            [(t, "held back: no longer eligible: newest attempt is succeeded") for t in done])
        r2 = a.run("batch", "resume", bid, "--yes")
        assert r2.returncode == 0 and "nothing to do" in r2.stderr, r2.stderr
        assert sent(c) == got
    finally:
        c.stop()
        actlib.reload_fixture("alakai")


def test_batch_check_reads_the_store_a_query_a_page_of_500(act, core):
    """`redrive batch check ID ITEM...` (what the console runs a part at a time): 600 items
    judged in 2 queries, one JSON line for each item no longer eligible (those the core
    retried already have their successor), then the count; bad item numbers are refused."""
    ids, _ = insert_bulk("bounded boom", 600, exhausted_every=0)
    a = act("attune2", core=core.url, page_size=1000)
    p = start_batch(a, "retry", "--status", "failed", "--filter", "bounded boom", "--rate", "1",
                    "--concurrency", "1", "--yes")
    interrupt_after(p, 1)
    [b] = batches(a)
    bid = b["id"]
    items = show(a, bid)["items"]
    assert len(items) == 600
    retried = [i for i in items if i["state"] != "not_sent"]
    assert 1 <= len(retried) <= 3, retried
    done = [i for i in items if i["state"] == "not_sent"][100:107]
    actlib.admin_sql("UPDATE execution SET status = 'completed' WHERE id = ANY(%s::bigint[])",
                     ([int(i["id"]) for i in done],))
    r = a.run("batch", "check", bid, *[str(n) for n in range(600)])
    assert r.returncode == 0, r.stdout + r.stderr
    lines = [json.loads(l) for l in r.stdout.splitlines()]
    assert lines[-1] == {"checked": 600, "queries": 2}, lines[-1]
    assert sorted(lines[:-1], key=lambda x: x["item"]) == sorted(
        [{"item": i["item"], "why": "superseded by a later attempt"} for i in retried] +
        [{"item": i["item"], "why": "status completed (only failed executions retry)"}
         for i in done], key=lambda x: x["item"])
    for bad, say in ((["600"], "redrive: batch check: not an item of the batch (or twice): 600"),
                     (["1", "1"], "redrive: batch check: not an item of the batch (or twice): 1"),
                     (["x"], "redrive: batch check: not an item of the batch (or twice): x"),
                     (["-1"], "redrive: unknown argument '-1'"), ([], "usage: redrive batch list")):
        r = a.run("batch", "check", bid, *bad)
        assert r.returncode == 2 and r.stdout == "", (bad, r.stdout, r.stderr)
        assert r.stderr.splitlines()[0].startswith(say), (bad, r.stderr)


TK_DSN = dict(dsn_var="RD_PG_ADMIN_DSN_TASKER", search_path="tasker, public")


@pytest.fixture
def tasker_core(stack, tmp_path):
    actlib.reload_fixture("tasker")
    c = actlib.CoreServer("tasker", tmp_path)
    yield c
    c.stop()
    actlib.reload_fixture("tasker")


def tasker_sent(c):
    """The steps the core was asked to reset, by the step uuid ending each route."""
    from collections import Counter
    return Counter(x["route"].rsplit("/", 1)[1] for x in c.actions()
                   if "/workflow_steps/" in x["route"])


def test_tasker_steps_completed_or_out_of_budget_meanwhile_are_held_back(act, tasker_core):
    rows = actlib.admin_sql(
        "INSERT INTO workflow_steps (workflow_step_uuid, task_uuid, named_step_uuid, attempts,"
        " max_attempts, retryable, results, created_at) SELECT gen_random_uuid(), x.task_uuid,"
        " x.named_step_uuid, 1, 3, true, jsonb_build_object('error', jsonb_build_object("
        " 'message', 'bearing seized ' || g)), (now() AT TIME ZONE 'utc') - g * interval '1 s'"
        " FROM generate_series(1, 12) g, (SELECT * FROM workflow_steps ORDER BY"
        " workflow_step_uuid LIMIT 1) x RETURNING workflow_step_uuid::text", **TK_DSN)
    steps = [r[0] for r in rows]
    actlib.admin_sql(
        "INSERT INTO workflow_step_transitions (workflow_step_transition_uuid,"
        " workflow_step_uuid, to_state, from_state, sort_key, most_recent) SELECT"
        " gen_random_uuid(), u::uuid, 'error', 'in_progress', 1, true FROM unnest(%s) u",
        (steps,), **TK_DSN)
    a = act("tasker", core=tasker_core.url, page_size=50)
    p = start_batch(a, "retry", "--status", "error", "--filter", "bearing seized", "--rate",
                    "2", "--concurrency", "1", "--yes")
    interrupt_after(p, 2)
    [b] = batches(a)
    bid = b["id"]
    assert b["total"] == 12, b
    left = not_sent(a, bid)
    assert len(left) >= 6 and set(left) <= set(steps), left
    before = tasker_sent(tasker_core)
    done, spent = left[0:3], left[3:4]
    # completed by the orchestrator meanwhile: a new most recent transition
    actlib.admin_sql("UPDATE workflow_step_transitions SET most_recent = false"
                     " WHERE workflow_step_uuid = ANY(%s::uuid[])", (done,), **TK_DSN)
    actlib.admin_sql(
        "INSERT INTO workflow_step_transitions (workflow_step_transition_uuid,"
        " workflow_step_uuid, to_state, from_state, sort_key, most_recent) SELECT"
        " gen_random_uuid(), u::uuid, 'complete', 'error', 2, true FROM unnest(%s) u",
        (done,), **TK_DSN)
    actlib.admin_sql("UPDATE workflow_steps SET attempts = 3 WHERE workflow_step_uuid ="
                     " ANY(%s::uuid[])", (spent,), **TK_DSN)
    r = a.run("batch", "resume", bid, "--rate", "500", "--yes")
    assert r.returncode == 1, r.stdout + r.stderr
    assert summary_line(bid, "3 complete, 1 budget exhausted") in r.stderr.splitlines(), r.stderr
    held = set(done + spent)
    got = tasker_sent(tasker_core)
    assert sorted(got - before) == sorted(set(left) - held), (got, before)
    assert set(got.values()) == {1} and not held & set(got), got
    task = {i["id"]: i["parent"] for i in show(a, bid)["items"]}
    assert held_lines(a, bid) == dict(
        [("%s/%s" % (task[s], s), "held back: no longer eligible: complete") for s in done] +
        [("%s/%s" % (task[s], s), "held back: no longer eligible: budget exhausted (3/3)")
         for s in spent])
    r2 = a.run("batch", "resume", bid, "--yes")
    assert r2.returncode == 0 and "nothing to do" in r2.stderr, r2.stderr
    assert tasker_sent(tasker_core) == got


def test_attune_era1_check_sees_the_successors_the_core_wrote(act, stack, tmp_path):
    """Era 1 links a retry by config->>'retry_of': once the core has retried the batch's
    items, each one is superseded by the attempt it made, read in one query."""
    actlib.reload_fixture("attune1")
    c = actlib.CoreServer("attune1", tmp_path)
    try:
        a = act("attune1", core=c.url)
        p = a.run("retry", "--status", "failed", "--rate", "200", "--yes")
        [b] = batches(a)
        ok = [i for i in show(a, b["id"])["items"] if i["state"] == "ok"]
        assert len(ok) >= 2 and len(ok) == len(sent(c)), (p.stderr, ok)
        r = a.run("batch", "check", b["id"], *[str(i["item"]) for i in ok])
        assert r.returncode == 0, r.stdout + r.stderr
        lines = [json.loads(l) for l in r.stdout.splitlines()]
        assert lines == [{"item": i["item"], "why": "superseded by a later attempt"}
                         for i in ok] + [{"checked": len(ok), "queries": 1}], lines
    finally:
        c.stop()
        actlib.reload_fixture("attune1")
