"""Reading from standbys (issue 12, docs/sources.md "Reading from standbys"): real replicas.

The stack's standbys (tests/stack/standbys.sh: a PostgreSQL streaming standby made with
pg_basebackup -R on base+31, a Redis replica on base+32) are started by this module when they
are not running. Checks, for PostgreSQL through a multi-host conninfo (prefer-standby) and
for Redis through a store listing the replica then the primary:
- `redrive snapshot --json` names the standby/replica as the answering host, with a lag;
- a write on the primary shows through the standby;
- SIGKILL of the standby/replica: the running console's next refresh fails over to the
  primary and says so (top bar, through a real terminal: pexpect + pyte).
"""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from snaphelp import ROOT, need_env, snapshot, write_config

sys.path.insert(0, os.path.join(ROOT, "tests", "tui"))
sys.path.insert(0, os.path.join(ROOT, "tests", "actions"))
from actlib import admin_sql  # noqa: E402
from lib.term import Term  # noqa: E402

BIN = os.environ.get("RD_BIN", os.path.join(ROOT, "build", "src", "cli", "redrive"))
STACK = os.path.join(ROOT, "tests", "stack", "stack.sh")
SB_VARS = ("RD_PG_STANDBY_PORT", "RD_REDIS_REPLICA_PORT", "RD_REDIS_REPLICA_URL")


def read_env(path):
    out = {}
    for line in open(path):
        if line.startswith("export ") and "=" in line:
            k, v = line[7:].rstrip("\n").split("=", 1)
            out[k] = v[1:-1] if v[:1] == "'" and v[-1:] == "'" else v
    return out


def standbys_up(d):
    """Starts the standbys (idempotent) and returns the stack's env with their variables."""
    p = subprocess.run(["bash", STACK, "standbys", d], capture_output=True, timeout=180)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-3000:]
    env = read_env(os.path.join(d, "env"))
    for k in SB_VARS:
        assert env.get(k), (k, env)
    return env


@pytest.fixture(scope="module")
def sb():
    need_env("RD_STACK_DIR", "RD_PG_PORT", "RD_REDIS_URL", "RD_PG_ADMIN_DSN_ATTUNE2")
    d = os.environ["RD_STACK_DIR"]
    env = standbys_up(d)
    yield dict(env, DIR=d)
    standbys_up(d)                       # leave them running for whoever comes next


def pg_store(e, uri=False):
    sb, pr = e["RD_PG_STANDBY_PORT"], os.environ["RD_PG_PORT"]
    if uri:
        return ("postgresql://127.0.0.1:%s,127.0.0.1:%s/attune2?user=redrive_ro"
                "&target_session_attrs=prefer-standby" % (sb, pr))
    return ("host=127.0.0.1,127.0.0.1 port=%s,%s dbname=attune2 user=redrive_ro "
            "target_session_attrs=prefer-standby" % (sb, pr))


def redis_store(e):
    return "%s, %s" % (e["RD_REDIS_REPLICA_URL"], os.environ["RD_REDIS_URL"])



def only_source(snap):
    assert snap.rc == 0, (snap.rc, snap.err)
    doc = snap.json
    assert len(doc["sources"]) == 1, doc["sources"]
    return doc, doc["sources"][0]


# ---- PostgreSQL --------------------------------------------------------------------------

@pytest.mark.parametrize("uri", [False, True], ids=["keywords", "uri"])
def test_pg_snapshot_names_the_standby_and_its_lag(sb, tmp_path, uri):
    cfg = write_config(tmp_path, {"a2": {"profile": "attune", "store": pg_store(sb, uri)}})
    doc, src = only_source(snapshot(cfg, "a2", "--json"))
    assert src["state"] == "ok", src
    rep = src["replica"]
    assert rep["host"] == "127.0.0.1:%s" % sb["RD_PG_STANDBY_PORT"], rep
    assert rep["role"] == "standby", rep
    assert isinstance(rep["lag_s"], (int, float)) and 0 <= rep["lag_s"] < 60, rep
    assert rep["failover"] is None, rep
    assert doc["executions"], doc                    # the data really came through it
    text = snapshot(cfg, "a2")
    assert text.rc == 0, text.err
    assert "via 127.0.0.1:%s standby lag " % sb["RD_PG_STANDBY_PORT"] in text.out, text.out


def test_pg_single_host_shows_no_replica(tmp_path):
    """One host: nothing new in the output (the top bar and JSON stay as they were)."""
    need_env("RD_PG_DSN_ATTUNE2")
    cfg = write_config(tmp_path, {"a2": {"profile": "attune",
                                         "store": os.environ["RD_PG_DSN_ATTUNE2"]}})
    _, src = only_source(snapshot(cfg, "a2", "--json"))
    assert src["state"] == "ok" and "replica" not in src, src


def test_pg_write_on_primary_shows_through_standby(sb, tmp_path):
    xid = 990000 + os.getpid() % 9000
    admin_sql("INSERT INTO execution (id, action, action_ref, status, created, updated)"
              " SELECT %s, action, action_ref, 'failed', now() + interval '1 hour',"
              " now() + interval '1 hour' FROM execution WHERE id = 2", (xid,))
    try:
        cfg = write_config(tmp_path, {"a2": {"profile": "attune", "store": pg_store(sb)}})
        seen, deadline = None, time.time() + 20
        while time.time() < deadline:
            doc, src = only_source(snapshot(cfg, "a2", "--json"))
            assert src["replica"]["role"] == "standby", src
            ids = [str(e["id"]) for e in doc["executions"]]
            if str(xid) in ids:
                seen = doc
                break
            time.sleep(0.5)
        assert seen, "execution %d written on the primary never showed through the standby" % xid
        row = [e for e in seen["executions"] if str(e["id"]) == str(xid)][0]
        assert row["status"] == "failed", row
    finally:
        admin_sql("DELETE FROM execution WHERE id = %s", (xid,))


# ---- the console in a real terminal ----------------------------------------------------------

class Console(Term):
    def __init__(self, tmp_path, system, keys, cols=160, rows=24):
        conf = tmp_path / "config"
        conf.write_text('[system "%s"]\n' % system + "".join("%s = %s\n" % kv for kv in keys.items()))
        super().__init__(conf, ["--system", system], {"XDG_CACHE_HOME": str(tmp_path / "cache"),
                                                      "REDRIVE_PROFILES": os.path.join(ROOT, "profiles")},
                         cols=cols, rows=rows)

    def top(self):
        return self.screen.display[0]

    def wait_top(self, *needles, secs=20):
        end = time.time() + secs
        while time.time() < end:
            self.pump(0.2)
            if all(n in self.top() for n in needles):
                return self.top()
        raise AssertionError("%r not all in the top bar:\n%s" % (needles, "\n".join(self.screen.display)))

    def close(self):
        if self.child.isalive():
            self.child.send("Q")
            self.pump(0.5)
            if self.child.isalive():
                self.child.kill(signal.SIGKILL)


def kill_pid_file(path):
    with open(path) as f:
        pid = int(f.readline().strip())
    os.kill(pid, signal.SIGKILL)
    end = time.time() + 10
    while time.time() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return pid
        time.sleep(0.05)
    raise AssertionError("pid %d survived SIGKILL" % pid)


def test_pg_console_fails_over_when_the_standby_dies(sb, tmp_path):
    sbp, prp = sb["RD_PG_STANDBY_PORT"], os.environ["RD_PG_PORT"]
    c = Console(tmp_path, "a2", {"profile": "attune", "store": pg_store(sb), "poll": "1s"})
    try:
        top = c.wait_top("postgresql ok", "@127.0.0.1:%s standby lag " % sbp)
        assert "failed over" not in top, top
        kill_pid_file(os.path.join(sb["DIR"], "pg-standby", "data", "postmaster.pid"))
        top = c.wait_top("postgresql ok", "@127.0.0.1:%s primary" % prp, "failed over", secs=30)
        assert "standby" not in top and "lag" not in top, top
    finally:
        c.close()
    # the same through snapshot: a connect now lands on the primary at once
    cfg = write_config(tmp_path, {"a2": {"profile": "attune", "store": pg_store(sb)}})
    _, src = only_source(snapshot(cfg, "a2", "--json"))
    assert src["state"] == "ok", src
    assert src["replica"]["host"] == "127.0.0.1:%s" % prp and src["replica"]["role"] == "primary", src
    assert src["replica"]["lag_s"] is None, src
    standbys_up(sb["DIR"])


def test_pg_silent_standby_is_skipped(sb, tmp_path):
    """A standby that accepts TCP but never answers (its postmaster stopped, as a machine that
    hangs): libpq alone would wait on it for ever; the source gives each host of the list its
    own deadline and connects again without the silent one."""
    prp = os.environ["RD_PG_PORT"]
    pidfile = os.path.join(sb["DIR"], "pg-standby", "data", "postmaster.pid")
    with open(pidfile) as f:
        pid = int(f.readline().strip())
    os.kill(pid, signal.SIGSTOP)
    try:
        t0 = time.monotonic()
        c = Console(tmp_path, "a2", {"profile": "attune", "store": pg_store(sb), "poll": "1s"})
        try:
            top = c.wait_top("postgresql ok", "@127.0.0.1:%s primary" % prp, secs=40)
            assert "failed over" not in top, top      # never lost a connection: no failover
            assert time.monotonic() - t0 >= 4.5, top   # the standby had its 5 s
        finally:
            c.close()
    finally:
        os.kill(pid, signal.SIGCONT)
    standbys_up(sb["DIR"])


# ---- Redis -------------------------------------------------------------------------------

def alakai_cfg(e, **more):
    return dict({"profile": "alakai", "store": redis_store(e),
                 "prefix": os.environ.get("RD_ALAKAI_PREFIX", "alakai-executions")}, **more)


def test_redis_snapshot_names_the_replica_and_its_lag(sb, tmp_path):
    cfg = write_config(tmp_path, {"al": alakai_cfg(sb)})
    doc, src = only_source(snapshot(cfg, "al", "--json"))
    assert src["state"] == "ok", src
    rep = src["replica"]
    assert rep == {"host": "127.0.0.1:%s" % sb["RD_REDIS_REPLICA_PORT"], "role": "replica",
                   "lag_s": 0, "failover": None, "failover_at": None}, rep
    assert src["notes"] == [], src                   # the replica has notifications on
    assert doc["executions"], doc


def test_redis_write_on_primary_shows_through_replica(sb, tmp_path):
    import redis
    r = redis.Redis.from_url(os.environ["RD_REDIS_URL"])
    prefix = os.environ.get("RD_ALAKAI_PREFIX", "alakai-executions")
    task = "task-standby-%d" % os.getpid()
    now = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
    rec = {"status": "failed", "attempt": 1, "errorCode": "STANDBY", "errorMessage": "via replica",
           "taskSnapshot": {"taskId": task, "type": "render", "payload": {}},
           "dispatchedAt": now, "resolvedAt": now}
    r.hset("%s:%s" % (prefix, task), "1", json.dumps(rec))
    try:
        cfg = write_config(tmp_path, {"al": alakai_cfg(sb)})
        doc, src = only_source(snapshot(cfg, "al", "--json"))
        assert src["replica"]["role"] == "replica", src
        ids = [e["id"] for e in doc["executions"]]
        assert task in ids, ids
    finally:
        r.delete("%s:%s" % (prefix, task))


def test_redis_notifications_off_on_the_replica_are_said(sb, tmp_path):
    import redis
    rr = redis.Redis(host="127.0.0.1", port=int(sb["RD_REDIS_REPLICA_PORT"]))
    rr.config_set("notify-keyspace-events", "")
    try:
        cfg = write_config(tmp_path, {"al": alakai_cfg(sb)})
        _, src = only_source(snapshot(cfg, "al", "--json"))
        assert src["state"] == "ok", src
        assert len(src["notes"]) == 1, src
        note = src["notes"][0]
        assert note.startswith("keyspace notifications off on 127.0.0.1:%s"
                               % sb["RD_REDIS_REPLICA_PORT"]), note
        assert "each replica has its own" in note, note
    finally:
        rr.config_set("notify-keyspace-events", "KEA")


def test_redis_console_fails_over_when_the_replica_dies(sb, tmp_path):
    rrp = sb["RD_REDIS_REPLICA_PORT"]
    prp = os.environ["RD_REDIS_URL"].rsplit(":", 1)[1].split("/")[0]
    c = Console(tmp_path, "al", alakai_cfg(sb, poll="1s"))
    try:
        top = c.wait_top("redis ok", "@127.0.0.1:%s replica lag 0s" % rrp)
        assert "failed over" not in top, top
        kill_pid_file(os.path.join(sb["DIR"], "redis-replica", "redis.pid"))
        top = c.wait_top("redis ok", "@127.0.0.1:%s primary" % prp, "failed over", secs=30)
        assert "replica" not in top and "lag" not in top, top
    finally:
        c.close()
    cfg = write_config(tmp_path, {"al": alakai_cfg(sb)})
    doc, src = only_source(snapshot(cfg, "al", "--json"))
    assert src["state"] == "ok", src
    assert src["replica"]["host"] == "127.0.0.1:%s" % prp, src
    assert src["replica"]["role"] == "primary" and src["replica"]["lag_s"] is None, src
    assert doc["executions"], doc
    standbys_up(sb["DIR"])


def test_redis_check_says_the_sweep_reads_the_replica(sb, tmp_path):
    """`check` says where the sweep runs: the replica here (the primary alone is in
    test_redis_sweep_budget.py)."""
    cfg = write_config(tmp_path, {"al": alakai_cfg(sb)})
    p = subprocess.run([BIN, "--config", cfg, "check", "--system", "al"], capture_output=True,
                       timeout=60, env=dict(os.environ, HOME=str(tmp_path), LANG="C", LC_ALL="C"))
    out = p.stdout.decode(errors="replace")
    sweep = [ln for ln in out.splitlines() if "sweep:" in ln]
    # on a loaded machine the first sweep may still run when check reports: then the line
    # goes on with its progress ("; reading tasks: ..."), which is not what this test is about
    assert len(sweep) == 1, out
    head, _, progress = sweep[0].partition("; ")
    assert head == "  ok   sweep: runs on a replica, at most 25 % of one Redis core", out
    assert progress == "" or progress.startswith("reading tasks: "), out
