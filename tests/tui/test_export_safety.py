"""`:export` into what is not a plain file of ours (security issue 32), in a real terminal
(pexpect + pyte) against the local stack (tests/stack, attune2): a FIFO used to hang the
console (the open blocked until a reader came), `:export!` emptied a file of another user
(O_TRUNC at the open, before any check; root may open anything), and a path over 199
bytes was cut silently and the export written to the cut name."""
import os
import pwd
import time

from test_live import Term, stack_env  # noqa: F401  (the fixture checks the stack env)


def status(t):
    return t.screen.display[-2]


def workers(tmp_path, cols=120):
    t = Term(tmp_path, cols=cols)
    t.wait_for("postgresql ok")
    t.send("3")
    t.wait_for("Workers  7 shown")
    return t


def still_answers(t):
    t.send("2")
    t.wait_for("Executions", secs=3)
    t.send("Q")
    assert t.finish() == 0


def test_export_into_a_fifo_returns_at_once(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo, 0o600)
    t = workers(tmp_path, cols=200)
    start = time.time()
    t.send(":export! csv %s\r" % fifo)
    t.wait_for("export to %s: not a regular file (a FIFO): nothing written" % fifo, secs=3)
    assert time.time() - start < 3
    # with a reader at the other end it is refused too, and nothing reaches the reader
    r = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        t.send(":\x15")
        t.send("export csv %s\r" % fifo)      # without !: O_EXCL already fails (it exists)
        t.wait_for("export to %s: exists (:export! overwrites)" % fifo, secs=3)
        t.send(":export! json %s\r" % fifo)
        t.wait_for("export to %s: not a regular file (a FIFO): nothing written" % fifo, secs=3)
        try:
            got = os.read(r, 65536)
        except BlockingIOError:
            got = b""
        assert got == b"", got[:200]
    finally:
        os.close(r)
    still_answers(t)


def test_export_force_never_empties_a_file_of_another_user(tmp_path):
    if os.geteuid() != 0:
        raise AssertionError("chown to another user needs root (CI runs as root)")
    theirs = tmp_path / "theirs.csv"
    theirs.write_text("their data\n")
    nobody = pwd.getpwnam("nobody").pw_uid
    os.chown(theirs, nobody, -1)
    t = workers(tmp_path, cols=200)
    t.send(":export! csv %s\r" % theirs)
    t.wait_for("export to %s: owned by uid %d, not by you (uid 0): not overwritten"
               % (theirs, nobody), secs=3)
    assert theirs.read_text() == "their data\n"
    assert os.stat(theirs).st_size == len("their data\n")
    # ours is still overwritten, as before
    ours = tmp_path / "ours.csv"
    ours.write_text("old\n")
    t.send(":export! csv %s\r" % ours)
    t.wait_for("exported the workers view to %s (csv)" % ours, secs=3)
    assert ours.read_text().startswith("id,name,status,"), ours.read_text()[:100]
    still_answers(t)


def test_a_long_path_is_never_cut(tmp_path):
    # 230 bytes: fits the command line; written under its whole name (it was cut at 199)
    name = "x" * (230 - len(str(tmp_path)) - 1)
    whole = tmp_path / name
    assert len(str(whole)) == 230
    t = workers(tmp_path, cols=300)
    t.send(":export csv %s\r" % whole)
    t.wait_for("exported the workers view to %s" % str(whole)[:200], secs=3)  # the message is cut
    assert [n for n in os.listdir(tmp_path) if n.startswith("x")] == [name], os.listdir(tmp_path)
    assert whole.read_text().startswith("id,name,status,"), whole.read_text()[:100]
    os.unlink(whole)
    before = sorted(os.listdir(tmp_path))
    # 300 bytes: more than the command line holds: refused with a message, nothing written
    name = "y" * (300 - len(str(tmp_path)) - 1)
    longer = tmp_path / name
    assert len(str(longer)) == 300
    t.send(":export csv %s" % longer, wait=1)
    assert "the line is full (255 bytes)" in t.text(), t.text()
    t.send("\r")
    t.wait_for("the line was longer than 255 bytes: nothing done", secs=3)
    assert sorted(os.listdir(tmp_path)) == before, os.listdir(tmp_path)
    still_answers(t)
