"""Headless tests of the drain cockpit, the copy overlay, the time toggles and :export:
the console draws a fixture model; model updates and the clock come from the key script
(`model FILE`, `now EPOCH`)."""
import copy
import csv
import io
import json
import os
import stat
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BIN = os.environ.get("RD_BIN", os.path.join(ROOT, "build", "src", "cli", "redrive"))
NOW = 1767225600
FIXTURE = os.path.join(HERE, "fixtures", "attune.json")


def conf(tmp, extra=""):
    with open(os.path.join(HERE, "fixtures", "test.conf")) as f:
        text = f.read()
    text = text.replace("core = http://127.0.0.1:1\n", "core = http://127.0.0.1:1\n" + extra)
    p = tmp / "test.conf"
    p.write_text(text)
    return str(p)


def run(tmp, keys, extra_conf="", tz="UTC", size="100x30", cwd=None):
    script = tmp / "keys"
    script.write_text("\n".join(keys) + "\n")
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TZ": tz,
           "TERM": "xterm-256color", "HOME": str(tmp), "XDG_STATE_HOME": str(tmp / "state"),
           "REDRIVE_NOW": str(NOW), "REDRIVE_HEADLESS": size,
           "REDRIVE_HEADLESS_MODEL": FIXTURE, "REDRIVE_HEADLESS_KEYS": str(script)}
    p = subprocess.run([BIN, "--config", conf(tmp, extra_conf)], env=env, capture_output=True,
                       timeout=20, cwd=cwd or str(tmp))
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    assert p.stderr == b"", p.stderr.decode(errors="replace")
    parts = p.stdout.decode().split("--\n")
    assert parts[-1] == ""
    return parts[:-1]


def w4_model(tmp, name, depth, in_flight, running=True):
    """The fixture's workers with w4's depth and in-flight changed (and its execution)."""
    with open(FIXTURE) as f:
        d = json.load(f)
    out = {"workers": copy.deepcopy(d["workers"]), "executions": copy.deepcopy(d["executions"]),
           "running_worker": "w4", "running": copy.deepcopy(d["running"])}
    for w in out["workers"]:
        if w["id"] == "w4":
            w["queue_depth"], w["in_flight"] = depth, in_flight
    if not running:
        out["running"] = []   # the store's answer for w4: nothing running
        for e in out["executions"]:
            if e["id"] == "1082":
                e["status"] = "completed"
    p = tmp / (name + ".json")
    p.write_text(json.dumps(out))
    return str(p)


def test_cockpit_eta_from_observed_rate(tmp_path):
    m1 = w4_model(tmp_path, "m1", 120, 1)
    m2 = w4_model(tmp_path, "m2", 100, 1)
    m3 = w4_model(tmp_path, "m3", 0, 0, running=False)
    s = run(tmp_path, ["type :cockpit w4", "key enter", "dump",
                       "now %d" % (NOW + 10), "model " + m1, "dump",
                       "now %d" % (NOW + 20), "model " + m2, "dump",
                       "now %d" % (NOW + 30), "model " + m3, "dump"],
            extra_conf="execution_timeout = 20m\n")
    assert len(s) == 4
    assert "Drain cockpit  worker-04 (w4)  status draining  health unhealthy" in s[0]
    assert "queue depth 140   running 1/4   left 141" in s[0]
    assert "ETA to empty: measuring (needs 5s of samples, 30s to call it stalled)" in s[0]
    assert "WARNING: no other compatible worker" in s[0]
    assert "expected finish = start + timeout 20m 00s" in s[0]
    # 1082 started 1767224894 (706 s before now): finishes by +1200 s → in 494 s = "in 8m"
    row = [l for l in s[0].splitlines() if l.startswith("1082")]
    assert len(row) == 1 and "billing.charge" in row[0] and "running" in row[0] and row[0].endswith("in 8m"), row
    # 141 → 121 in 10 s: 2.00/s, 121 left → 61 s (60.5 rounded)
    assert "drain rate 2.00/s   ETA to empty: 1m 01s" in s[1], s[1]
    # 141 → 101 in 20 s: 2.00/s, 101 left → 51 s
    assert "drain rate 2.00/s   ETA to empty: 51s" in s[2], s[2]
    assert "left over time  " in s[2] and "(3 samples)" in s[2]
    assert "EMPTY: nothing queued or running on this worker; the worker can be stopped" in s[3], s[3]
    assert "nothing running on this worker (the store, queried by this worker)" in s[3]


def test_cockpit_stalled(tmp_path):
    m1 = w4_model(tmp_path, "m1", 140, 1)
    s = run(tmp_path, ["type :cockpit w4", "key enter",
                       "now %d" % (NOW + 60), "model " + m1, "dump"])
    assert "STALLED: nothing drained over the last 60s (rate 0.00/s): it may never empty" in s[0], s[0]


def test_cockpit_undrain_one_key(tmp_path):
    # headless has no core API: the undrain goes straight to "nothing was sent" without a
    # confirmation dialog (one key). That a confirmed drain opens the cockpit needs the core
    # API: tests/tui/test_live_cockpit.py
    s = run(tmp_path, ["type :cockpit w4", "key enter", "key U", "dump"])
    assert "undrain: no core API in headless mode: nothing was sent" in s[0], s[0]
    assert "y: confirm" not in s[0]
    s = run(tmp_path, ["key 3", "key D", "dump"])
    assert "drain 1 worker on attune-prod (PROD)?" in s[0]
    assert "the drain cockpit opens and follows it until it is empty" in s[0]


def test_enter_on_draining_worker_opens_cockpit(tmp_path):
    s = run(tmp_path, ["key 3", "key enter", "dump"])   # worker-04 (draining) sorts first
    assert "Drain cockpit  worker-04 (w4)" in s[0], s[0]


def test_time_toggles(tmp_path):
    # 1082 started 2025-12-31 23:48:14 UTC; the zone XYZ-3 is UTC+3
    s = run(tmp_path, ["type :cockpit w4", "key enter", "dump", "key T", "dump", "key Z", "dump",
                       "key T", "dump"], tz="XYZ-3")
    row = lambda scr: [l for l in scr.splitlines() if l.startswith("1082")][0]  # noqa: E731
    assert " 11m " in row(s[0])
    assert "23:48:14" in row(s[1]) and "[clock UTC]" in s[1] and "times: clock, UTC" in s[1]
    assert "02:48:14" in row(s[2]) and "[clock local]" in s[2] and "clock times in the local zone" in s[2]
    assert " 11m " in row(s[3]) and "[local]" in s[3] and "times: ages" in s[3]


def test_copy_overlay_and_osc52_message(tmp_path):
    s = run(tmp_path, ["key 2", "key space", "key j", "key space", "key c", "dump", "key x", "dump"])
    assert "copy: select the text with the mouse (any key closes)" in s[0]
    assert "2 ids shown to select (clipboard = osc52 in the config copies directly)" in s[0]
    assert "copy: select the text" not in s[1]
    s = run(tmp_path, ["key 3", "key c", "dump"], extra_conf="clipboard = osc52\n")
    assert "copied 1 id to the clipboard (OSC 52)" in s[0], s[0]
    assert "copy: select the text" not in s[0]


def test_export_csv_and_json(tmp_path):
    out = tmp_path / "w.csv"   # relative to the console's working directory, tmp_path
    # 200 columns: the status line names the absolute path
    s = run(tmp_path, ["key 3", "type :export csv w.csv", "key enter", "dump",
                       "type :export csv w.csv", "key enter", "dump",
                       "type :export! csv w.csv", "key enter", "dump",
                       "key 5", "type :export json d.json", "key enter", "dump"], size="200x30")
    # the message names the absolute path, whatever the console's directory
    assert "exported the workers view to %s (csv)" % out in s[0], s[0]
    assert "exists (:export! overwrites)" in s[1], s[1]
    assert "exported the workers view to %s (csv)" % out in s[2]
    raw = out.read_bytes()
    assert raw.startswith(b"id,name,status,health,health_reason,heartbeat_at,queue_depth,in_flight,"
                          b"capacity,failure_rate,consecutive_failures,tags\r\n")
    rows = list(csv.reader(io.StringIO(raw.decode(), newline="")))
    with open(FIXTURE) as f:
        workers = json.load(f)["workers"]
    assert len(rows) == len(workers) + 1
    w4 = [r for r in rows if r[0] == "w4"][0]
    assert w4[4] == "12 consecutive failures, queue depth 140, failure rate 82%"   # quoted: commas
    assert b'"12 consecutive failures, queue depth 140, failure rate 82%"' in raw
    assert w4[6:9] == ["140", "1", "4"]
    mask = os.umask(0o022)
    os.umask(mask)
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o644 & ~mask   # no payloads: the usual mode
    assert "mode 0600: payloads" in s[3], s[3]
    d = tmp_path / "d.json"
    assert stat.S_IMODE(os.stat(d).st_mode) == 0o600
    data = json.loads(d.read_text())
    assert len(data["dlq"]) == 4 and all("payload" in e for e in data["dlq"])


def cockpit_model(tmp, name, status="draining", metric_depth=0, broker_depth=None, running=()):
    """w4 with its own metrics saying nothing is left, the page's 1082 (running on w4) gone
    to completed, the broker's worker.w4.executions holding broker_depth (None: no such
    queue) and the store's answer for w4: `running` (execution ids)."""
    with open(FIXTURE) as f:
        d = json.load(f)
    out = {"workers": copy.deepcopy(d["workers"]), "executions": copy.deepcopy(d["executions"]),
           "queues": copy.deepcopy(d["queues"]), "running_worker": "w4", "running": []}
    for w in out["workers"]:
        if w["id"] == "w4":
            w["status"], w["queue_depth"], w["in_flight"] = status, metric_depth, 0
    if broker_depth is not None:
        out["queues"].append({"name": "worker.w4.executions", "depth": broker_depth, "ready": broker_depth,
                              "unacked": 0, "consumers": 1, "is_dlq": False, "source": "rabbitmq"})
    for e in out["executions"]:
        if e["id"] == "1082":
            e["status"] = "completed"
        if e["id"] in running:
            r = copy.deepcopy(e)
            r["status"], r["worker"] = "running", "w4"
            out["running"].append(r)
    p = tmp / (name + ".json")
    p.write_text(json.dumps(out))
    return str(p)


def test_cockpit_reads_the_broker_queue_not_the_workers_metric(tmp_path):
    """The worker's metric says 0 left; its broker queue holds 221: not stoppable."""
    m = cockpit_model(tmp_path, "m", broker_depth=221)
    s = run(tmp_path, ["model " + m, "type :cockpit w4", "key enter", "dump"])
    assert "queue depth 221 (worker.w4.executions)   running 0/4   left 221" in s[0], s[0]
    assert "can be stopped" not in s[0], s[0]


def test_cockpit_reads_running_work_from_the_store_not_the_page(tmp_path):
    """Nothing of w4's is running on the page on screen; the store says 1097 runs there."""
    m = cockpit_model(tmp_path, "m", broker_depth=0, running=("1097",))
    s = run(tmp_path, ["model " + m, "type :cockpit w4", "key enter", "dump"])
    assert "running 1/4   left 1" in s[0], s[0]
    assert [l for l in s[0].splitlines() if l.startswith("1097") and "running" in l], s[0]
    assert "can be stopped" not in s[0], s[0]


def test_cockpit_stoppable_only_while_draining(tmp_path):
    drained = cockpit_model(tmp_path, "a", broker_depth=0)
    undrained = cockpit_model(tmp_path, "b", status="active", broker_depth=0)
    s = run(tmp_path, ["model " + drained, "type :cockpit w4", "key enter", "dump",
                       "now %d" % (NOW + 10), "model " + undrained, "dump"])
    assert "EMPTY: nothing queued or running on this worker; the worker can be stopped" in s[0], s[0]
    assert "can be stopped" not in s[1], s[1]
    assert "nothing queued or running, but the worker is active, not draining: it takes new work" in s[1], s[1]


def test_cockpit_without_the_stores_answer_never_says_stoppable(tmp_path):
    m = cockpit_model(tmp_path, "m", broker_depth=0)
    with open(m) as f:
        d = json.load(f)
    del d["running"], d["running_worker"]
    with open(FIXTURE) as f:
        base = json.load(f)
    p = tmp_path / "fixture.json"   # the whole fixture without the store's answer for w4
    base.update(d)
    base.pop("running"), base.pop("running_worker")
    p.write_text(json.dumps(base))
    env_model = str(p)
    script = tmp_path / "keys"
    script.write_text("type :cockpit w4\nkey enter\ndump\n")
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TZ": "UTC",
           "TERM": "xterm-256color", "HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state"),
           "REDRIVE_NOW": str(NOW), "REDRIVE_HEADLESS": "100x30",
           "REDRIVE_HEADLESS_MODEL": env_model, "REDRIVE_HEADLESS_KEYS": str(script)}
    out = subprocess.run([BIN, "--config", conf(tmp_path)], env=env, capture_output=True, timeout=20)
    assert out.returncode == 0, out.stderr
    scr = out.stdout.decode()
    assert "running -/4" in scr, scr
    assert "can be stopped" not in scr, scr
    assert "not known to be empty: queue depth 0, running unknown" in scr, scr
    assert "running executions unknown: the store has not answered for this worker" in scr, scr
