"""Shell completions run in their real shells: bash (the function called with COMP_WORDS),
fish (`complete -C`, non-interactive) and zsh (an interactive zsh in a pseudo-terminal,
TAB typed, the candidates recorded by a compadd wrapper). The same command lines give the
same candidates, compared whole, in all three. The scripts take commands, options and
views from `redrive --complete` (the tables of `--help`); system names from the config
file. A test checks that `--help` and every shell name every view and option of the
tables; `meson install` puts the three scripts in place."""
import json
import os
import shutil
import subprocess
import time

import pexpect
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
COMPLETIONS = os.path.join(ROOT, "completions")
BIN = os.environ.get("RD_BIN", os.path.join(ROOT, "build", "src", "cli", "redrive"))
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
GLOBAL = "--config --system --theme --keymap --read-only --ascii --no-mouse --yes --help --version".split()
COMMANDS = "snapshot check retry drain undrain deactivate activate resolve config batch".split()
VIEWS = "overview executions chain execution workers queues dlq groups fleet history".split()
ACT = "--config --system --read-only --yes --help --reason --idempotency-key".split()
PROFILES = "alakai attune attune-era1 attune-era2 openagents tasker".split()


def run(argv, **kw):
    p = subprocess.run(argv, capture_output=True, text=True, timeout=30, **kw)
    assert p.returncode == 0, (argv, p.stdout, p.stderr)
    return p.stdout


def table(*what):
    """First column of `redrive --complete WHAT...`."""
    return sorted(line.split("\t")[0] for line in run([BIN, "--complete", *what]).splitlines())


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    h = tmp_path_factory.mktemp("home")
    d = h / ".config" / "redrive"
    d.mkdir(parents=True)
    (d / "config").write_text(CONFIG)
    (h / "other.conf").write_text('[system "only-here"]\nprofile = attune\nstore = env:PG\n')
    return h


def shell_env(home, extra=None):
    env = {"PATH": "%s:/usr/bin:/bin" % os.path.dirname(BIN), "HOME": str(home), "LC_ALL": "C.UTF-8",
           "TERM": "dumb", "REDRIVE_PROFILES": os.path.join(ROOT, "profiles")}
    env.update(extra or {})
    return env


def bash(home, line, extra=None):
    words = line.split(" ")
    script = ('source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); '
              '_redrive; printf "%s\\n" "${COMPREPLY[@]}"')
    p = subprocess.run(["bash", "--norc", "--noprofile", "-c", script, "bash",
                        os.path.join(COMPLETIONS, "redrive.bash")] + words,
                       env=shell_env(home, extra), capture_output=True, text=True, timeout=30, cwd=home)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    return sorted(x for x in p.stdout.split("\n") if x)


def fish(home, line, extra=None):
    script = 'source $argv[1]; complete -C $argv[2]'
    p = subprocess.run(["fish", "--no-config", "-c", script, os.path.join(COMPLETIONS, "redrive.fish"), line],
                       env=shell_env(home, extra), capture_output=True, text=True, timeout=30, cwd=home)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    return sorted(x.split("\t")[0] for x in p.stdout.split("\n") if x)


ZSHRC = r'''
# the completion system's own directories only: compinit scans less
fpath=(%s ${(M)fpath:#*/functions/Completion(|/Base|/Zsh|/Unix)})
autoload -Uz compinit && compinit -u -D
unset zle_bracketed_paste
# every candidate that reaches the completion list, one per line, into $RD_OUT
compadd() {
  if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return; fi
  local -a __hits __p __pp
  builtin compadd -A __hits "$@"
  zparseopts -E P:=__p p:=__pp 2>/dev/null
  local h
  for h in $__hits; do print -r -- "${__p[2]}${__pp[2]}$h" >> $RD_OUT; done
  builtin compadd "$@"
}
# TAB: complete, then mark the end of this completion's candidates
_rd_tab() { zle complete-word; print -r -- '<<done>>' >> $RD_OUT }
zle -N _rd_tab
bindkey '^I' _rd_tab
PS1='RDY> '
'''


class Zsh:
    """An interactive zsh in a pseudo-terminal; complete(line) types line, TAB, then ^U."""

    def __init__(self, home, workdir):
        self.out = str(workdir / "zsh.out")
        (workdir / ".zshrc").write_text(ZSHRC % COMPLETIONS)
        self.home = home
        self.proc = None
        self.extra = None

    def start(self, extra):
        if self.proc and self.extra == extra:
            return
        self.close()
        env = shell_env(self.home, dict(extra or {}, ZDOTDIR=os.path.dirname(self.out), RD_OUT=self.out))
        self.proc = pexpect.spawn("zsh", ["-i"], env=env, cwd=str(self.home), encoding="utf-8",
                                  dimensions=(50, 200), timeout=20)
        self.proc.expect("RDY> ")
        self.extra = extra

    def complete(self, line, extra=None):
        self.start(extra)
        open(self.out, "w").close()
        self.proc.send(line + "\t")
        deadline = time.time() + 15
        while True:
            with open(self.out) as f:
                text = f.read()
            if "<<done>>" in text:
                break
            assert time.time() < deadline, ("zsh did not complete", line, self.proc.before)
            self.drain(0.02)
        self.proc.send("\x15")     # ^U: clear the line for the next one
        self.drain(0)
        # zsh quotes what it inserts: "tasker\ dev" is the name "tasker dev"
        return sorted(set(x.replace("\\ ", " ") for x in text.split("\n") if x and x != "<<done>>"))

    def drain(self, wait):
        """Reads what zsh wrote (a full pseudo-terminal would block it)."""
        try:
            while True:
                self.proc.read_nonblocking(65536, timeout=wait)
        except pexpect.TIMEOUT:
            pass

    def close(self):
        if self.proc:
            self.proc.sendline("exit")
            self.proc.close(force=True)
            self.proc = None


@pytest.fixture(scope="module")
def zsh_session(home, tmp_path_factory):
    z = Zsh(home, tmp_path_factory.mktemp("zdot"))
    yield z
    z.close()


@pytest.fixture(params=["bash", "zsh", "fish"])
def shell(request, home):
    """complete(line, extra_env) in one of the three shells."""
    if request.param == "zsh":
        z = request.getfixturevalue("zsh_session")
        return z.complete
    fn = bash if request.param == "bash" else fish
    return lambda line, extra=None: fn(home, line, extra)


def test_shells_are_installed():
    for sh in ("bash", "zsh", "fish"):
        assert shutil.which(sh), "%s is not installed (scripts/setup.sh installs it)" % sh


CASES = [
    ("redrive ", sorted(COMMANDS)),           # options once a '-' is typed
    ("redrive -", sorted(GLOBAL)),
    ("redrive s", ["snapshot"]),
    ("redrive d", ["deactivate", "drain"]),
    ("redrive --sys", ["--system"]),
    ("redrive --system ", ["alakai", "attune-prod", "tasker dev"]),
    ("redrive --system at", ["attune-prod"]),
    ("redrive snapshot --view ", sorted(VIEWS)),
    ("redrive snapshot --view f", ["fleet"]),
    ("redrive snapshot --view g", ["groups"]),
    ("redrive snapshot --", sorted("--help --json --view --status --filter --for --history --since --group".split())),
    ("redrive snapshot --f", ["--filter", "--for"]),
    ("redrive --system alakai check --", ["--ascii", "--help", "--json", "--system"]),
    ("redrive check --system ", ["alakai", "attune-prod", "tasker dev"]),
    ("redrive drain --", sorted(ACT + ["--force"])),
    ("redrive retry --", sorted(ACT + ["--force", "--override-loop", "--status", "--filter",
                                       "--group", "--since", "--limit", "--rate", "--dlq",
                                       "--dlq-reason", "--dlq-queue", "--select-only",
                                       "--concurrency", "--verbose", "--canary", "--canary-wait",
                                       "--max-refail"])),
    ("redrive resolve --", sorted(ACT + ["--force", "--filter", "--limit", "--rate", "--dlq",
                                         "--dlq-reason", "--dlq-queue", "--select-only",
                                         "--concurrency", "--verbose"])),
    ("redrive batch --", sorted("--config --system --yes --help --json --rate --resend-unknown "
                                "--concurrency --force --verbose --canary --canary-wait --max-refail".split())),
    ("redrive batch ", ["abandon", "list", "resume", "show"]),
    ("redrive batch s", ["show"]),
    ("redrive batch r", ["resume"]),
    ("redrive batch list ", []),
    ("redrive retry --o", ["--override-loop"]),
    ("redrive drain w", []),
    ("redrive config ", ["init"]),
    ("redrive config init --", ["--help", "--profile", "--system"]),
    ("redrive config init --profile ", PROFILES),
    ("redrive config init --profile at", ["attune", "attune-era1", "attune-era2"]),
]


@pytest.mark.parametrize("line,want", CASES, ids=[c[0] for c in CASES])
def test_candidates(shell, line, want):
    assert shell(line) == want


def test_systems_from_the_config_option(shell, home):
    other = home / "other.conf"
    assert shell("redrive --config %s --system " % other) == ["only-here"]
    assert shell("redrive --config %s drain --system " % other) == ["only-here"]
    # XDG_CONFIG_HOME wins over ~/.config; a missing file offers nothing (and no error)
    assert shell("redrive --system ", {"XDG_CONFIG_HOME": str(home / "none")}) == []


def test_every_view_and_option_is_named(shell):
    """The tables (redrive --complete) against --help and each shell: a view or option
    that one of them lacks fails here."""
    views = table("views")
    assert views == sorted(VIEWS)
    assert shell("redrive snapshot --view ") == views
    help_text = run([BIN, "--help"])
    for v in views:
        assert "\n  %s " % v in help_text, v
    for cmd in [None] + table("commands"):
        opts = table("options", *([cmd] if cmd else []))
        assert opts, cmd
        for o in opts:
            assert o in help_text, o
        if cmd:
            assert shell("redrive %s --" % cmd) == opts, cmd
        else:
            assert shell("redrive --") == opts
    assert "--for SECONDS" in help_text and "fleet" in help_text and "groups" in help_text


def test_table_options_are_accepted_and_others_refused(tmp_path):
    """The parsers take their options from the same table: one it lacks is refused."""
    for cmd in (["snapshot"], ["check"], ["retry"], ["drain"], ["config", "init"]):
        p = subprocess.run([BIN, "--config", str(tmp_path / "none"), *cmd, "--no-such-option"],
                           capture_output=True, text=True, timeout=30)
        assert p.returncode == 2 and "unknown argument '--no-such-option'" in p.stderr, (cmd, p.stderr)
    # --theme is a global option only: after the command it is refused, before it taken
    p = subprocess.run([BIN, "snapshot", "--theme", "x"], capture_output=True, text=True, timeout=30)
    assert p.returncode == 2 and "unknown argument '--theme'" in p.stderr


def test_complete_usage_errors():
    p = subprocess.run([BIN, "--complete", "nothing"], capture_output=True, text=True, timeout=30)
    assert p.returncode == 2 and p.stdout == "" and p.stderr.startswith("usage: redrive --complete")
    p = subprocess.run([BIN, "--complete", "options", "nope"], capture_output=True, text=True, timeout=30)
    assert p.returncode == 2 and p.stdout == ""


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
        with open(found[hits[0]]) as a, open(os.path.join(COMPLETIONS, src)) as b:
            assert a.read() == b.read()


def test_complete_profiles_lists_only_plain_names(tmp_path):
    """A profile file name is outside text: one holding an escape sequence, a tab, a newline
    or a blank (no profile can be asked for by such a name) is left out, never printed raw."""
    pdir = tmp_path / "profiles"
    pdir.mkdir()
    for name in ("mine", "my-own_2.x", "evil\x1b]0;owned\x07", "esc\x1b[2J", "tab\tname",
                 "new\nline", "blank name", "del\x7f", "caf\u00e9"):
        (pdir / (name + ".profile")).write_text("[profile]\n")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "home"), "LC_ALL": "C.UTF-8",
           "REDRIVE_PROFILES": str(pdir)}
    p = subprocess.run([BIN, "--complete", "profiles"], capture_output=True, timeout=30, env=env)
    assert p.returncode == 0 and p.stderr == b"", p.stderr
    names = [line.split(b"\t") for line in p.stdout.split(b"\n")[:-1]]
    assert p.stdout.endswith(b"\n") and all(len(x) == 2 and x[1] == b"profile" for x in names), p.stdout
    assert not any(b < 0x20 and b not in b"\t\n" or b == 0x7f for b in p.stdout), p.stdout
    got = [x[0].decode() for x in names]
    # the directory of REDRIVE_PROFILES first; the tree's profiles after it (a build's binary)
    assert sorted(got[:2]) == ["mine", "my-own_2.x"], got
    assert sorted(got[2:]) == PROFILES, got


def write_batch(home, bid, lines):
    d = home / ".local" / "state" / "redrive" / "batches"     # no XDG_STATE_HOME: the default
    d.mkdir(parents=True, exist_ok=True)
    (d / (bid + ".batch")).write_text("".join(json.dumps(x) + "\n" for x in lines))
    (d / (bid + ".batch")).chmod(0o600)


def test_batch_ids_complete_after_show_resume_and_abandon(shell, home):
    """`batch resume <TAB>` offers the records' ids (redrive --complete batches: the state
    directory, no config); a damaged record is left out; a hostile system name never
    reaches the terminal raw."""
    a, b, bad = "00000000000000a1", "00000000000000b2", "00000000000000c3"
    item = ["1001", None, None, 1, None]
    write_batch(home, a, [{"batch": a, "system": "attune-prod", "action": "retry", "reason": None,
                           "selection": "status=failed", "created": "2026-01-01T00:00:01.000Z",
                           "operator": "op"}, item, {"total": 1}])
    write_batch(home, b, [{"batch": b, "system": "tasker\x1b]0;x\x07", "action": "retry",
                           "reason": None, "selection": "s", "created": "2026-01-01T00:00:02.000Z",
                           "operator": "op"}, item, {"total": 1}])
    write_batch(home, bad, [{"batch": bad, "system": "x", "action": "retry"}, item, {"total": 9}])
    env = shell_env(home)
    rows = subprocess.run([BIN, "--complete", "batches"], env=env, capture_output=True,
                          text=True, timeout=30)
    assert rows.returncode == 0, rows.stderr
    assert sorted(rows.stdout.splitlines()) == [a + "\tattune-prod retry open",
                                                b + "\ttasker\u241b]0;x\u2407 retry open"], rows.stdout
    assert shell("redrive batch resume ") == [a, b]
    assert shell("redrive batch abandon 00000000000000a") == [a]
    assert shell("redrive batch show 00000000000000b") == [b]
    assert shell("redrive batch list ") == []
