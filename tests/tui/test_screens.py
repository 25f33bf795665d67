"""Expected-screen tests: the console in headless mode (REDRIVE_HEADLESS=WxH) draws a
fixture model and a key script; each dump is compared with tests/tui/expected/*.txt.

Regenerate the expected files after an intended change:
    REDRIVE_REGEN=1 /usr/bin/python3 -m pytest tests/tui/test_screens.py
(those cases then skip with "regenerated FILE": a regen run never counts as a pass; run
again without it and review the diff).
"""
import json
import os
import re
import subprocess

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BIN = os.environ.get("RD_BIN", os.path.join(ROOT, "build", "src", "cli", "redrive"))
NOW = "1767225600"

# (name, fixture, key script, extra args)
CASES = [
    ("overview", "attune", "overview", []),
    ("executions", "attune", "executions", []),
    ("executions_filter", "attune", "executions_filter", []),
    ("chain", "attune", "chain", []),
    ("workers", "attune", "workers", []),
    ("queues", "attune", "queues", []),
    ("dlq", "attune", "dlq", []),
    ("dlq_payload", "attune", "dlq_payload", []),
    # the DLQ's horizon line: message-ttl 1h, the oldest entry dead-lettered 40 min ago
    ("dlq_horizon", "dlq_horizon", "dlq", []),
    ("journal", "attune", "journal", []),
    ("help", "attune", "help", []),
    ("help_safe", "attune", "help", ["--keymap", "safe"]),
    ("readonly", "attune", "executions", ["--read-only"]),
    ("confirm_drain", "attune", "confirm_drain", []),
    ("confirm_retry_bulk", "attune", "confirm_retry_bulk", []),
    ("marks", "attune", "marks", []),
    ("password_prompt", "attune", "password_prompt", []),
    ("empty", "empty", "overview", []),
    ("hostile", "hostile", "hostile", []),
    ("ascii", "hostile", "hostile", ["--ascii"]),
    ("every_view", "attune", "every_view", []),
    ("groups", "attune", "groups", []),
    ("groups_retry", "attune", "groups_retry", []),
    ("groups_typed", "attune", "groups_typed", ["--system", "attune-typed"]),
    ("loop_retry", "attune", "loop_retry", []),
    ("journal_batches", "attune", "journal_batches", []),
    ("cockpit", "attune", "cockpit", []),
    ("sqs", "sqs", "sqs", ["--config", os.path.join(HERE, "fixtures", "sqs.conf")]),
    ("sqs_dlq", "sqs_dlq", "sqs_dlq", ["--config", os.path.join(HERE, "fixtures", "sqs.conf")]),
]

# Journal lines written before a case runs (the retry-loop breaker reads them at start).
JOURNALS = {
    "loop_retry": [
        {"time": "2026-12-31T23:50:00.000Z", "operator": "ops", "system": "attune-prod", "action": "retry",
         "targets": ["1084"], "idempotency_key": "0" * 32, "http_status": 202, "result": "retried",
         "code": "ok", "fp": "connection refused to host <ip>:<n>", "attempt": 1},
        # another system's retry of the same id is not this system's loop
        {"time": "2026-12-31T23:51:00.000Z", "operator": "ops", "system": "tasker-dev", "action": "retry",
         "targets": ["1100"], "idempotency_key": "1" * 32, "http_status": 202, "result": "retried",
         "code": "ok", "fp": "connection refused to host <ip>:<n>", "attempt": 0},
    ],
}


def _jline(minute, second, action, target, code, http, result, batch=None, item=None):
    d = {"time": "2026-12-31T23:%02d:%02d.000Z" % (minute, second), "operator": "ops",
         "system": "attune-prod", "action": action, "targets": [target],
         "idempotency_key": "%032x" % (minute * 100 + second), "http_status": http,
         "result": result, "code": code}
    if batch:
        d.update(batch=batch, item=item)
    return d


# 20 single retries, a batch of 30 (26 ok, 3 refused for their budget, 1 still pending),
# then two single drains: more rows than the screen holds, the batch one row of them
JOURNALS["journal_batches"] = (
    [_jline(10, i, "retry", str(2001 + i), "ok", 202, "retried") for i in range(20)] +
    [_jline(30, i, "retry", str(3001 + i), "ok", 202, "retried", "f188c0de00000001", i)
     for i in range(26)] +
    [_jline(30, 26 + i, "retry", str(3027 + i), "conflict_budget", 409, "retry budget exhausted",
            "f188c0de00000001", 26 + i) for i in range(3)] +
    [_jline(30, 29, "retry", "3030", "pending", 0, "sending", "f188c0de00000001", 29)] +
    [_jline(40, 0, "drain", "worker-7", "ok", 200, "drained"),
     _jline(41, 0, "drain", "worker-8", "forbidden", 403, "operator may not drain")])
SIZES = ["80x24", "132x40"]


def run_headless(fixture, script, size, args=(), home=None):
    env = {
        "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TZ": "UTC",
        "TERM": "xterm-256color", "HOME": home or "/nonexistent-redrive-home",
        "XDG_STATE_HOME": os.path.join(home or "/nonexistent-redrive-home", "state"),
        "REDRIVE_NOW": NOW, "REDRIVE_HEADLESS": size,
        "REDRIVE_HEADLESS_MODEL": os.path.join(HERE, "fixtures", fixture + ".json"),
        "REDRIVE_HEADLESS_KEYS": os.path.join(HERE, "scripts", script + ".keys"),
    }
    cmd = [BIN, "--config", os.path.join(HERE, "fixtures", "test.conf")] + list(args)
    p = subprocess.run(cmd, env=env, capture_output=True, timeout=20)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    # a script line the console did not understand is only reported on stderr
    assert p.stderr == b"", p.stderr.decode(errors="replace")
    return p.stdout.decode("utf-8")


def screens(out, n):
    """The n screens dumped by a key script: exactly n, each ending in a "--" line."""
    parts = out.split("--\n")
    assert parts[-1] == "", "output after the last dump: %r" % parts[-1][:200]
    assert len(parts) - 1 == n, "%d screens dumped, %d expected" % (len(parts) - 1, n)
    return parts[:-1]


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("name,fixture,script,args", CASES, ids=[c[0] for c in CASES])
def test_screen(tmp_path, name, fixture, script, args, size):
    if name in JOURNALS:
        d = tmp_path / "state" / "redrive"
        d.mkdir(parents=True, mode=0o700)
        j = d / "journal.jsonl"
        j.write_text("".join(json.dumps(x) + "\n" for x in JOURNALS[name]))
        j.chmod(0o600)
    out = run_headless(fixture, script, size, args, home=str(tmp_path))
    check_screen(out, os.path.join(HERE, "expected", "%s_%s.txt" % (name, size)))


def check_screen(out, path):
    """The screen equals the expected file. With REDRIVE_REGEN=1 the file is rewritten and
    the test skips: a run that wrote its own expectation never counts as a pass."""
    if os.environ.get("REDRIVE_REGEN"):
        with open(path, "w") as f:
            f.write(out)
        pytest.skip("regenerated %s" % path)
    with open(path) as f:
        expected = f.read()
    assert out == expected, "screen differs from %s (REDRIVE_REGEN=1 to update)" % path


def test_fixtures_are_what_the_generator_writes():
    """Eligibility, next retries, fingerprints and health in the fixtures come from the
    console's own row code (make_fixtures.py through rd-rows-model); a hand edit fails."""
    tool = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(BIN))), "tests", "tui",
                        "rd-rows-model")
    p = subprocess.run(["/usr/bin/python3", os.path.join(HERE, "make_fixtures.py"), "--check"],
                       env={"PATH": "/usr/bin:/bin", "RD_ROWS_MODEL": tool}, capture_output=True,
                       timeout=60)
    assert p.returncode == 0, (p.stdout + p.stderr).decode(errors="replace")
    assert p.stdout == b"" and p.stderr == b""
    with open(os.path.join(HERE, "fixtures", "attune.json")) as f:
        m = json.load(f)
    assert len(m["executions"]) == 30 and len(m["chain"]) == 3 and len(m["workers"]) == 6
    # Attune retries failed executions only, within the budget
    for e in m["executions"] + m["chain"]:
        if e["eligibility"] == "yes":
            assert e["status"] == "failed" and e["attempt"] <= e["max_attempts"] - 1, e


def test_password_prompt_never_shows_the_password(tmp_path):
    out = run_headless("attune", "password_prompt", "80x24", home=str(tmp_path))
    typing, entered, cancelled = screens(out, 3)
    assert "password for ops@attune-prod:" in typing and "(typing is not shown)" in typing
    for screen in (typing, entered, cancelled):
        for secret in ("hunter2", "Secret", "xyz", "**"):
            assert secret not in screen, (secret, screen)
    # the keys typed into the prompt never reached the keymap: same view, no quit, no ':'
    assert typing.splitlines()[1].startswith("Executions")
    assert "password for" not in entered and "password for" not in cancelled
    assert "password prompt cancelled: the action was not sent" in cancelled


def test_marks_survive_sorting_and_paging_and_are_counted(tmp_path):
    ranged, confirm, paged = screens(run_headless("attune", "marks", "132x40", home=str(tmp_path)), 3)
    assert "25 marked" in ranged.splitlines()[1]
    assert "retry 25 executions" in confirm and "targets (frozen selection):" in confirm
    assert "page 2" in paged.splitlines()[1] and "25 marked" in paged.splitlines()[1]


HOSTILE_BYTES = [b"\x1b", b"\x07", b"\r", b"\x08", b"\xe2\x80\xae", b"\xc2\x9b", b"]52;"]


@pytest.mark.parametrize("size", SIZES)
def test_hostile_data_never_reaches_the_screen(tmp_path, size):
    out = run_headless("hostile", "hostile", size, home=str(tmp_path)).encode()
    for seq in HOSTILE_BYTES[:-1]:
        assert seq not in out, seq
    # the text is shown with the escape made visible (U+241B, U+2407), not dropped
    assert "clip \u241b]52;c;ZWNobyBwd25lZA==\u2407".encode() in out


# Every view by its ':' command; the script is tests/tui/scripts/every_view.keys and the
# whole dump is compared in test_screen (case "every_view").
VIEW_TITLES = [("overview", "Overview"), ("executions", "Executions"), ("workers", "Workers"),
               ("queues", "Queues"), ("dlq", "DLQ"), ("journal", "Journal"), ("help", "Help"),
               ("chain 1042", "Retry chain of 1042"), ("fleet", "Fleet"), ("groups", "Error groups"),
               ("cockpit w3", "Drain cockpit  worker-03 (w3)"), ("history", "History"),
               ("detail 1042", "Execution 1042"), ("batches", "Batches")]


def ui_view_names():
    """The name of every view the console has (each src/ui/view_*.c's `.name = "..."`)."""
    names = []
    ui = os.path.join(ROOT, "src", "ui")
    for f in sorted(os.listdir(ui)):
        if f.startswith("view_") and f.endswith(".c"):
            with open(os.path.join(ui, f)) as src:
                names += re.findall(r'\.name = "([^"]+)"', src.read())
    return sorted(names)


def test_every_view_reachable_by_command(tmp_path):
    """Each view of the console (drain cockpit, fleet and groups included) opens by its ':'
    command: the script covers every view's name, and each screen shows that view's title."""
    with open(os.path.join(HERE, "scripts", "every_view.keys")) as f:
        cmds = [l[len("type :"):].strip() for l in f if l.startswith("type :")]
    assert cmds == [c for c, _ in VIEW_TITLES]
    assert sorted(c.split()[0] for c in cmds) == ui_view_names()
    out = run_headless("attune", "every_view", "80x24", home=str(tmp_path))
    got = screens(out, len(VIEW_TITLES))
    for (cmd, title), screen in zip(VIEW_TITLES, got, strict=True):
        assert screen.splitlines()[1].startswith(title), (cmd, screen)


def test_bad_keymap_and_theme_are_reported_not_fatal(tmp_path):
    km = tmp_path / "bad.keymap"
    km.write_text("retry = r\nfrobnicate = z\ndrain = r\nsort = ctrl-?\n")
    th = tmp_path / "bad.theme"
    th.write_text("cursor = black nosuchcolour\nnosuchslot = red blue\ndanger = #ff0000 default bold\n")
    script = tmp_path / "k.keys"
    script.write_text("dump\n")
    p = subprocess.run(
        [BIN, "--config", os.path.join(HERE, "fixtures", "test.conf"), "--keymap", str(km), "--theme", str(th)],
        env={"PATH": "/usr/bin", "LANG": "C.UTF-8", "TZ": "UTC", "HOME": str(tmp_path),
             "REDRIVE_NOW": NOW, "REDRIVE_HEADLESS": "132x40",
             "REDRIVE_HEADLESS_MODEL": os.path.join(HERE, "fixtures", "attune.json"),
             "REDRIVE_HEADLESS_KEYS": str(script)},
        capture_output=True, timeout=20)
    out = p.stdout.decode()
    assert p.returncode == 0
    assert "bad.keymap:2: unknown action 'frobnicate'" in out
    assert "bad.keymap:3: key 'r' for 'drain' conflicts with 'retry'" in out
    assert "bad.keymap:4: bad key 'ctrl-?'" in out
    assert "bad.theme:1: cursor: bad colour 'nosuchcolour'" in out
    assert "bad.theme:2: unknown colour slot 'nosuchslot'" in out
