"""The Alakai task index's memory across sweeps (issue 27), against a real Redis.

20,000 task hashes in a redis-server of the test's own, started without keyspace
notifications (Redis's default: the console then keeps its index by sweeps alone); a
rd-source-watch with RD_REDIS_DEBUG prints the index's bytes with each publish
(rix_memory: computed from sizes, the same on every machine). Ten sweeps, each after 10 %
churn — the oldest 2,000 tasks deleted, 2,000 new ones, 2,000 changed (another status and
error) — must keep every task indexed, cost at most BYTES_PER_TASK bytes a task, and end
within 5 % of the bytes after the first sweep.
"""
import json
import os
import queue
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import time

import pytest

from snaphelp import ROOT, SourceWatch, rd_bin, write_config

N, CHURN, SWEEPS = 20_000, 2_000, 10
PREFIX = "mem-alakai"
BYTES_PER_TASK = 36        # 35.0 measured (2026-11-27); 87 before issue 27 (a 32-byte
                           # entry, the id and the raw error text in an arena)
ERRORS = ["Upstream returned 503 (transient)", "connection reset by peer", "timeout after 30 s"]


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def record(i, status, t):
    failed = status == "failed"
    return json.dumps({"status": status, "attempt": 1,
                       "errorCode": "E_TRANSIENT" if failed else None,
                       "errorMessage": ERRORS[i % 3] if failed else None,
                       "taskSnapshot": {"taskId": i, "type": "mem.job"},
                       "dispatchedAt": t, "resolvedAt": t + 2})


def put(pipe, i, changed=False):
    status = "succeeded" if changed or (i * 7919) % 100 < 80 else "failed"
    pipe.hset(key(i), "1", record(i, status, 1.7e9 + i))


def key(i):
    return "%s:task-%07d" % (PREFIX, 100000 + i)      # numbers of one size


@pytest.fixture
def redis_plain(tmp_path):
    import redis
    exe = shutil.which("redis-server") or "/usr/bin/redis-server"
    if not os.path.exists(exe):
        pytest.fail("redis-server not installed")
    port = free_port()
    d = tempfile.mkdtemp(prefix="rd-redis-", dir=str(tmp_path))
    p = subprocess.Popen([exe, "--bind", "127.0.0.1", "--port", str(port), "--save", "",
                          "--appendonly", "no", "--dir", d, "--notify-keyspace-events", ""],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    c = redis.Redis(port=port)
    for _ in range(100):
        try:
            c.ping()
            break
        except redis.exceptions.ConnectionError:
            time.sleep(0.05)
    else:
        p.kill()
        pytest.fail("private redis-server did not start")
    yield port, c
    p.kill()
    p.wait()


class Watch(SourceWatch):
    """rd-source-watch with its stderr read by a thread (the sweep and publish lines)."""

    def __init__(self, config):
        self.err = queue.Queue()
        super().__init__(config, ready_timeout=60, env={"RD_REDIS_DEBUG": "1"},
                         stderr=subprocess.PIPE)

    def started(self):
        threading.Thread(target=self._read_err, daemon=True).start()

    def _read_err(self):
        for line in self.p.stderr:
            self.err.put(line.strip())

    def sweep(self, timeout=60):
        """The next sweep's task count and the index's bytes at the publish after it."""
        end, tasks = time.time() + timeout, None
        while time.time() < end:
            try:
                line = self.err.get(timeout=end - time.time())
            except queue.Empty:
                break
            m = re.match(r"redis: sweep \d+ keys, (\d+) tasks", line)
            if m:
                tasks = int(m.group(1))
            m = re.search(r"redis: publish \d+ tasks .*, index (\d+) bytes", line)
            if m and tasks is not None:
                return tasks, int(m.group(1))
        pytest.fail("no sweep and publish within %d s" % timeout)


def test_index_memory_flat_over_sweeps_with_churn(redis_plain, tmp_path):
    port, r = redis_plain
    pipe = r.pipeline(transaction=False)
    for i in range(N):
        put(pipe, i)
    pipe.execute()
    cfg = write_config(tmp_path, {"a": {"profile": "alakai", "store": "redis://127.0.0.1:%d/0" % port,
                                        "core": "http://127.0.0.1:9", "auth": "none",
                                        "prefix": PREFIX, "poll": "1h"}})
    w = Watch(cfg)
    try:
        tasks, first = w.sweep()
        assert tasks == N
        per_task = first / N
        assert per_task <= BYTES_PER_TASK, "%.1f bytes a task" % per_task
        lo, sizes = 0, [first]
        for _ in range(SWEEPS - 1):
            for i in range(lo, lo + CHURN):                # the oldest 10 % gone
                pipe.delete(key(i))
            for i in range(lo + N, lo + N + CHURN):        # 10 % new
                put(pipe, i)
            for i in range(lo + CHURN, lo + 2 * CHURN):    # 10 % changed
                put(pipe, i, changed=True)
            pipe.execute()
            lo += CHURN
            assert w.ask("refresh") == "ok"
            tasks, size = w.sweep()
            assert tasks == N
            sizes.append(size)
        print("index bytes after each sweep: %s (%.1f B a task)" % (sizes, per_task))
        assert sizes[-1] <= first * 1.05, "bytes after each sweep: %s" % sizes
        # the last changed 10 % (all succeeded) are the oldest left: earlier ones were deleted
        failed = sum(1 for i in range(lo + CHURN, lo + N) if (i * 7919) % 100 >= 80)
        assert w.ask("count failed") == "count %d" % failed
    finally:
        w.close()
