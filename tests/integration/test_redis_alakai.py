"""The Redis (Alakai) source against the real Redis of the local stack and the fixture
data of tests/stack/README.md (## Alakai): `redrive snapshot` views, the chain view,
bad input, failures, and — through rd-source-watch, a long-running driver — keyspace
notifications and reconnects."""
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time

import pytest

import stack_fixtures as fx
from snaphelp import (ROOT, SourceWatch, assert_clean_text, by_id, need_env, rd_bin, snapshot,
                      write_config)

P = fx.ALAKAI_PREFIX


def alakai_cfg(url=None, **extra):
    cfg = {"profile": "alakai", "store": url or os.environ["RD_REDIS_URL"],
           "core": "http://127.0.0.1:9", "auth": "none", "max_retries": "1",
           "orphan_after": "2h", "prefix": P}
    cfg.update(extra)
    return cfg


@pytest.fixture(scope="module")
def alakai(tmp_path_factory):
    need_env("RD_REDIS_URL", "RD_REDIS_PORT")
    fx.reload("alakai")
    path = write_config(tmp_path_factory.mktemp("redis"), {"alakai": alakai_cfg()})
    yield path
    fx.reload("alakai")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


Watch = SourceWatch          # (test_dlq_owners, test_secret_runtime import it from here)


# ---- snapshot views -------------------------------------------------------------------

def test_overview_counts_and_flags(alakai):
    s = snapshot(alakai, "alakai", "--json")
    assert s.rc == 0, s.err
    d = s.json
    assert s.source("redis")["state"] == "ok"
    ex = by_id(d["executions"])
    # 12 hashes under the prefix + the string key; nothing from other-app:
    assert len(ex) == 13 and not any(i.startswith("other-app") for i in ex)
    counts = {c["status"]: c["count"] for c in d["counts"]}
    assert counts == {"succeeded": 2, "failed": 4, "running": 3, "lost": 1, "unknown": 3}
    assert d["orphan_suspects"] == 1
    assert d["dlq_total"] == 2                     # exhausted + orphan suspect
    assert ex["task-failed-retryable"]["retry_eligible"] is True
    assert ex["task-failed-retryable"]["attempt"] == 1
    assert ex["task-failed-exhausted"]["retry_eligible"] is False
    assert ex["task-failed-exhausted"]["attempt"] == 2
    assert "budget" in ex["task-failed-exhausted"]["eligibility_reason"]
    assert ex["task-succeeded-retry"]["attempt"] == 2
    assert ex["task-succeeded-retry"]["status"] == "succeeded"
    assert ex["task-orphan"]["orphan_suspect"] and ex["task-orphan"]["status"] == "running"
    assert not ex["task-running"]["orphan_suspect"]
    assert ex["task-overlap"]["overlapping"] and ex["task-overlap"]["attempt"] == 2
    assert ex["task-lost"]["status"] == "lost"
    assert ex["task-malformed"]["malformed"] and ex["task-malformed"]["error"]
    assert ex["task-oversized"]["oversized"] and "over 1 MiB): not read" in ex["task-oversized"]["error"]
    assert ex["task-wrongtype"]["malformed"] and "not a hash" in ex["task-wrongtype"]["error"]
    nn = ex["task-nonnumeric"]
    assert nn["malformed"] and nn["status"] == "failed" and nn["attempt"] == 1
    assert "non-numeric" in nn["error"]
    assert ex["task-failed-exhausted"]["max_attempts"] == 2   # MAX_RETRIES 1 → 2 attempts


def test_executions_newest_first(alakai):
    d = snapshot(alakai, "alakai", "--json", "--view", "executions").json
    times = [e["created_at"] for e in d["executions"] if e["created_at"]]
    assert times == sorted(times, reverse=True)
    assert d["executions"][0]["id"] == "task-running"      # dispatched T-1 min


def test_filters(alakai):
    d = snapshot(alakai, "alakai", "--json", "--status", "failed").json
    assert {e["id"] for e in d["executions"]} == {
        "task-failed-retryable", "task-failed-exhausted", "task-nonnumeric", "task-hostile"}
    d = snapshot(alakai, "alakai", "--json", "--filter", "OOM killed").json
    assert [e["id"] for e in d["executions"]] == ["task-failed-exhausted"]
    d = snapshot(alakai, "alakai", "--json", "--status", "orphan").json
    assert [e["id"] for e in d["executions"]] == ["task-orphan"]


def test_hostile_bytes_sanitized_in_text(alakai):
    s = snapshot(alakai, "alakai")
    assert s.rc == 0, s.err
    assert_clean_text(s.out)
    assert "task-hostile" in s.out
    # JSON keeps the data, escaped (no raw control bytes on the wire)
    raw = snapshot(alakai, "alakai", "--json").out
    assert "\x1b" not in raw and "\r" not in raw


def test_chain_view(alakai):
    d = snapshot(alakai, "alakai", "--json", "--view", "chain", "task-failed-exhausted").json
    ch = d["chain"]
    assert [c["attempt"] for c in ch] == [1, 2]
    assert all(c["status"] == "failed" and c["id"] == "task-failed-exhausted" for c in ch)
    assert ch[-1]["retry_eligible"] is False and "budget" in ch[-1]["eligibility_reason"]
    assert "superseded" in ch[0]["eligibility_reason"]
    d = snapshot(alakai, "alakai", "--json", "--view", "chain", "task-succeeded-retry").json
    assert [(c["attempt"], c["status"]) for c in d["chain"]] == [(1, "failed"), (2, "succeeded")]
    d = snapshot(alakai, "alakai", "--json", "--view", "chain", "task-overlap").json
    assert [c["status"] for c in d["chain"]] == ["running", "running"]
    assert all(c["overlapping"] for c in d["chain"])
    d = snapshot(alakai, "alakai", "--json", "--view", "chain", "task-nonnumeric").json
    assert [c["attempt"] for c in d["chain"]] == [1]


def test_chain_of_oversized_and_missing(alakai):
    d = snapshot(alakai, "alakai", "--json", "--view", "chain", "task-oversized").json
    assert d["chain"][0]["oversized"]
    s = snapshot(alakai, "alakai", "--json", "--view", "chain", "no-such-task")
    assert s.rc == 0
    assert "no such task" in (s.json["chain"][0]["error"] or "")


def test_dlq_view(alakai):
    d = snapshot(alakai, "alakai", "--json", "--view", "dlq").json
    dlq = {e["execution_id"]: e for e in d["dlq"] if e["queue"] == "alakai"}
    assert set(dlq) == {"task-failed-exhausted", "task-orphan"}
    assert dlq["task-failed-exhausted"]["reason"] == "budget exhausted"
    assert dlq["task-orphan"]["reason"] == "orphan suspect"


def test_unix_socket_url(tmp_path):
    need_env("RD_REDIS_SOCKET")
    cfg = write_config(tmp_path, {"a": alakai_cfg("redis+unix://" + os.environ["RD_REDIS_SOCKET"])})
    s = snapshot(cfg, "a", "--json")
    assert s.rc == 0, s.err
    assert len(s.json["executions"]) == 13


# ---- failures -------------------------------------------------------------------------

def test_refused_port_is_down_fast(tmp_path):
    cfg = write_config(tmp_path, {"a": alakai_cfg("redis://127.0.0.1:%d/0" % free_port())})
    s = snapshot(cfg, "a", "--json")
    assert s.rc == 3
    src = s.source("redis")
    assert src["state"] == "down" and "refused" in src["error"].lower()
    assert s.elapsed < 5


def test_hung_server_hits_our_deadline(tmp_path):
    lsock = socket.socket()
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(8)                   # accepts (kernel backlog), never answers
    try:
        cfg = write_config(tmp_path, {"a": alakai_cfg("redis://127.0.0.1:%d/0" %
                                                      lsock.getsockname()[1])})
        s = snapshot(cfg, "a", "--json", timeout=30)
        assert s.rc == 3
        src = s.source("redis")
        assert src["state"] == "down"
        assert "within" in src["error"]             # our own deadline, not a hang
        assert s.elapsed < 9
    finally:
        lsock.close()


def test_bad_urls_are_refused_clearly(tmp_path):
    # rediss:// and credentials: test_redis_secured.py
    cases = {"redis://127.0.0.1:1/notadb": "database", "http://127.0.0.1:1/": "not a Redis URL"}
    for url, word in cases.items():
        cfg = write_config(tmp_path, {"a": alakai_cfg(url)})
        s = snapshot(cfg, "a", "--json")
        # found before connecting: a config error at the store line (issue 11)
        assert s.rc == 2, url
        assert "%s:3:" % cfg in s.err and word in s.err, (url, s.err)


def test_host_names_resolved_without_blocking(tmp_path):
    cfg = write_config(tmp_path, {"a": alakai_cfg("redis://no-such-host.invalid:6379/0")})
    s = snapshot(cfg, "a", "--json", timeout=30)
    assert s.rc == 3
    assert "resol" in s.source("redis")["error"]
    assert s.elapsed < 9


# ---- live: keyspace notifications, reconnect -----------------------------------------

def test_keyspace_notifications_follow_changes(alakai, tmp_path):
    # poll 60 s: only notifications can bring the change in within seconds
    cfg = write_config(tmp_path, {"a": alakai_cfg(poll="60s")})
    r = fx.stacklib.redis_client(fx.stacklib.load_env())
    w = Watch(cfg, "a")
    try:
        assert w.ask("exec task-running running 5").startswith("ok")
        rec = json.loads(r.hget(P + ":task-running", "1"))
        rec.update(status="failed", errorMessage="changed by the test",
                   resolvedAt=rec["dispatchedAt"])
        r.hset(P + ":task-running", "1", json.dumps(rec))
        got = w.ask("exec task-running failed 3")
        assert got.startswith("ok"), got
        r.hset(P + ":task-new", "1", json.dumps({"status": "running", "attempt": 1,
                                                  "dispatchedAt": rec["dispatchedAt"]}))
        assert w.ask("exec task-new running 3").startswith("ok")
        r.delete(P + ":task-new")
        assert w.ask("gone task-new 3").startswith("ok")
    finally:
        w.close()
        fx.reload("alakai")


@pytest.fixture
def private_redis(tmp_path):
    exe = shutil.which("redis-server") or "/usr/bin/redis-server"
    if not os.path.exists(exe):
        pytest.fail("redis-server not installed")
    port = free_port()
    d = tempfile.mkdtemp(prefix="rd-redis-", dir=str(tmp_path))

    def start():
        p = subprocess.Popen([exe, "--bind", "127.0.0.1", "--port", str(port), "--save", "",
                              "--appendonly", "no", "--dir", d,
                              "--notify-keyspace-events", "KEA"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        import redis
        c = redis.Redis(port=port)
        for _ in range(100):
            try:
                c.ping()
                return p, c
            except redis.exceptions.ConnectionError:
                time.sleep(0.05)
        p.kill()
        pytest.fail("private redis-server did not start")

    state = {"p": None}

    def up():
        state["p"], c = start()
        return c

    def down():
        state["p"].terminate()
        state["p"].wait(10)

    yield port, up, down
    if state["p"] and state["p"].poll() is None:
        state["p"].kill()
        state["p"].wait()


def test_reconnects_after_redis_restart(private_redis, tmp_path):
    port, up, down = private_redis
    c = up()
    c.hset(P + ":t1", "1", json.dumps({"status": "failed", "attempt": 1,
                                        "dispatchedAt": "2026-01-01T00:00:00Z"}))
    cfg = write_config(tmp_path, {"a": alakai_cfg("redis://127.0.0.1:%d/0" % port, poll="1s")})
    w = Watch(cfg, "a")
    try:
        assert w.ask("state redis ok 5").startswith("ok")
        down()
        got = w.ask("state redis stale 10")
        assert got.startswith("ok"), got          # data kept, marked stale with the error
        assert w.ask("exec t1 failed 1").startswith("ok")
        c = up()
        c.hset(P + ":t1", "1", json.dumps({"status": "succeeded", "attempt": 1,
                                            "dispatchedAt": "2026-01-01T00:00:00Z"}))
        got = w.ask("state redis ok 10")          # backoff 1 s, 2 s, ...
        assert got.startswith("ok"), got
        assert w.ask("exec t1 succeeded 10").startswith("ok")
    finally:
        w.close()


def snapshot_peak(config, *args, timeout=60):
    """`redrive snapshot` as a child of its own: (exit code, stdout, peak RSS in KiB)."""
    env = dict(os.environ, TZ="UTC", LANG="C.UTF-8", NO_COLOR="1",
               REDRIVE_PROFILES=os.path.join(ROOT, "profiles"))
    cmd = [rd_bin(), "--config", config, "--system", "alakai", "snapshot"] + list(args)
    with tempfile.TemporaryFile() as out:
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.DEVNULL, env=env)
        deadline = time.monotonic() + timeout
        while True:
            pid, status, usage = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                p.kill()
                pytest.fail("snapshot did not finish within %s s" % timeout)
            time.sleep(0.02)
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        return p.returncode, out.read().decode("utf-8"), usage.ru_maxrss


def test_huge_hash_costs_bounded_memory(private_redis, tmp_path):
    """A task hash of 300,000 fields is listed as oversized without building the reply
    (+~40 MB of peak memory before the reader's array cap, +~100 MB at 1,000,000 fields:
    docs/sources.md); the task beside it is read as ever. 300,000, not a million, so that
    filling and reading it stay well inside the snapshot's deadline on a loaded machine."""
    port, up, _ = private_redis
    c = up()
    now = time.time()
    ok = json.dumps({"status": "failed", "attempt": 1, "errorCode": "E", "errorMessage": "boom",
                     "dispatchedAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now - 60)),
                     "resolvedAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now - 50))})
    c.hset("bounds:task-ok", "1", ok)
    cfg = write_config(tmp_path, {"alakai": alakai_cfg("redis://127.0.0.1:%d" % port,
                                                       prefix="bounds")})
    rc, out, base_kb = snapshot_peak(cfg, "--json")
    assert rc == 0, out
    c.eval("for i = 1, 300000 do redis.call('HSET', KEYS[1], i, 'x') end", 1,
           "bounds:task-huge")
    assert c.hlen("bounds:task-huge") == 300000
    rc, out, huge_kb = snapshot_peak(cfg, "--json")
    assert rc == 0, out
    ex = by_id(json.loads(out)["executions"])
    assert set(ex) == {"task-ok", "task-huge"}
    assert ex["task-huge"]["oversized"] is True and ex["task-huge"]["malformed"] is False
    assert ex["task-huge"]["error"] == "hash with 300000 fields (more than 64): not read"
    assert ex["task-ok"]["malformed"] is False and ex["task-ok"]["status"] == "failed"
    assert ex["task-ok"]["error"] == "boom"
    # peak memory: the huge hash may cost the reader's buffers, not the reply
    assert huge_kb - base_kb < 16 * 1024, (base_kb, huge_kb)
