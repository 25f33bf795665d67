"""The journal view's batch rows (headless, a journal written here): a batch id from the
file reaches the title sanitized, and a tail at its bound (500 actions) says its counts are
of the tail, a lower bound."""
import json

from test_screens import run_headless, screens
from test_screens import _jline as line


def write(tmp_path, lines):
    d = tmp_path / "state" / "redrive"
    d.mkdir(parents=True, mode=0o700)
    j = d / "journal.jsonl"
    j.write_text("".join(json.dumps(x) + "\n" for x in lines))
    j.chmod(0o600)


def run(tmp_path, keys):
    k = tmp_path / "j.keys"
    k.write_text(keys)
    return run_headless("attune", str(k)[:-len(".keys")], "132x40", home=str(tmp_path))


def test_a_hostile_batch_id_is_drawn_sanitized(tmp_path):
    bid = "f188\x1b]0;owned\x07"
    write(tmp_path, [line(30, i, "retry", str(3001 + i), "ok", 202, "retried", bid, i) for i in range(3)])
    s = screens(run(tmp_path, "key 6\nkey enter\ndump\n"), 1)[0]
    title = s.splitlines()[1]
    assert title.startswith("Journal  batch f188\u241b]0;owned\u2407: its items"), title
    assert "\x1b" not in s and "\x07" not in s


def test_a_batch_in_a_full_tail_says_its_counts_are_of_the_tail(tmp_path):
    bid = "00000000000000b1"
    lines = [line(10 + i // 60, i % 60, "retry", str(2001 + i), "ok", 202, "retried", bid, i)
             for i in range(520)]
    write(tmp_path, lines)
    s = screens(run(tmp_path, "key 6\ndump\n"), 1)[0]
    row = [l for l in s.splitlines() if "batch of" in l]
    assert len(row) == 1 and "batch of 500+" in row[0], s
    assert "500 ok, 0 failed, 0 open in the journal's last lines" in row[0], row
    small = tmp_path / "small"
    small.mkdir()
    write(small, lines[:20])
    s = screens(run(small, "key 6\ndump\n"), 1)[0]
    assert "batch of 20 " in s and "+" not in [l for l in s.splitlines() if "batch of" in l][0], s
