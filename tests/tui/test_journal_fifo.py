"""A FIFO at the journal path (issue 21) used to hang the console's start: the journal is
read when the console opens. It is opened without blocking and refused as not a regular
file; the journal view says so."""
import os
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BIN = os.environ.get("RD_BIN", os.path.join(ROOT, "build", "src", "cli", "redrive"))


def test_console_starts_with_a_fifo_at_the_journal_path(tmp_path):
    jp = tmp_path / "state" / "redrive" / "journal.jsonl"
    jp.parent.mkdir(parents=True, mode=0o700)
    os.mkfifo(jp, 0o600)
    keys = tmp_path / "script.keys"
    keys.write_text("type :journal\nkey enter\ndump\n")
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TZ": "UTC",
           "TERM": "xterm-256color", "HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state"),
           "REDRIVE_NOW": "1767225600", "REDRIVE_HEADLESS": "160x12",
           "REDRIVE_HEADLESS_MODEL": os.path.join(HERE, "fixtures", "attune.json"),
           "REDRIVE_HEADLESS_KEYS": str(keys)}
    p = subprocess.run([BIN, "--config", os.path.join(HERE, "fixtures", "test.conf")], env=env,
                       capture_output=True, timeout=10)
    assert p.returncode == 0 and p.stderr == b"", p.stderr
    screen = p.stdout.decode("utf-8")
    assert ("cannot read the journal: journal %s is not a regular file (a FIFO)" % jp) in screen, \
        screen
