"""Helpers for the `redrive snapshot` integration tests (pg engineer's area).

Run after the stack is up and its env sourced (scripts/test.sh does both):
    /usr/bin/python3 -m pytest tests/integration
The binary is $RD_BIN, default build/src/cli/redrive.
"""
import json
import os
import subprocess
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# What the sanitized text output must never contain (SPEC §8).
FORBIDDEN = ["\x1b", "\r", "\b", "\x07", "\u202e", "\u202c"]
# The start of stack_fixtures.HOSTILE as the text output shows it: every control character
# replaced by its visible symbol, the words kept.
HOSTILE_SHOWN = "boom \u241b[2J\u241b]52;c;cHduZWQ=\u2407 after-clear\u240dSPOOFED LINE\u2408\u2408\u2408"


def rd_bin():
    b = os.environ.get("RD_BIN") or os.path.join(ROOT, "build", "src", "cli", "redrive")
    if not os.path.exists(b):
        pytest.fail("redrive binary not built: %s" % b)
    return b


def need_env(*names):
    missing = [n for n in names if not os.environ.get(n)]
    if missing:
        pytest.fail("stack env not loaded (missing %s)" % ", ".join(missing))


def write_config(tmp_path, systems):
    """systems: {name: {key: value}} → path of an INI config file."""
    lines = []
    for name, keys in systems.items():
        lines.append('[system "%s"]' % name)
        for k, v in keys.items():
            lines.append("%s = %s" % (k, v))
        lines.append("")
    p = tmp_path / "config"
    p.write_text("\n".join(lines))
    return str(p)


class Snap:
    def __init__(self, rc, out, err, elapsed):
        self.rc, self.out, self.err, self.elapsed = rc, out, err, elapsed

    @property
    def json(self):
        return json.loads(self.out)

    def source(self, name):
        for s in self.json["sources"]:
            if s["name"] == name:
                return s
        raise KeyError(name)


def snapshot(config, system, *args, timeout=30, env=None):
    env = dict(os.environ, TZ="UTC", LANG="C.UTF-8", NO_COLOR="1",
               REDRIVE_PROFILES=os.path.join(ROOT, "profiles"), **(env or {}))
    cmd = [rd_bin(), "--config", config]
    if system:
        cmd += ["--system", system]
    cmd += ["snapshot"] + list(args)
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, timeout=timeout, env=env)
    el = time.monotonic() - t0
    return Snap(p.returncode, p.stdout.decode("utf-8"), p.stderr.decode("utf-8", "replace"), el)


def by_id(rows):
    return {r["id"]: r for r in rows}


def assert_clean_text(text):
    for bad in FORBIDDEN:
        assert bad not in text, "unsanitized %r in text output" % bad


def assert_hostile_row(text, row_id):
    """The row whose first column is row_id is in the text output and shows the hostile
    string defused (so a sanitize test cannot pass on output that leaves the row out)."""
    rows = [ln for ln in text.split("\n") if ln.split("  ", 1)[0] == row_id]
    assert len(rows) == 1, "row %s shown once, not %d times:\n%s" % (row_id, len(rows), text)
    assert HOSTILE_SHOWN in rows[0], "row %s does not show the hostile string: %r" % (row_id, rows[0])


class SourceWatch:
    """rd-source-watch (tests/integration/source_watch.c): the sources of one config's system
    on a loop, driven by line commands ("ready" once it answered). env adds variables (a
    debug switch), stderr is where its diagnostics go (a file, subprocess.PIPE; None: ours)."""

    def __init__(self, config, system=None, ready_timeout=15, env=None, stderr=None):
        build = os.path.dirname(os.path.dirname(os.path.dirname(rd_bin())))
        exe = os.path.join(build, "tests", "integration", "rd-source-watch")
        if not os.path.exists(exe):
            pytest.fail("rd-source-watch not built: %s" % exe)
        full = dict(os.environ, TZ="UTC", REDRIVE_PROFILES=os.path.join(ROOT, "profiles"))
        full.update(env or {})
        args = [exe, str(config)] + ([system] if system else [])
        self.p = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=stderr, env=full, text=True, bufsize=1)
        self.started()
        self.expect("ready", ready_timeout)

    def started(self):
        """Called once the process runs, before "ready" is awaited (a reader of its stderr
        starts here, so that a full pipe never stalls it)."""

    def line(self, timeout):
        import select
        r, _, _ = select.select([self.p.stdout], [], [], timeout)
        assert r, "rd-source-watch did not answer within %s s" % timeout
        return self.p.stdout.readline().strip()

    def expect(self, word, timeout):
        got = self.line(timeout)
        assert got.startswith(word), got
        return got

    def ask(self, cmd, timeout=30):
        self.p.stdin.write(cmd + "\n")
        self.p.stdin.flush()
        return self.line(timeout)

    def close(self):
        if self.p.poll() is None:
            try:
                self.p.stdin.write("quit\n")
                self.p.stdin.flush()
                self.p.wait(5)
            except (BrokenPipeError, subprocess.TimeoutExpired):
                self.p.kill()
                self.p.wait()
