"""CI gate (machine-independent): the console's private memory (USS, smaps_rollup
Private_Clean + Private_Dirty) with every source configured — a PostgreSQL store, the core
API and a RabbitMQ broker — for five systems, each with a whole hour of history loaded
(six queues), on the fleet view (every system polling) then one system's history view.
Target (issue 25): USS <= 8 MiB. RSS is printed beside it (shared library pages: not a
gate). Needs the stack env (tests/stack/stack.sh start DIR; . DIR/env)."""
import os
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tui"))
import benchlib as B  # noqa: E402
from lib.term import BIN  # noqa: E402

import pexpect  # noqa: E402
import pyte  # noqa: E402
import pyte_rep  # noqa: E402,F401

USS_MAX_KIB = 8 * 1024
SYSTEMS = ["attune-a", "attune-b", "attune-c", "attune-d", "attune-e"]


@pytest.fixture(autouse=True)
def stack_env():
    if not os.environ.get("RD_PG_DSN_ATTUNE2") or not os.environ.get("RD_RABBIT_MGMT_URL"):
        pytest.fail("needs the local stack env (tests/stack/stack.sh start DIR; . DIR/env)")


def full_hour(home, system):
    """An hour of samples, every series and six queues known (the largest file)."""
    d = os.path.join(home, "state", "redrive", "history")
    os.makedirs(d, mode=0o700, exist_ok=True)
    end = int(time.time()) // 10
    lines = ["redrive-history 1"] + ["q %d queue.number.%d" % (k, k) for k in range(6)]
    lines += ["s %d %s" % (end - 359 + i, " ".join(str(1000 + i + k) for k in range(10))) for i in range(360)]
    with open(os.path.join(d, system + ".hist"), "w") as f:
        f.write("\n".join(lines) + "\n")
    os.chmod(os.path.join(d, system + ".hist"), 0o600)


def config(home):
    e = os.environ
    text = ""
    for name in SYSTEMS:
        text += ('[system "%s"]\nprofile = attune\nstore = %s\nbroker = %s\nbroker_user = %s\n'
                 'broker_password = env:RD_RABBIT_PASSWORD\ncore = %s\nauth = bearer\n'
                 'token = env:RD_CORE_TOKEN\n\n'
                 % (name, e["RD_PG_DSN_ATTUNE2"], e["RD_RABBIT_MGMT_URL"], e["RD_RABBIT_USER"],
                    e.get("RD_CORE_URL_ATTUNE2", "http://127.0.0.1:1")))
        full_hour(home, name)
    path = os.path.join(home, "config")
    with open(path, "w") as f:
        f.write(text)
    return path


def test_uss_every_source_five_systems(tmp_path):
    home = str(tmp_path)
    conf = config(home)
    env = {k: v for k, v in os.environ.items() if k.startswith("RD_")}
    env.update(PATH="/usr/bin:/bin", TERM="xterm-256color", LANG="C.UTF-8", LC_ALL="C.UTF-8", TZ="UTC",
               HOME=home, XDG_STATE_HOME=os.path.join(home, "state"))
    screen = pyte.Screen(120, 40)
    stream = pyte.ByteStream(screen)
    child = pexpect.spawn(BIN, ["--config", conf], env=env, dimensions=(40, 120), timeout=10)

    def pump(secs):
        end = time.time() + secs
        while time.time() < end:
            try:
                stream.feed(child.read_nonblocking(65536, timeout=0.05))
            except pexpect.TIMEOUT:
                continue

    def wait_for(needle, secs=15):
        end = time.time() + secs
        while time.time() < end:
            pump(0.1)
            if needle in "\n".join(screen.display):
                return
        raise AssertionError("%r not on screen:\n%s" % (needle, "\n".join(screen.display)))

    try:
        wait_for("Fleet  5 systems")
        end = time.time() + 15          # every system's sources and core probe answered
        while time.time() < end and sum(" ok " in l for l in screen.display) < 5:
            pump(0.2)
        assert sum(" ok " in l for l in screen.display) == 5, "\n".join(screen.display)
        assert "FAIL 1H" in "\n".join(screen.display)   # the five hours are loaded
        peak_uss = peak_rss = 0
        shown = {}
        for keys in ("", "\r", "H", "1", "0"):       # fleet, a system, its history, back
            child.send(keys)
            for _ in range(6):
                pump(0.25)
                peak_uss = max(peak_uss, B.proc_uss_kib(child.pid))
                peak_rss = max(peak_rss, B.proc_rss_kib(child.pid))
            shown[keys] = "\n".join(screen.display)
        assert "History  attune-" in shown["H"] and "failures/min  now" in shown["H"]
        print("console USS, every source, 5 systems with history: %.1f MiB (RSS %.1f MiB)"
              % (peak_uss / 1024, peak_rss / 1024))
        assert 0 < peak_uss <= USS_MAX_KIB, "USS %.1f MiB > 8 MiB" % (peak_uss / 1024)
    finally:
        child.terminate(force=True)
