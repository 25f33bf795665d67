"""The last hour across a restart, against the local stack: the console samples its
system every 10 s, saves the hour while running (REDRIVE_HISTORY_SAVE_S shortens the
minute) and at exit, 0600 in the state directory; a second start (and `snapshot --json
--history`) has the samples of the first, and the time between is a gap (null).

Needs the stack env (tests/stack/stack.sh start DIR && . DIR/env); fails without it.
"""
import json
import os
import subprocess
import time

import pytest

from lib.term import BIN, LiveTerm as Term


def samples(path):
    """{step: [values]} of a history file, the failures/min value first."""
    out = {}
    with open(path) as f:
        for line in f:
            p = line.split()
            if p and p[0] == "s":
                out[int(p[1])] = p[2:]
    return out


def wait_samples(path, secs=25):
    end = time.time() + secs
    while time.time() < end:
        if os.path.exists(path) and samples(path):
            return samples(path)
        time.sleep(0.2)
    raise AssertionError("no sample saved in %s within %d s" % (path, secs))


def test_history_survives_a_restart(tmp_path):
    state = tmp_path / "state" / "redrive"
    path = str(state / "history" / "attune2.hist")
    t = Term(tmp_path, extra_env={"REDRIVE_HISTORY_SAVE_S": "1"})
    t.wait_for("postgresql   ok")
    first = wait_samples(path)                   # saved while the console runs
    assert os.stat(path).st_mode & 0o777 == 0o600
    assert os.stat(os.path.dirname(path)).st_mode & 0o777 == 0o700
    step, vals = max(first.items())
    assert abs(step * 10 - time.time()) < 25
    assert vals[0] != "-" and float(vals[0]) >= 0 and vals[2] != "-"   # failures/min, DLQ known
    t.send("Q")
    assert t.finish() == 0
    kept = samples(path)                         # saved again at exit: nothing lost
    assert set(first) <= set(kept)

    # the restart: the same hour, read back by snapshot and drawn by a second console
    env = {k: v for k, v in os.environ.items() if k.startswith("RD_")}
    env.update(PATH="/usr/bin:/bin", LANG="C.UTF-8", LC_ALL="C.UTF-8", TZ="UTC",
               HOME=str(tmp_path), XDG_STATE_HOME=str(tmp_path / "state"))
    p = subprocess.run([BIN, "--config", str(tmp_path / "config"), "--system", "attune2", "snapshot",
                        "--json", "--history"], env=env, capture_output=True, timeout=30)
    assert p.returncode == 0, p.stderr
    fail = dict((int(tm) // 10, v) for tm, v in json.loads(p.stdout)["history"]["series"]["failures_per_min"])
    for s in kept:
        assert fail[s] == pytest.approx(float(kept[s][0]), rel=1e-6), s
    before = [s for s in fail if s < min(kept)]
    assert before and all(fail[s] is None for s in before)   # before the first start: a gap
    assert json.loads(p.stdout)["sources"]             # the model is there as without --history

    t2 = Term(tmp_path)
    t2.wait_for("postgresql   ok")
    t2.send("H", 0.5)
    t2.wait_for("failures/min  now")
    screen = t2.text()
    assert "\u2524" in screen and "no samples in the last hour" not in screen.split("unhealthy")[0]
    t2.send("Q")
    assert t2.finish() == 0
    assert set(kept) <= set(samples(path))       # the second run kept the first run's hour
