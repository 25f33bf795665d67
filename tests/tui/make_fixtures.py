#!/usr/bin/python3
"""Writes the deterministic model fixtures for the screen tests (tests/tui/fixtures/*.json).

Only what the stores hold is written here: execution and worker rows as the Attune era-2
profile's queries return them (status, retry_count, max_retries, error, heartbeat, ...),
queues and DLQ messages as the broker reports them. Retry eligibility, the next retry,
error fingerprints and worker health are computed by the console's own code: the rows go
through rd-rows-model (tests/tui/rows_model.c, the PostgreSQL source's row conversion),
so a fixture cannot show a state the code never produces.

Times are relative to NOW (also passed to the console as REDRIVE_NOW), so the ages on
screen never depend on the clock. Run it after changing the data (needs the build):
    /usr/bin/python3 tests/tui/make_fixtures.py           # writes tests/tui/fixtures/*.json
    /usr/bin/python3 tests/tui/make_fixtures.py --check   # exit 1 if they differ
The JSON is checked in; tests/tui/test_screens.py runs --check.
"""
import json
import os
import subprocess
import sys

NOW = 1767225600.0   # 2026-01-01T00:00:00Z
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

ERRORS = [
    "connection refused to host 10.0.0.7:5432",
    "timeout after 30s waiting for worker",
    "worker heartbeat stale (last seen 95s ago)",
    "KeyError: 'customer_id'",
    None,
]
STATUSES = ["failed", "completed", "running", "failed", "scheduled", "completed", "failed", "timeout"]
ACTIONS = ["billing.charge", "email.send_receipt", "report.nightly", "sync.inventory",
           "thumbs.resize", "webhook.deliver"]
TERMINAL = ("completed", "failed", "cancelled", "timeout", "abandoned")


def t(x):
    """A timestamp as the profile returns it: extract(epoch FROM ...) as text."""
    return None if x is None else "%.3f" % x


def execution(i):
    """One row of the [query executions] of profiles/attune-era2.profile."""
    st = STATUSES[i % len(STATUSES)]
    err_i = i % 4 if st in ("failed", "timeout") else 4
    retry_count = i % 3
    updated = NOW - 20 - i * 37
    return {
        "id": str(1100 - i),
        "name": ACTIONS[i % len(ACTIONS)],
        "status": st,
        "retry_count": str(retry_count),
        "max_retries": "2",
        "worker": "worker-%02d" % (1 + i % 5),
        "created_at": t(NOW - 40 - i * 37),
        "updated_at": t(updated),
        "finished_at": t(updated) if st in TERMINAL else None,
        "error": ERRORS[err_i],
        "reason": (["transient_error", "worker_unavailable", "queue_timeout", "unknown"][i % 4]
                   if retry_count > 0 else None),
        "superseded": "f",
    }


def chain():
    """Rows of the [query chain]: a failed root and two failed retries."""
    out = []
    for a in range(3):
        updated = NOW - 590 + a * 95
        out.append({
            "id": str(1040 + a), "name": "billing.charge", "status": "failed",
            "retry_count": str(a), "max_retries": "2",
            "chain_root": "1040" if a else None, "retry_of": str(1039 + a) if a else None,
            "worker": "worker-0%d" % (a + 1), "created_at": t(NOW - 600 + a * 95),
            "started_at": t(NOW - 597 + a * 95),   # picked up 3 s after its row was written
            "updated_at": t(updated), "finished_at": t(updated),
            "reason": [None, "worker_unavailable", "transient_error"][a],
            "error": ["connection refused to host 10.0.0.7:5432",
                      "worker heartbeat stale (last seen 95s ago)",
                      "timeout after 30s waiting for worker"][a],
            "superseded": "t" if a < 2 else "f",
        })
    return out


def workers():
    """Rows of the [query workers]: heartbeat and metrics; health is computed."""
    def w(i, status, hb, depth=None, in_flight=None, cap=None, rate=None, fails=None, tags="",
          reported=None):
        return {"id": "w%d" % i, "name": "worker-%02d" % i, "status": status,
                "reported_health": reported, "tags": tags,
                "heartbeat_at": t(None if hb is None else NOW - hb),
                "queue_depth": None if depth is None else str(depth),
                "in_flight": None if in_flight is None else str(in_flight),
                "capacity": None if cap is None else str(cap),
                "failure_rate": None if rate is None else str(rate),
                "consecutive_failures": None if fails is None else str(fails)}
    return [
        w(1, "active", 3, 4, 2, 8, 0.05, 0, "python3.11 gpu"),
        w(2, "active", 300, 12, 3, 8, 0.1, 1, "python3.11", reported="healthy"),
        w(3, "busy", 2, 63, 8, 8, 0.31, 4, "node20"),
        w(4, "draining", 5, 140, 1, 4, 0.82, 12, "shell"),
        w(5, "offline", None, tags="python3.11"),
        w(6, "active", -40, 0, 0, 8, 0, 0, "clock skew"),
    ]


def queues(dlq_ttl_ms=None):
    out = [
        {"name": "worker.w1.executions", "depth": 4, "ready": 2, "unacked": 2, "consumers": 1,
         "publish_rate": 1.2, "deliver_rate": 1.1},
        {"name": "worker.w2.executions", "depth": 12, "ready": 9, "unacked": 3, "consumers": 1,
         "publish_rate": 0.8, "deliver_rate": 0.2},
        {"name": "worker.w3.executions", "depth": 63, "ready": 55, "unacked": 8, "consumers": 1,
         "publish_rate": 3.0, "deliver_rate": 2.5},
        {"name": "worker.w5.executions", "depth": 17, "ready": 17, "unacked": 0, "consumers": 0,
         "publish_rate": 0.1, "deliver_rate": 0},
        {"name": "attune.dlx.queue", "depth": 42, "ready": 42, "unacked": 0, "consumers": 0, "is_dlq": True,
         "ttl_ms": None},
        {"name": "attune.executions.requests", "depth": 0, "ready": 0, "unacked": 0, "consumers": 2,
         "publish_rate": 5.5, "deliver_rate": 5.5, "dead_letter_exchange": "attune.dlx", "ttl_ms": 60000},
    ]
    for q in out:
        q["source"] = "rabbitmq"     # the broker's queues (their DLQ horizon is the broker's)
    out[4]["ttl_ms"] = dlq_ttl_ms
    return out


def dlq():
    out = []
    for i in range(4):
        payload = {"execution_id": 1090 - i, "action_ref": ACTIONS[i], "parameters": {"customer": "c-%d" % i,
                   "amount": 12.5 * (i + 1)}, "attempt": 3}
        out.append({"id": "msg-%d" % (i + 1), "queue": "attune.dlx.queue", "execution_id": str(1040 + 2 if i == 0 else 1090 - i),
                    "reason": ["expired", "rejected", "expired", "maxlen"][i], "count": i + 1,
                    "origin_queue": "worker.w%d.executions" % (i + 1),
                    "first_death_at": NOW - 3600 * (i + 1), "last_death_at": NOW - 600 * (i + 1),
                    "payload": json.dumps(payload, separators=(",", ":")), "redelivered": i % 2 == 1,
                    "source": "rabbitmq"})   # peeked from the broker's queue (the peek note)
    return out


def rows_to_model(rows):
    """Execution, chain and worker rows through the console's row code (rd-rows-model)."""
    exe = os.environ.get("RD_ROWS_MODEL") or os.path.join(ROOT, "build", "tests", "tui", "rd-rows-model")
    if not os.path.exists(exe):
        sys.exit("make_fixtures: %s not built (ninja -C build)" % exe)
    p = subprocess.run([exe], input=json.dumps(rows).encode(), capture_output=True, timeout=30)
    if p.returncode != 0:
        sys.exit("make_fixtures: rd-rows-model failed: %s" % p.stderr.decode(errors="replace"))
    return json.loads(p.stdout)


def base_rows():
    return {"now": NOW, "semantics": "attune", "executions": [execution(i) for i in range(30)],
            "chain_id": "1042", "chain": chain(), "workers": workers()}


def model(rows, hostile=False, dlq_ttl_ms=None):
    """The fixture: the computed rows plus the facts of the other sources."""
    derived = rows_to_model(rows)
    m = {
        "now": NOW,
        "sources": [
            {"name": "postgresql", "state": "ok", "last_ok": NOW - 1, "since": NOW - 3600},
            {"name": "rabbitmq", "state": "stale", "last_ok": NOW - 75, "since": NOW - 60,
             "error": "connection refused (127.0.0.1:15672)"},
        ],
        "counts": [
            {"status": "failed", "count": 1287, "estimated": False},
            {"status": "completed", "count": 981234, "estimated": True},
            {"status": "running", "count": 37},
            {"status": "scheduled", "count": 10000, "capped": True},
        ],
        "executions": derived["executions"],
        "executions_more": True,
        "chain_id": derived["chain_id"],
        "chain": derived["chain"],
        "workers": derived["workers"],
        # the store's answer for the drain cockpit's worker (worker_running): 1082 runs on w4
        "running_worker": "w4",
        "running": [e for e in derived["executions"] if e["id"] == "1082"],
        "queues": queues(dlq_ttl_ms),
        "dlq": dlq(),
        "dlq_total": 42,
        "dlq_loaded": True,
        "orphan_suspects": 2,
        "failing_rate": 4.5,
    }
    if dlq_ttl_ms is not None:        # the broker answering: its figures are current
        m["sources"][1] = {"name": "rabbitmq", "state": "ok", "last_ok": NOW - 1, "since": NOW - 3600}
        for e in m["dlq"]:            # each dead-lettered once: its x-death time is its arrival
            e["count"] = 1
    if hostile:
        m["queues"][0]["name"] = "q\u202eeueu"
        m["dlq"][0]["payload"] = '{"msg":"\\u001b]52;c;AAAA\\u0007","ok":1}'
    return m


HOSTILE = [
    "boom \x1b[2J\x1b[H screen cleared",
    "clip \x1b]52;c;ZWNobyBwd25lZA==\x07 stolen",
    "title \x1b]0;pwned\x07 set",
    "over\rwritten\b\b\bXX",
    "bidi \u202eexe.txt\u202c trick",
    "c1 \u009b31m csi",
    "link \x1b]8;;http://evil/\x1b\\click\x1b]8;;\x1b\\",
]


def hostile_rows():
    rows = base_rows()
    for i, e in enumerate(rows["executions"][:len(HOSTILE)]):
        e["error"] = HOSTILE[i]
        e["name"] = "evil\x1b[31m.name" if i == 0 else e["name"]
        e["status"] = "failed"
        e["finished_at"] = e["updated_at"]
    rows["workers"][0]["name"] = "w\x1b]2;x\x07orker"
    rows["chain"][0]["error"] = HOSTILE[1]
    return rows


def fixtures():
    return {"attune": model(base_rows()), "hostile": model(hostile_rows(), hostile=True),
            "empty": {"now": NOW, "sources": [], "dlq_loaded": True},
            # the DLQ's message TTL of 1 h: its oldest entry (dead-lettered 40 min ago)
            # expires in 20 min (the DLQ view's horizon line)
            "dlq_horizon": model(base_rows(), dlq_ttl_ms=3600000)}


def dumps(m):
    return json.dumps(m, indent=1, sort_keys=True) + "\n"


def main():
    out = os.path.join(HERE, "fixtures")
    check = sys.argv[1:] == ["--check"]
    differ = []
    for name, m in fixtures().items():
        path = os.path.join(out, name + ".json")
        if check:
            with open(path) as f:
                if f.read() != dumps(m):
                    differ.append(path)
        else:
            with open(path, "w") as f:
                f.write(dumps(m))
    for path in differ:
        print("make_fixtures: %s is not what the generator writes" % path)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
