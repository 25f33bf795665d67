"""One truth (issue 23): the same stack read through every view of the console and through
`snapshot --json` gives the same numbers — the fleet (level, failures per minute,
retryable, DLQ size, workers, WHY against `reasons`), and for each system the overview
(counts by status, DLQ size, failing rate, workers and unhealthy ones, queues), the
executions page, the queues, the DLQ and the error groups.

Three demo systems on fixture data that stands still while the test reads it (Attune with
its RabbitMQ broker and DLQ, Tasker, OpenAgents); the snapshots run with the console's
environment. Then at scale (issue 34), each system's store past every threshold in a place
of its own (a schema, a Redis prefix): every view's number against the store's own SQL or
records (Attune; Tasker, OpenAgents and Alakai in one console). Needs the stack env
(tests/stack/stack.sh start DIR && . DIR/env).
"""
import json
import os
import re
import subprocess
import time

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


def broker_depths():
    """RabbitMQ's own count of each worker queue's messages (its management API)."""
    import base64
    import urllib.request
    req = urllib.request.Request(os.environ["RD_RABBIT_MGMT_URL"] + "/api/queues/%2F?columns=name,messages")
    auth = "%s:%s" % (os.environ["RD_RABBIT_USER"], os.environ["RD_RABBIT_PASSWORD"])
    req.add_header("Authorization", "Basic " + base64.b64encode(auth.encode()).decode())
    with urllib.request.urlopen(req, timeout=10) as r:
        qs = json.load(r)
    return {q["name"]: q["messages"] for q in qs if re.fullmatch(r"worker\.\d+\.executions", q["name"])}


def check_workers(t, one, broker):
    """The workers view: each worker's row, its BROKER depth the snapshot's; the snapshot's
    (where a broker is configured) the broker's own count of the worker's queue."""
    if broker is not None:
        for w in one["workers"]:
            assert w["broker_depth"] == broker.get("worker.%s.executions" % w["id"]), (w, broker)
    lines = screen_lines(t, "Workers  ")
    ws = one["workers"]
    unh = sum(1 for w in ws if w["health"] == "unhealthy")
    assert lines[1].startswith("Workers  %d shown of %d  %d unhealthy" % (len(ws), len(ws), unh)), lines[1]
    head = lines[2]
    rows = {}
    for w in ws[:20]:      # rows start with the name (cut in the middle when long)
        rows[w["name"]] = next((l for l in lines[3:] if l.split()[:1] and cell_is(l.split()[0], w["name"])), None)
        assert rows[w["name"]], (w["name"], lines)
    if broker is None:
        assert "BROKER" not in head, head
        return
    end = head.index("BROKER") + len("BROKER")
    for w in ws[:20]:
        assert rows[w["name"]][:end].split()[-1] == num(w["broker_depth"]), (rows[w["name"]], w)


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
    broker = broker_depths()
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
            t.child.send("3")
            check_workers(t, s[None], broker if name == "attune" else None)
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


# Attune's two eras: era 1's code writes the retry metadata into the config JSON (the
# columns stay at their defaults), era 2 into the columns
ERAS = {"attune2": "attune_era2.sql", "attune1": "attune_era1.sql"}


def era_sql(era):
    """An execution's retry count, budget and chain root as era writes them (x: its alias),
    and 'a later attempt supersedes x'."""
    if era == "attune2":
        return {"rc": "x.retry_count", "mr": "COALESCE(x.max_retries, 0)",
                "sup": "EXISTS (SELECT 1 FROM execution r WHERE r.original_execution = COALESCE(x.original_execution, x.id) "
                       "AND r.retry_count > x.retry_count)",
                "root": "x.original_execution"}
    return {"rc": "COALESCE((x.config->>'retry_count')::int, 0)", "mr": "COALESCE((x.config->>'max_retries')::int, 0)",
            "sup": "EXISTS (SELECT 1 FROM execution r WHERE (r.config->>'retry_of')::bigint = x.id)",
            "root": "(x.config->>'original_execution')::bigint"}


def to_config(cur):
    """Era 1: the retry columns' values moved into the config JSON, where its code keeps them."""
    cur.execute("""UPDATE execution SET config = COALESCE(config, '{}') || jsonb_strip_nulls(jsonb_build_object(
                          'retry_count', retry_count, 'max_retries', max_retries,
                          'original_execution', original_execution, 'retry_of', original_execution)),
                          retry_count = 0, max_retries = NULL, original_execution = NULL
                    WHERE max_retries IS NOT NULL OR original_execution IS NOT NULL""")


def fill_scale(era="attune2"):
    """A store past every threshold: 60,000 settled executions (ANALYZEd: the counts of the
    big terminal statuses come from the statistics), 600 failures already retried (a later
    attempt supersedes them: more failures with retries left than the console tells apart,
    so its count is marked an upper bound), then, with no ANALYZE since, 2,500 failures written a moment
    ago on executions created half an hour back (failing NOW, created long ago) and a
    handful of live ones: 5 requested (the oldest 1 h 38 min old), 3 scheduled, 2 running."""
    c = psycopg2.connect(os.environ["RD_PG_ADMIN_DSN_" + era.upper()])
    c.autocommit = True
    cur = c.cursor()
    cur.execute("DROP SCHEMA IF EXISTS %s CASCADE" % SCALE)
    cur.execute(fx._ddl(ERAS[era], SCALE))
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
    if era == "attune1":
        to_config(cur)
    cur.execute("VACUUM (ANALYZE) execution")
    # written a moment ago, no ANALYZE since
    cur.execute("""
        INSERT INTO execution (id, action_ref, status, created, updated, retry_count, max_retries, result)
        SELECT 100000 + k, 'pay.charge', 'failed', now() - interval '30 minutes',
               now() - (k % 90) * interval '1 second', k % 3, 2,
               '{"error": "PaymentGateway: timed out"}'::jsonb
          FROM generate_series(1, 2500) k""")
    if era == "attune1":
        to_config(cur)
    cur.execute("""
        INSERT INTO execution (id, action_ref, status, created, updated)
        SELECT 200000 + k, 'core.live',
               (CASE WHEN k <= 5 THEN 'requested' WHEN k <= 8 THEN 'scheduled' ELSE 'running' END)::execution_status_enum,
               CASE WHEN k <= 5 THEN now() - interval '1 hour 38 minutes 30 seconds' + k * interval '1 second'
                    ELSE now() - interval '10 minutes' END, now()
          FROM generate_series(1, 10) k""")
    cur.execute("SELECT setval(pg_get_serial_sequence('execution', 'id'), 300000)")
    fx._grant_read(cur, era, SCALE, "redrive_ro")
    c.close()


def store_truth(era="attune2"):
    """The store's own answers, by SQL written here (not the profile's)."""
    q = era_sql(era)
    with psycopg2.connect(os.environ["RD_PG_ADMIN_DSN_" + era.upper()]) as c, c.cursor() as cur:
        cur.execute("SET search_path = %s, public" % SCALE)
        # failed with retries left (Attune's partial index), and of those the ones no later
        # attempt supersedes (the executions list's verdict): the console says the latter
        # while there are at most 1,000 of the former, else the former as an upper bound
        cur.execute("SELECT count(*) FROM execution x WHERE x.status = 'failed' AND %(rc)s < %(mr)s" % q)
        candidates = cur.fetchone()[0]
        cur.execute("SELECT count(*) FROM execution x WHERE x.status = 'failed' AND %(rc)s < %(mr)s "
                    "AND NOT %(sup)s" % q)
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
        # the lists: the newest page; the hour's failures (the groups' window: created in
        # it) and those of them with retries left that no later attempt supersedes; a
        # retried failure's chain
        cur.execute("SELECT id::text FROM execution ORDER BY created DESC, id DESC LIMIT 100")
        page = [r[0] for r in cur.fetchall()]
        cur.execute("SELECT count(*), count(*) FILTER (WHERE x.status = 'failed' AND %(rc)s < %(mr)s AND NOT %(sup)s) "
                    "FROM execution x WHERE x.status IN ('failed', 'timeout', 'abandoned') "
                    "AND x.created > now() - interval '1 hour'" % q)
        groups, groups_eligible = cur.fetchone()
        cur.execute("SELECT x.id::text FROM execution x WHERE x.id = 100 OR %(root)s = 100 ORDER BY %(rc)s, x.id" % q)
        chain = [r[0] for r in cur.fetchall()]
        cur.execute("""SELECT u.v, round(u.f * c.reltuples)::bigint
                         FROM pg_class c, pg_stats s,
                              unnest(s.most_common_vals::text::text[], s.most_common_freqs) u(v, f)
                        WHERE c.oid = 'execution'::regclass AND s.schemaname = %s
                          AND s.tablename = 'execution' AND s.attname = 'status'""", (SCALE,))
        est = dict(cur.fetchall())
    return {"eligible": eligible, "upper": upper, "not_superseded": not_superseded,
            "rate": failed5 / 5.0, "oldest": oldest, "exact": exact, "est": est, "page": page,
            "groups": groups, "groups_eligible": groups_eligible, "chain": chain}


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


def scale_config(tmp_path, era="attune2"):
    p = tmp_path / "scale.conf"
    p.write_text('[system "scale"]\nprofile = attune\nstore = %s\nschema = %s\npoll = 2s\n\n'
                 '[system "oa"]\nprofile = openagents\nstore = %s\n'   # a fleet needs two
                 % (os.environ["RD_PG_DSN_" + era.upper()], SCALE, os.environ["RD_PG_DSN_OPENAGENTS"]))
    return p


@pytest.mark.parametrize("era", sorted(ERAS))
def test_every_number_equals_the_stores_sql_at_scale(tmp_path, era):
    """Fleet, overview, history and `snapshot --json` against the store's own SQL, on a store
    past every threshold (more rows than a page, the estimate threshold crossed, a handful
    of live rows, failures written a moment ago with no ANALYZE beside settled ones):
    retry-eligible is the store's count (not the page's lower bound), the oldest queued age
    is the store's (not null), failures per minute count when executions failed (not when
    they were created), and every view shows the same number."""
    fill_scale(era)
    conf = scale_config(tmp_path, era)
    want = store_truth(era)
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
    # the lists: the executions page is the store's newest; the groups count every failure
    # of the hour (one group here: the incident) with the store's eligible ones; Enter on
    # the group (its members) totals the same; a retried failure's chain is its attempts
    assert [e["id"] for e in one["executions"]] == want["page"][:len(one["executions"])], one["executions"][:3]
    assert len(one["executions"]) >= 50, len(one["executions"])
    g = snap(tmp_path, conf, "--system", "scale", "snapshot", "--view", "groups")
    assert g["groups_scope"] == "store" and not g["groups_capped"], g
    assert g["groups_failures"] == want["groups"] == sum(x["count"] for x in g["groups"]) == 2500, (g, want["groups"])
    assert sum(x["retry_eligible"] for x in g["groups"]) == want["groups_eligible"], (g["groups"], want)
    big = max(g["groups"], key=lambda x: x["count"])
    members = snap(tmp_path, conf, "--system", "scale", "snapshot", "--view", "executions", "--group", big["id"])
    assert members["group"]["total"] == big["count"], (members["group"], big)
    ch = snap(tmp_path, conf, "--system", "scale", "snapshot", "--view", "chain", "100")
    assert [e["id"] for e in ch["chain"]] == want["chain"] and len(want["chain"]) == 2, (ch["chain"], want["chain"])

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
        # the chart's columns of bound samples are underlined; the exact chart's are not
        def underlined(title):
            at = next(i for i, l in enumerate(t.screen.display) if l.startswith(title))
            return [any(t.screen.buffer[y][x].underscore for x in range(t.cols)) for y in range(at + 1, at + 4)]
        assert all(underlined("retry-eligible")), t.text()
        assert not any(underlined("failures/min")), t.text()
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


# ---- Tasker and OpenAgents at scale (issue 34): every view and list against the store ----

def _admin(db):
    c = psycopg2.connect(os.environ["RD_PG_ADMIN_DSN_" + db.upper()])
    c.autocommit = True
    cur = c.cursor()
    cur.execute("DROP SCHEMA IF EXISTS %s CASCADE" % SCALE)
    return c, cur


def fill_tasker():
    """60,000 settled steps (ANALYZEd: complete and error come from the statistics), 130 DLQ
    entries (more than a page; three reasons; 10 resolved), then, with no ANALYZE since, 400
    steps that failed in the last 4 minutes, 100 that failed 2.5 minutes ago and are running
    again (Tasker retries by itself: their error is not their state now), 5 pending steps
    (the oldest 1 h 38 min old) and 3 enqueued."""
    c, cur = _admin("tasker")
    cur.execute(fx._ddl("tasker.sql", SCALE))
    cur.execute("SET search_path = %s, public" % SCALE)
    cur.execute("SET session_replication_role = replica")     # no foreign-key triggers: a fast load
    cur.execute("INSERT INTO named_tasks (named_task_uuid, name) VALUES (md5('nt')::uuid, 'checkout')")
    cur.execute("INSERT INTO named_steps (named_step_uuid, name) VALUES (md5('ns1')::uuid, 'charge'), "
                "(md5('ns2')::uuid, 'ship')")
    cur.execute("""INSERT INTO tasks (task_uuid, named_task_uuid, identity_hash, correlation_id, requested_at)
                   SELECT md5('t' || i)::uuid, md5('nt')::uuid, 'h' || i, md5('c' || i)::uuid,
                          (now() AT TIME ZONE 'UTC') - interval '4 hours'
                     FROM generate_series(0, 599) i""")
    err = """jsonb_build_object('error', jsonb_build_object('message', %s, 'error_type', 'RetryableError'))"""
    cur.execute("""
        INSERT INTO workflow_steps (workflow_step_uuid, task_uuid, named_step_uuid, attempts, max_attempts,
                                    processed, results, created_at, updated_at)
        SELECT md5('s' || i)::uuid, md5('t' || (i % 600))::uuid, md5('ns' || (1 + i % 2))::uuid,
               CASE WHEN i % 20 = 0 THEN 1 + i / 20 % 3 ELSE 1 END, 3, i % 20 <> 0,
               CASE WHEN i % 20 = 0 THEN """ + err % "'card processor timeout'" + """ END,
               (now() AT TIME ZONE 'UTC') - interval '3 hours' - (60000 - i) * interval '100 milliseconds',
               (now() AT TIME ZONE 'UTC') - interval '3 hours'
          FROM generate_series(1, 60000) i""")
    cur.execute("""
        INSERT INTO workflow_step_transitions (workflow_step_transition_uuid, workflow_step_uuid, to_state,
                                               from_state, sort_key, most_recent, created_at)
        SELECT md5('x' || i)::uuid, md5('s' || i)::uuid, CASE WHEN i % 20 = 0 THEN 'error' ELSE 'complete' END,
               'in_progress', 0, true,
               (now() AT TIME ZONE 'UTC') - interval '3 hours' - (60000 - i) * interval '100 milliseconds'
                 + interval '2 seconds'
          FROM generate_series(1, 60000) i""")
    cur.execute("""
        INSERT INTO tasks_dlq (dlq_entry_uuid, task_uuid, original_state, dlq_reason, dlq_timestamp,
                               resolution_status)
        SELECT md5('d' || i)::uuid, md5('t' || i)::uuid, 'error',
               (CASE WHEN i % 6 < 3 THEN 'max_retries_exceeded' WHEN i % 6 < 5 THEN 'worker_unavailable'
                     ELSE 'staleness_timeout' END)::dlq_reason,
               (now() AT TIME ZONE 'UTC') - i * interval '1 minute',
               (CASE WHEN i < 120 THEN 'pending' ELSE 'manually_resolved' END)::dlq_resolution_status
          FROM generate_series(0, 129) i""")
    cur.execute("VACUUM (ANALYZE) workflow_steps")
    cur.execute("VACUUM (ANALYZE) workflow_step_transitions")
    # written a moment ago, no ANALYZE since: 400 failing now, 100 failed and retrying
    cur.execute("""
        INSERT INTO workflow_steps (workflow_step_uuid, task_uuid, named_step_uuid, attempts, max_attempts,
                                    results, created_at, updated_at)
        SELECT md5('f' || k)::uuid, md5('t' || (k % 600))::uuid, md5('ns1')::uuid, 1 + k % 3, 3,
               """ + err % "'PaymentGateway: timed out'" + """,
               (now() AT TIME ZONE 'UTC') - interval '1 hour' + k * interval '1 millisecond',
               (now() AT TIME ZONE 'UTC')
          FROM generate_series(1, 500) k""")
    cur.execute("""
        INSERT INTO workflow_step_transitions (workflow_step_transition_uuid, workflow_step_uuid, to_state,
                                               from_state, sort_key, most_recent, created_at)
        SELECT md5('fx' || k || '-' || s)::uuid, md5('f' || k)::uuid,
               (ARRAY['in_progress', 'error', 'waiting_for_retry', 'enqueued', 'in_progress'])[s + 1],
               (ARRAY[NULL, 'in_progress', 'error', 'waiting_for_retry', 'enqueued'])[s + 1], s,
               s = CASE WHEN k <= 400 THEN 1 ELSE 4 END,
               CASE WHEN k <= 400 THEN (now() AT TIME ZONE 'UTC') - (k * 600 + 1000 - s * 1000) * interval '1 millisecond'
                    ELSE (now() AT TIME ZONE 'UTC') - interval '3 minutes' + s * interval '30 seconds' END
          FROM generate_series(1, 500) k, generate_series(0, 4) s
         WHERE s <= CASE WHEN k <= 400 THEN 1 ELSE 4 END""")
    cur.execute("""
        INSERT INTO workflow_steps (workflow_step_uuid, task_uuid, named_step_uuid, created_at, updated_at)
        SELECT md5('q' || k)::uuid, md5('t' || k)::uuid, md5('ns2')::uuid,
               CASE WHEN k <= 5 THEN (now() AT TIME ZONE 'UTC') - interval '1 hour 38 minutes 30 seconds' + k * interval '1 second'
                    ELSE (now() AT TIME ZONE 'UTC') - interval '10 minutes' END,
               (now() AT TIME ZONE 'UTC')
          FROM generate_series(1, 8) k""")
    cur.execute("""
        INSERT INTO workflow_step_transitions (workflow_step_transition_uuid, workflow_step_uuid, to_state,
                                               sort_key, most_recent, created_at)
        SELECT md5('qx' || k)::uuid, md5('q' || k)::uuid, 'enqueued', 0, true,
               (now() AT TIME ZONE 'UTC') - interval '9 minutes'
          FROM generate_series(6, 8) k""")
    fx._grant_read(cur, "tasker", SCALE, "redrive_ro")
    c.close()


def tasker_truth():
    """The store's own answers (SQL written here): a failure is a step's transition into
    `error`, counted when it happened, whatever the step did next."""
    with psycopg2.connect(os.environ["RD_PG_ADMIN_DSN_TASKER"]) as c, c.cursor() as cur:
        cur.execute("SET search_path = %s, public" % SCALE)
        now = "(now() AT TIME ZONE 'UTC')"
        q = {
            "rate": "SELECT count(*) / 5.0 FROM workflow_step_transitions WHERE to_state = 'error' "
                    "AND created_at > %s - interval '5 minutes'" % now,
            "eligible": "SELECT count(*) FROM workflow_step_transitions t JOIN workflow_steps s USING (workflow_step_uuid) "
                        "WHERE t.most_recent AND t.to_state IN ('error', 'waiting_for_retry') AND (COALESCE(s.attempts, 0) = 0 "
                        "OR (COALESCE(s.max_attempts, 3) > 0 AND s.retryable AND COALESCE(s.attempts, 0) < COALESCE(s.max_attempts, 3)))",
            "oldest": "SELECT extract(epoch FROM %s - min(s.created_at))::float FROM workflow_steps s "
                      "LEFT JOIN workflow_step_transitions t ON t.workflow_step_uuid = s.workflow_step_uuid AND t.most_recent "
                      "WHERE COALESCE(t.to_state, 'pending') IN ('pending', 'enqueued')" % now,
            "dlq": "SELECT count(*) FROM tasks_dlq WHERE resolution_status = 'pending'",
            "groups": "SELECT count(*) FROM workflow_step_transitions WHERE most_recent AND to_state = 'error' "
                      "AND created_at > %s - interval '1 hour'" % now,
        }
        out = {}
        for k, sql in q.items():
            cur.execute(sql)
            out[k] = cur.fetchone()[0]
        cur.execute("SELECT COALESCE(t.to_state, 'pending'), count(*) FROM workflow_steps s "
                    "LEFT JOIN workflow_step_transitions t ON t.workflow_step_uuid = s.workflow_step_uuid AND t.most_recent "
                    "GROUP BY 1")
        out["exact"] = dict(cur.fetchall())
        cur.execute("""SELECT u.v, round(u.f * c.reltuples)::bigint
                         FROM pg_class c, pg_stats s,
                              unnest(s.most_common_vals::text::text[], s.most_common_freqs) u(v, f)
                        WHERE c.oid = 'workflow_steps'::regclass AND s.schemaname = %s
                          AND s.tablename = 'workflow_step_transitions' AND s.attname = 'to_state'""", (SCALE,))
        out["est"] = dict(cur.fetchall())
        cur.execute("SELECT workflow_step_uuid::text FROM workflow_steps ORDER BY created_at DESC, workflow_step_uuid DESC "
                    "LIMIT 100")
        out["page"] = [r[0] for r in cur.fetchall()]
        cur.execute("SELECT dlq_entry_uuid::text FROM tasks_dlq WHERE resolution_status = 'pending' "
                    "ORDER BY dlq_timestamp DESC, dlq_entry_uuid DESC LIMIT 50")
        out["dlq_page"] = [r[0] for r in cur.fetchall()]
        cur.execute("SELECT dlq_reason::text, count(*) FROM tasks_dlq WHERE resolution_status = 'pending' "
                    "GROUP BY 1 ORDER BY 2 DESC, 1")
        out["dlq_by_reason"] = [(k, n) for k, n in cur.fetchall()]
        # one of the steps retrying now: its transitions, oldest first (its chain)
        cur.execute("SELECT to_state FROM workflow_step_transitions WHERE workflow_step_uuid = md5('f450')::uuid "
                    "ORDER BY sort_key")
        out["chain"] = [r[0] for r in cur.fetchall()]
    out["chain_id"] = str(__import__("uuid").UUID(__import__("hashlib").md5(b"f450").hexdigest()))
    return out


def fill_openagents():
    """60,000 settled jobs (ANALYZEd: completed and failed from the statistics; 1,500 dead,
    1,500 with retries left), 12 workers (4 with a heartbeat past the 120 s that makes them
    dead), then, no ANALYZE since, 300 jobs created half an hour ago that failed in the last
    3 minutes (200 of them out of retries: dead), and a handful live: 5 queued (the oldest
    1 h 38 min old; 3 tagged email), 3 running."""
    c, cur = _admin("openagents")
    cur.execute(fx._ddl("openagents.sql", SCALE))
    cur.execute("SET search_path = %s, public" % SCALE)
    cur.execute("SET session_replication_role = replica")
    cur.execute("""
        INSERT INTO jobs (job_id, name, status, max_retries, retry_count, error, created_at, updated_at,
                          completed_at)
        SELECT 'j' || lpad(i::text, 6, '0'), 'job' || (i % 5),
               CASE WHEN i % 20 = 0 THEN 'failed' ELSE 'completed' END, 2,
               CASE WHEN i % 20 = 0 THEN i / 20 % 4 ELSE 0 END,
               CASE WHEN i % 20 = 0 THEN json_build_object('type', CASE WHEN i % 40 = 0 THEN 'TimeoutError'
                                                                      ELSE 'RuntimeError' END,
                                                            'message', 'worker lost') END,
               extract(epoch FROM now()) - 10800 - (60000 - i) * 0.1,
               extract(epoch FROM now()) - 10800 - (60000 - i) * 0.1 + 2,
               extract(epoch FROM now()) - 10800 - (60000 - i) * 0.1 + 2
          FROM generate_series(1, 60000) i""")
    cur.execute("""
        INSERT INTO workers (worker_id, hostname, status, last_heartbeat, running_jobs, tags)
        SELECT 'w' || k, 'host' || k, 'active',
               extract(epoch FROM now()) - CASE WHEN k <= 4 THEN 600 ELSE 10 END, '[]', '["email"]'
          FROM generate_series(1, 12) k""")
    cur.execute("VACUUM (ANALYZE) jobs")
    cur.execute("""
        INSERT INTO jobs (job_id, name, status, max_retries, retry_count, error, created_at, updated_at,
                          completed_at)
        SELECT 'p' || lpad(k::text, 6, '0'), 'pay.charge', 'FAILED', 1, k % 3,
               json_build_object('type', 'PaymentError', 'message', 'PaymentGateway: timed out'),
               extract(epoch FROM now()) - 1800, extract(epoch FROM now()) - k * 0.6,
               extract(epoch FROM now()) - k * 0.6
          FROM generate_series(1, 300) k""")
    cur.execute("""
        INSERT INTO jobs (job_id, name, status, max_retries, retry_count, created_at, updated_at)
        SELECT 'l' || k, 'live', CASE WHEN k <= 5 THEN 'queued' ELSE 'running' END, 1, 0,
               extract(epoch FROM now()) - CASE WHEN k <= 5 THEN 5910 - k ELSE 600 END,
               extract(epoch FROM now())
          FROM generate_series(1, 8) k""")
    cur.execute("INSERT INTO job_tags (job_id, tag) SELECT 'l' || k, 'email' FROM generate_series(1, 3) k")
    fx._grant_read(cur, "openagents", SCALE, "redrive_ro")
    c.close()


def openagents_truth():
    with psycopg2.connect(os.environ["RD_PG_ADMIN_DSN_OPENAGENTS"]) as c, c.cursor() as cur:
        cur.execute("SET search_path = %s, public" % SCALE)
        dead = "lower(status) = 'failed' AND retry_count >= max_retries"
        q = {
            "rate": "SELECT count(*) / 5.0 FROM jobs WHERE lower(status) = 'failed' "
                    "AND COALESCE(completed_at, updated_at) > extract(epoch FROM now()) - 300",
            "eligible": "SELECT count(*) FROM jobs WHERE lower(status) = 'failed' AND retry_count < max_retries",
            "oldest": "SELECT (extract(epoch FROM now()) - min(created_at))::float FROM jobs WHERE lower(status) = 'queued'",
            "dlq": "SELECT count(*) FROM jobs WHERE " + dead,
            "groups": "SELECT count(*) FROM jobs WHERE lower(status) = 'failed' AND created_at > extract(epoch FROM now()) - 3600",
            "workers": "SELECT count(*) FROM workers",
            "stale": "SELECT count(*) FROM workers WHERE last_heartbeat < extract(epoch FROM now()) - 120",
        }
        out = {}
        for k, sql in q.items():
            cur.execute(sql)
            out[k] = cur.fetchone()[0]
        cur.execute("SELECT status, count(*) FROM jobs GROUP BY 1")
        raw = dict(cur.fetchall())
        cur.execute("""SELECT u.v, round(u.f * c.reltuples)::bigint
                         FROM pg_class c, pg_stats s,
                              unnest(s.most_common_vals::text::text[], s.most_common_freqs) u(v, f)
                        WHERE c.oid = 'jobs'::regclass AND s.schemaname = %s
                          AND s.tablename = 'jobs' AND s.attname = 'status'""", (SCALE,))
        est = {k: v for k, v in cur.fetchall() if v >= 2000}
        # a status in either case is one: the big one's estimate plus the other case's exact count
        out["exact"], out["est"] = {}, {}
        for r, n in raw.items():
            out["exact"][r.lower()] = out["exact"].get(r.lower(), 0) + n
            out["est"][r.lower()] = out["est"].get(r.lower(), 0) + est.get(r, n)
        cur.execute("SELECT job_id FROM jobs ORDER BY created_at DESC, job_id DESC LIMIT 100")
        out["page"] = [r[0] for r in cur.fetchall()]
        cur.execute("SELECT job_id FROM jobs WHERE " + dead + " ORDER BY created_at DESC, job_id DESC LIMIT 50")
        out["dlq_page"] = [r[0] for r in cur.fetchall()]
        cur.execute("SELECT count(*) FROM jobs WHERE " + dead + " AND strpos(lower(error::text), 'paymentgateway') > 0")
        out["dlq_search"] = cur.fetchone()[0]
        cur.execute("SELECT error->>'type', count(*) FROM jobs WHERE " + dead + " GROUP BY 1 ORDER BY 2 DESC, 1")
        out["dlq_by_reason"] = [(k, n) for k, n in cur.fetchall()]
        cur.execute("SELECT COALESCE(t.tag, '(untagged)'), count(*) FROM jobs j LEFT JOIN job_tags t USING (job_id) "
                    "WHERE lower(j.status) = 'queued' GROUP BY 1")
        out["queues"] = dict(cur.fetchall())
    return out


AL_PREFIX = "scale34-alakai"


def _iso(t):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + ".%03dZ" % int((t % 1) * 1000)


def fill_alakai():
    """1,500 Alakai tasks under a prefix of their own (more than a page; 75 out of budget,
    75 with a retry left), 80 that failed in the last 4 minutes, 3 running and 2 running for
    3 hours (orphan suspects: dead letters too)."""
    r = fx.stacklib.redis_client(os.environ)
    for k in r.scan_iter(AL_PREFIX + ":*"):
        r.delete(k)
    now = time.time()
    pipe = r.pipeline(transaction=False)

    def rec(task, attempt, status, disp, res=None, msg=None):
        d = {"status": status, "attempt": attempt, "dispatchedAt": _iso(disp),
             "taskSnapshot": {"taskId": task, "type": "render"}}
        if res:
            d["resolvedAt"] = _iso(res)
        if msg:
            d["errorCode"], d["errorMessage"] = "E", msg
        return json.dumps(d)
    for i in range(1500):
        task = "t%05d" % i
        disp = now - 10800 - (1500 - i) * 2
        if i % 20 == 0:
            f = {"1": rec(task, 1, "failed", disp - 1, disp, "render crashed"),
                 "2": rec(task, 2, "failed", disp, disp + 1, "render crashed")}
        elif i % 20 == 10:
            f = {"1": rec(task, 1, "failed", disp, disp + 1, "render crashed")}
        else:
            f = {"1": rec(task, 1, "succeeded", disp, disp + 1)}
        pipe.hset("%s:%s" % (AL_PREFIX, task), mapping=f)
    for k in range(80):
        task = "f%05d" % k
        pipe.hset("%s:%s" % (AL_PREFIX, task), "1",
                  rec(task, 1, "failed", now - 1800 + k, now - 3 * k - 1, "PaymentGateway: timed out"))
    for k in range(5):
        task = "r%05d" % k
        pipe.hset("%s:%s" % (AL_PREFIX, task), "1", rec(task, 1, "running", now - (60 if k < 3 else 10800) - k))
    pipe.execute()


def alakai_truth():
    """The store's own records (HGETALL of every task under the prefix): each task's newest
    attempt, judged as Alakai's core does (failed with attempt <= MAX_RETRIES 1: retryable)."""
    import datetime as dt
    r = fx.stacklib.redis_client(os.environ)
    now = time.time()

    def ts(v):
        return dt.datetime.strptime(v, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=dt.timezone.utc).timestamp() \
            if v else None
    tasks = []
    for key in r.scan_iter(AL_PREFIX + ":*"):
        h = r.hgetall(key)
        new = json.loads(h[max(h, key=lambda f: int(f))])
        tasks.append((key.decode().split(":", 1)[1], new["status"], new["attempt"], ts(new["dispatchedAt"]),
                      ts(new.get("resolvedAt"))))
    failed = [t for t in tasks if t[1] == "failed"]
    orphan = [t for t in tasks if t[1] == "running" and t[3] < now - 7200]
    dead = [t for t in tasks if (t[1] == "failed" and t[2] > 1) or t in orphan]
    newest = sorted(tasks, key=lambda t: (t[3], t[0]), reverse=True)
    out = {"eligible": sum(1 for t in failed if t[2] <= 1),
           "rate": sum(1 for t in failed if t[4] and t[4] > now - 300) / 5.0,
           "dlq": len(dead), "groups": sum(1 for t in failed if (t[4] or t[3]) > now - 3600),
           "exact": {}, "page": [t[0] for t in newest[:100]],
           "dlq_page": [t[0] for t in sorted(dead, key=lambda t: (t[3], t[0]), reverse=True)],
           "dlq_by_reason": sorted([("budget exhausted", len(dead) - len(orphan)),
                                    ("orphan suspect", len(orphan))], key=lambda x: -x[1])}
    for t in tasks:
        out["exact"][t[1]] = out["exact"].get(t[1], 0) + 1
    out["est"] = out["exact"]
    return out


def scale_pair_config(tmp_path):
    p = tmp_path / "pair.conf"
    p.write_text('[system "tsk"]\nprofile = tasker\nstore = %s\nschema = %s\npoll = 2s\n\n'
                 '[system "oa"]\nprofile = openagents\nstore = %s\nschema = %s\npoll = 2s\n\n'
                 '[system "al"]\nprofile = alakai\nstore = %s\nprefix = %s\nmax_retries = 1\npoll = 2s\n'
                 % (os.environ["RD_PG_DSN_TASKER"], SCALE, os.environ["RD_PG_DSN_OPENAGENTS"], SCALE,
                    os.environ["RD_REDIS_URL"], AL_PREFIX))
    return p


def check_system_json(tmp_path, conf, name, want, fleet):
    """One system's fleet row, overview and lists (`snapshot --json`) against the store.
    want["oldest"] None: the store has no queued state (Alakai): the figure is not given."""
    row = next(r for r in fleet if r["system"] == name)
    ctx = (name, row, {k: v for k, v in want.items() if not isinstance(v, list)})
    assert row["retry_eligible"] == want["eligible"] and row["retry_eligible_source"] == "store", ctx
    assert not row["retry_eligible_lower_bound"] and not row["retry_eligible_upper_bound"], ctx
    assert row["failing_per_min"] == float(want["rate"]), ctx
    if want["oldest"] is None:
        assert row["oldest_queued_age_s"] is None and row["oldest_queued_source"] != "store", ctx
    else:
        assert abs(row["oldest_queued_age_s"] - want["oldest"]) < 30 and row["oldest_queued_source"] == "store", ctx
    assert row["dlq_size"] == want["dlq"], ctx
    one = snap(tmp_path, conf, "--system", name, "snapshot")
    assert (one["retry_eligible"], one["failing_rate"], one["dlq_total"]) == \
        (want["eligible"], float(want["rate"]), want["dlq"]), (name, one["retry_eligible"], one["failing_rate"])
    if want["oldest"] is not None:
        assert abs(one["oldest_queued_age_s"] - want["oldest"]) < 30, (name, one["oldest_queued_age_s"], want)
    for c in one["counts"]:        # exact, or the statistics' estimate marked as one
        src = want["est"] if c["estimated"] else want["exact"]
        assert c["count"] == src[c["status"]], (name, c, want["exact"], want["est"])
    # PostgreSQL: the big terminal statuses from the statistics; Redis: every task counted
    assert any(c["estimated"] for c in one["counts"]) == (want["est"] is not want["exact"]), (name, one["counts"])
    assert {c["status"] for c in one["counts"]} == set(want["exact"]), (name, one["counts"], want["exact"])
    # the executions list: the store's newest page, more beyond it
    assert one["executions_more"] is True, name
    assert [e["id"] for e in one["executions"]] == want["page"][:len(one["executions"])], name
    assert len(one["executions"]) >= 50, (name, len(one["executions"]))
    # the DLQ: the store's pending entries, the newest page of them
    d = snap(tmp_path, conf, "--system", name, "snapshot", "--view", "dlq")
    ids = [e["id"] for e in d["dlq"]]      # a page of 50 from PostgreSQL; Alakai lists more
    assert d["dlq_total"] == want["dlq"] and len(ids) >= min(50, want["dlq"]) and ids == want["dlq_page"][:len(ids)], \
        (name, d["dlq_total"], ids[:3], want["dlq_page"][:3])
    # the error groups: every failure of the window in the store
    g = snap(tmp_path, conf, "--system", name, "snapshot", "--view", "groups")
    assert g["groups_scope"] == "store" and not g["groups_capped"], (name, g["groups_scope"])
    assert g["groups_failures"] == want["groups"] == sum(x["count"] for x in g["groups"]), \
        (name, g["groups_failures"], want["groups"])
    return one


def dlq_rows(lines, n):
    """The DLQ view's group rows: (key, count) each."""
    out = []
    for l in lines[3:3 + n]:
        m = re.match(r"\s*(.+?)\s{2,}(\d+)\s", l)
        out.append((m.group(1), int(m.group(2))) if m else l)
    return out


def test_tasker_openagents_alakai_every_view_equals_the_store_at_scale(tmp_path):
    """Tasker, OpenAgents and Alakai on stores past every threshold (more rows than a page,
    the estimate threshold crossed, a handful of live rows, failures written a moment ago
    with no ANALYZE): the fleet, the overview, the executions, DLQ, groups, queues, workers
    and chain lists, the DLQ's group-by and the history equal the store's own SQL (Alakai:
    its own records)."""
    try:
        every_view_at_scale(tmp_path)
    finally:     # the fixtures' stores as they were: the scale data in places of its own, gone
        r = fx.stacklib.redis_client(os.environ)
        for k in r.scan_iter(AL_PREFIX + ":*"):
            r.delete(k)
        for db in ("tasker", "openagents"):
            _admin(db)[0].close()


def every_view_at_scale(tmp_path):
    fill_tasker()
    fill_openagents()
    fill_alakai()
    conf = scale_pair_config(tmp_path)
    tw, ow, aw = tasker_truth(), openagents_truth(), alakai_truth()
    aw["oldest"] = None
    systems = (("tsk", tw), ("oa", ow), ("al", aw))
    assert tw["rate"] > 90 and tw["dlq"] > 50 and tw["oldest"] > 5880, tw["rate"]
    assert ow["rate"] > 50 and ow["dlq"] > 50 and ow["oldest"] > 5880, ow["rate"]
    fleet = snap(tmp_path, conf, "snapshot", "--view", "fleet")["systems"]
    check_system_json(tmp_path, conf, "tsk", tw, fleet)
    check_system_json(tmp_path, conf, "al", aw, fleet)
    one = check_system_json(tmp_path, conf, "oa", ow, fleet)
    # OpenAgents' workers and queues: the store's rows, its heartbeats past 120 s dead
    assert len(one["workers"]) == ow["workers"], one["workers"]
    assert sum(1 for w in one["workers"] if w["health"] == "unhealthy") == ow["stale"], one["workers"]
    oa_row = next(r for r in fleet if r["system"] == "oa")
    assert (oa_row["workers"], oa_row["workers_unhealthy"]) == (ow["workers"], ow["stale"]), oa_row
    assert {q["name"]: q["depth"] for q in one["queues"]} == ow["queues"], one["queues"]
    # OpenAgents' DLQ searched by the store, every page of it (the whole-set action's
    # selection; nothing sent): the store's count of dead jobs holding the text (before,
    # all 1,700 dead jobs were read, 34 pages, and searched here)
    cli = tmp_path / "oa-cli.conf"
    cli.write_text('[system "oa"]\nprofile = openagents\nstore = %s\nschema = %s\ncore = http://127.0.0.1:1\n'
                   'auth = bearer\ntoken = env:RD_CORE_TOKEN\n' % (os.environ["RD_PG_DSN_OPENAGENTS"], SCALE))
    env = {k: v for k, v in os.environ.items() if k.startswith("RD_")}
    env.update(PATH="/usr/bin:/bin", LANG="C.UTF-8", TZ="UTC", HOME=str(tmp_path), XDG_STATE_HOME=str(tmp_path / "state"))
    p = subprocess.run([BIN, "--config", str(cli), "--system", "oa", "retry", "--dlq", "--filter", "PaymentGateway",
                        "--select-only"], env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    sel = json.loads(p.stdout.splitlines()[-1])
    assert sel["total"] == ow["dlq_search"] and ow["dlq_search"] > 50, (sel, ow["dlq_search"])
    assert sel["read"] == ow["dlq_search"], sel      # the store searched: the others never read
    # Tasker's chain of a step retrying now: its transitions, oldest first
    ch = snap(tmp_path, conf, "--system", "tsk", "snapshot", "--view", "chain", tw["chain_id"])
    assert [e["status"] for e in ch["chain"]] == tw["chain"], (ch["chain"], tw["chain"])

    t = Term(tmp_path, conf, cols=200, rows=40)
    try:
        lines = screen_lines(t, "Fleet  3 systems")
        for name, want in systems:
            row = next(l for l in lines if " %s " % name in l)
            assert " %.1f " % want["rate"] in row and " %d " % want["eligible"] in row, (row, want["rate"])
            assert want["oldest"] is None or " %s " % age_text(want["oldest"]) in row, (row, want["oldest"])
        for name, want in systems:
            t.child.send(":system %s\r" % name)
            text = "\n".join(screen_lines(t, "Overview  %s" % name))
            assert "failing now %.1f/min" % want["rate"] in text, text
            assert "retryable %d   oldest queued %s" % (want["eligible"], age_text(want["oldest"])
                                                         if want["oldest"] is not None else "-") in text, text
            # the DLQ grouped by reason: the store's counts of all its entries, not the page's
            # (Alakai's index holds every entry: all are loaded, and grouped here)
            t.child.send("5")
            loaded = want["dlq"] if name == "al" else 50
            t.wait_for("DLQ  %d peeked of %d" % (loaded, want["dlq"]))
            t.child.send("b")
            t.wait_for("DLQ by reason  %d groups of the %s entries" % (
                len(want["dlq_by_reason"]), ("%d" if name == "al" else "store's %d") % want["dlq"]))
            rows = dlq_rows(t.screen.display, len(want["dlq_by_reason"]))
            assert rows == want["dlq_by_reason"], (name, rows, want["dlq_by_reason"])
            t.child.send("b")
            t.child.send("b")
            t.child.send("0")
        # the history: a sample every 10 s of each system (the fleet's sessions keep it)
        t.child.send(":system tsk\r")
        t.child.send("H")
        t.wait_until(lambda: "failures/min  now %s" % hist_text(tw["rate"], True) in t.text(), secs=25,
                     what="Tasker's history at the store's failure rate")
        # exact: no bound mark, no note of bounds
        assert re.search(r"^retry-eligible  now %s\s*$" % hist_text(tw["eligible"], False), t.text(), re.M), t.text()
        t.quit()
    finally:
        if t.child.isalive():
            t.child.kill(9)
    for name, want in systems:
        h = snap(tmp_path, conf, "--system", name, "snapshot", "--view", "history")["history"]
        rates = [v for _, v in h["series"]["failures_per_min"] if v is not None]
        elig = [v for _, v in h["series"]["retry_eligible"] if v is not None]
        assert rates and rates[-1] == float(want["rate"]), (name, rates[-3:], want["rate"])
        assert elig and elig[-1] == want["eligible"], (name, elig[-3:], want["eligible"])
        assert h["bounds"] == {}, (name, h["bounds"])     # exact figures: no bound to mark
