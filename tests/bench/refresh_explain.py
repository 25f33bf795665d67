#!/usr/bin/python3
"""refresh_explain: the refresh queries of two Attune era-2 profiles side by side, on the
bench database (issue 38: what each query of a round added).

    git show COMMIT:profiles/attune-era2.profile > /tmp/old.profile
    /usr/bin/python3 tests/bench/refresh_explain.py /tmp/old.profile profiles/attune-era2.profile [MORE.profile ...] [--plans]

For counts, workers, failing and the first executions page (as the console runs them:
named statements, the page's parameters written in, the console's session settings), each
profile's in turn, BENCH_RUNS (9) times alternating: server time (EXPLAIN ANALYZE planning +
execution, TIMING OFF) median and minimum, buffers, rows the execution scans examined; with
--plans the plans (COSTS OFF, TIMING OFF). The failing query runs as a console's session
runs it after its first refresh (its kept count carried); `failing (counting)` is a run that
counts. Prints the load average beside the figures: a shared machine's times are the load's.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B  # noqa: E402

RUNS = int(os.environ.get("BENCH_RUNS", "9"))
NAMES = ("counts", "workers", "failing", "failing (counting)", "executions page 1")


def walk(plan):
    yield plan
    for p in plan.get("Plans", []):
        yield from walk(p)


def rows_examined(plan):
    return sum((n.get("Actual Rows", 0) + n.get("Rows Removed by Filter", 0)) * n.get("Actual Loops", 1)
               for n in walk(plan) if n.get("Relation Name") == "execution" and "Scan" in n.get("Node Type", ""))


def statements(path):
    q = B.profile_queries(path)
    page = B.inline_params(q["executions"], [None, None, None, None, "101", "101", None])
    return {"counts": q["counts"], "workers": q["workers"], "failing": q["failing"],
            "failing (counting)": q["failing"], "executions page 1": page}


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    plans = "--plans" in sys.argv
    if len(args) < 2:
        sys.exit(__doc__)
    import psycopg2
    db, n, nw, _ = B.ensure_bench_attune()
    conn = psycopg2.connect(B.pg_dsn(db, console=True))
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute("SET plan_cache_mode = force_custom_plan")
    sides = []
    for i, path in enumerate(args):
        st = statements(path)
        for j, name in enumerate(NAMES):
            cur.execute("PREPARE s%d_%d AS %s" % (i, j, st[name]))
        sides.append(path)
    res = {}
    for _ in range(RUNS):
        for i in range(len(sides)):
            for j, name in enumerate(NAMES):
                if name == "failing (counting)":
                    cur.execute("SELECT set_config('redrive.elig', '', false)")
                elif name == "failing":
                    cur.execute("EXECUTE s%d_%d" % (i, j))      # the session's first run counts
                    cur.fetchall()
                cur.execute("EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, FORMAT JSON) EXECUTE s%d_%d" % (i, j))
                top = cur.fetchone()[0][0]
                r = res.setdefault((i, name), {"t": [], "plan": None})
                r["t"].append(top.get("Planning Time", 0.0) + top.get("Execution Time", 0.0))
                r["buf"] = top["Plan"].get("Shared Hit Blocks", 0) + top["Plan"].get("Shared Read Blocks", 0)
                r["rows"] = rows_examined(top["Plan"])
    print("%d executions, %d workers (database %s); load average %s" %
          (n, nw, db, open("/proc/loadavg").read().split()[:3]))
    print("| query | %s |" % " | ".join(os.path.basename(p) for p in sides))
    print("|---|%s" % ("---:|" * len(sides)))
    tot = [[0.0, 0] for _ in sides]
    for name in NAMES:
        cells = []
        for i in range(len(sides)):
            r = res[(i, name)]
            t = sorted(r["t"])
            cells.append("%.3f ms (min %.3f); %d buffers; %d rows" % (t[len(t) // 2], t[0], r["buf"], r["rows"]))
            if name != "failing (counting)":
                tot[i][0] += t[len(t) // 2]
                tot[i][1] += r["buf"]
        print("| %s | %s |" % (name, " | ".join(cells)))
    print("| refresh (the four, failing carried) | %s |"
          % " | ".join("%.3f ms; %d buffers" % (t, b) for t, b in tot))
    if plans:
        for name in NAMES:
            for i, path in enumerate(sides):
                if name == "failing (counting)":
                    cur.execute("SELECT set_config('redrive.elig', '', false)")
                j = NAMES.index(name)
                cur.execute("EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, COSTS OFF) EXECUTE s%d_%d" % (i, j))
                print("\n--- %s: %s" % (name, path))
                print("\n".join(r[0] for r in cur.fetchall()))
    conn.close()


if __name__ == "__main__":
    main()
