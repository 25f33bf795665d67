"""Expected screens of the fleet view: the headless console with the demo's five systems
(tests/tui/fixtures/fleet.conf), each drawing a fixed model from tests/tui/fixtures/fleet/
(REDRIVE_HEADLESS_FLEET), compared with tests/tui/expected/fleet_*.txt.

Regenerate after an intended change:
    REDRIVE_REGEN=1 /usr/bin/python3 -m pytest tests/tui/test_fleet_screens.py
(those cases then skip with "regenerated FILE", never pass).
"""
import os
import subprocess

import pytest

from test_screens import BIN, HERE, NOW, check_screen, screens

SIZES = ["80x24", "132x40"]


def run_fleet(size, script, home, args=()):
    env = {
        "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TZ": "UTC",
        "TERM": "xterm-256color", "HOME": home, "XDG_STATE_HOME": os.path.join(home, "state"),
        "REDRIVE_NOW": NOW, "REDRIVE_HEADLESS": size,
        "REDRIVE_HEADLESS_FLEET": os.path.join(HERE, "fixtures", "fleet"),
        "REDRIVE_HEADLESS_KEYS": os.path.join(HERE, "scripts", script + ".keys"),
    }
    cmd = [BIN, "--config", os.path.join(HERE, "fixtures", "fleet.conf")] + list(args)
    p = subprocess.run(cmd, env=env, capture_output=True, timeout=20)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    assert p.stderr == b"", p.stderr.decode(errors="replace")
    return p.stdout.decode("utf-8")


@pytest.mark.parametrize("size", SIZES)
def test_fleet_screens(tmp_path, size):
    out = run_fleet(size, "fleet", str(tmp_path))
    check_screen(out, os.path.join(HERE, "expected", "fleet_%s.txt" % size))


def test_fleet_order_and_open(tmp_path):
    """Worst first (DOWN, then FAIL, warn, ok); Enter opens the row under the cursor; q
    returns to the fleet; `:system` opens another; 0 is the fleet again."""
    s = screens(run_fleet("132x40", "fleet", str(tmp_path)), 6)
    rows = [l.split()[:2] for l in s[0].splitlines()[3:8]]
    assert rows == [["DOWN", "attune"], ["DOWN", "tasker"], ["warn", "alakai"],
                    ["ok", "attune-era1"], ["ok", "openagents"]], s[0]
    assert "redrive fleet: 5 systems" in s[0].splitlines()[0]
    assert "tasker: postgresql: connection refused" in s[0]
    assert s[2].splitlines()[0].startswith(" redrive alakai  LOCAL"), s[2]
    assert "Overview  alakai" in s[2]
    assert "Fleet  5 systems, worst first" in s[3]
    # back in the fleet the cursor is on the system left (the line under the table is the
    # cursor row's WHY), so Enter opens what it shows
    assert "\n  warn alakai: DLQ 3 >= 1" in s[3], s[3]
    assert "Overview  tasker" in s[4]
    assert "Fleet  5 systems" in s[5]
    assert "\n  DOWN tasker: postgresql down" in s[5], s[5]


def test_one_system_has_no_fleet(tmp_path):
    """With one system the console opens on its overview, and 0 says why there is no fleet."""
    conf = tmp_path / "one.conf"
    conf.write_text('[system "solo"]\nprofile = attune\nstore = postgresql://x@127.0.0.1:1/x\n')
    keys = tmp_path / "k.keys"
    keys.write_text("dump\nkey 0\ndump\n")
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TZ": "UTC",
           "TERM": "xterm-256color", "HOME": str(tmp_path), "REDRIVE_NOW": NOW,
           "REDRIVE_HEADLESS": "80x24", "REDRIVE_HEADLESS_FLEET": os.path.join(HERE, "fixtures", "fleet"),
           "REDRIVE_HEADLESS_KEYS": str(keys)}
    p = subprocess.run([BIN, "--config", str(conf)], env=env, capture_output=True, timeout=20)
    assert p.returncode == 0, p.stderr
    s = screens(p.stdout.decode(), 2)
    assert "Overview  solo" in s[0]
    assert "one system configured: the fleet view needs two or more" in s[1]
