"""The terminal going away (an SSH session closed) ends the console: it quits as on SIGHUP
(exit 129) even when no SIGHUP reaches it, as when a shell above it holds the signal (the
demo's script traps it to stop its stack). Before, the console read a hung-up terminal for
ever at half a core."""
import os
import shutil
import signal
import time

import pexpect

from lib.term import BIN, term_env

HERE = os.path.dirname(os.path.abspath(__file__))


def test_console_quits_when_its_terminal_hangs_up_without_a_signal(tmp_path):
    conf = tmp_path / "config"
    shutil.copy(os.path.join(HERE, "fixtures", "test.conf"), conf)
    conf.chmod(0o600)
    status = tmp_path / "status"
    # bash leads the terminal's session, so the hang-up's SIGHUP goes to it, not the console
    script = 'trap ":" HUP; "$0" --config "$1"; echo $? >"$2.tmp"; mv "$2.tmp" "$2"'
    child = pexpect.spawn("bash", ["-c", script, BIN, str(conf), str(status)],
                          env=term_env(tmp_path, keep=()), dimensions=(24, 80), timeout=10)
    child.expect("Overview", timeout=15)          # the console is up and drawing
    os.close(child.child_fd)                      # the terminal goes away
    try:
        end = time.time() + 15
        while time.time() < end and not status.exists():
            time.sleep(0.1)
    finally:
        try:
            os.killpg(child.pid, signal.SIGKILL)      # bash and the console: never left behind
        except ProcessLookupError:
            pass
    assert status.exists(), "the console did not quit when its terminal hung up"
    assert status.read_text() == "129\n", status.read_text()
