"""A misspelled name on the command line is refused with the closest known ones ("did you
mean"), exit 2, the whole message compared: systems of the config, statuses of the
system's semantics (never answered with 0 rows), views, config keys, profiles, commands,
options. The store is never reached: the name is refused first. No services needed."""
import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("RD_BIN", os.path.join(ROOT, "build", "src", "cli", "redrive"))
CONF = '[system "attune1"]\nprofile = attune\nstore = postgresql://127.0.0.1:1/x\n%s\n' \
       '[system "tasker"]\nprofile = tasker\nstore = postgresql://127.0.0.1:1/x\n'


def run(tmp_path, *args, extra="", profile="attune"):
    conf = tmp_path / "config"
    conf.write_text((CONF % extra).replace("profile = attune", "profile = " + profile, 1))
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "LC_ALL": "C.UTF-8", "TERM": "dumb",
           "XDG_STATE_HOME": str(tmp_path / "state")}
    p = subprocess.run([BIN, "--config", str(conf), *args], capture_output=True, text=True,
                       timeout=30, env=env)
    return p.returncode, p.stdout, p.stderr.replace(str(tmp_path), "HOME")


def places():
    p = subprocess.run([BIN, "config", "init", "--profile", "zzzzzzzz", "/nonexistent/x"],
                       capture_output=True, text=True, timeout=30,
                       env={"PATH": "/usr/bin:/bin", "HOME": "/h", "LC_ALL": "C.UTF-8"})
    return p.stderr.split("(looked in ", 1)[1].split(")", 1)[0].replace("/h/", "HOME/")


def test_system(tmp_path):
    assert run(tmp_path, "--system", "atune1", "snapshot") == (
        2, "", "HOME/config: no system named 'atune1' (did you mean attune1?)\n")
    assert run(tmp_path, "check", "--system", "taskr") == (
        2, "", "HOME/config: no system named 'taskr' (did you mean tasker?)\n")
    # nothing close: the plain refusal
    assert run(tmp_path, "--system", "zzzzzz", "snapshot") == (
        2, "", "HOME/config: no system named 'zzzzzz'\n")


def test_status_is_refused_not_searched(tmp_path):
    assert run(tmp_path, "snapshot", "--status", "faild") == (
        2, "", "redrive snapshot: no status 'faild' in attune (did you mean failed?)\n")
    assert run(tmp_path, "--system", "tasker", "snapshot", "--status", "eror") == (
        2, "", "redrive snapshot: no status 'eror' in tasker (did you mean error?)\n")
    assert run(tmp_path, "retry", "--status", "faild", "--yes") == (
        2, "", "redrive retry: no status 'faild' in attune (did you mean failed?)\n")
    assert run(tmp_path, "retry", "--status", "faild", "--select-only") == (
        2, '{"error":"no status \'faild\' in attune (did you mean failed?)"}\n', "")
    assert run(tmp_path, "snapshot", "--status", "xyz") == (
        2, "", "redrive snapshot: no status 'xyz' in attune (one of requested, scheduling, "
        "scheduled, running, completed, failed, canceling, cancelled, timeout, abandoned)\n")


def test_view(tmp_path):
    assert run(tmp_path, "snapshot", "--view", "wokers") == (
        2, "", "redrive snapshot: no view 'wokers' (did you mean workers?); --view needs one of "
        "overview, executions, chain, execution, workers, queues, dlq, groups, fleet, history\n")


def test_config_key(tmp_path):
    rc, out, err = run(tmp_path, "snapshot", extra="pol = 5s\nbrokr = amqp://x\n")
    assert (rc, out, err) == (2, "", "HOME/config:4: unknown key 'pol' (did you mean poll?)\n"
                              "HOME/config:5: unknown key 'brokr' (did you mean broker?)\n")


def test_profile(tmp_path):
    rc, out, err = run(tmp_path, "snapshot", profile="atune")
    assert (rc, out, err) == (
        2, "", "atune: profile not found (looked in %s) (did you mean attune?)\n" % places())
    p = subprocess.run([BIN, "config", "init", "--profile", "taskr", str(tmp_path / "c")],
                       capture_output=True, text=True, timeout=30,
                       env={"PATH": "/usr/bin:/bin", "HOME": "/h", "LC_ALL": "C.UTF-8"})
    assert (p.returncode, p.stdout, p.stderr.replace("/h/", "HOME/")) == (
        2, "", "redrive config init: taskr: profile not found (looked in %s) (did you mean tasker?)\n"
        % places())
    assert not (tmp_path / "c").exists()
