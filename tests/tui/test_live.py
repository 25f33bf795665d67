"""Real-terminal tests: the console under pexpect + pyte against the local stack.

Needs the stack env (tests/stack/stack.sh start DIR && . DIR/env); fails without it.
Pinned: TERM, LANG, TZ, HOME, size. Checks screen text through pyte and the raw bytes
written to the terminal (hostile data must never reach it as escape sequences).
"""
import json
import os
import re
import signal
import time

import pytest

# The harness lives in tests/lib/term.py; its names are kept here for the modules (new ones
# too) that import them from test_live.
from lib.term import BIN, ROOT, assert_restored, reload_attune2, stack_env  # noqa: F401
from lib.term import LiveTerm as Term
from lib.term import Term as BaseTerm  # noqa: F401

HERE = os.path.dirname(os.path.abspath(__file__))


def test_visit_every_view_and_quit(tmp_path):
    t = Term(tmp_path)
    t.wait_for("Overview")
    t.wait_for("postgresql")
    assert "PROD" in t.screen.display[0]
    for key, title in (("2", "Executions"), ("3", "Workers"), ("4", "Queues"), ("6", "Journal"),
                       ("?", "Help"), ("1", "Overview")):
        t.send(key)
        t.wait_for(title)
    for cmd, title in ((":workers\r", "Workers"), (":queues\r", "Queues"), (":executions\r", "Executions"),
                       (":journal\r", "no actions recorded yet"), (":overview\r", "Overview")):
        t.send(cmd)
        t.wait_for(title)
    t.send(":filter status=failed\r")
    t.wait_for("filter: status=failed")
    t.send("\r")                     # Enter on the first failed execution: its chain
    t.wait_for("Retry chain of")
    t.wait_for("verdict:")
    t.resize(80, 24)
    t.wait_for("Retry chain of")
    assert len(t.screen.display[0]) == 80
    t.send(":dlq\r")
    t.wait_for("requeues")
    t.send(":q\r")
    assert t.finish() == 0
    assert_restored(t.raw)


def test_hostile_data_never_reaches_the_terminal(tmp_path):
    t = Term(tmp_path, cols=160, rows=40)
    t.send("2")
    t.wait_for("Executions")
    t.pump(1.5)
    t.send("3")
    t.send("4")
    t.send("q")
    t.send("q")
    t.send("q")
    t.send("q")
    t.send("y")                      # the top view asks before quitting (confirm_quit)
    assert t.finish() == 0
    raw = bytes(t.raw)
    for seq in (b"\x1b]52", b"\x1b]0;", b"\x1b]2;", b"\x1b]8;", b"\xe2\x80\xae", b"\xc2\x9b", b"\x07"):
        assert seq not in raw, seq


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_signal_restores_the_terminal_and_exits_128_plus_signal(tmp_path, sig):
    t = Term(tmp_path)
    t.wait_for("Overview")
    t.child.kill(sig)
    status = t.finish()
    # it handled the signal and exited by itself (a death by the signal would leave None),
    # with the shell's convention for "ended by a signal"
    assert t.child.signalstatus is None and status == 128 + sig, (status, t.child.signalstatus)
    assert_restored(t.raw)


def test_unknown_term_falls_back(tmp_path):
    t = Term(tmp_path, extra_env={"TERM": "no-such-terminal-xyz"})
    t.wait_for("Overview")
    t.wait_for("unknown here")
    t.send("Q")
    assert t.finish() == 0


def test_no_color_is_monochrome(tmp_path):
    t = Term(tmp_path, extra_env={"NO_COLOR": "1"})
    t.wait_for("Overview")
    t.send("2")
    t.wait_for("Executions")
    t.send("Q")
    assert t.finish() == 0
    assert re.search(rb"\x1b\[(3[0-7]|4[0-7]|38;5;\d+|48;5;\d+)m", bytes(t.raw)) is None


def open_retry_dialog(t):
    """Executions filtered to failed, 'r' on the oldest one (execution 2, retry-eligible: only
    eligible executions are sent without an override), confirmed."""
    t.send("2")
    t.wait_for("Executions")
    t.send(":filter status=failed\r")
    t.wait_for("filter: status=failed")
    t.wait_for("failed")
    t.send("G")
    t.wait_for("eligible: yes")
    t.send("r")
    t.wait_for("retry 1 execution")
    t.send("y")


def test_jwt_login_password_prompt(tmp_path):
    password = os.environ.get("RD_CORE_PASSWORD", "redrive-ops-password")
    login = os.environ.get("RD_CORE_LOGIN", "ops")
    t = Term(tmp_path, auth="auth = jwt-login\nlogin = %s\n" % login)
    try:
        t.wait_for("Overview")
        assert "password for" not in t.text()       # not asked before the first action
        open_retry_dialog(t)
        t.wait_for("password for %s@attune2" % login)
        t.send(password, wait=0.5)
        assert password not in t.text() and "*" * 4 not in t.text()
        t.send("\r")
        t.wait_for("1/1 done")
        t.wait_for("as %s" % login)                  # identity from the login
        text = t.text()
        assert "unauthorized" not in text and "password prompt cancelled" not in text, text
        t.send("n")
        t.send("Q")
        assert t.finish() == 0
        assert password.encode() not in bytes(t.raw)
        written = [f for f in (tmp_path / "state" / "redrive").rglob("*") if f.is_file()]
        assert any(f.name == "journal.jsonl" for f in written), written
        for j in written:                            # the journal, the history, batch records
            assert password.encode() not in j.read_bytes()
    finally:
        if t.child.isalive():
            t.child.kill(signal.SIGKILL)
        reload_attune2()


def test_jwt_login_password_prompt_escape_cancels(tmp_path):
    """Escape cancels the prompt: what was typed is dropped (no login with it), the retry is
    never sent, and the outcome says so."""
    import sys
    sys.path.insert(0, os.path.join(ROOT, "tests", "actions"))
    import actlib
    core = os.environ["RD_CORE_URL_ATTUNE2"]
    before = actlib.core_actions(core)
    t = Term(tmp_path, auth="auth = jwt-login\nlogin = %s\n" % os.environ.get("RD_CORE_LOGIN", "ops"))
    try:
        t.wait_for("Overview")
        open_retry_dialog(t)
        t.wait_for("password for")
        t.send("not-the-password\x1b", wait=0.5)
        t.wait_for("1/1 done")
        # the item's outcome (the word "refused" is on screen anyway: an execution's error)
        t.wait_for("not authorized: password prompt cancelled")
        assert "password for" not in t.text()
        assert actlib.core_actions(core) == before      # nothing reached the core
        t.send("n")
        t.send("Q")
        assert t.finish() == 0
    finally:
        if t.child.isalive():
            t.child.kill(signal.SIGKILL)
        reload_attune2()


def test_maybe_applied_resend_uses_the_same_key(tmp_path):
    import sys
    sys.path.insert(0, os.path.join(ROOT, "tests", "actions"))
    import actlib
    srv = actlib.CoreServer("attune2", tmp_path, "--stall-route", r"/retry$", "--stall-seconds", "0")
    t = None
    try:
        t = Term(tmp_path, core=srv.url, extra_env={"REDRIVE_ACTION_TIMEOUT_MS": "1500"})
        t.wait_for("Overview")
        open_retry_dialog(t)
        t.wait_for("maybe_applied", secs=10)
        entries = [e for e in srv.actions() if e["route"].endswith("/retry")]
        assert len(entries) == 1, entries     # answered (applied or 409) and then stalled
        key = entries[0]["key"]
        t.wait_for("[key %s]" % key[:8])             # shown so it can be matched in the journal
        t.pump(1.0)
        assert len([e for e in srv.actions() if e["route"].endswith("/retry")]) == 1   # never automatic
        t.send("R")
        t.wait_for("re-send retry of execution")
        t.wait_for("Idempotency-Key %s" % key[:8])
        t.send("y")
        t.wait_for("re-sent]", secs=10)
        t.wait_for("re-sent retry of", secs=10)
        entries = [e for e in srv.actions() if e["route"].endswith("/retry")]
        assert len(entries) == 2, entries
        assert entries[1]["key"] == key and entries[1]["replayed"] and not entries[1]["applied"], entries
        t.send("n")
        t.send("Q")
        assert t.finish() == 0
        lines = [json.loads(x) for x in (tmp_path / "state" / "redrive" / "journal.jsonl").read_text().splitlines()]
        assert [j.get("idempotency_key") for j in lines[-2:]] == [key, key], lines[-2:]
    finally:
        if t and t.child.isalive():
            t.child.kill(signal.SIGKILL)
        srv.stop()
        reload_attune2()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_signal_with_action_in_flight_is_journaled(tmp_path, sig):
    """Write-ahead journal: the retry is journaled as pending before it is sent; a signal
    while it is in flight completes it as unknown (it may have been applied)."""
    import sys
    sys.path.insert(0, os.path.join(ROOT, "tests", "actions"))
    import actlib
    srv = actlib.CoreServer("attune2", tmp_path, "--stall-route", r"/retry$", "--stall-seconds", "0")
    t = None
    try:
        t = Term(tmp_path, core=srv.url)
        t.wait_for("Overview")
        open_retry_dialog(t)
        end = time.time() + 10
        entries = []
        while not entries and time.time() < end:
            t.pump(0.1)
            entries = [e for e in srv.actions() if e["route"].endswith("/retry")]
        assert len(entries) == 1, entries
        t.pump(0.3)
        t.child.kill(sig)
        assert t.finish() == 128 + sig
        assert_restored(t.raw)
        jf = tmp_path / "state" / "redrive" / "journal.jsonl"
        lines = [json.loads(x) for x in jf.read_text().splitlines()]
        assert [l["code"] for l in lines] == ["pending", "unknown"], lines
        assert {l["idempotency_key"] for l in lines} == {entries[0]["key"]}
        assert lines[1]["result"].startswith("unknown: may have been applied"), lines[1]
        assert lines[0]["action"] == lines[1]["action"] == "retry"
        assert lines[0]["targets"] == lines[1]["targets"] == [entries[0]["target"]]
        assert os.environ["RD_CORE_TOKEN"] not in jf.read_text()
    finally:
        if t and t.child.isalive():
            t.child.kill(signal.SIGKILL)
        srv.stop()
        reload_attune2()


def test_quit_during_first_login_leaks_nothing(tmp_path):
    """Quit while the first jwt-login is still running (the password command has not
    answered): nothing leaks. Run with RD_ASAN_BIN=build-asan/src/cli/redrive (an
    -Db_sanitize=address,undefined build) for LeakSanitizer to check; the plain binary
    checks the clean exit only."""
    pw = tmp_path / "pw.sh"
    pw.write_text('#!/bin/sh\nsleep 3\nprintf "%s\\n" "$RD_CORE_PASSWORD"\n')
    pw.chmod(0o700)
    t = Term(tmp_path, auth="auth = jwt-login\nlogin = %s\npassword = cmd:%s\n"
             % (os.environ.get("RD_CORE_LOGIN", "ops"), pw),
             extra_env={"ASAN_OPTIONS": "detect_leaks=1:exitcode=23", "LSAN_OPTIONS": "exitcode=23"},
             binary=os.environ.get("RD_ASAN_BIN") or BIN)
    t.wait_for("Overview")
    t.send("Q", wait=0.5)
    status = t.finish()
    out = bytes(t.raw).decode("utf-8", "replace")
    assert "LeakSanitizer" not in out and "AddressSanitizer" not in out, out[-3000:]
    assert status == 0
    assert_restored(t.raw)


def test_config_problem_found_at_open_is_listed_in_the_console(tmp_path):
    """A secret reference that cannot resolve is a config problem (file:line) on the
    overview, not a failure found at the first action."""
    t = Term(tmp_path, cols=220, auth="auth = bearer\ntoken = env:RD_NO_SUCH_VAR_XYZ\n")
    t.wait_for("Overview")
    t.wait_for("system \"attune2\": token: ")
    text = t.text()
    # the diagnostic's line (the core's state, top bar and sources panel, says it too)
    line = [l for l in text.splitlines() if "system \"attune2\": token: " in l][0]
    assert "config:9: system \"attune2\": token:" in line and "RD_NO_SUCH_VAR_XYZ" in line, text
    t.send("Q")
    assert t.finish() == 0


def test_mouse_click_moves_the_cursor_to_that_row(tmp_path):
    """A click on a list row puts the cursor there (view_select): Enter then opens the chain
    of the execution clicked, not of the first row."""
    t = Term(tmp_path, cols=120, rows=30)
    t.wait_for("Overview")
    t.send("2")
    t.wait_for("Executions")
    t.wait_for("completed", secs=15)
    rows = [(y, line) for y, line in enumerate(t.screen.display)
            if re.match(r"\s*[0-9]+\s", line) and y > 2]
    assert len(rows) >= 4, t.text()
    y, line = rows[3]                      # the fourth execution on screen
    want = line.split()[0]
    assert want != rows[0][1].split()[0]
    t.send("\x1b[<0;10;%dM\x1b[<0;10;%dm" % (y + 1, y + 1), wait=0.5)   # press + release, 1-based
    t.send("\r")
    t.wait_for("Retry chain of %s" % want)
    t.send(":q\r")
    assert t.finish() == 0
