#!/usr/bin/python3
"""Writes the deterministic model fixtures for the screen tests (tests/tui/fixtures/*.json).

Times are relative to NOW (also passed to the console as REDRIVE_NOW), so the ages on
screen never depend on the clock. Run it after changing the data; the JSON is checked in.
"""
import json
import os

NOW = 1767225600.0   # 2026-01-01T00:00:00Z
HERE = os.path.dirname(os.path.abspath(__file__))

ERRORS = [
    "connection refused to host 10.0.0.7:5432",
    "timeout after 30s waiting for worker",
    "worker heartbeat stale (last seen 95s ago)",
    "KeyError: 'customer_id'",
    None,
]
FPS = [
    "connection refused to host <ip>:<n>",
    "timeout after <n>s waiting for worker",
    "worker heartbeat stale (last seen <n>s ago)",
    "KeyError: <q>",
    None,
]
STATUSES = ["failed", "completed", "running", "failed", "scheduled", "completed", "failed", "timeout"]
ACTIONS = ["billing.charge", "email.send_receipt", "report.nightly", "sync.inventory",
           "thumbs.resize", "webhook.deliver"]


def execution(i):
    st = STATUSES[i % len(STATUSES)]
    err_i = i % 4 if st in ("failed", "timeout") else 4
    attempt = 1 + i % 3
    e = {
        "id": str(1100 - i),
        "name": ACTIONS[i % len(ACTIONS)],
        "status": st,
        "attempt": attempt,
        "max_attempts": 3,
        "worker": "worker-%02d" % (1 + i % 5),
        "created_at": NOW - 40 - i * 37,
        "updated_at": NOW - 20 - i * 37,
        "error": ERRORS[err_i],
        "fingerprint": FPS[err_i],
        "reason": ["transient_error", "worker_unavailable", "queue_timeout", "unknown"][i % 4] if attempt > 1 else None,
    }
    if st in ("failed", "timeout"):
        if attempt < 3 and err_i != 3:
            e.update(eligibility="yes", eligibility_reason="retry %d of 2 left" % (3 - attempt),
                     next_retry_min=NOW + 4 * attempt, next_retry_max=NOW + 6 * attempt)
        else:
            e.update(eligibility="no", eligibility_reason="budget exhausted (3/3)" if attempt >= 3
                     else "reason 'unknown' is not retried")
    else:
        e.update(eligibility="no", eligibility_reason="status is %s" % st)
    return e


def chain():
    out = []
    for a in range(3):
        out.append({
            "id": str(1040 + a), "name": "billing.charge", "status": "failed", "attempt": a + 1,
            "max_attempts": 3, "chain_root": "1040", "retry_of": str(1039 + a) if a else None,
            "worker": "worker-0%d" % (a + 1), "created_at": NOW - 600 + a * 95,
            "updated_at": NOW - 590 + a * 95, "finished_at": NOW - 580 + a * 95,
            "reason": [None, "worker_unavailable", "transient_error"][a],
            "error": ["connection refused to host 10.0.0.7:5432",
                      "worker heartbeat stale (last seen 95s ago)",
                      "timeout after 30s waiting for worker"][a],
            "eligibility": "no" if a == 2 else "yes",
            "eligibility_reason": "budget exhausted (3/3)" if a == 2 else "retry %d of 2" % (a + 1),
        })
    return out


def workers():
    return [
        {"id": "w1", "name": "worker-01", "status": "active", "health": "healthy", "health_reason": "",
         "heartbeat_at": NOW - 3, "queue_depth": 4, "in_flight": 2, "capacity": 8, "failure_rate": 0.05,
         "consecutive_failures": 0, "tags": "python3.11 gpu"},
        {"id": "w2", "name": "worker-02", "status": "active", "health": "unhealthy",
         "health_reason": "heartbeat 5m old", "reported_health": "healthy", "heartbeat_at": NOW - 300,
         "queue_depth": 12, "in_flight": 3, "capacity": 8, "failure_rate": 0.1, "consecutive_failures": 1,
         "tags": "python3.11"},
        {"id": "w3", "name": "worker-03", "status": "busy", "health": "degraded",
         "health_reason": "queue depth 63", "heartbeat_at": NOW - 2, "queue_depth": 63, "in_flight": 8,
         "capacity": 8, "failure_rate": 0.31, "consecutive_failures": 4, "tags": "node20"},
        {"id": "w4", "name": "worker-04", "status": "draining", "health": "unhealthy",
         "health_reason": "12 consecutive failures", "heartbeat_at": NOW - 5, "queue_depth": 140,
         "in_flight": 1, "capacity": 4, "failure_rate": 0.82, "consecutive_failures": 12, "tags": "shell"},
        {"id": "w5", "name": "worker-05", "status": "offline", "health": "unknown",
         "health_reason": "no heartbeat and no metrics", "tags": "python3.11"},
        {"id": "w6", "name": "worker-06", "status": "active", "health": "healthy", "health_reason": "",
         "heartbeat_at": NOW + 40, "queue_depth": 0, "in_flight": 0, "capacity": 8, "failure_rate": 0,
         "consecutive_failures": 0, "tags": "clock skew"},
    ]


def queues():
    return [
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


def dlq():
    out = []
    for i in range(4):
        payload = {"execution_id": 1090 - i, "action_ref": ACTIONS[i], "parameters": {"customer": "c-%d" % i,
                   "amount": 12.5 * (i + 1)}, "attempt": 3}
        out.append({"id": "msg-%d" % (i + 1), "queue": "attune.dlx.queue", "execution_id": str(1040 + 2 if i == 0 else 1090 - i),
                    "reason": ["expired", "rejected", "expired", "maxlen"][i], "count": i + 1,
                    "origin_queue": "worker.w%d.executions" % (i + 1),
                    "first_death_at": NOW - 3600 * (i + 1), "last_death_at": NOW - 600 * (i + 1),
                    "payload": json.dumps(payload, separators=(",", ":")), "redelivered": i % 2 == 1})
    return out


def base_model():
    return {
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
        "executions": [execution(i) for i in range(30)],
        "executions_more": True,
        "chain_id": "1042",
        "chain": chain(),
        "workers": workers(),
        "queues": queues(),
        "dlq": dlq(),
        "dlq_total": 42,
        "dlq_loaded": True,
        "orphan_suspects": 2,
        "failing_rate": 4.5,
    }


HOSTILE = [
    "boom \x1b[2J\x1b[H screen cleared",
    "clip \x1b]52;c;ZWNobyBwd25lZA==\x07 stolen",
    "title \x1b]0;pwned\x07 set",
    "over\rwritten\b\b\bXX",
    "bidi \u202eexe.txt\u202c trick",
    "c1 \u009b31m csi",
    "link \x1b]8;;http://evil/\x1b\\click\x1b]8;;\x1b\\",
]


def hostile_model():
    m = base_model()
    for i, e in enumerate(m["executions"][:len(HOSTILE)]):
        e["error"] = HOSTILE[i]
        e["name"] = "evil\x1b[31m.name" if i == 0 else e["name"]
        e["status"] = "failed"
    m["workers"][0]["name"] = "w\x1b]2;x\x07orker"
    m["queues"][0]["name"] = "q\u202eeueu"
    m["dlq"][0]["payload"] = '{"msg":"\\u001b]52;c;AAAA\\u0007","ok":1}'
    m["chain"][0]["error"] = HOSTILE[1]
    return m


def main():
    out = os.path.join(HERE, "fixtures")
    os.makedirs(out, exist_ok=True)
    for name, model in (("attune", base_model()), ("hostile", hostile_model()),
                        ("empty", {"now": NOW, "sources": [], "dlq_loaded": True})):
        with open(os.path.join(out, name + ".json"), "w") as f:
            json.dump(model, f, indent=1, sort_keys=True)
            f.write("\n")


if __name__ == "__main__":
    main()
