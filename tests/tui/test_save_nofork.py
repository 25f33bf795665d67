"""The last-known snapshot and the system's hour are written without a fork (issue 32): a
forked child of the console (a multithreaded process) may only call async-signal-safe
functions, and the fork of a large process stalled the loop. The console runs under
`strace -f -e trace=clone,clone3,fork,vfork` against the local stack (attune2) while both
files are saved and the store is refreshed at least REFRESHES times (issue 38: counted from
the loop trace, REDRIVE_LOOP_TRACE_MS=0, each run of the PostgreSQL source's poll timer):
no clone that makes a process (no CLONE_THREAD), no fork, no vfork; and the two files are
there, whole, 0600 in 0700 directories, no temporary left.

Needs the stack env (tests/stack/stack.sh start DIR && . DIR/env); fails without it.
"""
import glob
import json
import os
import re
import shutil
import stat
import time

from lib import term
from lib.term import LiveTerm, stack_env  # noqa: F401  (the fixture)

CALL = re.compile(r"^\d+\s+(clone3?|fork|vfork)\((.*)$")
REFRESHES = 8


def creations(trace):
    """The process-creating calls of an strace -f output, whole lines; and the thread count."""
    procs, threads = [], 0
    with open(trace) as f:
        for line in f:
            m = CALL.match(line)
            if not m or "resumed>" in line:
                continue
            if m.group(1) in ("clone", "clone3") and "CLONE_THREAD" in m.group(2):
                threads += 1
            else:
                procs.append(line.strip())
    return procs, threads


def wait_file(pattern, ok, secs=30):
    end = time.time() + secs
    while time.time() < end:
        found = glob.glob(pattern)
        if found and ok(found[0]):
            return found[0]
        time.sleep(0.2)
    raise AssertionError("no %s within %d s" % (pattern, secs))


def mode(p):
    return stat.S_IMODE(os.stat(p).st_mode)


def test_saves_never_fork(tmp_path):
    strace = shutil.which("strace")
    assert strace, "strace is needed"
    trace = str(tmp_path / "trace")
    wrap = tmp_path / "redrive-traced"
    wrap.write_text('#!/bin/sh\nexec %s -f -qq -o %s -e trace=clone,clone3,fork,vfork %s "$@"\n'
                    % (strace, trace, term.BIN))
    wrap.chmod(0o755)
    cache = tmp_path / "cache" / "redrive"
    hist = tmp_path / "state" / "redrive" / "history" / "attune2.hist"
    loop = tmp_path / "loop.txt"
    t = LiveTerm(tmp_path, extra_env={"REDRIVE_HISTORY_SAVE_S": "1", "XDG_CACHE_HOME": str(tmp_path / "cache"),
                                      "REDRIVE_LOOP_TRACE": str(loop), "REDRIVE_LOOP_TRACE_MS": "0"},
                 binary=str(wrap), extra_conf="poll = 1s\npush = false\n")
    t.wait_for("postgresql   ok", secs=15)
    t0 = time.time()
    snap = wait_file(str(cache / "*.json"), lambda p: os.path.getsize(p) > 0)
    wait_file(str(hist), lambda p: any(l.startswith("s ") for l in open(p)), secs=40)
    time.sleep(max(0.0, REFRESHES + 1.5 - (time.time() - t0)))   # poll 1s: the refreshes
    t.send("Q")
    assert t.finish() == 0

    polls = sum(l.count("on_poll@pg_source.c") for l in open(loop) if l.startswith("slow "))
    assert polls >= REFRESHES, "%d refreshes of the store in the trace" % polls
    procs, threads = creations(trace)
    assert procs == [], procs
    assert threads >= 1, "the writer threads are in the trace"
    # the files, whole: the snapshot's header and JSON, the hour's samples
    head, _, body = open(snap, "rb").read().partition(b"\n")
    assert re.fullmatch(rb"redrive-cache 1 \d+\.\d{3} attune2", head), head
    doc = json.loads(body)
    assert doc["view"] == "cache" and isinstance(doc["executions"], list) and doc["counts"], doc.keys()
    assert mode(snap) == 0o600 and mode(cache) == 0o700
    assert mode(hist) == 0o600 and mode(hist.parent) == 0o700
    assert [l.split()[0] for l in open(hist)][0] != "", "history file empty"
    assert sum(1 for l in open(hist) if l.startswith("s ")) >= 1
    left = sorted(os.listdir(cache)) + sorted(os.listdir(hist.parent))
    assert not [n for n in left if n.endswith(".tmp")], left
