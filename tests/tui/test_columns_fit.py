"""Columns fit what they hold (issue 37), headless at 80x24 and 160x45 on the attune
fixture made to hold UUIDs, long reasons and big counts: a UUID column shows whole ids when
there is room and cuts them in the middle, marked, when not; a reason is whole when there
is room; numeric ids take the columns they need; a big count is never cut; `W` shows every
column whole, hidden ones too, and scrolls sideways with marks at the header's ends."""
import json
import os
import subprocess

from test_screens import BIN, HERE, NOW, screens

UUIDS = ["%08x-5a2d-4c8e-9f10-%012x" % (0x0b7c1f3e + i, 0x2d3e4f5a6b00 + i) for i in range(40)]
BIG = 14810123


def fixture(tmp_path):
    """attune.json with UUID ids, a DLQ of UUIDs and long reasons, and a queue of 14810123."""
    with open(os.path.join(HERE, "fixtures", "attune.json")) as f:
        d = json.load(f)
    ids = {e["id"]: UUIDS[i] for i, e in enumerate(d["executions"])}
    for e in d["executions"]:
        e["id"] = ids[e["id"]]
        e["chain_root"] = ids.get(e["chain_root"], e["id"])
    for i, q in enumerate(d["dlq"]):
        q["id"] = UUIDS[30 + i]
        q["execution_id"] = UUIDS[i]
        q["reason"] = "max_retries_exceeded"
    d["queues"][0].update(depth=BIG, ready=BIG - 10, unacked=10)
    path = tmp_path / "uuids.json"
    path.write_text(json.dumps(d))
    return str(path)


def run(tmp_path, keys, size, model=None):
    k = tmp_path / "k.keys"
    k.write_text(keys)
    env = {
        "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TZ": "UTC",
        "TERM": "xterm-256color", "HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state"),
        "REDRIVE_NOW": NOW, "REDRIVE_HEADLESS": size,
        "REDRIVE_HEADLESS_MODEL": model or os.path.join(HERE, "fixtures", "attune.json"),
        "REDRIVE_HEADLESS_KEYS": str(k),
    }
    p = subprocess.run([BIN, "--config", os.path.join(HERE, "fixtures", "test.conf")], env=env,
                       capture_output=True, timeout=20)
    assert p.returncode == 0 and p.stderr == b"", p.stderr.decode(errors="replace")
    return p.stdout.decode("utf-8")


def rows_of(screen, first=3, n=10):
    return screen.splitlines()[first:first + n]


def test_uuids_whole_at_160_cut_in_the_middle_at_80(tmp_path):
    model = fixture(tmp_path)
    wide = screens(run(tmp_path, "key 2\ndump\n", "160x45", model), 1)[0]
    for i, line in enumerate(rows_of(wide)):          # the newest first: the fixture's order
        assert line.startswith("  %s " % UUIDS[i]), wide
    narrow = screens(run(tmp_path, "key 2\ndump\n", "80x24", model), 1)[0]
    for i, line in enumerate(rows_of(narrow)):        # head…tail, as wide as its column
        cell = line[2:].split(" ")[0]
        assert "\u2026" in cell and UUIDS[i].startswith(cell.split("\u2026")[0]), narrow
        assert UUIDS[i].endswith(cell.split("\u2026")[1]) and len(cell) >= 12, narrow


def test_reasons_and_dlq_ids_whole_when_there_is_room(tmp_path):
    model = fixture(tmp_path)
    s = screens(run(tmp_path, "key 5\ndump\n", "160x45", model), 1)[0]
    lines = rows_of(s, 3, 4)
    for i, line in enumerate(lines):
        assert line.startswith(UUIDS[30 + i] + " "), s
        assert (" %s " % UUIDS[i]) in line and " max_retries_exceeded " in line, s


def test_numeric_ids_take_the_columns_they_need(tmp_path):
    for size in ("80x24", "160x45"):
        s = screens(run(tmp_path, "key 2\ndump\n", size), 1)[0]
        head, first = s.splitlines()[2], s.splitlines()[3]
        assert head.startswith("  ID   NAME "), s        # 4 digits: 4 columns, then NAME
        assert first.startswith("  1100 billing.char"), s
        cockpit = screens(run(tmp_path, "type :cockpit w4\nkey enter\ndump\n", size), 1)[0]
        row = next(l for l in cockpit.splitlines() if l.startswith("1082 "))
        assert row.startswith("1082 billing.charge running"), cockpit


def test_a_big_count_is_never_cut(tmp_path):
    model = fixture(tmp_path)
    for size in ("80x24", "160x45"):
        s = screens(run(tmp_path, "key 4\ndump\n", size, model), 1)[0]
        row = next(l for l in s.splitlines() if l.startswith("worker.w1.executions"))
        assert " %d " % BIG in row and " %d " % (BIG - 10) in row, s


def test_wide_mode_shows_every_column_and_scrolls(tmp_path):
    out = run(tmp_path, "key 2\ndump\nkey W\ndump\nkey l l l l\ndump\nkey h\ndump\nkey W\ndump\n", "80x24")
    fit, wide, right, back, again = screens(out, 5)
    head = fit.splitlines()[2]
    assert "WORKER" not in head and "W wide" in fit.splitlines()[-1], fit
    head = wide.splitlines()[2]                       # from the left: all of it, more to the right
    assert "WORKER" in head and head.endswith("\u203a") and not head.startswith("\u2039"), wide
    assert wide.splitlines()[3].startswith("  1100 billing.charge     failed    1/3 yes  due  40s worker-01"), wide
    assert "[wide]" in wide.splitlines()[0] and wide.splitlines()[-1].startswith("h left l right W fit "), wide
    head = right.splitlines()[2]                      # at the right end: the errors whole
    assert head.startswith("\u2039") and not head.endswith("\u203a"), right
    assert "worker-02 worker heartbeat stale (last seen 95s ago)" in right, right
    assert "1094" not in right.splitlines()[9], right # the ids scrolled off
    assert back.splitlines()[2] != head and back.splitlines()[2].endswith("\u203a"), back
    assert again.splitlines()[:-2] == fit.splitlines()[:-2], again   # W again: as before
    assert again.splitlines()[-2].rstrip() == "columns fitted to the screen", again
