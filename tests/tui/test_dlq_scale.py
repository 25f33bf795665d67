"""A DLQ of thousands (issue 24, "dead letters at scale") in a real terminal: Tasker's
tasks_dlq with 2,400 pending entries, read a screen at a time (PgDn past the last row
reads the store's next page, PgUp before the first the page before), G to the oldest
(the store reads it oldest first), and `/` searched by the store, not the page loaded."""
import os
import re

import psycopg2

import stack_fixtures as fx
from lib.term import ROOT, LiveTerm as Term
from lib.term import Term as BaseTerm

N = 2400


def fill():
    """2,400 pending entries, one a second back from now: entry i is i seconds old; entry
    1234 alone names needle-1234 in its metadata."""
    fx.reload("tasker")
    with psycopg2.connect(os.environ["RD_PG_ADMIN_DSN_TASKER"]) as c, c.cursor() as cur:
        cur.execute("SET search_path = tasker")
        cur.execute("SELECT named_task_uuid FROM named_tasks LIMIT 1")
        nt = cur.fetchone()[0]
        cur.execute("""
            INSERT INTO tasks (task_uuid, named_task_uuid, identity_hash, correlation_id)
            SELECT ('00000000-0000-4000-8000-9' || lpad(i::text, 11, '0'))::uuid, %s, 'scale-' || i,
                   gen_random_uuid()
              FROM generate_series(1, %s) i""", (nt, N))
        cur.execute("""
            INSERT INTO tasks_dlq (dlq_entry_uuid, task_uuid, original_state, dlq_reason, dlq_timestamp,
                                   metadata)
            SELECT ('00000000-0000-4000-8000-8' || lpad(i::text, 11, '0'))::uuid,
                   ('00000000-0000-4000-8000-9' || lpad(i::text, 11, '0'))::uuid, 'error',
                   (CASE WHEN i %% 3 = 0 THEN 'worker_unavailable' ELSE 'max_retries_exceeded' END)::dlq_reason,
                   (now() AT TIME ZONE 'utc') - make_interval(secs => i),
                   jsonb_build_object('note', CASE WHEN i = 1234 THEN 'needle-1234' ELSE 'hay' END)
              FROM generate_series(1, %s) i""", (N, ))


def store_groups(col):
    """The store's own count of its pending entries by col (largest first, then by key)."""
    with psycopg2.connect(os.environ["RD_PG_DSN_TASKER"]) as c, c.cursor() as cur:
        cur.execute("SELECT %s, count(*) FROM tasker.tasks_dlq WHERE resolution_status = 'pending' "
                    "GROUP BY 1 ORDER BY 2 DESC, 1" % col)
        return [[k, str(n)] for k, n in cur.fetchall()]


def pending():
    """The pending entries: how many, and the oldest's id."""
    with psycopg2.connect(os.environ["RD_PG_DSN_TASKER"]) as c, c.cursor() as cur:
        cur.execute("SELECT count(*) FROM tasker.tasks_dlq WHERE resolution_status = 'pending'")
        total = cur.fetchone()[0]
        cur.execute("SELECT dlq_entry_uuid::text FROM tasker.tasks_dlq WHERE resolution_status = 'pending' "
                    "ORDER BY dlq_timestamp, dlq_entry_uuid LIMIT 1")
        return total, cur.fetchone()[0]


class TaskerTerm(Term):
    def __init__(self, tmp_path, cols=140, rows=30):   # noqa: super: another config
        conf = tmp_path / "config"
        conf.write_text('[system "tasker"]\nprofile = tasker\nstore = %s\n' % os.environ["RD_PG_DSN_TASKER"])
        BaseTerm.__init__(self, conf, ["--system", "tasker"], {"REDRIVE_PROFILES": os.path.join(ROOT, "profiles")},
                          cols=cols, rows=rows)


def where(t):
    m = re.search(r"entries (\d+)-(\d+)( oldest first)?", t.text())
    assert m, t.text()
    return int(m.group(1)), int(m.group(2)), bool(m.group(3))


def first_id(t):
    """The id cell of the first row (ids are cut in the middle: the tail names the entry)."""
    row = t.screen.display[3]
    return row.split()[0]


def wait_where(t, want):
    for _ in range(50):
        t.pump(0.1)
        if re.search(r"entries (\d+)-(\d+)( oldest first)?", t.text()) and where(t) == want:
            return
    raise AssertionError("%r not reached:\n%s" % (want, t.text()))


def test_a_dlq_of_thousands(tmp_path):
    fill()
    try:
        t = TaskerTerm(tmp_path)
        t.wait_for("postgresql ok")
        t.send("5")
        total, oldest = pending()
        assert total >= N
        t.wait_for("DLQ  50 peeked of %d" % total)
        wait_where(t, (1, 50, False))
        assert first_id(t).endswith("00001"), t.text()          # the newest first
        t.send("\x1b[6~", 0.5)                                  # PgDn: a screen of the page
        t.send("\x1b[6~", 0.5)
        t.send("\x1b[6~", 0.5)                                  # past the last row: the next page
        wait_where(t, (51, 100, False))
        assert first_id(t).endswith("00051"), t.text()
        t.send("\x1b[5~", 0.5)                                  # PgUp at the first row: the page before
        wait_where(t, (1, 50, False))
        t.send("G")                                             # the oldest, read oldest first
        wait_where(t, (1, 50, True))
        assert first_id(t).endswith(oldest[-6:]), (oldest, t.text())
        t.send("g")
        wait_where(t, (1, 50, False))
        t.send("b")                                             # grouped by reason: the store's
        want = store_groups("dlq_reason::text")                  # counts of all, not the 50 loaded
        t.wait_for("DLQ by reason  %d groups of the store's %d entries" % (len(want), total))
        rows = [r.split()[:2] for r in t.screen.display[3:3 + len(want)]]
        assert rows == want and len(want) == 4, (want, t.text())   # the fixture's reasons too
        t.send("b")                                             # by queue
        t.wait_for("DLQ by queue  1 group of the store's %d entries" % total)
        assert t.screen.display[3].split()[:2] == ["tasks_dlq", str(total)], t.text()
        t.send("b")                                             # b, reason, Enter: the group's
        t.send("b")                                             # entries, searched by the store
        t.wait_for("DLQ by reason")
        t.send("j\r")
        t.wait_for("filter: text=worker_unavailable")
        wait_where(t, (1, 50, False))
        assert first_id(t).endswith("00003"), t.text()        # every third entry, past the
        assert "-800000000075 " in t.text(), t.text()          # 50 loaded before
        t.send("C")                                             # clear: all of them again
        t.send("/needle-1234\r")                                # the store searches all 2,400
        t.wait_for("DLQ  1 peeked")
        assert first_id(t).endswith("01234"), t.text()
        t.send("Q")
        assert t.finish() == 0
    finally:
        fx.reload("tasker")
