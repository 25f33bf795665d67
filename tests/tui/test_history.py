"""The last hour as pictures (core/history.h, session/syshist.h): a history file written
here, in the state directory the console reads, drawn by the headless console at a pinned
time (REDRIVE_NOW): the overview's sparklines, the history view (H, :history) with its
axes, the queues' depth trends, the fleet's failures column; blocks, or ASCII under
--ascii; gaps blank, never zero. `snapshot --view history` prints the same file.

Regenerate the expected screens after an intended change:
    REDRIVE_REGEN=1 /usr/bin/python3 -m pytest tests/tui/test_history.py
"""
import json
import os
import subprocess
import time

import pytest

from test_screens import BIN, HERE, NOW, check_screen, run_headless, screens
from test_fleet_screens import run_fleet

STEP = 10
N = 360
GAP = range(120, 180)          # ten minutes without samples (the console was not running)
BLOCKS = set("▁▂▃▄▅▆▇█")


def sample(i):
    """Step i (0 = an hour ago) of the fixture's hour: [fail/min, eligible, dlq, unhealthy,
    worker.w3.executions, worker.w1.executions, 4 free queue slots]; None: a gap."""
    if i in GAP:
        return None
    fail = 1.0 if i < 120 else 2 + (i - 180) / 10 if i < 300 else 4.0
    return [fail, i // 30, 10 + i // 12, 0 if i < 330 else 2, 20 + i // 6, 4 + i % 20]


def write_history(home, system, now=int(NOW), fn=sample):
    d = os.path.join(home, "state", "redrive", "history")
    os.makedirs(d, mode=0o700, exist_ok=True)
    for p in (os.path.join(home, "state"), os.path.join(home, "state", "redrive"), d):
        os.chmod(p, 0o700)
    end = now // STEP
    lines = ["redrive-history 1", "q 0 worker.w3.executions", "q 1 worker.w1.executions"]
    for i in range(N):
        v = fn(i)
        if v is not None:
            lines.append("s %d %s" % (end - N + 1 + i, " ".join("%g" % x for x in v) + " - - - -"))
    path = os.path.join(d, system + ".hist")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.chmod(path, 0o600)
    return path


def history_keys(tmp_path, text):
    """A key script of this test (run_headless appends ".keys" to the name)."""
    (tmp_path / "k.keys").write_text(text)
    return str(tmp_path / "k")


def top(col):
    return max(v[col] for v in map(sample, range(N)) if v is not None)


BACKLOG_TOP = max(v[4] + v[5] for v in map(sample, range(N)) if v is not None)


@pytest.mark.parametrize("size", ["80x24", "132x40"])
def test_history_screens(tmp_path, size):
    write_history(str(tmp_path), "attune-prod")
    out = run_headless("attune", "history", size, home=str(tmp_path))
    check_screen(out, os.path.join(HERE, "expected", "history_%s.txt" % size))
    overview, hist, scrolled, queues = screens(out, 4)
    assert "Last hour" in overview and "max 13.9" in overview
    assert hist.splitlines()[1].startswith("History  attune-prod")
    assert "failures/min  now 4.0" in hist and "-60m" in hist and "now" in hist
    if size == "80x24":   # three charts a screen: down shows the next
        assert "failures/min" not in scrolled and "retry-eligible" in scrolled.splitlines()[3]
    else:                 # every chart shown: down moves nothing
        assert scrolled == hist
    assert "DEPTH 1H" in queues or size == "80x24"


def test_history_ascii(tmp_path):
    write_history(str(tmp_path), "attune-prod")
    out = run_headless("attune", "history", "132x40", ["--ascii"], home=str(tmp_path))
    check_screen(out, os.path.join(HERE, "expected", "history_ascii_132x40.txt"))
    assert all(ord(ch) < 128 for ch in out), [ch for ch in out if ord(ch) >= 128][:5]
    hist = screens(out, 4)[1]
    assert "failures/min  now 4.0" in hist and "|" in hist and "#" in hist


def chart_rows(screen, title):
    """The chart lines (after the axis) under the chart titled `title`."""
    lines = screen.splitlines()
    at = next(i for i, l in enumerate(lines) if l.startswith(title))
    rows = []
    for l in lines[at + 1:]:
        if "-60m" in l:
            break
        rows.append(l[8:].ljust(132 - 8))   # the dump drops trailing blanks
    return rows


def test_gap_is_blank_never_zero(tmp_path):
    """The ten minutes without samples are blank in every row of the chart; a zero (the
    unhealthy workers before the last minutes) is the lowest mark, not a blank."""
    write_history(str(tmp_path), "attune-prod")
    hist = screens(run_headless("attune", "history", "132x40", home=str(tmp_path)), 4)[1]
    width = 132 - 8
    inside = [c for c in range(width) if c * N // width >= GAP.start and (c + 1) * N // width <= GAP.stop]
    assert len(inside) >= 18
    for title in ("failures/min", "DLQ", "unhealthy workers"):
        rows = chart_rows(hist, title)
        assert len(rows) == 3
        for c in range(width):
            col = "".join(r[c] for r in rows)
            if c in inside:
                assert col == "   ", (title, c, col)
            elif c < inside[0] - 1 or c > inside[-1] + 1:
                assert col[-1] in BLOCKS, (title, c, col)
    zero_row = chart_rows(hist, "unhealthy workers")[-1]
    assert zero_row[0] == "▁" and chart_rows(hist, "unhealthy workers")[0][0] == " "


@pytest.mark.parametrize("cols", [40, 60, 80, 100, 132, 200])
def test_overview_sparklines_at_widths(tmp_path, cols):
    """Each sparkline is as wide as the screen allows (16 columns of label, 12 for its
    top), at most 120 cells (three steps a cell); blocks only, then its top."""
    write_history(str(tmp_path), "attune-prod")
    keys = history_keys(tmp_path, "key 1\ndump\n")
    out = run_headless("attune", keys, "%dx30" % cols, home=str(tmp_path))
    width = min(cols - 28, 120)
    lines = {l.split()[0]: l for l in screens(out, 1)[0].splitlines() if l.startswith("  ")}
    for label, want in (("failures/min", "%.1f" % top(0)), ("DLQ", "%d" % top(2)), ("backlog", "%d" % BACKLOG_TOP)):
        line = lines[label]
        cells = line[16:16 + width]
        assert set(cells) <= BLOCKS | {" "} and cells[-1] in BLOCKS, (label, line)
        assert line[16 + width:].strip() == "max " + want, (label, line)
        assert len([c for c in cells if c == " "]) < width // 3   # the gap, not more


def test_no_history_no_section(tmp_path):
    """Without a history file the overview has no "Last hour" and the history view says
    that each series has no sample, without a chart."""
    out = run_headless("attune", "history", "80x24", home=str(tmp_path))
    overview, hist = screens(out, 4)[:2]
    assert "Last hour" not in overview
    assert hist.count("no samples in the last hour") == 4 and "┤" not in hist


def test_damaged_history_keeps_lines_before_and_says_so(tmp_path):
    path = write_history(str(tmp_path), "attune-prod")
    with open(path, "a") as f:
        f.write("s 12 bad\n")
    keys = history_keys(tmp_path, "key H\ndump\n")
    out = run_headless("attune", keys, "132x40", home=str(tmp_path))
    keys = history_keys(tmp_path, "key 1\ndump\n")
    overview = screens(run_headless("attune", keys, "400x40", home=str(tmp_path)), 1)[0]
    assert "history: %s:%d: damaged history line" % (path, 4 + N - len(GAP)) in overview
    assert "failures/min  now 4.0" in screens(out, 1)[0]


def test_refused_history_file(tmp_path):
    path = write_history(str(tmp_path), "attune-prod")
    os.chmod(path, 0o644)
    keys = history_keys(tmp_path, "key 1\ndump\n")
    overview = screens(run_headless("attune", keys, "400x40", home=str(tmp_path)), 1)[0]
    assert "history: history file %s" % path in overview and "Last hour" not in overview


def test_fleet_failures_column(tmp_path):
    write_history(str(tmp_path), "alakai")
    keys = history_keys(tmp_path, "dump\n")
    out = run_fleet("132x40", keys, str(tmp_path))
    check_screen(out, os.path.join(HERE, "expected", "fleet_history_132x40.txt"))
    lines = screens(out, 1)[0].splitlines()
    at = lines[2].index("FAIL 1H")
    row = next(l for l in lines if l.split()[1:2] == ["alakai"])
    other = next(l for l in lines if l.split()[1:2] == ["tasker"])
    end = lines[2].index("RETRYABLE") - 1      # the column's width: up to the next one
    cells = row[at:end]
    assert len(cells) >= 8 and set(cells) <= BLOCKS | {" "} and cells[-1] in BLOCKS, cells
    assert other[at:end].strip() == ""


def snapshot(tmp_path, *args):
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TZ": "UTC",
           "HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state")}
    return subprocess.run([BIN, "--config", os.path.join(HERE, "fixtures", "test.conf")] + list(args),
                          env=env, capture_output=True, timeout=20)


def test_snapshot_view_history(tmp_path):
    """`snapshot --view history`: the file, no source asked (quick); text sparklines, or
    with --json the series as [time, value] pairs, null for a gap."""
    now = int(time.time())
    write_history(str(tmp_path), "attune-prod", now=now)
    t0 = time.time()
    p = snapshot(tmp_path, "snapshot", "--view", "history")
    assert p.returncode == 0 and p.stderr == b"", p.stderr
    assert time.time() - t0 < 3
    text = p.stdout.decode()
    assert text.splitlines()[0] == "The last hour, one sample per 10 s (blank: no sample)"
    assert "queue worker.w3.executions" in text and "max 13.9" in text
    p = snapshot(tmp_path, "--ascii", "snapshot", "--view", "history")
    assert p.returncode == 0 and all(b < 128 for b in p.stdout)
    p = snapshot(tmp_path, "snapshot", "--view", "history", "--json")
    assert p.returncode == 0, p.stderr
    h = json.loads(p.stdout)["history"]
    fail = h["series"]["failures_per_min"]
    assert h["step_s"] == 10 and len(fail) == N
    end = now // STEP * STEP
    assert [t for t, _ in fail] == list(range(end - (N - 1) * STEP, end + 1, STEP))
    want = [None if i in GAP else sample(i)[0] for i in range(N)]
    assert [v is None for _, v in fail] == [v is None for v in want]
    assert [v for _, v in fail if v is not None] == pytest.approx([v for v in want if v is not None], rel=1e-6)
    assert sorted(h["queues"]) == ["worker.w1.executions", "worker.w3.executions"]
    assert h["queues"]["worker.w1.executions"][-1][1] == sample(N - 1)[5]


def test_history_view_readable_under_no_color(tmp_path):
    """A real terminal (pexpect + pyte) with NO_COLOR: no colour is sent, and the charts
    are still there, in characters (blocks for values, blank for the gap)."""
    import re
    import pexpect
    import pyte
    import pyte_rep  # noqa: F401
    write_history(str(tmp_path), "attune-prod", now=int(time.time()))
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TZ": "UTC",
           "TERM": "xterm-256color", "HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state"),
           "NO_COLOR": "1", "REDRIVE_HEADLESS_MODEL": os.path.join(HERE, "fixtures", "attune.json")}
    screen = pyte.Screen(100, 30)
    stream = pyte.ByteStream(screen)
    raw = bytearray()
    child = pexpect.spawn(BIN, ["--config", os.path.join(HERE, "fixtures", "test.conf")], env=env,
                          dimensions=(30, 100), timeout=10)
    try:
        child.send("H")
        end = time.time() + 8
        while time.time() < end and "failures/min  now" not in "\n".join(screen.display):
            try:
                data = child.read_nonblocking(65536, timeout=0.1)
                raw += data
                stream.feed(data)
            except pexpect.TIMEOUT:
                pass
        text = "\n".join(screen.display)
        assert "failures/min  now 4.0" in text and "\u2524" in text, text
        chart = chart_rows(text, "failures/min")
        assert any(set(r.strip()) & BLOCKS for r in chart)
        assert not re.search(rb"\x1b\[[0-9;]*(3[0-9]|4[0-9]|9[0-7])(;[0-9]+)*m", bytes(raw))
    finally:
        child.terminate(force=True)


def test_queue_charts_deepest_first(tmp_path):
    """Issue 34: the first queues seen (all shallow) hold the first slots of the file; the
    charts (the history view and `snapshot --view history`) come deepest first, by the
    newest depth, not in the slots' order."""
    now = int(time.time())
    names = ["q.first", "q.second", "q.third", "q.fourth", "q.deep", "q.deeper"]
    d = os.path.join(str(tmp_path), "state", "redrive", "history")
    os.makedirs(d, mode=0o700, exist_ok=True)
    for p in (os.path.join(str(tmp_path), "state"), os.path.join(str(tmp_path), "state", "redrive"), d):
        os.chmod(p, 0o700)
    end = now // STEP
    lines = ["redrive-history 1"] + ["q %d %s" % (i, n) for i, n in enumerate(names)]
    for i in range(N):
        lines.append("s %d 1 0 0 0 0 0 %d 0 %d %d" % (end - N + 1 + i, 1 if i % 2 else 0, min(i, 60), min(i, 120)))
    path = os.path.join(d, "attune-prod.hist")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.chmod(path, 0o600)
    p = snapshot(tmp_path, "snapshot", "--view", "history")
    assert p.returncode == 0, p.stderr
    order = [l.split()[1] for l in p.stdout.decode().splitlines() if l.startswith("queue ")]
    assert order == ["q.deeper", "q.deep", "q.third", "q.first", "q.second", "q.fourth"], p.stdout.decode()
    out = run_headless("attune", "history", "132x40", home=str(tmp_path))
    hist = screens(out, 4)[2]   # scrolled: the queue charts follow the four fixed ones
    titles = [l.split()[1] for l in hist.splitlines() if l.startswith("queue ")]
    assert titles and titles == order[:len(titles)], hist
