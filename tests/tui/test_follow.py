"""The cursor follows an execution id, not a row position (issue 11), as htop follows a
PID: newer rows arriving above, a sort, a refresh leave the same execution selected; when
it leaves the view the status line says so and a key that acts does nothing. Headless:
the `model FILE` script line is the sources' next update."""
import copy
import json
import os
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BIN = os.environ.get("RD_BIN", os.path.join(ROOT, "build", "src", "cli", "redrive"))
FIXTURE = os.path.join(HERE, "fixtures", "attune.json")


def run(tmp_path, script, size="132x40", args=()):
    keys = tmp_path / "script.keys"
    keys.write_text(script)
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TZ": "UTC",
           "TERM": "xterm-256color", "HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state"),
           "REDRIVE_NOW": "1767225600", "REDRIVE_HEADLESS": size,
           "REDRIVE_HEADLESS_MODEL": FIXTURE, "REDRIVE_HEADLESS_KEYS": str(keys)}
    p = subprocess.run([BIN, "--config", os.path.join(HERE, "fixtures", "test.conf")] + list(args), env=env,
                       capture_output=True, timeout=20)
    assert p.returncode == 0 and p.stderr == b"", p.stderr.decode(errors="replace")
    parts = p.stdout.decode("utf-8").split("--\n")
    assert parts[-1] == ""
    return parts[:-1]


def model_file(tmp_path, name, change):
    m = json.load(open(FIXTURE))
    change(m)
    path = tmp_path / name
    path.write_text(json.dumps(m))
    return str(path)


def newer_rows_above(m):
    """Two executions newer than all others: every row slides down by two."""
    top = m["executions"][0]
    for k, new_id in enumerate(("1102", "1101")):
        e = copy.deepcopy(top)
        e["id"] = new_id
        e["created_at"] = top["created_at"] + 10 - k
        m["executions"].insert(k, e)


def chain_title(screen):
    lines = [l for l in screen.splitlines() if "Retry chain of" in l]
    assert len(lines) == 1, screen
    return lines[0]


def test_newer_rows_above_keep_the_cursor_on_its_execution(tmp_path):
    newer = model_file(tmp_path, "newer.json", newer_rows_above)
    # rows: 1100 1099 1098 1097 ...; three down is 1097
    screens = run(tmp_path, "key 2\nkey down down down\ndump\nmodel %s\ndump\nkey enter\ndump\n" % newer)
    assert "1102" not in screens[0] and "1102" in screens[1]
    # Enter opens the chain of the execution under the cursor: still 1097, not 1099
    assert "Retry chain of 1097:" in chain_title(screens[2]), screens[2]


def test_retry_dialog_acts_on_the_id_shown(tmp_path):
    newer = model_file(tmp_path, "newer.json", newer_rows_above)
    screens = run(tmp_path, "key 2\nkey down down down\nmodel %s\nkey r\ndump\n" % newer)
    text = screens[0]
    assert "retry 1 execution" in text, text
    dialog = text[text.index("retry 1 execution"):]
    assert "1097" in dialog and "1099" not in dialog, dialog


def test_leaving_the_view_is_said_and_nothing_is_done(tmp_path):
    def drop_1097(m):
        m["executions"] = [e for e in m["executions"] if e["id"] != "1097"]
    gone = model_file(tmp_path, "gone.json", drop_1097)
    screens = run(tmp_path, "key 2\nkey down down down\nmodel %s\ndump\nkey r\ndump\n" % gone)
    assert "execution 1097 left the view" in screens[0], screens[0]
    assert "retry 1 execution" not in screens[0]
    # the status line was read, the next key acts on the row now selected: a dialog
    assert "retry 1 execution" in screens[1], screens[1]


def test_retry_right_after_the_id_left_does_nothing(tmp_path):
    def drop_1097(m):
        m["executions"] = [e for e in m["executions"] if e["id"] != "1097"]
    gone = model_file(tmp_path, "gone.json", drop_1097)
    # no paint between the update and the key: the key itself finds the id gone
    screens = run(tmp_path, "key 2\nkey down down down\nmodel %s\nkey r\ndump\n" % gone)
    assert "retry 1 execution" not in screens[0], screens[0]
    assert "execution 1097 left the view: nothing done" in screens[0], screens[0]


def test_sort_keeps_the_execution(tmp_path):
    screens = run(tmp_path, "key 2\nkey down down down\nkey s\nkey enter\ndump\n")
    assert "1097" in chain_title(screens[0]), chain_title(screens[0])


def test_workers_cursor_follows_the_worker_through_a_resort(tmp_path):
    """Workers sort by health then depth, so they reorder on every refresh: a drain must
    name the worker under the cursor, not the one that took its row."""
    def w2_deepest(m):
        for w in m["workers"]:
            if w["id"] == "w2":
                w["queue_depth"] = 1000      # w2 (row 2, under the cursor) sorts first now
    changed = model_file(tmp_path, "workers.json", w2_deepest)
    screens = run(tmp_path, "key 3\nkey down\nmodel %s\nkey D\ndump\n" % changed)
    text = screens[0]
    assert "drain 1 worker" in text, text
    dialog = text[text.index("drain 1 worker"):]
    assert "w2  worker-02" in dialog and "worker-04" not in dialog, dialog


def test_newer_rows_above_a_cursor_at_the_screen_bottom_pause_the_screen(tmp_path):
    """Issue 23: the cursor on the last row shown, two newer rows arrive: the screen stays
    with its execution and the title says how many are hidden above; g goes live."""
    newer = model_file(tmp_path, "newer.json", newer_rows_above)
    # 80x24: 17 rows shown, 1100..1084; the cursor on the last of them
    screens = run(tmp_path, "key 2\n" + "key down\n" * 16 +
                  "dump\nmodel %s\ndump\nkey g\ndump\n" % newer, size="80x24")
    title = [l for l in screens[0].splitlines() if l.startswith("Executions")][0]
    assert "paused" not in title, screens[0]
    title = [l for l in screens[1].splitlines() if l.startswith("Executions")][0]
    assert "paused: 2 newer \u2014 g to go live" in title, screens[1]
    assert "1102" not in screens[1] and "1084" in screens[1], screens[1]
    title = [l for l in screens[2].splitlines() if l.startswith("Executions")][0]
    assert "paused" not in title and "1102" in screens[2], screens[2]


def test_the_paused_title_in_ascii(tmp_path):
    newer = model_file(tmp_path, "newer.json", newer_rows_above)
    screens = run(tmp_path, "key 2\n" + "key down\n" * 16 + "model %s\ndump\n" % newer,
                  size="80x24", args=["--ascii"])
    title = [l for l in screens[0].splitlines() if l.startswith("Executions")][0]
    assert "Executions  paused: 2 newer - g to go live  page 1" in title, screens[0]
