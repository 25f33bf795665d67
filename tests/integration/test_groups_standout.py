"""What stands out about an error group against every execution of its window (issue 36,
item 1), on real stores: Attune era 2 (the profile's [query groups_window] and the groups
query's worker column, PostgreSQL) and Alakai (the swept Redis index, in C).

Data built so that one group is concentrated (one worker, one action) and another is spread
like its window: `snapshot --view groups --json` must list the concentration first with its
shares for the first and nothing for the second. The expected lists are computed here from
the rows themselves (an independent count of the window, then the documented rule: at least
5 members and 20 % of the group, lift >= 2, ranked by lift), and compared whole. A window
with too few executions says so (a note, never a number), and a hostile value reaches the
JSON sanitized.
"""
import json
import os
import time

import pytest

import stack_fixtures  # noqa: F401  (the stack's path and environment)
import stacklib
from snaphelp import need_env, snapshot, write_config

HERE = os.path.dirname(os.path.abspath(__file__))

CONC = "Parser choked on record %d"
CONC_FP = "Parser choked on record <n>"
SPREAD = "Upstream reset by peer (session %d)"
SPREAD_FP = "Upstream reset by peer (session <n>)"
SPREAD_ACTIONS = ["core.a", "core.b", "core.c", "core.d", "core.e"]
HOSTILE_ACTION = "evil\x1b]52;c;AAAA\x07\u202eact"
SAME = "Disk quota exceeded on /var/spool"


def expected(group_rows, window_rows):
    """The documented rule over (dimension -> value) dicts of the group's failures and of
    every execution of the window (the group's among them): the group against the window's
    other executions. [(dimension, value, n_group, n_window)], ranked."""
    out = []
    members = len(group_rows)
    rest = len(window_rows) - members
    if members < 5 or rest < 20:
        return out
    dims = sorted({d for r in group_rows for d in r})
    for d in dims:
        vals = {}
        for r in group_rows:
            if r.get(d) is not None:
                vals[r[d]] = vals.get(r[d], 0) + 1
        for v, n in vals.items():
            if n < 5 or n < 0.2 * members:
                continue
            w = max(n, sum(1 for r in window_rows if r.get(d) == v))
            lift = float("inf") if w == n else (n / members) / ((w - n) / rest)
            if lift >= 2:
                out.append((d, v, n, w, lift))
    out.sort(key=lambda x: (-x[4], -x[2]))
    return [x[:4] for x in out]


def got_list(group):
    return [(s["dimension"], s["value"], s["n_group"], s["n_window"]) for s in group["stands_out"]]


def check_shares(group, window_n):
    members = group["count"]
    for s in group["stands_out"]:
        assert s["in_group"] == round(s["n_group"] / members, 4), s
        assert s["in_window"] == round((s["n_window"] - s["n_group"]) / (window_n - members), 4), s
        if s["lift"] is None:            # none of the window's other executions has it
            assert s["n_window"] == s["n_group"] and s["in_window"] == 0, s
        else:
            assert s["lift"] >= 2 and abs(s["lift"] - s["in_group"] / s["in_window"]) < 0.01 * s["lift"], s


def groups_json(cfg, name, *args):
    s = snapshot(cfg, name, "--json", "--view", "groups", *args)
    assert s.rc == 0, s.err
    return s.json


def by_fp(doc):
    return {g["fingerprint"]: g for g in doc["groups"]}


# ---- Attune era 2 ---------------------------------------------------------------------

def admin(sql, args=()):
    import psycopg2
    conn = psycopg2.connect(os.environ["RD_PG_ADMIN_DSN_ATTUNE2"])
    try:
        with conn, conn.cursor() as cur:
            cur.execute("SET search_path = attune, public")
            cur.execute(sql, args)
            return cur.fetchall() if cur.description else None
    finally:
        conn.close()


def insert(rows):
    """rows: (id, action_ref, status, worker, seconds ago, error or None, retry_count)."""
    for xid, act, st, wk, ago, err, rc in rows:
        admin("INSERT INTO execution (id, action, action_ref, config, env_vars, executor, status, result,"
              " created, updated, retry_count, max_retries, worker)"
              " SELECT %s, action, %s, '{}'::jsonb, env_vars, executor, %s, %s,"
              " now() - make_interval(secs => %s), now() - make_interval(secs => %s), %s, 3, %s"
              " FROM execution WHERE id = 2",
              (xid, act, st, json.dumps({"error": err}) if err else None, ago, ago - 5, rc, wk))


@pytest.fixture
def attune_incident():
    need_env("RD_PG_ADMIN_DSN_ATTUNE2", "RD_PG_DSN_ATTUNE2")
    stack_fixtures.reload("attune2")
    workers = [r[0] for r in admin("SELECT id FROM worker ORDER BY id")][:5]
    rows, xid = [], 50000
    # the window's ordinary work: 200 executions over five workers and five actions
    for k in range(200):
        rows.append((xid, SPREAD_ACTIONS[k % 5], "completed", workers[(k // 5) % 5], 60 + k * 10, None, 0))
        xid += 1
    # the concentrated group: 18 of 20 on one worker and one action of its own
    for k in range(20):
        wk, act = (workers[2], "ingest.parse") if k < 18 else (workers[k % 5], SPREAD_ACTIONS[k % 5])
        rows.append((xid, act, "failed", wk, 90 + k * 30, CONC % (1000 + k), 0))
        xid += 1
    # the spread group: 25 failures over the same workers and actions as the window
    for k in range(25):
        rows.append((xid, SPREAD_ACTIONS[k % 5], "failed", workers[(k // 5) % 5], 75 + k * 40, SPREAD % k, 0))
        xid += 1
    # one raw text on two workers (one row per worker from the store, one prototype in C):
    # 12 on the fourth worker, 3 on the first, all core.c
    for k in range(15):
        rows.append((xid, "core.c", "failed", workers[3] if k < 12 else workers[0], 80 + k * 50, SAME, 0))
        xid += 1
    insert(rows)
    yield workers
    stack_fixtures.reload("attune2")


def attune_window():
    """Every execution of the last hour, as the window's dimensions (an independent read)."""
    got = admin("SELECT worker::text, action_ref, retry_count + 1 FROM execution"
                " WHERE created > now() - interval '1 hour'")
    return [{"worker": w, "action": a, "attempt": str(n)} for w, a, n in got]


def attune_group(prefix):
    got = admin("SELECT worker::text, action_ref, retry_count + 1 FROM execution"
                " WHERE created > now() - interval '1 hour' AND status IN ('failed', 'timeout', 'abandoned')"
                " AND result->>'error' LIKE %s", (prefix + "%",))
    return [{"worker": w, "action": a, "attempt": str(n)} for w, a, n in got]


def attune_cfg(tmp_path):
    return write_config(tmp_path, {"a": {"profile": "attune-era2", "store": os.environ["RD_PG_DSN_ATTUNE2"],
                                         "core": "http://127.0.0.1:9", "auth": "none"}})


def test_attune_concentrated_group_lists_worker_and_action_spread_group_nothing(attune_incident, tmp_path):
    workers = attune_incident
    doc = groups_json(attune_cfg(tmp_path), "a")
    win = attune_window()
    sw = doc["stands_out_window"]
    assert sw["executions"] == len(win) and sw["capped"] is False, sw
    assert sw["compared"] == ["worker", "action", "attempt", "host"], sw
    assert sw["not_compared"] == ["queue", "version", "tag"], sw
    g = by_fp(doc)
    conc, spread = g[CONC_FP], g[SPREAD_FP]
    want = expected(attune_group("Parser choked"), win)
    # the worker's host names the same failures as the worker: said once
    assert got_list(conc) == want, (got_list(conc), want)
    assert [x[:2] for x in want] == [("action", "ingest.parse"), ("worker", str(workers[2]))], want
    first, second = conc["stands_out"]
    # ingest.parse: only the group's (none of the others); the worker: 18 against its others
    assert (first["in_group"], first["n_group"], first["in_window"], first["lift"]) == (0.9, 18, 0, None), first
    assert second["in_group"] == 0.9 and second["lift"] > 2, second
    check_shares(conc, len(win))
    assert conc["stands_out_note"] is None
    assert expected(attune_group("Upstream reset"), win) == []
    assert spread["stands_out"] == [] and spread["stands_out_note"] is None, spread
    # the raw text the store reads once per worker: one group, its tally whole, its worker
    same = g[SAME]
    assert same["count"] == 15, same
    ago = [80 + k * 50 - 5 for k in range(15)]              # updated = created + 5 s
    assert abs(same["last_seen"] - (time.time() - min(ago))) < 30, same
    assert abs(same["first_seen"] - (time.time() - max(ago))) < 30, same
    want = expected(attune_group("Disk quota"), win)
    assert got_list(same) == want and ("worker", str(workers[3])) in [x[:2] for x in want], (got_list(same), want)


def test_attune_baseline_at_its_bound_says_capped(attune_incident, tmp_path):
    """A bound below the window's executions (REDRIVE_GROUPS_CAP, the groups' bound, is the
    baseline's too): the newest ones are read, and the JSON and the text say capped."""
    env = {"REDRIVE_GROUPS_CAP": "100"}
    s = snapshot(attune_cfg(tmp_path), "a", "--json", "--view", "groups", env=env)
    assert s.rc == 0, s.err
    sw = s.json["stands_out_window"]
    assert (sw["executions"], sw["capped"]) == (100, True), sw
    t = snapshot(attune_cfg(tmp_path), "a", "--view", "groups", env=env)
    assert t.rc == 0, t.err
    lines = [ln for ln in t.out.splitlines() if "[the window's newest 100 executions]" in ln]
    assert len(lines) == len(s.json["groups"]) and lines, t.out


def test_attune_hostile_action_is_sanitized_and_a_thin_window_says_so(tmp_path):
    need_env("RD_PG_ADMIN_DSN_ATTUNE2")
    stack_fixtures.reload("attune2")
    try:
        admin("DELETE FROM execution WHERE created > now() - interval '1 hour'")
        workers = [r[0] for r in admin("SELECT id FROM worker ORDER BY id")]
        # 8 failures of a hostile action and 4 other executions: 12 in the window (< 20)
        insert([(60000 + k, HOSTILE_ACTION, "failed", workers[0], 100 + k, CONC % k, 0) for k in range(8)] +
               [(60100 + k, "core.a", "completed", workers[1], 100 + k, None, 0) for k in range(4)])
        doc = groups_json(attune_cfg(tmp_path), "a")
        conc = by_fp(doc)[CONC_FP]
        assert conc["stands_out"] is None
        assert conc["stands_out_note"] == "too few other executions in the window to compare (4 < 20)"
        assert doc["stands_out_window"]["executions"] == 12
        # enough of the window: the hostile action is listed, sanitized
        insert([(60200 + k, "core.b", "completed", workers[1 + k % 3], 200 + k, None, 0) for k in range(40)])
        snap = snapshot(attune_cfg(tmp_path), "a", "--json", "--view", "groups")
        assert snap.rc == 0, snap.err
        for bad in ("\x1b", "\x07", "\u202e"):      # JSON escapes them: no raw byte out
            assert bad not in snap.out
        conc = by_fp(snap.json)[CONC_FP]
        vals = [s["value"] for s in conc["stands_out"] if s["dimension"] == "action"]
        assert vals == [HOSTILE_ACTION], conc            # the value itself, whole
        # the text snapshot shows it sanitized
        text = snapshot(attune_cfg(tmp_path), "a", "--view", "groups")
        assert text.rc == 0, text.err
        assert "\x1b" not in text.out and "\u202e" not in text.out
        want = ("  stands out: 100 % on worker " + str(workers[0]) + " (0 % of the hour's other executions)"
                " \u00b7 100 % evil\u241b]52;c;AAAA\u2407<U+202E>act (0 %)\n")
        assert want in text.out, text.out
    finally:
        stack_fixtures.reload("attune2")


def test_attune_era1_records_no_worker(tmp_path):
    """Era 1 has no execution.worker: the profile's baseline names what it records, and the
    JSON says worker is not recorded (never a made-up share)."""
    need_env("RD_PG_DSN_ATTUNE1")
    cfg = write_config(tmp_path, {"a": {"profile": "attune-era1", "store": os.environ["RD_PG_DSN_ATTUNE1"],
                                        "core": "http://127.0.0.1:9", "auth": "none"}})
    doc = groups_json(cfg, "a", "--since", "30d")
    sw = doc["stands_out_window"]
    assert sw is not None and "worker" in sw["not_compared"] and "worker" not in sw["compared"], sw
    for g in doc["groups"]:
        assert all(s["dimension"] != "worker" for s in (g["stands_out"] or [])), g


# ---- Alakai -------------------------------------------------------------------------

PREFIX = "standout"


def _iso(t):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + ".000Z"


@pytest.fixture
def alakai_incident():
    need_env("RD_REDIS_URL")
    r = stacklib.redis_client(os.environ)
    for k in r.scan_iter(PREFIX + ":*"):
        r.delete(k)
    now = int(time.time())
    tasks = []      # (name, status, attempt, error)
    for k in range(200):
        tasks.append((SPREAD_ACTIONS[k % 5], "succeeded", 1 + (k % 5 == 0), None))
    for k in range(20):
        tasks.append(("ingest.parse" if k < 18 else SPREAD_ACTIONS[k % 5], "failed", 2 if k < 18 else 1 + (k % 2),
                      CONC % k))
    for k in range(24):
        tasks.append((SPREAD_ACTIONS[k % 5], "failed", 1 + (k % 5 == 0), SPREAD % k))
    for i, (nm, st, att, err) in enumerate(tasks):
        at = now - 60 - i * 5
        fields = {}
        for a in range(1, att + 1):
            rec = {"status": st if a == att else "failed", "attempt": a, "dispatchedAt": _iso(at - 20),
                   "resolvedAt": _iso(at), "taskSnapshot": {"taskId": "s%03d" % i, "type": nm}}
            if err or a < att:
                rec.update(errorCode="E", errorMessage=err or "earlier")
            fields[str(a)] = json.dumps(rec)
        r.hset("%s:s%03d" % (PREFIX, i), mapping=fields)
    yield tasks
    for k in r.scan_iter(PREFIX + ":*"):
        r.delete(k)


def test_alakai_concentrated_group_lists_action_and_attempt_spread_group_nothing(alakai_incident, tmp_path):
    tasks = alakai_incident
    cfg = write_config(tmp_path, {"a": {"profile": "alakai", "store": os.environ["RD_REDIS_URL"],
                                        "core": "http://127.0.0.1:9", "auth": "none", "max_retries": "1",
                                        "prefix": PREFIX}})
    doc = groups_json(cfg, "a")
    win = [{"action": n, "attempt": str(a)} for n, _, a, _ in tasks]
    sw = doc["stands_out_window"]
    assert sw["executions"] == len(win), sw
    assert sw["compared"] == ["action", "attempt"], sw
    assert sw["not_compared"] == ["worker", "queue", "host", "version", "tag"], sw
    g = by_fp(doc)
    conc_rows = [{"action": n, "attempt": str(a)} for n, _, a, e in tasks if e and e.startswith("Parser")]
    want = expected(conc_rows, win)
    assert got_list(g[CONC_FP]) == want, (got_list(g[CONC_FP]), want)
    assert [x[:2] for x in want] == [("action", "ingest.parse"), ("attempt", "2")], want
    assert (g[CONC_FP]["stands_out"][0]["in_group"], g[CONC_FP]["stands_out"][0]["n_group"]) == (0.9, 18)
    check_shares(g[CONC_FP], len(win))
    spread_rows = [{"action": n, "attempt": str(a)} for n, _, a, e in tasks if e and e.startswith("Upstream")]
    assert expected(spread_rows, win) == []
    assert g[SPREAD_FP]["stands_out"] == [], g[SPREAD_FP]


# ---- onset (issue 36, item 2): a group's first minute against the history ring ---------------

ONSET_ERR = "Ledger write timed out after %d ms"
ONSET_FP = "Ledger write timed out after <n> ms"
OTHER_ERR = "Cache miss storm on shard %d"
OTHER_FP = "Cache miss storm on shard <n>"
LATE_ERR = "Late error %d"
LATE_FP = "Late error <n>"


def write_history(home, system, samples, events, queue="billing"):
    """The ring as the console saves it (core/history.c): a queue slot, one sample line per
    10 s step (failures/min, eligible, dlq, unhealthy, then six queue depths), the events."""
    d = os.path.join(home, "state", "redrive", "history")
    os.makedirs(d, mode=0o700, exist_ok=True)
    os.chmod(os.path.join(home, "state", "redrive"), 0o700)
    os.chmod(os.path.join(home, "state"), 0o700)
    lines = ["redrive-history 1", "q 0 " + queue]
    for step, dlq, depth in samples:
        lines.append("s %d 1 0 %d 0 %d - - - - -" % (step, dlq, depth))
    for step, kind, name in events:
        lines.append("e %d %s %s" % (step, kind, name))
    p = os.path.join(d, system + ".hist")
    with open(p, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.chmod(p, 0o600)


def insert_at(rows):
    """rows: (id, action_ref, error, updated epoch)."""
    for xid, act, err, at in rows:
        admin("INSERT INTO execution (id, action, action_ref, config, env_vars, executor, status, result,"
              " created, updated, retry_count, max_retries, worker)"
              " SELECT %s, action, %s, '{}'::jsonb, env_vars, executor, 'failed', %s,"
              " to_timestamp(%s) - interval '5 seconds', to_timestamp(%s), 0, 3, worker FROM execution WHERE id = 2",
              (xid, act, json.dumps({"error": err}), at, at))


def hhmm(t):
    return time.strftime("%H:%M", time.gmtime(t))


def test_onset_against_a_worker_turned_unhealthy_a_minute_before(tmp_path):
    need_env("RD_PG_ADMIN_DSN_ATTUNE2")
    stack_fixtures.reload("attune2")
    try:
        now = time.time()
        onset = (int(now) // 60) * 60 - 300             # the group's first minute: 5 minutes ago
        # the group: its first failure 7 s into that minute; another group 40 s later (the
        # same minute: "1 other group started"); a third 3 minutes later (not counted)
        insert_at([(70000 + k, "ledger.write", ONSET_ERR % (100 + k), onset + 7 + k * 20) for k in range(6)] +
                  [(70100 + k, "cache.fill", OTHER_ERR % k, onset + 40 + k) for k in range(3)] +
                  [(70200 + k, "late.job", LATE_ERR % k, onset + 180 + k) for k in range(2)])
        # the ring: every 10 s from 4 minutes before the onset to 2 after; worker-7 turned
        # unhealthy a minute before it; billing's depth 10 → 50 and the DLQ 3 → 7 at it
        samples = []
        for step in range((onset - 240) // 10, (onset + 120) // 10):
            t = step * 10
            samples.append((step, 3 if t < onset - 30 else 7, 10 if t < onset - 20 else 50))
        events = [((onset - 50) // 10, "u", "worker-7"), ((onset - 600) // 10, "u", "worker-old"),
                  ((onset + 10) // 10, "d", "worker-%1B%5B2J-evil")]
        write_history(str(tmp_path), "a", samples, events)
        cfg = write_config(tmp_path, {"a": {"profile": "attune-era2", "store": os.environ["RD_PG_DSN_ATTUNE2"],
                                            "core": "http://127.0.0.1:9", "auth": "none"}})
        s = snapshot(cfg, "a", "--json", "--view", "groups",
                     env={"HOME": str(tmp_path), "XDG_STATE_HOME": os.path.join(str(tmp_path), "state")})
        assert s.rc == 0, s.err
        assert "history" not in s.json               # the hour itself only with --history
        g = by_fp(s.json)
        on = g[ONSET_FP]["onset"]
        assert on["state"] == "known" and abs(on["at"] - onset) < 0.001, on
        assert on["with"] == [
            {"kind": "worker_unhealthy", "at": float(onset - 50), "name": "worker-7"},
            {"kind": "worker_draining", "at": float(onset + 10), "name": "worker-\x1b[2J-evil"},
            {"kind": "queue_depth", "at": float(onset), "name": "billing", "from": 10, "to": 50},
            {"kind": "dlq_growth", "at": float(onset), "from": 3, "to": 7},
            {"kind": "groups_started", "at": float(onset), "count": 1},
        ], on["with"]
        assert on["text"] == ("started %s \u2014 %s worker worker-7 unhealthy \u00b7 %s worker "
                              "worker-\u241b[2J-evil draining \u00b7 queue billing depth \u00d75 \u00b7 DLQ +4 "
                              "\u00b7 1 other group started" % (hhmm(onset), hhmm(onset - 50), hhmm(onset + 10)))
        # the group 3 minutes later: the ring has no change in its minutes but its own
        late = g[LATE_FP]["onset"]
        assert late["state"] == "known" and late["with"] == [], late
        assert late["text"] == "started %s \u2014 nothing else changed in the history" % hhmm(onset + 180)
        # without the ring: said, the other groups still counted
        s = snapshot(cfg, "a", "--json", "--view", "groups",
                     env={"HOME": str(tmp_path / "none"), "XDG_STATE_HOME": str(tmp_path / "none")})
        on = by_fp(s.json)[ONSET_FP]["onset"]
        assert on["state"] == "no_history", on
        assert on["with"] == [{"kind": "groups_started", "at": float(onset), "count": 1}], on
        assert on["text"] == "started %s \u2014 no history of those minutes \u00b7 1 other group started" % hhmm(onset)
        # a window that starts 30 s before the group's first failure: in its first minute,
        # so it may have begun before the window: no onset claimed
        since = int(time.time() - (onset + 7)) + 30
        s = snapshot(cfg, "a", "--json", "--view", "groups", "--since", "%ds" % since,
                     env={"HOME": str(tmp_path), "XDG_STATE_HOME": os.path.join(str(tmp_path), "state")})
        assert s.rc == 0, s.err
        on = by_fp(s.json)[ONSET_FP]["onset"]
        assert (on["state"], on["at"], on["with"]) == ("before_window", None, None), on
        assert on["text"] == "started before the window (its first failure is in the window's first minute)"
    finally:
        stack_fixtures.reload("attune2")


# ---- OpenAgents ------------------------------------------------------------------------

def oa_sql(sql, args=()):
    import psycopg2
    conn = psycopg2.connect(os.environ["RD_PG_ADMIN_DSN_OPENAGENTS"])
    try:
        with conn, conn.cursor() as cur:
            cur.execute(sql, args)
            return cur.fetchall() if cur.description else None
    finally:
        conn.close()


def test_openagents_concentrated_group_lists_worker_and_name_spread_group_nothing(tmp_path):
    need_env("RD_PG_ADMIN_DSN_OPENAGENTS", "RD_PG_DSN_OPENAGENTS")
    stack_fixtures.reload("openagents")
    try:
        workers = [r[0] for r in oa_sql("SELECT worker_id FROM workers ORDER BY worker_id")][:3]
        now = time.time()
        rows = []   # (name, status, worker, ago, error)
        for k in range(150):
            rows.append((SPREAD_ACTIONS[k % 5], "completed", workers[k % 3], 60 + k * 10, None))
        for k in range(20):
            rows.append(("ingest.parse" if k < 16 else SPREAD_ACTIONS[k % 5], "failed",
                         workers[1] if k < 16 else workers[k % 3], 90 + k * 30, CONC % k))
        for k in range(30):
            rows.append((SPREAD_ACTIONS[k % 5], "failed", workers[k % 3], 75 + k * 40, SPREAD % k))
        for i, (nm, st, wk, ago, err) in enumerate(rows):
            oa_sql("INSERT INTO jobs (job_id, name, status, created_at, updated_at, completed_at, retry_count,"
                   " max_retries, error, worker_id) VALUES (%s, %s, %s, %s, %s, %s, 0, 0, %s, %s)",
                   ("so-%04d" % i, nm, st, now - ago, now - ago + 3, now - ago + 3,
                    json.dumps({"message": err}) if err else None, wk))
        cfg = write_config(tmp_path, {"o": {"profile": "openagents", "store": os.environ["RD_PG_DSN_OPENAGENTS"],
                                            "core": "http://127.0.0.1:9", "auth": "none"}})
        doc = groups_json(cfg, "o")
        win = [{"worker": w, "action": n, "attempt": str(a)} for w, n, a in oa_sql(
            "SELECT worker_id, name, COALESCE(retry_count, 0) + 1 FROM jobs"
            " WHERE created_at > extract(epoch FROM now()) - 3600")]
        sw = doc["stands_out_window"]
        assert sw["executions"] == len(win) and sw["compared"] == ["worker", "action", "attempt", "host"], sw
        g = by_fp(doc)
        conc_rows = [{"worker": w, "action": n, "attempt": "1"} for n, st, w, _, e in rows if e and e.startswith("Parser")]
        want = expected(conc_rows, win)
        assert got_list(g[CONC_FP]) == want, (got_list(g[CONC_FP]), want)
        assert [x[0] for x in want] == ["action", "worker"], want
        assert g[CONC_FP]["stands_out"][0]["in_group"] == 0.8, g[CONC_FP]
        check_shares(g[CONC_FP], len(win))
        spread_rows = [{"worker": w, "action": n, "attempt": "1"} for n, st, w, _, e in rows if e and e.startswith("Upstream")]
        assert expected(spread_rows, win) == []
        assert g[SPREAD_FP]["stands_out"] == [], g[SPREAD_FP]
    finally:
        stack_fixtures.reload("openagents")
