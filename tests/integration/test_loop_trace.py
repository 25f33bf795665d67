"""REDRIVE_LOOP_TRACE (src/io/loop.h), which the benches read for the event loop's costliest
iterations: a snapshot against attune1 appends a line per iteration over 1 ms of CPU (or of
callback wall time) and one summary line, whose figures agree with each other; each line
says what ran in the iteration (issue 38: every stall attributed), which
REDRIVE_LOOP_TRACE_MS=0 shows for every iteration."""
import os
import re

from attune_checks import config
from snaphelp import need_env, snapshot

SUMMARY = re.compile(r"^iterations (\d+) cpu_max_ms ([0-9.]+) cpu_p99_ms ([0-9.]+) over_1ms (\d+)"
                     r" wall_over_1ms (\d+) wall_max_ms ([0-9.]+) listed (\d+)$")
SLOW = re.compile(r"^slow at ([0-9.]+) cpu_ms ([0-9.]+) wall_ms ([0-9.]+) preempt (\d+) block (\d+) minflt (\d+)"
                  r" ran (\S+)$")
SPAN = re.compile(r"^(?:([^>:,]+)>)?([^>:,@]+)(?:@([\w.]+))?:([0-9.]+)/([0-9.]+)$")


def runs(path):
    """[(summary match, [(CPU ms, wall ms, what ran)])] per run appended to the trace file."""
    out, slow = [], []
    for line in path.read_text().splitlines():
        m = SLOW.match(line)
        if m:
            slow.append((float(m[2]), float(m[3]), m[7]))
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
        wall_over = int(m[5])
        assert int(m[7]) == len(slow), (m[0], slow)      # every listed line kept
        assert over == sum(1 for c, _, _ in slow if c > 1.0), (m[0], slow)
        assert wall_over == sum(1 for _, w, _ in slow if w > 1.0), (m[0], slow)
        assert all((1.0 < c or 1.0 < w) and c <= cpu_max for c, w, _ in slow), (m[0], slow)


def spans(ran):
    """{"other": ms} and [(parent, name, file, cpu, wall)] of a line's "ran" field."""
    out, other, more = [], None, 0
    for part in ran.split(","):
        if part.startswith("other:"):
            other = float(part[6:])
        elif part.startswith("+"):
            more = int(part[1:])
        else:
            m = SPAN.match(part)
            assert m, "not a span: %r in %r" % (part, ran)
            out.append((m[1], m[2], m[3], float(m[4]), float(m[5])))
    assert other is not None, ran
    return out, other, more


def test_every_iteration_says_what_ran(tmp_path, monkeypatch):
    """With the bar at 0 every iteration is listed with the callbacks that ran in it, by
    name and file: the PostgreSQL connection's I/O event among them; the top-level
    callbacks' CPU and libevent's own ("other") add up to the iteration's CPU."""
    need_env("RD_PG_DSN_ATTUNE1")
    cfg = config(tmp_path, os.environ["RD_PG_DSN_ATTUNE1"])
    trace = tmp_path / "loop.txt"
    monkeypatch.setenv("REDRIVE_LOOP_TRACE", str(trace))
    monkeypatch.setenv("REDRIVE_LOOP_TRACE_MS", "0")
    s = snapshot(cfg, "a", "--json")
    assert s.rc == 0, s.err
    [(m, slow)] = runs(trace)
    assert len(slow) == int(m[1]), "every iteration listed at the bar 0"
    names = set()
    for cpu, wall, ran in slow:
        sp, other, more = spans(ran)
        names |= {(name, f) for _, name, f, _, _ in sp}
        top = [c for parent, _, _, c, _ in sp if parent is None]
        if not more:
            assert abs(sum(top) + other - cpu) <= 0.002 * (len(top) + 1) or other == 0, (cpu, ran)
    assert ("on_io", "pg_conn.c") in names, sorted(names)



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
