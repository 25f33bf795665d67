"""The one terminal harness of the pty tests: redrive in a pseudo-terminal (pexpect), its
screen read through pyte, the raw bytes kept (hostile data must never reach the terminal
as escape sequences).

    t = Term(conf, args=["--system", "attune2"], env={"NO_COLOR": "1"})
    t.wait_for("Overview")
    t.wait_until(lambda: "ok" in t.screen.display[0])
    t.send("2"); t.quit()

Pinned: TERM, LANG, TZ, HOME (the config's directory), XDG_STATE_HOME, ESCDELAY, the size.
The environment keeps the RD_* variables of the stack env (secret references such as
env:RD_CORE_TOKEN); env adds to it or replaces. LiveTerm is test_live's two-system config
(attune2 and alakai) in front of Term.
"""
import os
import time

import pexpect
import pyte
import pytest

from lib import pyte_rep  # noqa: F401  (CSI b: ncurses repeats characters on xterm-256color)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("RD_BIN", os.path.join(ROOT, "build", "src", "cli", "redrive"))


def term_env(home, keep=("RD_",), env=None):
    """The child's environment: the kept variables of ours, the pinned ones, then env."""
    out = {k: v for k, v in os.environ.items() if keep and k.startswith(keep)}
    out.update(PATH="/usr/bin:/bin", TERM="xterm-256color", LANG="C.UTF-8", LC_ALL="C.UTF-8", TZ="UTC",
               HOME=str(home), XDG_STATE_HOME=os.path.join(str(home), "state"), ESCDELAY="25")
    out.update(env or {})
    return out


class Term:
    QUIT = ":q\r"          # what quit() types
    WAIT_S = 8             # wait_for's default bound
    t0 = 0.0               # set by spawn(); a subclass written for test_live's old Term may
                           # set screen, stream, raw and child itself without it

    def __init__(self, conf, args=(), env=None, cols=100, rows=30, keep=("RD_",), binary=None, home=None):
        self.conf = str(conf)
        self.argv = ["--config", self.conf] + list(args)
        self.env = term_env(home or os.path.dirname(self.conf), keep, env)
        self.binary = binary or BIN
        self.cols, self.rows = cols, rows
        self.spawn()

    def spawn(self):
        """(Re)starts the console: a clean screen, the same command line and environment."""
        self.screen = pyte.Screen(self.cols, self.rows)
        self.stream = pyte.ByteStream(self.screen)
        self.raw = bytearray()
        self.t0 = time.monotonic()
        self.child = pexpect.spawn(self.binary, self.argv, env=self.env,
                                   dimensions=(self.rows, self.cols), timeout=10)

    def respawn(self):
        """Stops the console (killed) and starts it again, e.g. after the config changed."""
        self.child.close(force=True)
        self.spawn()

    def pump(self, secs=0.3):
        end = time.time() + secs
        while time.time() < end:
            try:
                data = self.child.read_nonblocking(65536, timeout=0.05)
            except pexpect.TIMEOUT:
                continue
            except pexpect.EOF:
                break
            self.raw += data
            self.stream.feed(data)

    def text(self):
        return "\n".join(self.screen.display)

    def wait_until(self, cond, secs=None, what=None):
        """Pumps until cond() is true (its value is returned); past secs, fails with the screen."""
        end = time.time() + (secs or self.WAIT_S)
        while True:
            self.pump(0.05)
            v = cond()
            if v:
                return v
            if time.time() >= end:
                raise AssertionError("%s not met:\n%s" % (what or getattr(cond, "__name__", "cond"), self.text()))

    def wait_for(self, needle, secs=None):
        """Until needle is on screen; returns the seconds since the console started."""
        self.wait_until(lambda: needle in self.text(), secs, "%r on screen" % (needle,))
        return time.monotonic() - self.t0

    def send(self, keys, wait=0.3):
        self.child.send(keys)
        self.pump(wait)

    def resize(self, cols, rows):
        self.screen.resize(rows, cols)
        self.child.setwinsize(rows, cols)
        self.pump(0.5)

    def finish(self, timeout=5):
        """Waits for the exit; its status (None when a signal ended it)."""
        self.child.expect(pexpect.EOF, timeout=timeout)
        self.raw += self.child.before or b""
        self.child.close()
        return self.child.exitstatus

    def quit(self, keys=None):
        assert self.child.isalive(), "the console died:\n" + self.text()
        self.send(keys or self.QUIT)
        status = self.finish(timeout=10)
        assert status == 0, (status, self.child.signalstatus)

    def close(self):
        """Ends it whatever its state (for finally: blocks)."""
        if self.child.isalive():
            self.child.close(force=True)


def assert_restored(raw):
    """The terminal was given back: the alternate screen left, the cursor visible."""
    tail = bytes(raw[-200:])
    assert b"\x1b[?1049l" in tail, tail
    assert b"\x1b[?25h" in tail or b"\x1b[?12l\x1b[?25h" in tail, tail


def need_stack(*names):
    """Fails (never skips) when the stack env is not loaded (tests/stack/stack.sh)."""
    missing = [n for n in names or ("RD_STACK_DIR",) if not os.environ.get(n)]
    if missing:
        pytest.fail("needs the local stack env (tests/stack/stack.sh start DIR; . DIR/env): no %s"
                    % ", ".join(missing))


@pytest.fixture
def stack_env():
    """Kept for the modules that import it (the stack check is the `stack` marker's now)."""
    need_stack("RD_PG_DSN_ATTUNE2")


def reload_attune2():
    """attune2 back to the fixture dataset (in this process: no interpreter to start)."""
    import stack_fixtures
    stack_fixtures.reload("attune2")


class LiveTerm(Term):
    """Two systems (attune2 with its broker and core, alakai), started on attune2 unless
    args name a system."""

    def __init__(self, tmp_path, cols=100, rows=30, args=(), extra_env=None, core=None,
                 auth="auth = bearer\ntoken = env:RD_CORE_TOKEN\n", extra_conf="", binary=None):
        need_stack("RD_PG_DSN_ATTUNE2")
        e = os.environ
        conf = tmp_path / "config"
        conf.write_text(
            '[system "attune2"]\nprofile = attune\nstore = %s\nbroker = %s\nbroker_user = %s\n'
            'broker_password = env:RD_RABBIT_PASSWORD\ncore = %s\n%s%s'
            'banner = PROD\n\n[system "alakai"]\nprofile = alakai\nstore = %s\n'
            % (e["RD_PG_DSN_ATTUNE2"], e.get("RD_RABBIT_MGMT_URL", ""), e.get("RD_RABBIT_USER", ""),
               core or e.get("RD_CORE_URL_ATTUNE2", "http://127.0.0.1:1"), auth, extra_conf,
               e.get("RD_REDIS_URL", "")))
        if not any(a.startswith("--system") for a in args):   # two systems: not the fleet view
            args = ["--system", "attune2"] + list(args)
        super().__init__(conf, args, extra_env, cols, rows, binary=binary)
