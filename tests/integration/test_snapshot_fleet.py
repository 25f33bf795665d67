"""`redrive snapshot --view fleet` against the local stack with the demo's five systems
(scripts/demo-config.sh): one row per system from its own session, worst first, the same
numbers as each system's own snapshot; a system that cannot connect is DOWN, first, and
the exit status says the output is partial.

Run with the stack env loaded (scripts/test.sh does it).
"""
import os
import re
import subprocess

from snaphelp import ROOT, assert_clean_text, need_env, snapshot

SYSTEMS = {"attune", "attune-era1", "tasker", "alakai", "openagents"}
FIELDS = {"system", "banner", "profile", "level", "sources_state", "sources_age_s", "failing_per_min",
          "retry_eligible", "retry_eligible_lower_bound", "dlq_size", "dlq_trend", "workers",
          "workers_unhealthy", "workers_draining", "oldest_queued_age_s", "dlq_cached_age_s",
          "failing_baseline_per_min", "reasons", "retry_eligible_source", "oldest_queued_lower_bound",
          "queued_none", "oldest_queued_source", "retry_eligible_upper_bound", "dlq_horizon",
          "dlq_horizons", "dlq_horizons_capped"}
RANK = {"DOWN": 4, "FAIL": 3, "warn": 2, "wait": 1, "ok": 0}


def demo_config(tmp_path, extra=""):
    need_env("RD_STACK_DIR")
    text = subprocess.run(["bash", os.path.join(ROOT, "scripts", "demo-config.sh"),
                           os.path.join(os.environ["RD_STACK_DIR"], "env")],
                          check=True, capture_output=True, text=True).stdout
    p = tmp_path / "demo.conf"
    p.write_text(text + extra)
    return str(p)


def test_fleet_json_has_every_system_worst_first(tmp_path):
    conf = demo_config(tmp_path)
    s = snapshot(conf, None, "--json", "--view", "fleet")
    assert s.rc == 0, s.err
    assert s.err == "", s.err
    j = s.json
    assert j["view"] == "fleet"
    rows = j["systems"]
    assert {r["system"] for r in rows} == SYSTEMS and len(rows) == 5
    for r in rows:
        assert set(r) == FIELDS, r          # no sources_error: nothing failed
        assert r["sources_state"] == "ok", r
        assert 0 <= r["sources_age_s"] < 10, r
        assert r["banner"] == ("LOCAL" if r["system"] == "alakai" else "DEMO")
        assert r["dlq_trend"] is None       # one look: no trend yet
        assert isinstance(r["retry_eligible"], int) and r["retry_eligible"] >= 0, r
        assert r["dlq_cached_age_s"] is None, r      # a snapshot never reads the cache
        assert r["failing_baseline_per_min"] is None, r   # no hour of history in one look
        # every level but ok says why; the text column is the same reasons
        assert all(isinstance(x, str) and x for x in r["reasons"]), r
        assert (r["level"] == "ok") == (r["reasons"] == []), r
        if r["failing_per_min"] is not None and r["failing_per_min"] < 1:
            # the stack's background rate: never FAIL for it
            assert not any(x.startswith("failing") for x in r["reasons"]), r
    ranks = [RANK[r["level"]] for r in rows]
    assert ranks == sorted(ranks, reverse=True), rows

    # the same numbers as each system's own snapshot (fixture data: stable between reads)
    for r in rows:
        one = snapshot(conf, r["system"], "--json").json
        assert r["workers"] == (len(one["workers"]) or None), (r, len(one["workers"]))
        assert isinstance(one["dlq_total"], int), (r["system"], one["dlq_total"])  # every system has a DLQ
        assert r["dlq_size"] == one["dlq_total"], (r, one["dlq_total"])
        # the store's count, the same in both (the stack's stores fit a page: the page's too)
        assert r["retry_eligible_source"] == "store", r
        assert r["retry_eligible"] == one["retry_eligible"], (r, one["retry_eligible"])
        assert r["failing_per_min"] == one["failing_rate"], (r, one["failing_rate"])
        eligible = sum(1 for e in one["executions"] if e["eligibility"] == "yes"
                       and e["status"] not in ("pending",))   # Tasker: a pending step never failed
        assert r["retry_eligible"] == eligible, (r["system"], r["retry_eligible"], eligible)


def test_fleet_text_and_a_system_down(tmp_path):
    conf = demo_config(tmp_path, '\n[system "gone"]\nprofile = attune\n'
                                 'store = host=127.0.0.1 port=1 dbname=x user=redrive_ro\nbanner = PROD\n')
    s = snapshot(conf, None, "--view", "fleet")
    assert s.rc == 3, (s.rc, s.err)         # partial: one system's source never answered
    assert_clean_text(s.out)
    lines = s.out.splitlines()
    assert lines[0] == "FLEET"
    assert lines[1].split()[:4] == ["STATE", "SYSTEM", "ENV", "SOURCES"], lines[1]
    body = lines[2:8]
    assert [l.split()[1] for l in body if l.split()][:1] == ["gone"], s.out
    assert body[0].split()[0] == "DOWN" and "PROD" in body[0], body[0]
    assert {l.split()[1] for l in body} == SYSTEMS | {"gone"}, s.out
    assert any(l.startswith("gone: postgresql: ") for l in lines[8:]), s.out

    j = snapshot(conf, None, "--json", "--view", "fleet")
    assert j.rc == 3
    gone = j.json["systems"][0]
    assert gone["system"] == "gone" and gone["level"] == "DOWN"
    assert gone["sources_state"] == "down" and gone["sources_error"].startswith("postgresql: ")


def test_fleet_view_is_listed_in_usage(tmp_path):
    s = snapshot(demo_config(tmp_path), None, "--view", "nope")
    assert s.rc == 2
    assert "fleet" in s.err


def test_fleet_levels_come_from_each_systems_thresholds(tmp_path):
    """The thresholds are per system and configurable; each crossed one is a reason, worst
    first, in the JSON and in the text's WHY column."""
    conf = demo_config(tmp_path, "fail_rate_warn = 5\nfail_rate_crit = 50\ndlq_crit = 2\n"
                                 "unhealthy_workers_crit = 100\n")   # openagents' section
    s = snapshot(conf, None, "--json", "--view", "fleet")
    assert s.rc == 0, s.err
    rows = {r["system"]: r for r in s.json["systems"]}
    oa = rows["openagents"]
    assert oa["dlq_size"] == 2 and oa["workers_unhealthy"] > 0 and oa["retry_eligible"] > 0, oa
    assert oa["level"] == "FAIL", oa
    assert oa["reasons"] == ["DLQ 2 >= 2", "%d unhealthy workers" % oa["workers_unhealthy"],
                             "%d retryable" % oa["retry_eligible"]], oa
    # another system with the same data keeps the defaults: DLQ 2 is a warning there
    al = rows["alakai"]
    assert al["dlq_size"] == 2 and al["level"] == "warn", al
    assert al["reasons"][0] == "DLQ 2 >= 1", al

    t = snapshot(conf, None, "--view", "fleet")
    lines = t.out.splitlines()
    assert lines[1].split()[-1] == "WHY", lines[1]
    line = next(l for l in lines[2:] if l.split()[1:2] == ["openagents"])
    assert line.endswith("  " + ", ".join(oa["reasons"])), line


def test_fleet_threshold_errors_name_the_line(tmp_path):
    conf = demo_config(tmp_path, "dlq_warn = 50\ndlq_crit = 5\nfail_rate_crit = lots\n")
    s = snapshot(conf, None, "--view", "fleet")
    n = len(open(conf).read().splitlines())
    assert "demo.conf:%d: dlq_warn (50) is above dlq_crit (5)" % (n - 2) in s.err, s.err
    assert "demo.conf:%d: bad number (expected a number, 0 or more)" % n in s.err, s.err


def test_dlq_size_says_which_source_holds_what(tmp_path):
    """Alakai's DLQ size is its store's dead letters plus its SQS DLQ: the overview says
    each share, and they add up to the size (and to the DLQ view's dlq_sources)."""
    conf = demo_config(tmp_path)
    s = snapshot(conf, "alakai")
    assert s.rc == 0, s.err
    line = next(l for l in s.out.splitlines() if l.startswith("DLQ size: "))
    m = re.match(r"DLQ size: (\d+) \(redis (\d+) \+ sqs (\d+)\)  ", line)
    assert m, line
    total, redis, sqs = map(int, m.groups())
    assert total == redis + sqs, line
    d = snapshot(conf, "alakai", "--json", "--view", "dlq").json
    assert {p["source"]: p["total"] for p in d["dlq_sources"]} == {"redis": redis, "sqs": sqs}
    # one source only: no breakdown
    t = snapshot(conf, "tasker")
    assert re.search(r"^DLQ size: \d+  orphan", t.out, re.M), t.out


def test_fleet_figures_are_the_stores_sql(tmp_path):
    """Retry-eligible, failures per minute (by when they failed) and the oldest queued age of
    the PostgreSQL systems are the store's own answers (issue 34), Tasker's failure rate
    included (from its step transitions)."""
    import psycopg2
    conf = demo_config(tmp_path)
    rows = {r["system"]: r for r in snapshot(conf, None, "--json", "--view", "fleet").json["systems"]}
    sql = {
        "attune-era1": ("RD_PG_DSN_ATTUNE1",
                        "SELECT count(*) FROM execution x WHERE x.status = 'failed' AND COALESCE(NULLIF(x.retry_count, 0), "
                        "(x.config->>'retry_count')::int, 0) < COALESCE(NULLIF(x.max_retries, 0), (x.config->>'max_retries')::int, 0) "
                        "AND NOT EXISTS (SELECT 1 FROM execution r WHERE (r.config->>'retry_of')::bigint = x.id)",
                        "SELECT count(*) / 5.0 FROM execution WHERE status = 'failed' AND updated > now() - interval '5 minutes'",
                        "SELECT extract(epoch FROM now() - min(created)) FROM execution "
                        "WHERE status IN ('requested', 'scheduling', 'scheduled')"),
        "openagents": ("RD_PG_DSN_OPENAGENTS",
                       "SELECT count(*) FROM jobs WHERE lower(status) = 'failed' AND retry_count < max_retries",
                       "SELECT count(*) / 5.0 FROM jobs WHERE lower(status) = 'failed' "
                       "AND COALESCE(completed_at, updated_at) > extract(epoch FROM now()) - 300",
                       "SELECT extract(epoch FROM now()) - min(created_at) FROM jobs WHERE lower(status) = 'queued'"),
        "tasker": ("RD_PG_DSN_TASKER",
                   "SELECT count(*) FROM tasker.workflow_step_transitions t JOIN tasker.workflow_steps s USING (workflow_step_uuid) "
                   "WHERE t.most_recent AND t.to_state IN ('error', 'waiting_for_retry') AND (COALESCE(s.attempts, 0) = 0 "
                   "OR (COALESCE(s.max_attempts, 3) > 0 AND s.retryable AND COALESCE(s.attempts, 0) < COALESCE(s.max_attempts, 3)))",
                   "SELECT count(*) / 5.0 FROM tasker.workflow_step_transitions t WHERE t.most_recent "
                   "AND (t.to_state = 'error' OR (t.to_state = 'waiting_for_retry' AND t.from_state = 'error')) "
                   "AND t.created_at > (now() AT TIME ZONE 'UTC') - interval '5 minutes'",
                   "SELECT extract(epoch FROM (now() AT TIME ZONE 'UTC') - min(s.created_at)) FROM tasker.workflow_steps s "
                   "LEFT JOIN tasker.workflow_step_transitions t ON t.workflow_step_uuid = s.workflow_step_uuid AND t.most_recent "
                   "WHERE COALESCE(t.to_state, CASE WHEN NOT s.processed THEN 'pending' END) IN ('pending', 'enqueued')"),
    }
    # Alakai: the newest attempt of each task failed with budget left (MAX_RETRIES 1 in the
    # demo config); its store has no queued state: the oldest queued is not the store's
    import json
    import stack_fixtures as fx
    rc = fx.stacklib.redis_client(os.environ)
    def newest_of(h):
        k = max((f for f in h if f.isdigit()), key=int, default=None)
        try:
            return json.loads(h[k].decode("utf-8", "replace")) if k else {}
        except ValueError:
            return {}
    newest = [newest_of(rc.hgetall(key)) for key in rc.scan_iter("alakai-executions:*") if rc.type(key) == b"hash"]
    al = rows["alakai"]
    assert al["retry_eligible_source"] == "store", al
    assert al["retry_eligible"] == sum(1 for x in newest if isinstance(x, dict) and x.get("status") == "failed"
                                     and x.get("attempt") == 1), (al, newest)
    for name, (dsn, elig, rate, oldest) in sql.items():
        with psycopg2.connect(os.environ[dsn]) as c, c.cursor() as cur:
            cur.execute(elig)
            e = cur.fetchone()[0]
            cur.execute(rate)
            f = float(cur.fetchone()[0])
            cur.execute(oldest)
            o = cur.fetchone()[0]
        r = rows[name]
        assert r["retry_eligible_source"] == "store" and r["retry_eligible"] == e, (name, r, e)
        assert r["retry_eligible_upper_bound"] is False, r   # a few: told apart exactly
        assert r["failing_per_min"] == f, (name, r, f)
        assert r["oldest_queued_source"] == "store", r
        if o is None:
            assert r["queued_none"] is True and r["oldest_queued_age_s"] is None, (name, r)
        else:
            assert abs(r["oldest_queued_age_s"] - float(o)) < 10, (name, r, o)


def test_tasker_failure_rate_from_its_step_transitions(tmp_path):
    """Tasker has no failure column: 40 steps created an hour ago entered `error` over the
    last 6 minutes, 34 of them in the last 5: the fleet says 6.8 failures a minute (by
    when they failed), the overview the same, and so does the store's own SQL."""
    import psycopg2
    import stack_fixtures as fx
    conf = demo_config(tmp_path)
    try:
        with psycopg2.connect(os.environ["RD_PG_ADMIN_DSN_TASKER"]) as c, c.cursor() as cur:
            cur.execute("SET search_path = tasker")
            cur.execute("SELECT task_uuid, named_step_uuid FROM workflow_steps LIMIT 1")
            task, named = cur.fetchone()
            cur.execute("""
                INSERT INTO workflow_steps (workflow_step_uuid, task_uuid, named_step_uuid, attempts,
                                            created_at, updated_at)
                SELECT ('00000000-0000-4000-8000-7' || lpad(k::text, 11, '0'))::uuid, %s, %s, 1,
                       (now() AT TIME ZONE 'UTC') - interval '1 hour', (now() AT TIME ZONE 'UTC')
                  FROM generate_series(0, 39) k""", (task, named))
            cur.execute("""
                INSERT INTO workflow_step_transitions (workflow_step_transition_uuid, workflow_step_uuid,
                                                       to_state, from_state, sort_key, most_recent, created_at)
                SELECT ('00000000-0000-4000-8000-6' || lpad((k * 2 + s)::text, 11, '0'))::uuid,
                       ('00000000-0000-4000-8000-7' || lpad(k::text, 11, '0'))::uuid,
                       CASE WHEN s = 0 THEN 'in_progress' ELSE 'error' END,
                       CASE WHEN s = 0 THEN 'enqueued' ELSE 'in_progress' END, s, s = 1,
                       (now() AT TIME ZONE 'UTC') - (k * 9 + 20 - s * 20) * interval '1 second'
                  FROM generate_series(0, 39) k, generate_series(0, 1) s""")
            cur.execute("""SELECT count(*) / 5.0 FROM workflow_step_transitions t
                            WHERE t.most_recent AND t.to_state = 'error'
                              AND t.created_at > (now() AT TIME ZONE 'UTC') - interval '5 minutes'""")
            want = float(cur.fetchone()[0])
        assert want == 6.8, want
        fleet = {r["system"]: r for r in snapshot(conf, None, "--json", "--view", "fleet").json["systems"]}
        assert fleet["tasker"]["failing_per_min"] == want, fleet["tasker"]
        assert "failing 6.8/min >= 1" in fleet["tasker"]["reasons"], fleet["tasker"]
        one = snapshot(conf, "tasker", "--json").json
        assert one["failing_rate"] == want, one["failing_rate"]
    finally:
        fx.reload("tasker")


def test_openagents_failures_counted_when_they_failed(tmp_path):
    """Jobs created an hour ago that failed a minute ago are failures of the last 5 minutes
    (completed_at, not created_at): 3 of them, 0.6 a minute, as the store's SQL says."""
    import psycopg2
    import stack_fixtures as fx
    conf = demo_config(tmp_path)
    try:
        with psycopg2.connect(os.environ["RD_PG_ADMIN_DSN_OPENAGENTS"]) as c, c.cursor() as cur:
            cur.execute("UPDATE jobs SET created_at = extract(epoch FROM now()) - 3600, "
                        "completed_at = extract(epoch FROM now()) - 60, updated_at = extract(epoch FROM now()) - 60 "
                        "WHERE job_id IN ('job-0002', 'job-0003', 'job-0009')")
            cur.execute("SELECT count(*) / 5.0 FROM jobs WHERE lower(status) = 'failed' "
                        "AND COALESCE(completed_at, updated_at) > extract(epoch FROM now()) - 300")
            want = float(cur.fetchone()[0])
        assert want == 0.6, want
        fleet = {r["system"]: r for r in snapshot(conf, None, "--json", "--view", "fleet").json["systems"]}
        assert fleet["openagents"]["failing_per_min"] == want, fleet["openagents"]
        assert snapshot(conf, "openagents", "--json").json["failing_rate"] == want
    finally:
        fx.reload("openagents")
