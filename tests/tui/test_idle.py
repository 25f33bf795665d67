"""Idle cost: a console with nothing new to show writes (almost) nothing to the terminal.

The real console (not headless) under a pseudo-terminal, drawing a fixture model with no
sources (REDRIVE_HEADLESS_MODEL without REDRIVE_HEADLESS). The clock is real: the 1 s tick
must repaint only when a string on screen would read differently. A behaviour check (bytes
written after the first paint), not a timing check. No stack needed.
"""
import fcntl
import json
import os
import pty
import select
import signal
import struct
import termios
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BIN = os.environ.get("RD_BIN", os.path.join(ROOT, "build", "src", "cli", "redrive"))
IDLE_SECS = 5.0


def ctx_switches(pid):
    """Times the console went to sleep and was woken: its voluntary context switches (one
    thread; a libevent loop sleeps only in epoll_wait). Counted by the kernel: exact."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("voluntary_ctxt_switches:"):
                return int(line.split()[1])
    raise AssertionError("no voluntary_ctxt_switches in /proc/%d/status" % pid)


def console(tmp_path, model_file, extra_env=None, rows=30, cols=100):
    """The real console on a pty, drawing model_file without sources: (pid, fd, pump) where
    pump(secs) returns what it wrote in that time."""
    env = {"PATH": "/usr/bin:/bin", "TERM": "xterm-256color", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
           "TZ": "UTC", "HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state"),
           "ESCDELAY": "25", "REDRIVE_HEADLESS_MODEL": str(model_file)}
    env.update(extra_env or {})
    pid, fd = pty.fork()
    if pid == 0:   # child
        os.execve(BIN, [BIN, "--config", os.path.join(HERE, "fixtures", "test.conf")], env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))

    def pump(secs):
        out, end = bytearray(), time.time() + secs
        while time.time() < end:
            r, _, _ = select.select([fd], [], [], 0.05)
            if r:
                try:
                    out += os.read(fd, 65536)
                except OSError:
                    break
        return bytes(out)
    return pid, fd, pump


def run_idle(tmp_path, model_file, keys=b"", extra_env=None, wakeups=None):
    pid, fd, pump = console(tmp_path, model_file, extra_env)

    status = None
    try:
        first = pump(1.0)
        if keys:
            os.write(fd, keys)
            first += pump(1.0)
        w0 = ctx_switches(pid)
        idle = pump(IDLE_SECS)
        if wakeups is not None:
            wakeups.append(ctx_switches(pid) - w0)
        # quiet because it idles, not because it died: still running, then quits cleanly
        assert os.waitpid(pid, os.WNOHANG) == (0, 0), "the console exited while idle"
        os.write(fd, b"Q")
        end = time.time() + 5
        while status is None and time.time() < end:
            pump(0.1)
            done, st = os.waitpid(pid, os.WNOHANG)
            if done:
                status = st
    finally:
        if status is None:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            os.waitpid(pid, 0)
        os.close(fd)
    assert status is not None, "the console did not quit on Q"
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
    return first, idle


def live_model(tmp_path):
    """The fixture model with times moved to now: the OK source answered a moment ago,
    executions are hours old (their ages do not change within the test)."""
    with open(os.path.join(HERE, "fixtures", "attune.json")) as f:
        m = json.load(f)
    shift = time.time() - m.get("now", 1767225600.0) - 3 * 3600

    def move(o):
        if isinstance(o, dict):
            return {k: (v + shift if isinstance(v, (int, float)) and not isinstance(v, bool)
                        and v > 1e9 and k.endswith(("_at", "_min", "_max", "since", "last_ok")) else move(v))
                    for k, v in o.items()}
        if isinstance(o, list):
            return [move(v) for v in o]
        return o
    m = move(m)
    for s in m["sources"]:
        if s["state"] == "ok":
            s["last_ok"] = time.time() - 1
    for e in m["executions"]:
        e.pop("next_retry_min", None)   # countdowns legitimately change every second
        e.pop("next_retry_max", None)
    p = tmp_path / "model.json"
    p.write_text(json.dumps(m))
    return p


@pytest.mark.parametrize("view", [b"", b"2", b"3"], ids=["overview", "executions", "workers"])
def test_idle_console_writes_nothing(tmp_path, view):
    first, idle = run_idle(tmp_path, os.path.join(HERE, "fixtures", "attune.json"), keys=view)
    assert b"redrive" in first
    assert idle == b"", idle   # the CI gate (issue 12): not one byte when nothing changed


def test_idle_console_sleeps(tmp_path):
    """The CI gate on idle wakeups (issue 12): with nothing on screen that changes within the
    window (the fixture's ages are months old: the next one to move is minutes away), the
    loop sleeps through it — the tick plans its next wake from the ages on screen (at most
    every 30 s). It woke 5 times in 5 s (a 1 s tick) before; 1 is allowed for the tick due
    ~1 s after the key."""
    woke = []
    first, idle = run_idle(tmp_path, os.path.join(HERE, "fixtures", "attune.json"), keys=b"2", wakeups=woke)
    assert b"Executions" in first
    assert idle == b"", idle
    assert woke and woke[0] <= 1, woke


def test_start_maps_no_tls_or_store_library(tmp_path):
    """The CI gate on the start (issue 12): the shared libraries mapped when the first frame
    is painted (REDRIVE_START_TRACE), for a system whose store needs TLS. libssl, libcrypto,
    libevent_openssl, libpq and libcurl are loaded on first use (src/io/lazylib.c): none of
    them, and at most 8 libraries besides sanitizer runtimes (12 before, ~40 before libpq
    and libcurl were lazy)."""
    conf = tmp_path / "config"
    conf.write_text('[system "tls"]\nprofile = alakai\nstore = rediss://127.0.0.1:1/0\npoll = 2s\n'
                    '[system "pg"]\nprofile = attune\nstore = postgresql://redrive_ro@127.0.0.1:1/attune\n')
    trace = tmp_path / "start.trace"
    env = {"PATH": "/usr/bin:/bin", "TERM": "xterm-256color", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
           "TZ": "UTC", "HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state"),
           "XDG_CACHE_HOME": str(tmp_path / "cache"), "REDRIVE_START_TRACE": str(trace)}
    pid, fd = pty.fork()
    if pid == 0:   # child
        os.execve(BIN, [BIN, "--config", str(conf), "--system", "tls"], env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    try:
        end = time.time() + 10
        while not (trace.exists() and trace.read_text().endswith("\n")) and time.time() < end:
            r, _, _ = select.select([fd], [], [], 0.05)
            if r:
                os.read(fd, 65536)
        text = trace.read_text()
    finally:
        os.kill(pid, signal.SIGTERM)
        os.waitpid(pid, 0)
        os.close(fd)
    fields = dict(line.split(" ", 1) for line in text.splitlines())
    for k in ("first_paint_cpu_ms", "main_cpu_ms", "setup_cpu_ms", "terminal_cpu_ms", "frame_cpu_ms"):
        assert float(fields[k]) >= 0, text
    libs = [os.path.basename(line[4:]) for line in text.splitlines() if line.startswith("lib ")]
    assert any(x.startswith("libncursesw") for x in libs), libs   # the trace does list them
    late = ("libssl", "libcrypto", "libevent_openssl", "libevent_core", "libpq", "libcurl")
    assert [x for x in libs if x.startswith(late)] == [], libs
    runtime = ("libasan", "libubsan", "liblsan", "libtsan", "libstdc++", "libgcc_s")
    assert len([x for x in libs if not x.startswith(runtime)]) <= 8, libs


def test_steady_poll_with_unchanged_data_writes_nothing(tmp_path):
    """A source answering every 2 s with the same data (REDRIVE_MODEL_POLL simulates its
    model updates): the top bar says the source is fresh instead of counting 0s, 1s, 0s..."""
    model = live_model(tmp_path)
    first, idle = run_idle(tmp_path, model, extra_env={"REDRIVE_MODEL_POLL": "2"})
    assert b"postgresql ok" in first
    assert idle == b"", idle


def test_ages_on_screen_still_move(tmp_path):
    """The other side: an age that reads differently each second is repainted by the tick."""
    model = live_model(tmp_path)
    m = json.loads(model.read_text())
    m["executions"][0]["created_at"] = time.time() - 10
    model.write_text(json.dumps(m))
    first, idle = run_idle(tmp_path, model, keys=b"2")
    assert b"Executions" in first
    assert len(idle) > 0 and b"s" in idle, idle


def test_live_store_refreshing_every_second_writes_nothing(tmp_path):
    """The gate with a real source: PostgreSQL (attune1 of the local stack) refreshed every
    second for the whole window, nothing in it changing; the overview shows no age. Needs
    the stack env (tests/stack/stack.sh start DIR; . DIR/env)."""
    dsn = os.environ.get("RD_PG_DSN_ATTUNE1")
    assert dsn, "needs the local stack env (tests/stack/stack.sh start DIR; . DIR/env)"
    conf = tmp_path / "config"
    conf.write_text('[system "idle"]\nprofile = attune\nstore = %s\npoll = 1s\n' % dsn)
    env = {k: v for k, v in os.environ.items() if k.startswith("RD_")}
    env.update(PATH="/usr/bin:/bin", TERM="xterm-256color", LANG="C.UTF-8", LC_ALL="C.UTF-8", TZ="UTC",
               HOME=str(tmp_path), XDG_STATE_HOME=str(tmp_path / "state"), ESCDELAY="25")
    pid, fd = pty.fork()
    if pid == 0:   # child
        os.execve(BIN, [BIN, "--config", str(conf)], env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))

    def pump(secs):
        out, end = bytearray(), time.time() + secs
        while time.time() < end:
            r, _, _ = select.select([fd], [], [], 0.05)
            if r:
                try:
                    out += os.read(fd, 65536)
                except OSError:
                    break
        return bytes(out)

    try:
        first, end = b"", time.time() + 15
        while b"completed" not in first and time.time() < end:   # the counts came
            first += pump(0.2)
        assert b"completed" in first, first[-400:]
        first += pump(3.0)              # the first refreshes settled
        idle = pump(IDLE_SECS)
        assert os.waitpid(pid, os.WNOHANG) == (0, 0), "the console exited while idle"
        assert idle == b"", idle
    finally:
        os.kill(pid, signal.SIGTERM)
        os.waitpid(pid, 0)
        os.close(fd)


def write_syscalls(pid):
    """write()-family system calls the process has made: /proc/PID/io's syscw, counted by
    the kernel (exact; the pty reader's reads may merge or split them)."""
    with open("/proc/%d/io" % pid) as f:
        for line in f:
            if line.startswith("syscw:"):
                return int(line.split()[1])
    raise AssertionError("no syscw in /proc/%d/io" % pid)


def test_a_key_paints_in_one_write(tmp_path):
    """The CI gate on writes per paint (issue 12): each key below redraws most of the
    screen (a view switch) and the paint reaches the terminal in at most 2 write() calls
    (one, or two when it exceeds ncurses' buffer of (lines + 2) x (columns + 6) bytes).
    Before, ncurses flushed after every cursor movement: ~25 writes per view switch."""
    pid, fd, pump = console(tmp_path, os.path.join(HERE, "fixtures", "attune.json"),
                            {"XDG_CACHE_HOME": str(tmp_path / "cache")}, rows=40, cols=120)
    seen = []
    try:
        assert b"redrive" in pump(1.0)
        for key in (b"2", b"3", b"1", b"2", b"3"):
            w0 = write_syscalls(pid)
            os.write(fd, key)
            out = pump(0.5)
            seen.append((key, len(out), write_syscalls(pid) - w0))
    finally:
        os.kill(pid, signal.SIGTERM)
        os.waitpid(pid, 0)
        os.close(fd)
    for key, nbytes, writes in seen:
        assert nbytes > 500, seen         # the key did redraw the screen
        assert 1 <= writes <= 2, seen
