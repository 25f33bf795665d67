"""Error groups across the store, in a time window, on the systems other than Attune (issue
24): Tasker and OpenAgents through their profiles' `[query groups]` (on their own schemas),
Alakai from the swept Redis index in C. Per system: failures in the window (hostile texts
among them), failures before it, work that did not fail; the groups of
`redrive snapshot --view groups --since ... --json` are the whole expected list
(fingerprint, count, eligible, first/last seen), `groups_scope` is `store` with the window
and the bound, and each group is what the executions list's own fingerprints (the C one,
row by row) and eligibility give for the same failures. A bound below the failures of the
window (REDRIVE_GROUPS_CAP) reads the newest ones and says capped."""
import json
import os
import time

import pytest

import stack_fixtures  # noqa: F401  (the stack's path and environment)
import stacklib
from snaphelp import need_env, snapshot, write_config
from test_counts_scale import _db

NOW = time.time()   # set again when the module's tests start (below)
CONN = "connection refused to host 10.0.%d.%d:5432 (job %d)"
CONN_FP = "connection refused to host <ip>:<n> (job <n>)"
DENIED = "Permission denied: 'deploy' key"
DENIED_FP = "Permission denied: '<s>' key"
HOSTILE = "\x1b[31mboom\x1b[0m\x07 for 3f2a9c1e-1b2c-4d5e-8f90-123456789abc at 0xdeadbeef \u202e"

# (error, seconds before NOW it failed, eligible by the system's rule, name); the first
# ones are the newest (the capped case reads them)
IN_WINDOW = [
    (CONN % (1, 2, 17), 30, True, "charge"),
    (HOSTILE, 40, False, "render"),
    (CONN % (3, 4, 18), 50, False, "charge"),
    (DENIED, 120, True, "deploy"),
    (CONN % (5, 6, 19), 600, True, "notify"),
    (DENIED, 1200, False, "deploy"),
    (CONN % (7, 8, 20), 3000, True, "charge"),
]
OLD = [(CONN % (9, 9, 21), 3 * 3600, True, "charge"), ("Image pull backoff", 3 * 3600 + 5, False, "deploy")]


@pytest.fixture(scope="module", autouse=True)
def now_at_start():
    """NOW is when the module's tests start, not when pytest imported it: in a whole suite
    that is many minutes earlier, and the failures NOW - 3000 s would fall out of the hour."""
    global NOW
    NOW = time.time()


def expected(rows):
    """The groups the rows make: {fingerprint-or-error: (count, eligible, first, last)}."""
    out = {}
    for err, ago, elig, _ in rows:
        key = CONN_FP if err.startswith("connection refused") else DENIED_FP if err == DENIED else err
        n, e, first, last = out.get(key, (0, 0, None, None))
        at = NOW - ago
        out[key] = (n + 1, e + elig, at if first is None else min(first, at), at if last is None else max(last, at))
    return out


def groups_doc(cfg, name, *args, env=None):
    old = dict(os.environ)
    os.environ.update(env or {})
    try:
        s = snapshot(cfg, name, "--json", "--view", "groups", *args)
    finally:
        os.environ.clear()
        os.environ.update(old)
    assert s.rc == 0, s.err
    return s.json


def check(doc, rows, window, window_s, cap=200000, capped=False):
    assert doc["groups_scope"] == "store", doc.get("groups_scope")
    assert (doc["window"], doc["window_s"], doc["groups_cap"], doc["groups_capped"]) == (window, window_s, cap, capped)
    assert doc["groups_failures"] == len(rows)
    want = expected(rows)
    got = {g["fingerprint"]: (g["count"], g["retry_eligible"], g["first_seen"], g["last_seen"]) for g in doc["groups"]}
    hostile = [fp for fp in got if fp not in (CONN_FP, DENIED_FP, "Image pull backoff")]
    if any(r[0] == HOSTILE for r in rows):   # its fingerprint is the C one (checked below)
        assert len(hostile) == 1, got
        want[hostile[0]] = want.pop(HOSTILE)
    assert set(got) == set(want), (got, want)
    for fp, (n, e, first, last) in want.items():
        g = got[fp]
        assert (g[0], g[1]) == (n, e), (fp, g, want[fp])
        assert abs(g[2] - first) < 0.01 and abs(g[3] - last) < 0.01, (fp, g, want[fp])
    counts = [g["count"] for g in doc["groups"]]
    assert counts == sorted(counts, reverse=True)


def c_fingerprints(cfg, name, ids):
    """The executions list's fingerprint and eligibility of each id (the C code, row by row)."""
    s = snapshot(cfg, name, "--json")
    assert s.rc == 0, s.err
    ex = {e["id"]: e for e in s.json["executions"]}
    assert set(ids) <= set(ex), set(ids) - set(ex)
    return {i: (ex[i]["fingerprint"], ex[i]["retry_eligible"]) for i in ids}


def check_against_list(doc, cfg, name, ids):
    """Each group is what the list's rows give for the failures of the window."""
    per = c_fingerprints(cfg, name, ids)
    want = {}
    for fp, elig in per.values():
        n, e = want.get(fp, (0, 0))
        want[fp] = (n + 1, e + bool(elig))
    assert {g["fingerprint"]: (g["count"], g["retry_eligible"]) for g in doc["groups"]} == want


def run_system(tmp_path, cfg, name, ids):
    doc = groups_doc(cfg, name)
    check(doc, IN_WINDOW, "1h", 3600)
    check_against_list(doc, cfg, name, ids)
    assert {g["fingerprint"] for g in doc["groups"]} >= {CONN_FP, DENIED_FP}
    doc = groups_doc(cfg, name, "--since", "6h")
    check(doc, IN_WINDOW + OLD, "6h", 21600)
    doc = groups_doc(cfg, name, env={"REDRIVE_GROUPS_CAP": "3"})
    check(doc, IN_WINDOW[:3], "1h", 3600, cap=3, capped=True)


# ---- Tasker ---------------------------------------------------------------------------

def _u(kind, i):
    return "%08x-0000-4000-8000-%012x" % (kind, i)


def _fill_tasker(c):
    c.execute("INSERT INTO named_tasks (named_task_uuid, name) VALUES (%s, 'order')", (_u(1, 1),))
    c.execute("INSERT INTO tasks (task_uuid, named_task_uuid, identity_hash, correlation_id) VALUES (%s, %s, 'h', %s)",
              (_u(2, 1), _u(1, 1), _u(9, 1)))
    names = {}
    for i, (_, _, _, nm) in enumerate(IN_WINDOW + OLD):
        if nm not in names:
            names[nm] = _u(3, len(names) + 1)
            c.execute("INSERT INTO named_steps (named_step_uuid, name) VALUES (%s, %s)", (names[nm], nm))

    def step(i, nm, attempts, max_attempts, retryable, results, trans):
        c.execute("INSERT INTO workflow_steps (workflow_step_uuid, task_uuid, named_step_uuid, retryable,"
                  " max_attempts, attempts, results, created_at) VALUES (%s, %s, %s, %s, %s, %s, %s,"
                  " to_timestamp(%s) AT TIME ZONE 'UTC')",
                  (_u(4, i), _u(2, 1), names[nm], retryable, max_attempts, attempts, results, NOW - 4 * 3600))
        for k, (state, at, meta) in enumerate(trans):
            c.execute("INSERT INTO workflow_step_transitions (workflow_step_transition_uuid, workflow_step_uuid,"
                      " to_state, metadata, sort_key, most_recent, created_at, updated_at)"
                      " VALUES (%s, %s, %s, %s, %s, %s, to_timestamp(%s) AT TIME ZONE 'UTC',"
                      " to_timestamp(%s) AT TIME ZONE 'UTC')",
                      (_u(5, i * 10 + k), _u(4, i), state, json.dumps(meta), k + 1, k == len(trans) - 1, at, at))

    for i, (err, ago, elig, nm) in enumerate(IN_WINDOW + OLD):
        # eligible: attempt 1 of 3; not: the budget spent, or not retryable
        attempts, retryable = (1, True) if elig else ((3, True) if i % 2 else (1, False))
        if i == 1:   # the error only in the transition's event (the executions list's error_json)
            results, meta = None, {"event": json.dumps({"type": "Fail", "data": err})}
        else:
            results, meta = json.dumps({"error": {"message": err, "error_type": "RetryableError"}}), {}
        step(i, nm, attempts, 3, retryable, results, [("in_progress", NOW - ago - 5, {}), ("error", NOW - ago, meta)])
    base = len(IN_WINDOW + OLD)
    # failed before, complete now; waiting for retry (not a failure); never failed
    step(base, "charge", 1, 3, True, json.dumps({"error": {"message": "old failure"}}),
         [("error", NOW - 100, {}), ("complete", NOW - 50, {})])
    step(base + 1, "charge", 1, 3, True, json.dumps({"error": {"message": "waiting"}}),
         [("waiting_for_retry", NOW - 60, {})])
    step(base + 2, "charge", 1, 3, True, None, [("complete", NOW - 70, {})])


@pytest.fixture(scope="module")
def tasker_db():
    need_env("RD_PG_DSN_ATTUNE2")
    yield from _db("groups_tasker", "tasker.sql", "tasker", _fill_tasker)


def test_tasker_groups_the_store(tasker_db, tmp_path):
    cfg = write_config(tmp_path, {"t": {"profile": "tasker", "store": tasker_db}})
    run_system(tmp_path, cfg, "t", [_u(4, i) for i in range(len(IN_WINDOW))])


# ---- OpenAgents ---------------------------------------------------------------------------

def _fill_openagents(c):
    rows = [(err, ago, elig, nm, "failed" if i % 2 else "FAILED") for i, (err, ago, elig, nm) in enumerate(IN_WINDOW + OLD)]
    rows += [("not a failure", 20, True, "charge", "completed"), ("cancelled", 25, False, "charge", "CANCELLED")]
    for i, (err, ago, elig, nm, st) in enumerate(rows):
        # eligible: a retry of 3 left; not: the budget spent, or none
        rc, mr = (0, 3) if elig else ((3, 3) if i % 2 else (0, 0))
        c.execute("INSERT INTO jobs (job_id, name, status, created_at, updated_at, completed_at, error,"
                  " retry_count, max_retries) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                  ("job-%02d" % i, nm, st, NOW - ago - 1, NOW - ago, NOW - ago,
                   json.dumps({"type": "RuntimeError", "message": err}), rc, mr))


@pytest.fixture(scope="module")
def openagents_db():
    need_env("RD_PG_DSN_ATTUNE2")
    yield from _db("groups_openagents", "openagents.sql", "public", _fill_openagents)


def test_openagents_groups_the_store(openagents_db, tmp_path):
    cfg = write_config(tmp_path, {"o": {"profile": "openagents", "store": openagents_db}})
    run_system(tmp_path, cfg, "o", ["job-%02d" % i for i in range(len(IN_WINDOW))])


# ---- Alakai (Redis) ------------------------------------------------------------------------

PREFIX = "groups-systems"


def _iso(t):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + ".%03dZ" % int(round((t % 1) * 1000) % 1000)


@pytest.fixture(scope="module")
def alakai_store():
    need_env("RD_REDIS_URL", "RD_REDIS_PORT")
    r = stacklib.redis_client(os.environ)
    for k in r.scan_iter(PREFIX + ":*"):
        r.delete(k)
    rows = [(err, ago, elig, nm, "failed") for err, ago, elig, nm in IN_WINDOW + OLD]
    rows[1] = rows[1][:4] + ("lost",)                       # lost is a failure (never eligible)
    rows += [("fine", 20, False, "charge", "succeeded"), (None, 15, False, "charge", "running")]
    for i, (err, ago, elig, nm, st) in enumerate(rows):
        attempt = 1 if elig or st != "failed" else 2          # MAX_RETRIES 1: attempt 2 is exhausted
        at = float(int(NOW - ago))                            # resolvedAt: whole seconds in the index
        rec = {"status": st, "attempt": attempt, "dispatchedAt": _iso(at - 30),
               "taskSnapshot": {"taskId": "t%02d" % i, "type": nm}}
        if st != "running":
            rec["resolvedAt"] = _iso(at)
        if err:
            rec.update(errorCode="E", errorMessage=err)
        fields = {str(a): json.dumps(dict(rec, attempt=a, status="failed" if a < attempt else st))
                  for a in range(1, attempt + 1)}
        r.hset("%s:t%02d" % (PREFIX, i), mapping=fields)
    yield
    for k in r.scan_iter(PREFIX + ":*"):
        r.delete(k)


def test_alakai_groups_the_swept_index(alakai_store, tmp_path):
    global NOW
    cfg = write_config(tmp_path, {"a": {"profile": "alakai", "store": os.environ["RD_REDIS_URL"],
                                        "core": "http://127.0.0.1:9", "auth": "none", "max_retries": "1",
                                        "prefix": PREFIX}})
    real = NOW
    NOW = float(int(real))       # the index keeps whole seconds: the expected times too
    try:
        run_system(tmp_path, cfg, "a", ["t%02d" % i for i in range(len(IN_WINDOW))])
    finally:
        NOW = real


# ---- Alakai while the first sweep runs: the groups of the tasks read so far, said partial -----

from test_redis_sweep_budget import config as budget_config, env_of, store  # noqa: E402,F401


def test_alakai_groups_partial_while_the_first_sweep_runs(store, tmp_path):
    """A sweep held to 1 % of a Redis core over 30,000 tasks: the groups view (`7`) shows the
    store's groups of the tasks read so far and says they are partial."""
    import re
    import pexpect
    import pyte
    from snaphelp import rd_bin
    env = dict(env_of(tmp_path), TERM="xterm-256color", LANG="C.UTF-8", LC_ALL="C.UTF-8",
               XDG_STATE_HOME=str(tmp_path / "state"))
    env.pop("RD_REDIS_DEBUG")
    screen = pyte.Screen(220, 30)
    stream = pyte.ByteStream(screen)
    child = pexpect.spawn(rd_bin(), ["--config", budget_config(tmp_path, "1%")], env=env,
                          dimensions=(30, 220), timeout=10)
    title = re.compile(r"Error groups  last 1h: 1 group of ([0-9,]+) failures in the store  computed \S+ ago"
                       r"  partial: reading tasks: [0-9,]+ of ~[0-9,]+")
    try:
        end, text, sent = time.time() + 12, "", False
        while time.time() < end:
            try:
                stream.feed(child.read_nonblocking(65536, timeout=0.1))
            except pexpect.TIMEOUT:
                pass
            text = "\n".join(screen.display)
            if not sent and "reading tasks" in text:
                child.send("7")
                sent = True
            if title.search(text) and "Upstream returned <n> (transient)" in text:
                break
        m = title.search(text)
        assert m and int(m.group(1).replace(",", "")) > 0, text
        assert "Upstream returned <n> (transient)" in text, text
    finally:
        child.terminate(force=True)


# ---- the cost gate: the groups queries read bounded rows ------------------------------------

N_FAIL, CAP = 5000, 1000


def plan_scans(dsn, profile, schema, relation):
    """EXPLAIN ANALYZE of the profile's groups query over the last hour at a bound of CAP:
    the scans of `relation` (not in a subplan) and the plan's buffers."""
    import psycopg2
    import sys
    from snaphelp import ROOT
    sys.path.insert(0, os.path.join(ROOT, "tests", "bench"))
    import benchlib as B
    conn = psycopg2.connect(dsn)
    cur = conn.cursor()
    cur.execute("SET search_path = %s, public" % schema)
    cur.execute("EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, FORMAT JSON) "
                + B.inline_params(B.profile_queries(profile)["groups"], ["3600", str(CAP)]))
    doc = cur.fetchone()[0]
    doc = json.loads(doc) if isinstance(doc, str) else doc
    conn.close()
    nodes = []

    def walk(p):
        nodes.append(p)
        for c in p.get("Plans", []):
            walk(c)
    walk(doc[0]["Plan"])
    return [n for n in nodes if n.get("Relation Name") == relation and "Scan" in n["Node Type"]
            and n.get("Parent Relationship") != "SubPlan"]


def _fill_oa_cost(c):
    c.execute("INSERT INTO jobs (job_id, name, status, created_at, error)"
              " SELECT 'ok-' || g, 'bulk', 'completed', extract(epoch FROM now()) - g, NULL"
              " FROM generate_series(1, 10000) g")
    c.execute("INSERT INTO jobs (job_id, name, status, created_at, completed_at, error, max_retries)"
              " SELECT 'f-' || g, 'bulk', CASE WHEN g %% 2 = 0 THEN 'failed' ELSE 'FAILED' END,"
              " extract(epoch FROM now()) - g * (3500.0 / %s), extract(epoch FROM now()) - g * (3500.0 / %s),"
              " json_build_object('message', 'timeout after ' || g || 'ms'), 3"
              " FROM generate_series(1, %s) g", (N_FAIL, N_FAIL, N_FAIL))


@pytest.fixture(scope="module")
def oa_cost_db():
    need_env("RD_PG_DSN_ATTUNE2")
    yield from _db("groups_oa_cost", "openagents.sql", "public", _fill_oa_cost)


def test_openagents_groups_query_reads_bounded_rows(oa_cost_db, tmp_path):
    """The failed jobs' partial index, its range of the window only (the planner has no
    statistics for lower(status): it reads the window's failures, then keeps the newest
    CAP), never the table."""
    scans = plan_scans(oa_cost_db, "openagents", "public", "jobs")
    assert scans and all(n["Node Type"] != "Seq Scan" for n in scans), [n["Node Type"] for n in scans]
    for n in scans:
        assert n["Actual Rows"] * n.get("Actual Loops", 1) <= N_FAIL, n
    cfg = write_config(tmp_path, {"o": {"profile": "openagents", "store": oa_cost_db}})
    doc = groups_doc(cfg, "o", env={"REDRIVE_GROUPS_CAP": str(CAP)})
    assert (doc["groups_capped"], doc["groups_failures"]) == (True, CAP)
    assert [(g["fingerprint"], g["count"], g["retry_eligible"]) for g in doc["groups"]] == \
        [("timeout after <n>ms", CAP, CAP)]


def _fill_tasker_cost(c):
    _fill_tasker_base(c)
    c.execute("INSERT INTO workflow_steps (workflow_step_uuid, task_uuid, named_step_uuid, attempts, results)"
              " SELECT md5('s' || g)::uuid, %s, %s, 1,"
              " CASE WHEN g <= %s THEN jsonb_build_object('error', jsonb_build_object('message',"
              " 'timeout after ' || g || 'ms')) END"
              " FROM generate_series(1, 10000) g", (_u(2, 1), _u(3, 1), N_FAIL))
    c.execute("INSERT INTO workflow_step_transitions (workflow_step_transition_uuid, workflow_step_uuid,"
              " to_state, sort_key, most_recent, created_at, updated_at)"
              " SELECT md5('t' || g)::uuid, md5('s' || g)::uuid, CASE WHEN g <= %s THEN 'error' ELSE 'complete' END,"
              " 1, true, (now() AT TIME ZONE 'UTC') - g * interval '0.7 seconds',"
              " (now() AT TIME ZONE 'UTC') - g * interval '0.7 seconds'"
              " FROM generate_series(1, 10000) g", (N_FAIL,))


def _fill_tasker_base(c):
    c.execute("INSERT INTO named_tasks (named_task_uuid, name) VALUES (%s, 'order')", (_u(1, 1),))
    c.execute("INSERT INTO tasks (task_uuid, named_task_uuid, identity_hash, correlation_id) VALUES (%s, %s, 'h', %s)",
              (_u(2, 1), _u(1, 1), _u(9, 1)))
    c.execute("INSERT INTO named_steps (named_step_uuid, name) VALUES (%s, 'bulk')", (_u(3, 1),))


@pytest.fixture(scope="module")
def tasker_cost_db():
    need_env("RD_PG_DSN_ATTUNE2")
    yield from _db("groups_tasker_cost", "tasker.sql", "tasker", _fill_tasker_cost)


def test_tasker_groups_query_reads_bounded_rows(tasker_cost_db, tmp_path):
    """Tasker has no index on a transition's time: the read walks the current-state index's
    `error` entries (the steps in error now, never the whole table) and reads at most CAP
    steps."""
    trans = plan_scans(tasker_cost_db, "tasker", "tasker", "workflow_step_transitions")
    assert trans and all(n["Node Type"] != "Seq Scan" for n in trans), [n["Node Type"] for n in trans]
    for n in trans:
        assert n["Actual Rows"] * n.get("Actual Loops", 1) <= N_FAIL, n
    for n in plan_scans(tasker_cost_db, "tasker", "tasker", "workflow_steps"):
        assert n["Actual Rows"] * n.get("Actual Loops", 1) <= CAP, n
    cfg = write_config(tmp_path, {"t": {"profile": "tasker", "store": tasker_cost_db}})
    doc = groups_doc(cfg, "t", env={"REDRIVE_GROUPS_CAP": str(CAP)})
    assert (doc["groups_capped"], doc["groups_failures"]) == (True, CAP)
    assert [(g["fingerprint"], g["count"], g["retry_eligible"]) for g in doc["groups"]] == \
        [("timeout after <n>ms", CAP, CAP)]
