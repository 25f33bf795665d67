"""Shell completions: bash completion run for a few command lines, the candidates compared
whole; system names come from the config file; `meson install` puts all three scripts in
place."""
import os
import subprocess

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BASH = os.path.join(ROOT, "completions", "redrive.bash")
CONFIG = """# systems for the completion test
[system "attune-prod"]
profile = attune
store = env:PG
  [ system "tasker dev" ]   # a name with a blank
profile = tasker
store = env:PG
[system "alakai"]
profile = alakai
store = redis://127.0.0.1:1/0
"""


def complete(home, words, extra_env=None):
    """COMPREPLY for the line `words` with the cursor on the last word."""
    script = ('source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); '
              '_redrive; printf "%s\\n" "${COMPREPLY[@]}"')
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "LC_ALL": "C"}
    env.update(extra_env or {})
    p = subprocess.run(["bash", "--norc", "--noprofile", "-c", script, "bash", BASH] + words,
                       env=env, capture_output=True, text=True, timeout=20)
    assert p.returncode == 0, p.stderr
    assert p.stderr == "", p.stderr
    return sorted(x for x in p.stdout.split("\n") if x)


@pytest.fixture
def home(tmp_path):
    d = tmp_path / ".config" / "redrive"
    d.mkdir(parents=True)
    (d / "config").write_text(CONFIG)
    return tmp_path


CASES = [
    (["redrive", ""], sorted("--config --system --theme --keymap --read-only --ascii --no-mouse --yes "
                             "--help --version snapshot check retry drain undrain deactivate activate".split())),
    (["redrive", "s"], ["snapshot"]),
    (["redrive", "d"], ["deactivate", "drain"]),
    (["redrive", "--sys"], ["--system"]),
    (["redrive", "--system", ""], ["alakai", "attune-prod", "tasker dev"]),
    (["redrive", "--system", "at"], ["attune-prod"]),
    (["redrive", "snapshot", "--view", ""], sorted("overview executions chain workers queues dlq".split())),
    (["redrive", "snapshot", "--view", "w"], ["workers"]),
    (["redrive", "snapshot", "--"], sorted("--json --view --status --filter --system --config".split())),
    (["redrive", "--system", "alakai", "check", "--j"], ["--json"]),
    (["redrive", "drain", "--"], sorted("--yes --force --reason --idempotency-key --system --config --read-only"
                                        .split())),
    (["redrive", "retry", "--f"], ["--force"]),
    (["redrive", "drain", "w"], []),
    (["redrive", "retry", "--o"], ["--override-loop"]),
]


@pytest.mark.parametrize("words,want", CASES, ids=[" ".join(c[0]) for c in CASES])
def test_bash_candidates(home, words, want):
    assert complete(home, words) == want


def test_bash_systems_from_config_option(home, tmp_path):
    other = tmp_path / "other.conf"
    other.write_text('[system "only-here"]\nprofile = attune\nstore = env:PG\n')
    assert complete(home, ["redrive", "--config", str(other), "--system", ""]) == ["only-here"]
    assert complete(home, ["redrive", "--config=%s" % other, "--system", ""]) == ["only-here"]
    # XDG_CONFIG_HOME wins over ~/.config; a missing file offers nothing (and no error)
    assert complete(home, ["redrive", "--system", ""], {"XDG_CONFIG_HOME": str(tmp_path / "none")}) == []


def test_meson_install_puts_completions(tmp_path):
    build = os.path.join(ROOT, "build")
    p = subprocess.run(["meson", "install", "-C", build, "--no-rebuild", "--quiet", "--destdir", str(tmp_path)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    found = {}
    for d, _, files in os.walk(tmp_path):
        for f in files:
            found[os.path.relpath(os.path.join(d, f), tmp_path)] = os.path.join(d, f)
    want = {"bash-completion/completions/redrive": "redrive.bash", "zsh/site-functions/_redrive": "_redrive",
            "fish/vendor_completions.d/redrive.fish": "redrive.fish"}
    for suffix, src in want.items():
        hits = [k for k in found if k.endswith("share/" + suffix)]
        assert len(hits) == 1, (suffix, sorted(found))
        with open(found[hits[0]]) as a, open(os.path.join(ROOT, "completions", src)) as b:
            assert a.read() == b.read()
