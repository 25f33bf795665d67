"""Push for Tasker with pgmq (issue 25, docs/sources.md "Push"), on the real stack.

Tasker's migrations notify queue activity on pgmq's channels (pgmq_send_with_notify:
'pgmq_message_ready'; a new queue: 'pgmq_queue_created'); they never notify task or step
state. So the console LISTENs there when pgmq is installed, refreshes the queue depths on a
notification, and keeps polling the steps at the configured interval (the poll does not slow
to a safety net as it does for Attune, whose notifications cover the executions).

pgmq is not packaged for Debian: tests/integration/pgmq_stand_in.sql stands in for the part
of its API the console reads, in a database of its own, with Tasker's notify functions.
"""
import json
import os
import time

import pytest

from snaphelp import ROOT, SourceWatch, need_env

HERE = os.path.dirname(os.path.abspath(__file__))


def _admin(dbname="postgres"):
    import psycopg2
    c = psycopg2.connect("host=%s port=%s dbname=%s user=postgres"
                         % (os.environ["RD_PG_HOST"], os.environ["RD_PG_PORT"], dbname))
    c.autocommit = True
    return c


@pytest.fixture
def pgmq_store():
    need_env("RD_PG_HOST", "RD_PG_PORT")
    db = "rd_push_pgmq_%d" % os.getpid()
    a = _admin()
    a.cursor().execute('DROP DATABASE IF EXISTS "%s"' % db)
    a.cursor().execute('CREATE DATABASE "%s"' % db)
    c = _admin(db)
    cur = c.cursor()
    cur.execute(open(os.path.join(ROOT, "tests", "stack", "schema", "tasker.sql")).read())
    cur.execute("SET search_path = public")
    cur.execute(open(os.path.join(HERE, "pgmq_stand_in.sql")).read())
    cur.execute('GRANT CONNECT ON DATABASE "%s" TO redrive_ro' % db)
    for s in ("tasker", "pgmq", "public"):
        cur.execute("GRANT USAGE ON SCHEMA %s TO redrive_ro" % s)
        cur.execute("GRANT SELECT ON ALL TABLES IN SCHEMA %s TO redrive_ro" % s)
        cur.execute("ALTER DEFAULT PRIVILEGES IN SCHEMA %s GRANT SELECT ON TABLES TO redrive_ro" % s)
    cur.execute("GRANT EXECUTE ON FUNCTION pgmq.metrics_all() TO redrive_ro")
    try:
        yield ("host=%s port=%s dbname=%s user=redrive_ro application_name=redrive"
               % (os.environ["RD_PG_HOST"], os.environ["RD_PG_PORT"], db)), cur
    finally:
        c.close()
        a.cursor().execute('DROP DATABASE IF EXISTS "%s" WITH (FORCE)' % db)
        a.close()


class Watch(SourceWatch):
    def __init__(self, tmp_path, store, poll):
        conf = tmp_path / "config"
        conf.write_text('[system "tq"]\nprofile = tasker\nstore = %s\nschema = tasker\n'
                        'poll = %s\n' % (store, poll))
        conf.chmod(0o600)
        self.err = tmp_path / "stderr"
        with open(self.err, "w") as err:
            super().__init__(conf, ready_timeout=30, env={"RD_PG_DEBUG": "1"}, stderr=err)

    def model(self, view="overview"):
        return json.loads(self.ask("json " + view)[len("json "):])

    def push_text(self):
        return [s for s in self.model()["sources"] if s["name"] == "postgresql"][0].get("push")

    def depth(self, queue):
        return {q["name"]: q.get("depth") for q in self.model("queues").get("queues", [])}.get(queue)

    def counters(self):
        """Quits; the source's push counters (notifications, refreshes)."""
        self.p.stdin.write("quit\n")
        self.p.stdin.flush()
        self.p.wait(10)
        for line in self.err.read_text().splitlines():
            if line.startswith("pg push: notifications "):
                f = line.split()
                return int(f[3].rstrip(",")), int(f[6].rstrip(","))
        pytest.fail("no push counters on stderr: %r" % self.err.read_text()[-2000:])


def wait_depth(w, queue, want, secs):
    t0 = time.monotonic()
    while time.monotonic() - t0 < secs:
        if w.depth(queue) == want:
            return time.monotonic() - t0
        time.sleep(0.05)
    pytest.fail("queue %s never showed depth %s within %s s (now %r)" % (queue, want, secs,
                                                                      w.depth(queue)))


def test_queue_depths_are_pushed(tmp_path, pgmq_store):
    store, cur = pgmq_store
    w = Watch(tmp_path, store, poll="30s")
    try:
        assert w.push_text() == "on — LISTEN pgmq_message_ready, pgmq_queue_created", w.push_text()
        cur.execute("SELECT pgmq.create('orders_queue')")            # pgmq_queue_created
        assert wait_depth(w, "orders_queue", 0, 10) < 10              # the poll is 30 s
        for i in range(3):
            cur.execute("SELECT pgmq_send_with_notify('orders_queue', %s::jsonb)",
                        (json.dumps({"step": i}),))
        assert wait_depth(w, "orders_queue", 3, 10) < 10
    finally:
        n, refreshes = w.counters()
    assert n == 4, n                       # the new queue, 3 messages (the global channel)
    assert 2 <= refreshes <= 4, refreshes


def test_steps_stay_polled(tmp_path, pgmq_store):
    """Push on for the queues does not slow the poll of the steps (Tasker does not notify
    them): a refresh still comes every poll (2 s), not every 5 polls."""
    store, _ = pgmq_store
    w = Watch(tmp_path, store, poll="2s")
    try:
        assert w.push_text().startswith("on — LISTEN"), w.push_text()
        for _ in range(3):
            got = w.ask("fresh postgresql 6", 10)
            assert got.startswith("ok "), got
    finally:
        n, refreshes = w.counters()
    assert n == 0 and refreshes == 0, (n, refreshes)
