"""Every subcommand takes -h/--help: it prints its usage (from the command table) and
exits 0, and the usage line is the man page's SYNOPSIS line for that subcommand. An
unknown command or option is refused with the closest known ones. No services needed."""
import os
import re
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("RD_BIN", os.path.join(ROOT, "build", "src", "cli", "redrive"))
MAN = os.path.join(ROOT, "docs", "redrive.1")
ENV = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "LC_ALL": "C.UTF-8", "TERM": "dumb"}


def run(*args):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=30, env=ENV)


def commands():
    p = run("--complete", "commands")
    assert p.returncode == 0, p.stderr
    names = [line.split("\t")[0] for line in p.stdout.splitlines()]
    assert len(names) == 10, names
    return names


def roff_text(s):
    s = re.sub(r"\\f[BIRP]", "", s).replace("\\-", "-").replace("\\|", "")
    return " ".join(s.split())


def synopsis():
    """{subcommand: its SYNOPSIS entry as plain text} from the man page."""
    text = open(MAN, encoding="utf-8").read()
    block = text.split(".SH SYNOPSIS\n", 1)[1].split("\n.SH ", 1)[0]
    out = {}
    for entry in block.split("\n.br\n"):
        words = roff_text(entry.replace(".B ", "")).split()
        assert words[0] == "redrive", entry
        if len(words) > 1 and not words[1].startswith("["):
            out[words[1]] = " ".join(words)
        elif len(words) > 2 and words[1] == "[options]":
            out[words[2]] = " ".join(words)
    return out


USAGE_CMDS = ["snapshot", "check", "retry", "drain", "undrain", "deactivate", "activate",
              "resolve", "config", "batch"]


@pytest.mark.parametrize("sub", USAGE_CMDS)
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_subcommand_help_matches_man_page(sub, flag):
    assert sorted(commands()) == sorted(USAGE_CMDS)
    man = synopsis()
    argv = [sub, "init", flag] if sub == "config" else [sub, flag]
    p = run(*argv)
    assert p.returncode == 0, (sub, p.stderr)
    assert p.stderr == ""
    assert p.stdout.startswith("usage: redrive "), p.stdout
    usage = " ".join(p.stdout.split("\n\n", 1)[0][len("usage: "):].split())
    assert sub in man, (sub, sorted(man))
    assert usage == man[sub]
    # the options listed are those of the usage line, each once
    opts = re.findall(r"^  (--[a-z-]+)", p.stdout, re.M)
    assert opts == re.findall(r"\[(--[a-z-]+)", usage)


def test_help_after_other_arguments_and_not_as_a_value():
    p = run("retry", "abc", "--yes", "-h")
    assert p.returncode == 0 and p.stdout.startswith("usage: redrive [options] retry ID...")
    p = run("batch", "resume", "7", "--help")
    assert p.returncode == 0 and p.stdout.startswith("usage: redrive [options] batch ")
    p = run("config", "--help")
    assert p.returncode == 0 and p.stdout.startswith("usage: redrive config init ")
    # "--help" as the value of --reason is a reason, not a request for help
    p = run("--config", "/nonexistent/x", "retry", "--reason", "--help")
    assert p.returncode != 0 and not p.stdout.startswith("usage:")


def test_unknown_command_and_option_suggest():
    p = run("snapshto")
    assert (p.returncode, p.stdout, p.stderr) == (
        2, "", "redrive: unknown command 'snapshto' (did you mean snapshot?)\nsee redrive --help\n")
    p = run("xyzzy")
    assert (p.returncode, p.stderr) == (2, "redrive: unknown command 'xyzzy'\nsee redrive --help\n")
    p = run("snapshot", "--stauts", "failed")
    assert p.returncode == 2
    assert p.stderr.startswith("redrive snapshot: unknown argument '--stauts' (did you mean --status?)\n")
    p = run("--rea-donly")
    assert (p.returncode, p.stderr) == (
        2, "redrive: unknown argument '--rea-donly' (did you mean --read-only?)\nsee redrive --help\n")
