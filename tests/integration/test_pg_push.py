"""Push for the PostgreSQL source (issue 25, docs/sources.md "Push"), on the real stack.

The test schema carries Attune's own notify triggers (tests/stack/schema/attune_era*.sql,
as Attune's migrations write them), so the store notifies as a real one does:
- a write shows up far sooner than the poll (poll = 30 s: it appears within seconds);
- a burst of 1,000 notifications costs a handful of refreshes (one per push_min_interval),
  counted by the source itself (RD_PG_DEBUG prints its counters when it is freed);
- on a hot standby (no NOTIFY there) push is off, and `snapshot --json` and `check` say
  "push: off — standby";
- the console's session never JIT-compiles (the counts query, JIT'ed, made the push
  refresh 0.3-1.2 s under load instead of ~20 ms).
"""
import math
import os
import re
import subprocess
import sys
import time

import pytest

from snaphelp import ROOT, SourceWatch, need_env, snapshot, write_config

sys.path.insert(0, os.path.join(ROOT, "tests", "actions"))
from actlib import admin_sql  # noqa: E402

MIN_INTERVAL = 0.25          # push_min_interval's default
NEW_ID = 990001


class Watch(SourceWatch):
    """rd-source-watch on a config of one Attune era-2 system, its stderr kept."""

    def __init__(self, tmp_path, store, poll="30s", extra=""):
        conf = tmp_path / "config"
        conf.write_text('[system "push"]\nprofile = attune\nstore = %s\nschema = attune\n'
                        'poll = %s\n%s' % (store, poll, extra))
        conf.chmod(0o600)
        self.err = tmp_path / "stderr"
        with open(self.err, "w") as err:
            super().__init__(conf, ready_timeout=30, env={"RD_PG_DEBUG": "1"}, stderr=err)

    def ask(self, line, secs=60):
        return super().ask(line, secs)

    def close(self):
        """Quits; the source's push counters (notifications, refreshes)."""
        self.p.stdin.write("quit\n")
        self.p.stdin.flush()
        self.p.wait(10)
        for line in self.err.read_text().splitlines():
            if line.startswith("pg push: notifications "):
                f = line.split()
                return int(f[3].rstrip(",")), int(f[6].rstrip(","))
        pytest.fail("no push counters on stderr: %r" % self.err.read_text()[-2000:])


@pytest.fixture
def store():
    need_env("RD_PG_DSN_ATTUNE2", "RD_PG_ADMIN_DSN_ATTUNE2")
    admin_sql("DELETE FROM execution WHERE id >= %s", (NEW_ID,))
    yield os.environ["RD_PG_DSN_ATTUNE2"]
    admin_sql("DELETE FROM execution WHERE id >= %s", (NEW_ID,))


def insert(eid, status="failed"):
    admin_sql("INSERT INTO execution (id, action, action_ref, status, created, updated)"
              " VALUES (%s, 1, 'push.test', %s, now(), now())", (eid, status))


def test_write_appears_far_sooner_than_the_poll(tmp_path, store):
    w = Watch(tmp_path, store, poll="30s")
    try:
        assert w.ask("json overview").find("on — LISTEN execution_created, "
                                           "execution_status_changed") > 0
        insert(NEW_ID)
        got = w.ask("exec %d failed 20" % NEW_ID, 30)
        assert got.startswith("ok "), got
        assert float(got.split()[1]) < 10_000, got          # the poll is 30 s (150 s with push)
        admin_sql("UPDATE execution SET status = 'completed' WHERE id = %s", (NEW_ID,))
        got = w.ask("exec %d completed 20" % NEW_ID, 30)
        assert got.startswith("ok "), got
        assert float(got.split()[1]) < 10_000, got
    finally:
        n, refreshes = w.close()
    assert n >= 2 and refreshes >= 2, (n, refreshes)


def test_burst_of_notifications_costs_a_handful_of_refreshes(tmp_path, store):
    w = Watch(tmp_path, store, poll="30s")
    import psycopg2
    c = psycopg2.connect(os.environ["RD_PG_ADMIN_DSN_ATTUNE2"])
    c.autocommit = True
    cur = c.cursor()
    t0 = time.monotonic()
    for i in range(1000):                     # 1,000 commits, each one notification
        cur.execute("SELECT pg_notify('execution_status_changed', %s)", ('{"id": %d}' % i,))
    burst = time.monotonic() - t0
    c.close()
    time.sleep(1.5)                           # the last coalesced refresh goes out
    n, refreshes = w.close()
    assert n == 1000, n                       # every notification was read
    # one refresh per push_min_interval over the burst, the first at once, one after it
    assert 1 <= refreshes <= math.ceil(burst / MIN_INTERVAL) + 2, (refreshes, burst)
    assert refreshes < 100, (refreshes, burst)


def test_push_off_config(tmp_path, store):
    w = Watch(tmp_path, store, poll="30s", extra="push = false\n")
    try:
        assert "off — push = false" in w.ask("json overview")
    finally:
        n, refreshes = w.close()
    assert refreshes == 0, refreshes


def test_standby_push_off_in_snapshot_and_check(tmp_path):
    need_env("RD_STACK_DIR")
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from test_standby import standbys_up
    env = standbys_up(os.environ["RD_STACK_DIR"])
    conf = write_config(tmp_path, {"sb": {"profile": "attune", "schema": "attune",
                                          "store": env["RD_PG_STANDBY_DSN_ATTUNE2"]}})
    s = snapshot(conf, "sb", "--json")
    assert s.rc == 0, s.err
    pg = s.source("postgresql")
    assert pg["replica"]["role"] == "standby", pg
    assert pg["push"] == "off — standby", pg
    p = subprocess.run([os.environ.get("RD_BIN", os.path.join(ROOT, "build", "src", "cli", "redrive")),
                        "--config", conf, "--system", "sb", "check"], capture_output=True, text=True,
                       env=dict(os.environ, NO_COLOR="1", REDRIVE_PROFILES=os.path.join(ROOT, "profiles")),
                       timeout=60)
    lines = [l for l in p.stdout.splitlines() if "push:" in l]
    assert len(lines) == 1 and "push: off — standby" in lines[0], p.stdout
    assert "✓" not in lines[0], lines[0]         # a warning, not ok


JIT_ROLE = "rd_push_jit"


def test_console_session_never_jit_compiles(tmp_path, store):
    """auto_explain logs every plan of a role that would JIT everything (jit_above_cost 0):
    the console's statements show no JIT section."""
    need_env("RD_STACK_DIR")
    admin_sql("DROP ROLE IF EXISTS %s" % JIT_ROLE)
    admin_sql("CREATE ROLE %s LOGIN IN ROLE redrive_ro" % JIT_ROLE)
    for k, v in (("session_preload_libraries", "auto_explain"),
                 ("auto_explain.log_min_duration", "0"), ("jit_above_cost", "0"),
                 ("jit", "on")):
        admin_sql("ALTER ROLE %s SET %s = '%s'" % (JIT_ROLE, k, v))
    log = os.path.join(os.environ["RD_STACK_DIR"], "pg", "postgres.log")
    start = os.path.getsize(log)
    w = Watch(tmp_path, store.replace("user=redrive_ro", "user=" + JIT_ROLE), poll="1s")
    try:
        pids = admin_sql("SELECT pid FROM pg_stat_activity WHERE usename = %s", (JIT_ROLE,))
        assert len(pids) == 1, pids
        assert w.ask("fresh postgresql 10").startswith("ok "), "no refresh"
        time.sleep(0.5)
    finally:
        w.close()
        admin_sql("DROP ROLE IF EXISTS %s" % JIT_ROLE)
    with open(log, encoding="utf-8", errors="replace") as f:
        f.seek(start)
        text = f.read()
    # one message per line with the prefix '%m [%p] %d '; a plan's lines follow it
    msgs = re.split(r"\n(?=\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+ \w+ \[)", text)
    mine = [m for m in msgs if " [%d] " % pids[0][0] in m.split("\n", 1)[0]]
    plans = [m for m in mine if "Query Text:" in m]
    assert len(plans) >= 5, mine[:5]             # the setup and a refresh were explained
    jit = [m for m in plans if re.search(r"^\s*JIT:", m, re.M)]
    assert not jit, jit[0]
