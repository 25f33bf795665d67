"""The Redis sweep's budget and progress (issue 27), against the stack's Redis.

N task hashes in a private db; `redrive snapshot --json` with RD_REDIS_DEBUG prints the
sweep's figures (its wall time, the flights the budget held back, the share it charged).
- `sweep_budget = 10%`: the server's own CPU for the sweep (INFO cpu, this Redis serves
  nobody else) over the sweep's wall time stays within the budget + 20 % (+ a slack of one
  percentage point for the connection's set-up and the publish), and flights were held
  back; `sweep_budget = 0`: none is held back. Commands per task stay ≤ 2.05 (a key's
  HLEN, then its HGETALL: issue 32; ≤ 1.05 before) with the server's figures read on the
  connection.
- `sweep_budget = 1%`: `redrive check` does not wait for the whole store: it says where the
  sweep runs (the primary: no replica configured), its budget, and how far it got; the
  DLQ count is "so far". The console (a real terminal: pexpect + pyte) shows the progress
  on the overview's source line and marks the counts partial while the sweep runs.
"""
import json
import os
import re
import subprocess
import time

import pytest

from snaphelp import ROOT, need_env, rd_bin, write_config

DB, PREFIX = 12, "budget-alakai"
N = 30000
BUDGET = 0.10


def iso(t):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + "Z"


def record(task, attempt, status, t):
    return json.dumps({"status": status, "attempt": attempt,
                       "errorCode": "E_TRANSIENT" if status == "failed" else None,
                       "errorMessage": "Upstream returned 503 (transient)" if status == "failed" else None,
                       "taskSnapshot": {"taskId": task, "type": "budget.job", "payload": {"n": attempt}},
                       "dispatchedAt": iso(t), "resolvedAt": iso(t + 2) if status != "running" else None})


def clear(r):
    keys = list(r.scan_iter(match=PREFIX + ":*", count=5000))
    for i in range(0, len(keys), 1000):
        r.unlink(*keys[i:i + 1000])


def load(r, now):
    pipe = r.pipeline(transaction=False)
    for i in range(N):
        task = "task-%05d" % i
        h = (i * 7919) % 100
        st = "succeeded" if h < 80 else "failed" if h < 95 else "running"
        fields = {str(a): record(task, a, st if a == 1 + i % 2 else "failed", now - i - 60 * a)
                  for a in range(1, 2 + i % 2)}
        pipe.hset("%s:%s" % (PREFIX, task), mapping=fields)
        if i % 2000 == 1999:
            pipe.execute()
    pipe.execute()


def server_cpu(r):
    c = r.info("cpu")
    return c["used_cpu_sys"] + c["used_cpu_user"]


def commands(r):
    return sum(v["calls"] for k, v in r.info("commandstats").items() if k != "cmdstat_info")


@pytest.fixture(scope="module")
def store():
    import redis
    need_env("RD_REDIS_PORT")
    r = redis.Redis(host="127.0.0.1", port=int(os.environ["RD_REDIS_PORT"]), db=DB)
    clear(r)
    load(r, time.time())
    yield r
    clear(r)
    assert r.dbsize() == 0


def config(tmp_path, budget):
    return write_config(tmp_path, {"b": {
        "profile": "alakai", "store": "redis://127.0.0.1:%s/%d" % (os.environ["RD_REDIS_PORT"], DB),
        "prefix": PREFIX, "sweep_budget": budget, "core_probe": "0"}})


def env_of(tmp_path):
    return dict(os.environ, TZ="UTC", LANG="C.UTF-8", NO_COLOR="1", HOME=str(tmp_path),
                RD_REDIS_DEBUG="1", REDRIVE_PROFILES=os.path.join(ROOT, "profiles"))


SWEEP = re.compile(r"redis: sweep (\d+) keys, (\d+) tasks, \d+ removed, ([0-9.]+) s, .*budget ([0-9.]+), "
                   r"share ([0-9.]+), (\d+) flights held back")


def sweep(r, tmp_path, budget):
    """One snapshot: (the sweep's figures from stderr, server CPU s, commands, the JSON)."""
    cfg = config(tmp_path, budget)
    c0, k0 = server_cpu(r), commands(r)
    p = subprocess.run([rd_bin(), "--config", cfg, "snapshot", "--json"], capture_output=True,
                       timeout=120, env=env_of(tmp_path))
    cpu, cmds = server_cpu(r) - c0, commands(r) - k0
    err = p.stderr.decode(errors="replace")
    assert p.returncode == 0, err[-2000:]
    m = SWEEP.search(err)
    assert m, err[-2000:]
    keys, tasks, secs, set_share, charged, held = m.groups()
    assert int(keys) == N and int(tasks) == N, m.group(0)
    return (float(secs), float(set_share), float(charged), int(held)), cpu, cmds, json.loads(p.stdout)


def test_budgeted_sweep_holds_its_share(store, tmp_path):
    (secs, set_share, charged, held), cpu, cmds, doc = sweep(store, tmp_path, "10%")
    share = cpu / secs
    print("budget 10 %%: sweep %.3f s, server CPU %.1f ms, share %.3f (charged %.3f), %d flights held back, "
          "%d commands" % (secs, cpu * 1e3, share, charged, held, cmds))
    assert set_share == BUDGET
    assert held > 0, "no flight held back: the sweep was not paced"
    assert share <= BUDGET * 1.2 + 0.01, "share %.3f of a core over a %.0f %% budget" % (share, BUDGET * 100)
    # the server's figures are read on the connection: still about two commands per task
    assert cmds / N <= 2.05, "%d commands for %d tasks" % (cmds, N)
    assert [s["state"] for s in doc["sources"]] == ["ok"]
    assert "progress" not in doc["sources"][0] and "partial" not in doc, doc["sources"]
    assert sum(c["count"] for c in doc["counts"]) == N


def test_unbudgeted_sweep_is_not_held(store, tmp_path):
    (secs, set_share, charged, held), cpu, cmds, _ = sweep(store, tmp_path, "0")
    print("unbudgeted: sweep %.3f s, server CPU %.1f ms (ratio %.2f), %d commands"
          % (secs, cpu * 1e3, secs / cpu if cpu else 0, cmds))
    assert set_share == 0 and held == 0
    assert cmds / N <= 2.05, "%d commands for %d tasks" % (cmds, N)


def test_check_reports_the_sweep_under_way(store, tmp_path):
    cfg = config(tmp_path, "1%")
    t0 = time.monotonic()
    p = subprocess.run([rd_bin(), "--config", cfg, "check", "--system", "b"], capture_output=True,
                       timeout=60, env=dict(env_of(tmp_path), LANG="C"))
    took = time.monotonic() - t0
    out = p.stdout.decode(errors="replace")
    assert p.returncode == 0, out + p.stderr.decode(errors="replace")
    sweep_line = [ln for ln in out.splitlines() if "sweep:" in ln]
    assert len(sweep_line) == 1, out
    m = re.search(r"sweep: runs on the primary \(no replica configured\), at most 1 % of one Redis core; "
                  r"reading tasks: ([0-9,]+) of ~([0-9,]+) \((\d+) %\), (\d+) % of one Redis core$",
                  sweep_line[0])
    assert m, sweep_line[0]
    done, total = int(m.group(1).replace(",", "")), int(m.group(2).replace(",", ""))
    assert 0 < done < N, sweep_line[0]
    # the estimate (DBSIZE of this db, or keys over the keyspace walked) is about N
    assert N * 0.5 <= total <= N * 1.5, sweep_line[0]
    assert re.search(r"features: DLQ in the store \(\d+ pending so far\)", out), out
    assert re.search(r"store: Redis \d+\.\d+\.\d+, connected\n", out), out
    assert took < 8, "check waited %.1f s for the sweep" % took


def test_console_shows_the_progress(store, tmp_path):
    import pexpect
    import pyte
    cfg = config(tmp_path, "1%")
    env = dict(env_of(tmp_path), TERM="xterm-256color", LANG="C.UTF-8", LC_ALL="C.UTF-8",
               XDG_STATE_HOME=str(tmp_path / "state"))
    env.pop("RD_REDIS_DEBUG")
    screen = pyte.Screen(120, 30)
    stream = pyte.ByteStream(screen)
    child = pexpect.spawn(rd_bin(), ["--config", cfg], env=env, dimensions=(30, 120), timeout=10)
    try:
        want = re.compile(r"redis +reading tasks: [0-9,]+ of ~[0-9,]+ \(\d+ %\), \d+ % of one Redis core")
        end, text = time.time() + 10, ""
        while time.time() < end:
            try:
                stream.feed(child.read_nonblocking(65536, timeout=0.1))
            except pexpect.TIMEOUT:
                pass
            text = "\n".join(screen.display)
            if want.search(text) and "Executions by status (partial: reading tasks:" in text:
                break
        assert want.search(text), text
        assert "Executions by status (partial: reading tasks:" in text, text
    finally:
        child.terminate(force=True)


def test_views_while_the_sweep_runs(store, tmp_path):
    """While the first sweep runs (1 %: ~10 s for N tasks), the executions view lists the
    newest of the tasks read so far without waiting for the end, and the views that need
    the whole index say they are partial: the DLQ's title and the groups' title."""
    import pexpect
    import pyte
    cfg = config(tmp_path, "1%")
    env = dict(env_of(tmp_path), TERM="xterm-256color", LANG="C.UTF-8", LC_ALL="C.UTF-8",
               XDG_STATE_HOME=str(tmp_path / "state"))
    env.pop("RD_REDIS_DEBUG")
    screen = pyte.Screen(140, 30)
    stream = pyte.ByteStream(screen)
    child = pexpect.spawn(rd_bin(), ["--config", cfg], env=env, dimensions=(30, 140), timeout=10)

    def wait(pred, secs=8):
        end, text = time.time() + secs, ""
        while time.time() < end:
            try:
                stream.feed(child.read_nonblocking(65536, timeout=0.1))
            except pexpect.TIMEOUT:
                pass
            text = "\n".join(screen.display)
            if pred(text):
                return text
        raise AssertionError(text)

    partial = re.compile(r"partial: reading tasks: ([0-9,]+) of ~[0-9,]+ \(\d+ %\)")
    try:
        wait(lambda t: "reading tasks:" in t)
        child.send("2")
        text = wait(lambda t: len(re.findall(r"task-\d{5}", t)) >= 5)
        rows = len(re.findall(r"task-\d{5}", text))
        child.send(":dlq\r")
        text = wait(lambda t: re.search(r"^DLQ .*" + partial.pattern, t, re.M))
        done = int(partial.search(text).group(1).replace(",", ""))
        assert 0 < done < N, text    # the executions' rows above came before the end
        child.send(":groups\r")
        text = wait(lambda t: partial.search(t) and "trend: last 15m/before" not in t)
        assert 0 < int(partial.search(text).group(1).replace(",", "")) < N, text
        print("executions rows %d while %d of %d tasks were read" % (rows, done, N))
    finally:
        child.terminate(force=True)
