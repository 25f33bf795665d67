"""The demo (scripts/demo.sh) stops everything it started, RabbitMQ's private epmd included,
however it ends: the console quit, or its terminal gone (an SSH session closed: the script
gets SIGHUP, every write to the terminal fails, and no SIGHUP need reach the console).
Each case runs the demo on its own port base and directory."""
import os
import shutil
import signal
import tempfile
import time

import pexpect
import pytest

from stack_fixtures import stacklib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def epmd_on(port):
    """pids of epmd daemons started for this port (the stack's private one is base+5)."""
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % p, "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if argv and argv[0].endswith(b"epmd") and str(port).encode() in argv:
            out.append(int(p))
    return out


@pytest.mark.parametrize("ending", ["quit", "terminal-gone"])
def test_demo_leaves_nothing_running(ending):
    base = stacklib.free_base(1500)
    assert base is not None, "no free port range for the demo"
    d = tempfile.mkdtemp(prefix="rd-demo-test-")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RD_", "PG"))}
    env.update(REDRIVE_DEMO_DIR=d, RD_PORT_BASE=str(base), TERM="xterm-256color", SIM_RATE="2",
               LANG="C.UTF-8", LC_ALL="C.UTF-8")
    child = pexpect.spawn("bash", [os.path.join(ROOT, "scripts", "demo.sh")], env=env, cwd=ROOT,
                          dimensions=(30, 120), timeout=300)
    try:
        child.expect("Overview", timeout=300)     # the stack is up, the console drawing
        assert stacklib.port_open(base + 2), "the demo's RabbitMQ is not listening"
        assert epmd_on(base + 5), "the demo's private epmd is not running"
        if ending == "quit":
            child.send(":q\r")
            child.expect(pexpect.EOF, timeout=120)
        else:
            os.close(child.child_fd)              # the terminal goes away
        end = time.time() + 120
        while time.time() < end and (stacklib.dir_processes(d) or epmd_on(base + 5)):
            time.sleep(0.5)
        left = stacklib.dir_processes(d)
        assert left == [], left
        assert epmd_on(base + 5) == []
        assert not any(stacklib.port_open(base + i) for i in (0, 1, 2, 3, 5)), "a port still answers"
    finally:
        try:
            os.killpg(child.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        pexpect.run("bash %s stop %s" % (os.path.join(ROOT, "tests", "stack", "stack.sh"), d),
                    timeout=120)
        shutil.rmtree(d, ignore_errors=True)
