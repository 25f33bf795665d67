"""Text that must not be cut where it matters (issue 23), in a real terminal (pexpect +
pyte) against the local stack (tests/stack, attune2): clock times whole in the age
columns, id columns sized to their content with a middle ellipsis that keeps the tail,
worker names told apart at 80 columns, warnings wrapped instead of cut, and a copy
overlay with nothing of the rows underneath beside the ids.
"""
import re

from lib.term import LiveTerm as Term


def rows_of(t, first=3, last=None):
    return t.screen.display[first:last]


def test_clock_times_show_whole_in_the_age_column(tmp_path):
    t = Term(tmp_path)
    t.wait_for("postgresql ok")
    t.send("2")
    t.wait_for("26/26 rows")
    t.send("T")
    t.wait_for("[clock UTC]")
    t.pump(0.5)
    whole = [l for l in rows_of(t, 3, 29) if re.match(r"  \d+ .* \d\d:\d\d:\d\d ", l)]
    assert len(whole) >= 20, t.text()
    assert not any(re.search(r"\d\d:\d…", l) for l in t.screen.display), t.text()
    t.send("Q")
    assert t.finish() == 0


def test_id_columns_keep_the_distinguishing_tail(tmp_path):
    t = Term(tmp_path)
    t.wait_for("postgresql ok")
    t.send("5")
    t.wait_for("attune.dlx.queue")
    ids = [l.split()[0] for l in rows_of(t, 3, 12) if "attune.dlx.queue" in l]
    assert len(ids) >= 5, t.text()
    for i in ids:   # a message id (uuid) cut in the middle: head, ellipsis, the tail
        assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f-]*…[0-9a-f-]*[0-9a-f]{6}", i), (i, t.text())
    assert len(set(ids)) == len(ids), ids
    t.send("2")
    t.wait_for("26/26 rows")   # short ids: the column is as wide as they are
    assert t.screen.display[2].startswith("  ID NAME "), t.screen.display[2]
    t.send("Q")
    assert t.finish() == 0


def test_worker_names_are_told_apart_at_80_columns(tmp_path):
    t = Term(tmp_path, cols=80, rows=24)
    t.wait_for("postgresql ok")
    t.send("3")
    t.wait_for("Workers  7 shown")
    names = [l.split()[0] for l in rows_of(t, 3, 10)]
    assert sorted(names) == ["worker-degraded", "worker-drain", "worker-healthy", "worker-nohealth",
                             "worker-stale", "worker-unhealthy", "worker-unknown"], t.text()
    t.send("Q")
    assert t.finish() == 0


def test_drain_warning_wraps_instead_of_being_cut(tmp_path):
    t = Term(tmp_path, cols=80, rows=24)
    t.wait_for("postgresql ok")
    t.send("3")
    t.wait_for("Workers  7 shown")
    t.send("/worker-healthy\r")
    t.wait_for("Workers  1 shown")
    t.send("D")
    t.wait_for("drain 1 worker on attune2")
    body = [l[4:76].strip() for l in t.screen.display if l[2:4] == "x " and l[76:79] == " x "]
    text = " ".join(body)
    assert "WARNING: last consumer of queue worker.1.executions" in text, t.text()
    assert re.search(r"WARNING: last consumer of queue worker\.1\.executions \(\d+ messages?\): it would stop "
                     r"draining", text), t.text()
    assert "…" not in text, t.text()
    t.send("n")
    t.send("Q")
    assert t.finish() == 0


def test_copy_overlay_leaves_nothing_of_the_rows_underneath(tmp_path):
    t = Term(tmp_path, cols=80, rows=24)
    t.wait_for("postgresql ok")
    t.send("2")
    t.wait_for("26/26 rows")
    t.send("   ")                  # mark three rows
    t.wait_for("3 marked")
    marked = [l.split()[1] for l in t.screen.display if l.startswith("* ")]
    t.send("c")
    t.wait_for("copy: select the text")
    top = next(i for i, l in enumerate(t.screen.display) if "copy: select the text" in l)
    box = t.screen.display[top:top + len(marked) + 4]
    assert box[0].strip() == "copy: select the text with the mouse (any key closes)", box
    assert [l.strip() for l in box[1:]] == [""] + marked + ["", ""], box
    t.send("x")
    t.send("Q")
    assert t.finish() == 0
