"""Dead letters as a set (issue 24, "dead letters at scale"): `redrive retry --dlq` retries
the executions of a store's DLQ entries by reason, by queue or by text across every page of
the DLQ (not the page loaded), guarded as every retry path is, frozen into a resumable batch;
`redrive resolve --dlq` / `redrive resolve ENTRY` resolve Tasker's tasks_dlq entries through
the core's dlq_update route. Real store (tasker), a private reference core server, the
journal in a private state dir."""
import json
import os
from collections import Counter

import psycopg2
import pytest

import actlib

N = 130                 # entries: three pages of the DLQ (50 a page)
ELIGIBLE_EVERY = 8      # the step of every 8th has attempts 1 of 3; the others 3 of 3: ineligible
# (few to send: the reference core takes ~0.4 s a Tasker step on a loaded machine)


def uid(kind, i):
    return "00000000-0000-4000-8000-%s%011d" % (kind, i)


def fill():
    """N tasks, each with one step in error and one pending DLQ entry, entry i is i seconds
    old; reason worker_unavailable when i is even (65: two pages), staleness_timeout when odd
    and a multiple of 13 (5), else max_retries_exceeded; entry 7 alone names needle-7 in its
    metadata. Returns {i: (task, step, eligible)}."""
    with psycopg2.connect(os.environ["RD_PG_ADMIN_DSN_TASKER"]) as c, c.cursor() as cur:
        cur.execute("SET search_path = tasker")
        cur.execute("SELECT named_task_uuid FROM named_tasks LIMIT 1")
        nt = cur.fetchone()[0]
        cur.execute("SELECT named_step_uuid FROM named_steps LIMIT 1")
        ns = cur.fetchone()[0]
        cur.execute("""
            INSERT INTO tasks (task_uuid, named_task_uuid, identity_hash, correlation_id)
            SELECT ('00000000-0000-4000-8000-9' || lpad(i::text, 11, '0'))::uuid, %s, 'dlqset-' || i,
                   gen_random_uuid() FROM generate_series(1, %s) i""", (nt, N))
        cur.execute("""
            INSERT INTO workflow_steps (workflow_step_uuid, task_uuid, named_step_uuid, retryable,
                                        max_attempts, attempts, results, created_at, updated_at)
            SELECT ('00000000-0000-4000-8000-7' || lpad(i::text, 11, '0'))::uuid,
                   ('00000000-0000-4000-8000-9' || lpad(i::text, 11, '0'))::uuid, %s, true, 3,
                   CASE WHEN i %% %s = 0 THEN 1 ELSE 3 END,
                   jsonb_build_object('error', jsonb_build_object('message', 'dlq set boom',
                                                                  'error_type', 'RetryableError')),
                   (now() AT TIME ZONE 'utc') - make_interval(secs => i + 5),
                   (now() AT TIME ZONE 'utc') - make_interval(secs => i + 5)
              FROM generate_series(1, %s) i""", (ns, ELIGIBLE_EVERY, N))
        cur.execute("""
            INSERT INTO workflow_step_transitions (workflow_step_transition_uuid, workflow_step_uuid,
                                                   to_state, from_state, sort_key, most_recent)
            SELECT ('00000000-0000-4000-8000-6' || lpad(i::text, 11, '0'))::uuid,
                   ('00000000-0000-4000-8000-7' || lpad(i::text, 11, '0'))::uuid, 'error', 'in_progress', 0, true
              FROM generate_series(1, %s) i""", (N, ))
        cur.execute("""
            INSERT INTO tasks_dlq (dlq_entry_uuid, task_uuid, original_state, dlq_reason, dlq_timestamp,
                                   metadata)
            SELECT ('00000000-0000-4000-8000-8' || lpad(i::text, 11, '0'))::uuid,
                   ('00000000-0000-4000-8000-9' || lpad(i::text, 11, '0'))::uuid, 'error',
                   (CASE WHEN i %% 2 = 0 THEN 'worker_unavailable' WHEN i %% 13 = 0 THEN 'staleness_timeout'
                         ELSE 'max_retries_exceeded' END)::dlq_reason,
                   (now() AT TIME ZONE 'utc') - make_interval(secs => i),
                   jsonb_build_object('note', CASE WHEN i = 7 THEN 'needle-7' ELSE 'hay' END)
              FROM generate_series(1, %s) i""", (N, ))
    return {i: (uid("9", i), uid("7", i), i % ELIGIBLE_EVERY == 0) for i in range(1, N + 1)}


def dlq_states():
    with psycopg2.connect(os.environ["RD_PG_DSN_TASKER"]) as c, c.cursor() as cur:
        cur.execute("SELECT dlq_entry_uuid::text, resolution_status::text, resolved_by FROM tasker.tasks_dlq")
        return {r[0]: (r[1], r[2]) for r in cur.fetchall()}


@pytest.fixture(scope="module")
def tasker_fixture(stack):
    """The fixture loaded once: each test puts back what it changed (reset), quicker than a
    reload per test."""
    actlib.reload_fixture("tasker")
    with psycopg2.connect(os.environ["RD_PG_ADMIN_DSN_TASKER"]) as c, c.cursor() as cur:
        cur.execute("SELECT dlq_entry_uuid, resolution_status, resolution_timestamp, resolution_notes,"
                    " resolved_by, updated_at FROM tasker.tasks_dlq")
        dlq = cur.fetchall()
    yield dlq
    actlib.reload_fixture("tasker")


def reset(dlq):
    """The bulk rows gone (their steps and transitions with their tasks), the fixture's DLQ
    entries as loaded."""
    with psycopg2.connect(os.environ["RD_PG_ADMIN_DSN_TASKER"]) as c, c.cursor() as cur:
        cur.execute("SET search_path = tasker")
        cur.execute("DELETE FROM tasks_dlq WHERE dlq_entry_uuid::text LIKE '00000000-0000-4000-8000-8%'")
        cur.execute("DELETE FROM tasks WHERE task_uuid::text LIKE '00000000-0000-4000-8000-9%'")
        for row in dlq:
            cur.execute("UPDATE tasks_dlq SET resolution_status = %s, resolution_timestamp = %s,"
                        " resolution_notes = %s, resolved_by = %s, updated_at = %s WHERE dlq_entry_uuid = %s",
                        row[1:] + row[:1])


@pytest.fixture
def core(tasker_fixture, tmp_path):
    reset(tasker_fixture)
    c = actlib.CoreServer("tasker", tmp_path)
    yield c
    c.stop()
    reset(tasker_fixture)


def sent(core, action):
    return Counter(a["target"] for a in core.actions() if a["action"] == action and a["status"] < 300)


def batches(a):
    p = a.run("batch", "list", "--json")
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_retry_by_reason_covers_every_page_guarded_once_each(act, core):
    rows = fill()
    a = act("tasker", core=core.url)
    p = a.run("retry", "--dlq", "--dlq-reason", "worker_unavailable", "--rate", "1000", "--yes")
    ours = [i for i in rows if i % 2 == 0]                        # 65 entries, two pages
    good = [i for i in ours if rows[i][2]]                        # 16 eligible
    err = p.stderr.splitlines()
    assert p.returncode == 1, p.stdout + p.stderr                 # ineligible held back: not all sent
    # + the fixture's worker_unavailable entry, whose task has no step in error
    assert ("redrive: selected %d DLQ entries' executions (dlq reason=worker_unavailable) from 2 pages "
            "of the store's DLQ" % (len(ours) + 1)) in err, p.stderr
    assert "redrive: breakdown: %d eligible, %d ineligible (not sent), 0 loop retries" % (
        len(good), len(ours) + 1 - len(good)) in err, p.stderr
    assert [l for l in err if l.startswith("redrive: held back: ")] == [
        "redrive: held back: %d budget exhausted, 1 names no failed step to retry (--verbose names each)" % (len(ours) - len(good))], p.stderr
    got = sent(core, "step")
    assert sorted(got) == sorted(rows[i][1] for i in good), "the eligible steps of the reason, every page"
    assert set(got.values()) == {1}, "each sent once"
    [b] = batches(a)
    assert (b["system"], b["action"], b["total"], b["ok"], b["state"]) == ("tasker", "retry", len(good),
                                                                           len(good), "done"), b
    assert b["selection"] == "dlq reason=worker_unavailable"
    targets = sorted(j["targets"][0] for j in a.journal() if j.get("batch") == b["id"])
    assert targets == sorted("%s/%s" % (rows[i][0], rows[i][1]) for i in good)


def test_queue_is_exact(act, core):
    fill()
    a = act("tasker", core=core.url)
    p = a.run("retry", "--dlq", "--dlq-queue", "tasks_dl", "--yes")
    assert p.returncode == 1, p.stdout + p.stderr
    assert ("redrive: selected 0 DLQ entries' executions (dlq queue=tasks_dl) from 3 pages of the store's DLQ"
            in p.stderr.splitlines()), p.stderr
    assert sent(core, "step") == Counter()
    assert batches(a) == []


def test_resolve_by_text_changes_the_entries_through_the_core(act, core):
    rows = fill()
    before = dlq_states()
    a = act("tasker", core=core.url)
    p = a.run("resolve", "--dlq", "--filter", "needle-7", "--reason", "replayed by hand", "--yes")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "redrive: selected 1 DLQ entry (dlq text=needle-7) from 1 page of the store's DLQ" in p.stderr.splitlines()
    assert sent(core, "dlq_update") == Counter({uid("8", 7): 1})
    after = dlq_states()
    assert after[uid("8", 7)][0] == "manually_resolved"
    assert after[uid("8", 7)][1], "resolved_by names the operator"
    assert {k: v for k, v in after.items() if k != uid("8", 7)} == \
        {k: v for k, v in before.items() if k != uid("8", 7)}, "only the entry selected changed"


def test_resolve_by_reason(act, core):
    rows = fill()
    before = dlq_states()
    a = act("tasker", core=core.url)
    p = a.run("resolve", "--dlq", "--dlq-reason", "staleness_timeout", "--rate", "1000", "--yes")
    assert p.returncode == 0, p.stdout + p.stderr
    ours = {uid("8", i) for i in rows if i % 2 and i % 13 == 0}
    ours.add("00000000-0000-4000-8000-300000000004")              # the fixture's staleness_timeout entry
    assert sent(core, "dlq_update") == Counter({e: 1 for e in ours})
    after = dlq_states()
    assert {e for e in after if after[e] != before[e]} == ours, "exactly the entries of the reason changed"
    assert all(after[e][0] == "manually_resolved" for e in ours)


def test_resolve_one_entry_and_refusals(act, core):
    fill()
    a = act("tasker", core=core.url)
    e = uid("8", 12)
    p = a.run("resolve", e, "--yes")
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.startswith("%s: ok: resolved" % e), p.stdout
    assert dlq_states()[e][0] == "manually_resolved"
    gone = uid("8", 999)
    p = a.run("resolve", gone, "--yes")                            # the core's 404
    assert p.returncode == 1, p.stdout + p.stderr
    assert p.stdout.startswith("%s: not_found: no such DLQ entry (HTTP 404" % gone), p.stdout
    p = a.run("resolve", "--dlq", "--status", "failed", "--yes")
    assert p.returncode == 2 and "unknown argument '--status'" in p.stderr, p.stderr
    p = a.run("retry", "--dlq-reason", "worker_unavailable", "--yes")
    assert p.returncode == 2 and "--dlq-reason and --dlq-queue go with --dlq" in p.stderr, p.stderr
    o = act("openagents", core=core.url)                           # no [action resolve]
    p = o.run("resolve", "--dlq", "--yes")
    assert p.returncode == 1 and "this system's profile has no resolve action" in p.stderr, p.stderr


def test_resolve_set_kill9_then_resume_once_each(act, core):
    """The set is a batch record like every store-wide action: a kill -9 mid-run, then
    `redrive batch resume` resolves the rest, no entry twice (the core's request log)."""
    import signal
    import subprocess
    rows = fill()
    ours = {uid("8", i) for i in rows if i % 2 and i % 13 == 0} | {"00000000-0000-4000-8000-300000000004"}
    a = act("tasker", core=core.url)
    env = dict(os.environ, XDG_STATE_HOME=os.path.join(str(a.tmpdir), "state"), TZ="UTC", LANG="C.UTF-8")
    p = subprocess.Popen([actlib.redrive_bin(), "--config", a.config, "resolve", "--dlq", "--dlq-reason",
                          "staleness_timeout", "--rate", "2", "--yes"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env, stdin=subprocess.DEVNULL)
    for _ in range(2):
        assert p.stdout.readline(), p.stderr.read()
    p.send_signal(signal.SIGKILL)
    p.wait(10)
    [b] = batches(a)
    assert b["action"] == "resolve" and b["state"] == "open" and b["total"] == len(ours), b
    r = a.run("batch", "resume", b["id"], "--rate", "1000", "--yes")
    assert r.returncode == 0, r.stdout + r.stderr
    got = sent(core, "dlq_update")
    assert set(got.values()) == {1}, got
    assert set(got) <= ours and len(ours) - len(got) <= b["unknown"], (got, b)
    st = dlq_states()
    assert all(st[e][0] == "manually_resolved" for e in got)


def test_select_only_reports_and_stages_sending_nothing(act, core):
    """--select-only with --dlq (the console's DLQ sets, ui/setretry.c): the selection as
    JSON lines on stdout, the shape of `retry --status --select-only`; the record staged,
    never a batch until the console adopts it; nothing sent."""
    rows = fill()
    a = act("tasker", core=core.url)
    p = a.run("retry", "--dlq", "--dlq-reason", "worker_unavailable", "--select-only")
    assert p.returncode == 0, p.stdout + p.stderr
    lines = [json.loads(x) for x in p.stdout.splitlines()]
    assert list(lines[0]) == ["started"] and len(lines[0]["started"]) == 16, lines[0]
    assert [x for x in lines if "read" in x and "batch" not in x] == [
        {"read": 50, "selected": 50, "pages": 1}, {"read": 66, "selected": 66, "pages": 2}]
    held = [x["held"] for x in lines if "held" in x]
    assert len(held) == 10 and held[0] == "%s: not sent: budget exhausted (3/3)" % rows[2][1], held
    end = lines[-1]
    good = len([i for i in rows if i % 2 == 0 and rows[i][2]])
    assert end == {"batch": lines[0]["started"], "selection": "dlq reason=worker_unavailable", "pages": 2,
                   "read": 66, "total": 66, "eligible": good, "ineligible": 66 - good, "loops": 0,
                   "send": good, "held_more": 66 - good - 10, "past": False, "left_out": 0,
                   "concurrency": 8, "rate": 5}, end
    p = a.run("resolve", "--dlq", "--dlq-reason", "staleness_timeout", "--select-only")
    assert p.returncode == 0, p.stdout + p.stderr
    end = json.loads(p.stdout.splitlines()[-1])
    assert (end["selection"], end["total"], end["send"]) == ("dlq reason=staleness_timeout", 6, 6), end
    assert sent(core, "step") == Counter() and sent(core, "dlq_update") == Counter()
    assert batches(a) == [], "staged, not a batch"
    o = act("openagents", core=core.url)                           # refused: a JSON line too
    p = o.run("resolve", "--dlq", "--select-only")
    assert p.returncode == 1, p.stdout + p.stderr
    assert json.loads(p.stdout.splitlines()[-1]) == {
        "error": "this system's profile has no resolve action ([action resolve]: the core's DLQ update route)"}
