"""One truth (issue 23): the same stack read through every view of the console and through
`snapshot --json` gives the same numbers — the fleet (level, failures per minute,
retryable, DLQ size, workers, WHY against `reasons`), and for each system the overview
(counts by status, DLQ size, failing rate, workers and unhealthy ones, queues), the
executions page, the queues, the DLQ and the error groups.

Three demo systems on fixture data that stands still while the test reads it (Attune with
its RabbitMQ broker and DLQ, Tasker, OpenAgents); the snapshots run with the console's
environment. Needs the stack env (tests/stack/stack.sh start DIR && . DIR/env).
"""
import json
import os
import re
import subprocess

import psycopg2
import pytest

import stack_fixtures as fx
from test_lastknown import BIN, Term

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SYSTEMS = ["attune", "tasker", "openagents"]


@pytest.fixture(autouse=True)
def stack_env():
    if not os.environ.get("RD_STACK_DIR"):
        pytest.fail("needs the local stack env (tests/stack/stack.sh start DIR; . DIR/env)")
    # the known dataset: earlier suites (the simulator, action tests) leave other rows,
    # and heartbeats that keep ageing between the snapshot and the console's reading; the
    # broker too: its worker queues' 300 s TTL moves 180 messages into Attune's DLQ five
    # minutes after its last load, which may fall between the snapshot and the screen
    for name in ("attune2", "tasker", "openagents", "rabbit"):
        fx.reload(name)


def config(tmp_path):
    text = subprocess.run(["bash", os.path.join(ROOT, "scripts", "demo-config.sh"),
                           os.path.join(os.environ["RD_STACK_DIR"], "env")],
                          check=True, capture_output=True, text=True).stdout
    keep = [s for s in re.split(r"(?m)^(?=\[system )", text)
            if any(s.startswith('[system "%s"]' % n) for n in SYSTEMS)]
    assert len(keep) == len(SYSTEMS)
    p = tmp_path / "demo.conf"
    p.write_text("".join(keep))
    return p


def snap(tmp_path, conf, *args):
    env = {k: v for k, v in os.environ.items() if k.startswith("RD_")}
    env.update(PATH="/usr/bin:/bin", LANG="C.UTF-8", LC_ALL="C.UTF-8", TZ="UTC", HOME=str(tmp_path),
               XDG_CACHE_HOME=str(tmp_path / "cache"), XDG_STATE_HOME=str(tmp_path / "state"))
    p = subprocess.run([BIN, "--config", str(conf)] + list(args) + ["--json"], env=env,
                       capture_output=True, timeout=60)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    return json.loads(p.stdout)


def num(v):
    return "-" if v is None else str(v)


def cell_is(cell, full):
    """A screen cell against its id: whole, or cut with a middle "…" that keeps the id's
    head and tail (or an end "…" that keeps its head)."""
    if cell == full:
        return True
    head, sep, tail = cell.partition("\u2026")
    return bool(sep) and len(head) >= 4 and full.startswith(head) and full.endswith(tail) \
        and len(head) + len(tail) < len(full)


def same_ids(cells, ids):
    """Screen cells against ids, in order."""
    return len(cells) <= len(ids) and all(cell_is(c, i) for c, i in zip(cells, ids))


def screen_lines(t, title):
    t.wait_for(title)
    t.pump(1.5)
    return [l.rstrip() for l in t.screen.display]


def check_fleet(t, fleet):
    lines = screen_lines(t, "Fleet  3 systems")
    rows = {l.split()[1]: l for l in lines[3:3 + len(SYSTEMS)]}
    assert set(rows) == set(SYSTEMS), lines
    for r in fleet["systems"]:
        cells = re.split(r"\s{1,}", rows[r["system"]].strip())
        line = rows[r["system"]]
        assert cells[0] == r["level"], (line, r)
        rate = "-" if r["failing_per_min"] is None else "%.1f" % r["failing_per_min"]
        assert " %s " % rate in line, (line, r)
        assert " %s " % num(r["retry_eligible"]) in line, (line, r)
        assert re.search(r"\s%s\s+-\s" % r["dlq_size"], line), (line, r)
        assert "%s unh %s drn" % (r["workers_unhealthy"], r["workers_draining"]) in line, (line, r)
        why = ", ".join(r["reasons"]) or "-"
        assert line.endswith(why), (line, why)


def check_overview(t, one, name):
    lines = screen_lines(t, "Overview  %s" % name)
    text = "\n".join(lines)
    counts = next(l for l in lines if l.startswith("Executions by status"))
    at = lines.index(counts)
    got = dict(re.findall(r"([a-z_]+) (\S+)", lines[at + 1]))
    assert got == {c["status"]: str(c["count"]) for c in one["counts"]}, (lines[at + 1], one["counts"])
    dlq = num(one["dlq_total"])
    rate = "-" if one["failing_rate"] is None else "%.1f/min" % one["failing_rate"]
    m = re.search(r"failing now %s   DLQ size %s( \(([^)]*)\))?   " % (re.escape(rate), re.escape(dlq)), text)
    assert m, text
    if m.group(2):    # several DLQ sources: each one's share, adding up to the size
        shares = [int(x.split()[-1]) for x in m.group(2).split(" + ")]
        assert sum(shares) == one["dlq_total"], m.group(0)
    unhealthy = sum(1 for w in one["workers"] if w["health"] == "unhealthy")
    assert "workers %d: %d unhealthy" % (len(one["workers"]), unhealthy) in text, text
    # the store's figures (issue 34): the same retry-eligible count as the snapshot's
    elig = ("<=" if one["retry_eligible_upper_bound"] and one["retry_eligible"] else "") \
        + num(one["retry_eligible"]) + ("+" if one["retry_eligible_lower_bound"] else "")
    assert "  retryable %s   oldest queued " % elig in text, (text, one["retry_eligible"])
    if one["queued_none"]:
        assert "oldest queued none" in text, text
    assert "   queues %d: " % len(one["queues"]) in text, text


def check_execs(t, one):
    lines = screen_lines(t, "Executions  page 1")
    n = len(one["executions"])
    assert re.search(r"Executions  page 1%s  %d/%d rows" % (r" \(more\)" if one["executions_more"] else "", n, n),
                     lines[1]), lines[1]
    ids = [l.split()[0] for l in lines[3:3 + min(n, 20)]]
    assert ids and same_ids(ids, [e["id"] for e in one["executions"]]), (ids, one["executions"][:5])


def check_queues(t, q):
    lines = screen_lines(t, "Queues  ")
    qs = q["queues"]
    assert lines[1].startswith("Queues  %d shown of %d  %d DLQ" % (len(qs), len(qs), sum(x["is_dlq"] for x in qs))), lines[1]
    for x in qs[:20]:
        row = next(l for l in lines[3:] if l.split()[:1] == [x["name"]])
        assert row.split()[1] == num(x["depth"]), (row, x)


def check_dlq(t, d):
    lines = screen_lines(t, "DLQ  ")
    assert lines[1].startswith("DLQ  %d peeked of %s" % (len(d["dlq"]), num(d["dlq_total"]))), (lines[1], d["dlq_total"])
    ids = [l.split()[0] for l in lines[3:3 + min(len(d["dlq"]), 10)]]
    assert same_ids(ids, [e["id"] for e in d["dlq"]]), ids


def check_groups(t, g, one):
    lines = screen_lines(t, "Error groups")
    failed = sum(x["count"] for x in g["groups"])
    if g["groups_scope"] == "store":      # the store's failures of the window (every shipped system)
        assert failed == g["groups_failures"], g
        assert lines[1].startswith("Error groups  last %s: %d group%s of %d failures in the store"
                                   % (g["window"], len(g["groups"]), "" if len(g["groups"]) == 1 else "s",
                                      failed)), lines[1]
    else:
        assert g["groups_scope"] == "loaded", g
        assert lines[1].startswith("Error groups  %d groups of %d failed executions among the %d loaded"
                                   % (len(g["groups"]), failed, len(one["executions"]))), lines[1]
    for x, l in zip(g["groups"], lines[3:3 + len(g["groups"])]):
        assert l.split()[:3] == [x["id"], str(x["count"]), str(x["retry_eligible"])], (l, x)


def test_every_view_agrees_with_the_snapshot(tmp_path):
    conf = config(tmp_path)
    fleet = snap(tmp_path, conf, "snapshot", "--view", "fleet")
    per = {}
    for name in SYSTEMS:
        per[name] = {v: snap(tmp_path, conf, "--system", name, "snapshot", *(["--view", v] if v else []))
                     for v in (None, "queues", "dlq", "groups")}
    t = Term(tmp_path, conf, cols=200, rows=40)
    try:
        check_fleet(t, fleet)
        for name in SYSTEMS:
            s = per[name]
            t.child.send(":system %s\r" % name)
            check_overview(t, s[None], name)
            t.child.send("2")
            check_execs(t, s[None])
            t.child.send("4")
            check_queues(t, s["queues"])
            t.child.send("5")
            check_dlq(t, s["dlq"])
            t.child.send("7")
            check_groups(t, s["groups"], s[None])
            t.child.send("0")
        t.quit()
    finally:
        if t.child.isalive():
            t.child.kill(9)


# ---- every number from the store (issue 34) ----

SCALE = "scale34"          # a schema of its own in the attune2 database (Attune era 2 DDL)
N_SETTLED = 60000          # past the counts' estimate threshold (50,000 rows), a page many times


def fill_scale():
    """A store past every threshold: 60,000 settled executions (ANALYZEd: the counts of the
    big terminal statuses come from the statistics), 600 failures already retried (a later
    attempt supersedes them: more failures with retries left than the console tells apart,
    so its count is marked an upper bound), then, with no ANALYZE since, 2,500 failures written a moment
    ago on executions created half an hour back (failing NOW, created long ago) and a
    handful of live ones: 5 requested (the oldest 1 h 38 min old), 3 scheduled, 2 running."""
    c = psycopg2.connect(os.environ["RD_PG_ADMIN_DSN_ATTUNE2"])
    c.autocommit = True
    cur = c.cursor()
    cur.execute("DROP SCHEMA IF EXISTS %s CASCADE" % SCALE)
    cur.execute(fx._ddl("attune_era2.sql", SCALE))
    cur.execute("SET search_path = %s, public" % SCALE)
    cur.execute("SET session_replication_role = replica")     # no notify/updated triggers
    cur.execute("""
        INSERT INTO execution (id, action_ref, status, created, updated, retry_count, max_retries, result)
        SELECT i, 'core.job' || (i %% 7),
               (CASE WHEN i %% 20 = 0 THEN 'failed' ELSE 'completed' END)::execution_status_enum,
               now() - interval '3 hours' - (%s - i) * interval '500 milliseconds',
               now() - interval '3 hours' - (%s - i) * interval '500 milliseconds' + interval '2 seconds',
               CASE WHEN i %% 20 = 0 THEN i / 20 %% 5 ELSE 0 END,
               CASE WHEN i %% 20 = 0 THEN 3 END,
               CASE WHEN i %% 20 = 0 THEN '{"error": "connection reset"}'::jsonb END
          FROM generate_series(1, %s) i""", (N_SETTLED, N_SETTLED, N_SETTLED))
    # retried failures: each one's next attempt exists (completed), so it is no longer eligible
    cur.execute("""
        INSERT INTO execution (id, action_ref, status, created, updated, retry_count, max_retries,
                               original_execution)
        SELECT %s + i / 100, 'core.job', 'completed', now() - interval '2 hours', now() - interval '2 hours',
               1, 3, i
          FROM generate_series(100, %s, 100) i""", (N_SETTLED, N_SETTLED))
    cur.execute("VACUUM (ANALYZE) execution")
    # written a moment ago, no ANALYZE since
    cur.execute("""
        INSERT INTO execution (id, action_ref, status, created, updated, retry_count, max_retries, result)
        SELECT 100000 + k, 'pay.charge', 'failed', now() - interval '30 minutes',
               now() - (k % 90) * interval '1 second', k % 3, 2,
               '{"error": "PaymentGateway: timed out"}'::jsonb
          FROM generate_series(1, 2500) k""")
    cur.execute("""
        INSERT INTO execution (id, action_ref, status, created, updated)
        SELECT 200000 + k, 'core.live',
               (CASE WHEN k <= 5 THEN 'requested' WHEN k <= 8 THEN 'scheduled' ELSE 'running' END)::execution_status_enum,
               CASE WHEN k <= 5 THEN now() - interval '1 hour 38 minutes 30 seconds' + k * interval '1 second'
                    ELSE now() - interval '10 minutes' END, now()
          FROM generate_series(1, 10) k""")
    cur.execute("SELECT setval(pg_get_serial_sequence('execution', 'id'), 300000)")
    fx._grant_read(cur, "attune2", SCALE, "redrive_ro")
    c.close()


def store_truth():
    """The store's own answers, by SQL written here (not the profile's)."""
    with psycopg2.connect(os.environ["RD_PG_ADMIN_DSN_ATTUNE2"]) as c, c.cursor() as cur:
        cur.execute("SET search_path = %s, public" % SCALE)
        # failed with retries left (Attune's partial index), and of those the ones no later
        # attempt supersedes (the executions list's verdict): the console says the latter
        # while there are at most 1,000 of the former, else the former as an upper bound
        cur.execute("SELECT count(*) FROM execution x "
                    "WHERE x.status = 'failed' AND x.retry_count < COALESCE(x.max_retries, 0)")
        candidates = cur.fetchone()[0]
        cur.execute("""SELECT count(*) FROM execution x
                        WHERE x.status = 'failed' AND x.retry_count < COALESCE(x.max_retries, 0)
                          AND NOT EXISTS (SELECT 1 FROM execution r
                                           WHERE r.original_execution = COALESCE(x.original_execution, x.id)
                                             AND r.retry_count > x.retry_count)""")
        not_superseded = cur.fetchone()[0]
        upper = candidates > 1000
        eligible = candidates if upper else not_superseded
        cur.execute("SELECT count(*) FROM execution WHERE status = 'failed' AND updated > now() - interval '5 minutes'")
        failed5 = cur.fetchone()[0]
        cur.execute("SELECT extract(epoch FROM now() - min(created))::float FROM execution "
                    "WHERE status IN ('requested', 'scheduling', 'scheduled')")
        oldest = cur.fetchone()[0]
        cur.execute("SELECT status::text, count(*) FROM execution GROUP BY 1")
        exact = dict(cur.fetchall())
        cur.execute("""SELECT u.v, round(u.f * c.reltuples)::bigint
                         FROM pg_class c, pg_stats s,
                              unnest(s.most_common_vals::text::text[], s.most_common_freqs) u(v, f)
                        WHERE c.oid = 'execution'::regclass AND s.schemaname = %s
                          AND s.tablename = 'execution' AND s.attname = 'status'""", (SCALE,))
        est = dict(cur.fetchall())
    return {"eligible": eligible, "upper": upper, "not_superseded": not_superseded,
            "rate": failed5 / 5.0, "oldest": oldest, "exact": exact, "est": est}


def age_text(s):
    """format_age (core/health.c): the largest whole unit."""
    for unit, n in (("d", 86400), ("h", 3600), ("m", 60)):
        if s >= n:
            return "%d%s" % (s // n, unit)
    return "%ds" % s


def hist_text(v, rate):
    """histd_value (ui/histdraw.c): a chart's "now" figure."""
    if v >= 1e6:
        return "%.1fM" % (v / 1e6)
    if v >= 1e4:
        return "%.1fk" % (v / 1e3)
    return "%.1f" % v if rate and v < 100 else "%.0f" % v


def scale_config(tmp_path):
    p = tmp_path / "scale.conf"
    p.write_text('[system "scale"]\nprofile = attune\nstore = %s\nschema = %s\npoll = 2s\n\n'
                 '[system "oa"]\nprofile = openagents\nstore = %s\n'   # a fleet needs two
                 % (os.environ["RD_PG_DSN_ATTUNE2"], SCALE, os.environ["RD_PG_DSN_OPENAGENTS"]))
    return p


def test_every_number_equals_the_stores_sql_at_scale(tmp_path):
    """Fleet, overview, history and `snapshot --json` against the store's own SQL, on a store
    past every threshold (more rows than a page, the estimate threshold crossed, a handful
    of live rows, failures written a moment ago with no ANALYZE beside settled ones):
    retry-eligible is the store's count (not the page's lower bound), the oldest queued age
    is the store's (not null), failures per minute count when executions failed (not when
    they were created), and every view shows the same number."""
    fill_scale()
    conf = scale_config(tmp_path)
    want = store_truth()
    assert want["upper"] and want["eligible"] > want["not_superseded"] > 1000, want
    assert want["rate"] > 100 and want["oldest"] > 5880, want
    rate = "%.1f" % want["rate"]
    cell = "<=%d" % want["eligible"]        # an upper bound, marked

    fleet = next(r for r in snap(tmp_path, conf, "snapshot", "--view", "fleet")["systems"]
                 if r["system"] == "scale")
    assert fleet["retry_eligible"] == want["eligible"], (fleet, want)
    assert fleet["retry_eligible_lower_bound"] is False and fleet["retry_eligible_source"] == "store", fleet
    assert fleet["retry_eligible_upper_bound"] is True, fleet
    assert fleet["failing_per_min"] == want["rate"], (fleet, want)
    assert abs(fleet["oldest_queued_age_s"] - want["oldest"]) < 30, (fleet, want)
    assert fleet["oldest_queued_source"] == "store" and fleet["oldest_queued_lower_bound"] is False, fleet
    one = snap(tmp_path, conf, "--system", "scale", "snapshot")
    assert one["retry_eligible"] == want["eligible"] and one["retry_eligible_lower_bound"] is False, one
    assert one["retry_eligible_upper_bound"] is True, one
    assert one["failing_rate"] == want["rate"], (one["failing_rate"], want)
    assert abs(one["oldest_queued_age_s"] - want["oldest"]) < 30, (one["oldest_queued_age_s"], want)
    assert one["executions_more"] is True, "the store must hold more than a page"
    for c in one["counts"]:        # exact, or the statistics' estimate marked as one
        src = want["est"] if c["estimated"] else want["exact"]
        assert c["count"] == src[c["status"]], (c, want["exact"], want["est"])
    assert any(c["estimated"] for c in one["counts"]), one["counts"]
    assert {c["status"] for c in one["counts"]} == set(want["exact"]), one["counts"]

    t = Term(tmp_path, conf, cols=200, rows=40)
    try:
        lines = screen_lines(t, "Fleet  2 systems")
        row = next(l for l in lines if " scale " in l)
        assert " %s " % rate in row, (row, want)
        assert " %s " % cell in row and "%d+" % want["eligible"] not in row, (row, want)
        assert " %s " % age_text(want["oldest"]) in row, (row, want)
        t.child.send(":system scale\r")
        lines = screen_lines(t, "Overview  scale")
        text = "\n".join(lines)
        assert "failing now %s/min" % rate in text, text
        assert "retryable %s   oldest queued %s" % (cell, age_text(want["oldest"])) in text, text
        counts = lines[lines.index(next(l for l in lines if l.startswith("Executions by status"))) + 1]
        got = dict(re.findall(r"([a-z_]+) (\S+)", counts))
        assert got == {s: ("\u2248%d" % want["est"][s] if got.get(s, "").startswith("\u2248") else str(n))
                       for s, n in want["exact"].items()}, (counts, want)
        # the history: a sample every 10 s; its newest retry-eligible (an upper bound: the
        # chart says so as the fleet and the overview do) and failure rate
        t.child.send("H")
        t.wait_until(lambda: "retry-eligible  now <=%s  (<=: " % hist_text(want["eligible"], False) in t.text(),
                     secs=25, what="history's retry-eligible chart at the store's count, marked an upper bound")
        assert re.search(r"retry-eligible  now <=%s  \(<=: \d+ upper bounds?\)" % hist_text(want["eligible"], False),
                         t.text()), t.text()
        assert "failures/min  now %s" % hist_text(want["rate"], True) in t.text(), t.text()
        t.quit()
    finally:
        if t.child.isalive():
            t.child.kill(9)
    whole = snap(tmp_path, conf, "--system", "scale", "snapshot", "--view", "history")["history"]
    hist = whole["series"]
    last = [(t, v) for t, v in hist["retry_eligible"] if v is not None]
    assert last and last[-1][1] == want["eligible"], hist["retry_eligible"][-3:]
    # every sample the console took is the store's upper bound, and the JSON says so
    assert whole["bounds"] == {"retry_eligible": [[t, "upper"] for t, _ in last]}, (whole["bounds"], last)
    rates = [v for _, v in hist["failures_per_min"] if v is not None]
    assert rates and abs(rates[-1] - want["rate"]) < 1e-6, hist["failures_per_min"][-3:]
