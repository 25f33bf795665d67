"""Multi-line source errors (libpq's ERROR/DETAIL/HINT) are one line in the top bar (the
first, trimmed) and whole in the overview's sources panel (issue 11)."""
import json
import os
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BIN = os.environ.get("RD_BIN", os.path.join(ROOT, "build", "src", "cli", "redrive"))
FIXTURE = os.path.join(HERE, "fixtures", "attune.json")
PGERR = ('  FATAL:  password authentication failed  \n'
         'DETAIL:\tConnection matched pg_hba.conf line 99\nHINT:  check the role\n')


def run(tmp_path, size="200x30"):
    m = json.load(open(FIXTURE))
    for s in m["sources"]:
        if s["name"] == "postgresql":
            s.update(state="down", error=PGERR)
    model = tmp_path / "model.json"
    model.write_text(json.dumps(m))
    keys = tmp_path / "script.keys"
    keys.write_text("dump\n")
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TZ": "UTC",
           "TERM": "xterm-256color", "HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state"),
           "REDRIVE_NOW": "1767225600", "REDRIVE_HEADLESS": size,
           "REDRIVE_HEADLESS_MODEL": str(model), "REDRIVE_HEADLESS_KEYS": str(keys)}
    p = subprocess.run([BIN, "--config", os.path.join(HERE, "fixtures", "test.conf")], env=env,
                       capture_output=True, timeout=20)
    assert p.returncode == 0 and p.stderr == b"", p.stderr
    (screen,) = p.stdout.decode("utf-8").split("--\n")[:-1]
    return screen.splitlines()


def test_topbar_shows_the_first_line_trimmed(tmp_path):
    lines = run(tmp_path)
    top = lines[0]
    assert "postgresql DOWN: FATAL:  password authentication failed |" in top, top
    for placeholder in ("\u240a", "\u2409", "DETAIL", "HINT"):
        assert placeholder not in top, top


def test_sources_panel_keeps_the_whole_text(tmp_path):
    lines = run(tmp_path)
    panel = "\n".join(lines[1:])
    assert "password authentication failed" in panel and "DETAIL" in panel and "HINT" in panel, panel
