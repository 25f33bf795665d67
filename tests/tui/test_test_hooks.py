"""The REDRIVE_* test hooks (src/core/testhook.h) in the test build: `--version` says they
are on, a fixed model, clock, size and keys print a screen without a terminal, and a trace
variable writes its file. The package test (tests/package) runs the same commands against
the installed binary, which has none of them."""
import os
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BIN = os.environ.get("RD_BIN", os.path.join(ROOT, "build", "src", "cli", "redrive"))


def env(tmp_path, **extra):
    e = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TZ": "UTC",
         "TERM": "xterm-256color", "HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state")}
    e.update(extra)
    return e


def test_version_says_test_hooks_on():
    p = subprocess.run([BIN, "--version"], capture_output=True, text=True, timeout=30)
    assert p.returncode == 0 and p.stderr == ""
    assert p.stdout.splitlines()[-1] == "test hooks: on", p.stdout


def test_headless_hooks_print_a_screen(tmp_path):
    hooks = env(tmp_path, REDRIVE_NOW="1767225600", REDRIVE_HEADLESS="80x24",
                REDRIVE_HEADLESS_MODEL=os.path.join(HERE, "fixtures", "attune.json"),
                REDRIVE_HEADLESS_KEYS=os.path.join(HERE, "scripts", "overview.keys"))
    p = subprocess.run([BIN, "--config", os.path.join(HERE, "fixtures", "test.conf")], env=hooks,
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    with open(os.path.join(HERE, "expected", "overview_80x24.txt")) as f:
        assert p.stdout == f.read()


def test_loop_trace_is_written(tmp_path):
    conf = tmp_path / "bad-hooks.conf"
    conf.write_text('[system "x"]\nprofile = alakai\nstore = redis://127.0.0.1:1/0\n')
    trace = tmp_path / "trace"
    p = subprocess.run([BIN, "--config", str(conf), "snapshot"], env=env(tmp_path, REDRIVE_LOOP_TRACE=str(trace)),
                       capture_output=True, text=True, timeout=60)
    assert p.returncode != 0, p.stdout + p.stderr          # the store is down
    # its summary last (iterations over 1 ms, listed before it, depend on the machine's load)
    assert trace.read_text().splitlines()[-1].startswith("iterations "), trace.read_text()
