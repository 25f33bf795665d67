"""The retry chain's times as the store records them (issue 34), in a real terminal on the
local stack: STARTED is when each attempt started (Attune's later schema: started_at), not
when its row was created, and GAP, from the previous attempt's end to this one's start, is
exact (it showed +0s for attempts 3 s apart: it measured the retry row's creation, which
follows the failure at once).

Needs the stack env (tests/stack/stack.sh start DIR && . DIR/env); fails without it."""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "stack"))
import stack_fixtures as fx  # noqa: E402
import stacklib  # noqa: E402
from lib.term import LiveTerm as Term  # noqa: E402

T0 = "2026-01-01 10:00:00+00"
# chain 5 -> 6 -> 7: (created, started_at, updated = its end) in seconds after T0
TIMES = {5: (0, 1, 4), 6: (4, 7, 9), 7: (9, 9.5, 12)}


def set_times():
    c = stacklib.pg_admin(os.environ, "attune2", autocommit=True)
    try:
        cur = c.cursor()
        cur.execute("SET session_replication_role = replica")   # the `updated` trigger stays out
        for eid, (cr, st, up) in TIMES.items():
            cur.execute("UPDATE attune.execution SET created = %s::timestamptz + make_interval(secs => %s), "
                        "started_at = %s::timestamptz + make_interval(secs => %s), "
                        "updated = %s::timestamptz + make_interval(secs => %s) WHERE id = %s",
                        (T0, cr, T0, st, T0, up, eid))
    finally:
        c.close()


def test_started_and_gap_as_the_store_records_them(tmp_path):
    fx.reload("attune2")
    set_times()
    try:
        t = Term(tmp_path, cols=140, rows=30)
        t.send(":chain 7\r")
        t.wait_for("Retry chain of 7  3 attempts")
        t.wait_until(lambda: re.search(r"\n *3 +7 ", t.text()), what="attempt 3 listed")
        s = t.text()
        head = [l.split() for l in s.splitlines() if l.strip().startswith("# ID ")]
        assert head and head[0][:8] == ["#", "ID", "STATUS", "REASON", "WORKER", "STARTED", "GAP", "ERROR"], s
        rows = {}
        for l in s.splitlines():
            m = re.match(r" *\d +([567]) +failed +\S+ +\d+ +(\S+ \S+) +(\S+) ", l)
            if m:
                rows[m.group(1)] = (m.group(2), m.group(3))
        assert rows == {"5": ("2026-01-01 10:00:01", "-"),          # started 1 s after its row
                        "6": ("2026-01-01 10:00:07", "+3s"),        # 7 s - the end of 5 at 4 s
                        "7": ("2026-01-01 10:00:09", "+0.5s")}, s   # 9.5 s - the end of 6 at 9 s
        t.quit()
    finally:
        t.close()
        fx.reload("attune2")
