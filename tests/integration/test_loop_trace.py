"""REDRIVE_LOOP_TRACE (src/io/loop.h), which the benches read for the event loop's costliest
iterations: a snapshot against attune1 appends a line per iteration over 1 ms of CPU and one
summary line, whose figures agree with each other."""
import os
import re

from attune_checks import config
from snaphelp import need_env, snapshot

SUMMARY = re.compile(r"^iterations (\d+) cpu_max_ms ([0-9.]+) cpu_p99_ms ([0-9.]+) over_1ms (\d+)$")
SLOW = re.compile(r"^slow at ([0-9.]+) cpu_ms ([0-9.]+)$")


def runs(path):
    """[(summary match, [slow iteration CPU ms])] per run appended to the trace file."""
    out, slow = [], []
    for line in path.read_text().splitlines():
        m = SLOW.match(line)
        if m:
            slow.append(float(m[2]))
            continue
        m = SUMMARY.match(line)
        assert m, "not a loop trace line: %r" % line
        out.append((m, slow))
        slow = []
    assert not slow, "slow iterations after the last summary"
    return out


def test_snapshot_appends_its_loop_trace(tmp_path, monkeypatch):
    need_env("RD_PG_DSN_ATTUNE1")
    cfg = config(tmp_path, os.environ["RD_PG_DSN_ATTUNE1"])
    trace = tmp_path / "loop.txt"
    monkeypatch.setenv("REDRIVE_LOOP_TRACE", str(trace))
    for n in (1, 2):
        s = snapshot(cfg, "a", "--json")
        assert s.rc == 0, s.err
        assert s.source("postgresql")["state"] == "ok"
        assert len(s.json["executions"]) == 26     # the loop ran to the answer as usual
        got = runs(trace)
        assert len(got) == n, got                  # appended, one summary per run
    for m, slow in got:
        iterations, cpu_max, p99, over = int(m[1]), float(m[2]), float(m[3]), int(m[4])
        assert iterations >= 2, m[0]               # at least the connect and the answer
        assert 0 < p99 <= cpu_max, m[0]
        assert over == len(slow), (m[0], slow)
        assert all(1.0 < ms <= cpu_max for ms in slow), (m[0], slow)



def test_trace_never_written_through_a_link(tmp_path, monkeypatch):
    """A trace path that is a symlink or a second hard link to a file is refused (the
    snapshot itself runs as usual): the file it names keeps its content."""
    need_env("RD_PG_DSN_ATTUNE1")
    cfg = config(tmp_path, os.environ["RD_PG_DSN_ATTUNE1"])
    victim = tmp_path / "victim"
    victim.write_text("keep\n")
    (tmp_path / "link").symlink_to(victim)
    os.link(victim, tmp_path / "hard")
    for name in ("link", "hard"):
        monkeypatch.setenv("REDRIVE_LOOP_TRACE", str(tmp_path / name))
        s = snapshot(cfg, "a", "--json")
        assert s.rc == 0, s.err
        assert len(s.json["executions"]) == 26
        assert victim.read_text() == "keep\n", name
    assert os.path.islink(tmp_path / "link") and os.stat(tmp_path / "hard").st_nlink == 2
