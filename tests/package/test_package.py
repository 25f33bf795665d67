"""The Debian package (issue 26): scripts/package.sh builds it, apt installs it, the installed
binary runs against the local stack with only installed files, lintian finds no error, and
`apt-get remove --purge` leaves none of its files.

Needs root (apt-get, a mount namespace) and the stack env (scripts/test.sh). The package
must not be installed before the test; the test removes it whatever happens. The package
build reuses build-deb/ (PKG_BUILD_DIR) when it exists.
"""
import os
import re
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PKG = "redrive"
INSTALLED = "/usr/bin/redrive"
DATADIR = "/usr/share/redrive"
EXPECTED = [
    "/usr/bin/redrive",
    "/usr/share/man/man1/redrive.1.gz",
    "/usr/share/bash-completion/completions/redrive",
    "/usr/share/zsh/vendor-completions/_redrive",
    "/usr/share/fish/vendor_completions.d/redrive.fish",
    "/usr/share/doc/redrive/copyright",
    "/usr/share/doc/redrive/changelog.gz",
]


def run(cmd, **kw):
    kw.setdefault("timeout", 600)
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def ok(cmd, **kw):
    p = run(cmd, **kw)
    assert p.returncode == 0, "%s: exit %d\n%s%s" % (cmd, p.returncode, p.stdout, p.stderr)
    return p.stdout


def installed():
    p = run(["dpkg-query", "-W", "-f=${db:Status-Status}", PKG])
    return p.returncode == 0 and p.stdout == "installed"


def purge():
    return run(["apt-get", "remove", "--purge", "-y", "-q", PKG],
               env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))


def clean_env(home):
    """An environment that cannot point redrive at the tree's data: no REDRIVE_* dirs,
    an empty HOME, no XDG config dir."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("REDRIVE_") and k not in ("XDG_CONFIG_HOME", "RD_BIN", "MANPATH")}
    env.update(HOME=home, TZ="UTC", LANG="C.UTF-8", LC_ALL="C.UTF-8", NO_COLOR="1")
    return env


def hidden_tree(cmd):
    """cmd in a private mount namespace where the source tree (with its build dirs) is an
    empty tmpfs: only installed files exist for it."""
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c",
            'mount -t tmpfs -o size=1m rd-hidden "$0" && exec "$@"', ROOT] + cmd


def needed_packages(deb, tmp):
    """The Debian packages of the libraries /usr/bin/redrive links (NEEDED) and loads on
    first use (the sonames of src/io/lazylib.c)."""
    ok(["dpkg-deb", "-x", deb, str(tmp)])
    dyn = ok(["readelf", "-d", str(tmp / "usr/bin/redrive")])
    sonames = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dyn)
    lazy = re.findall(r'^static lazy_lib \w+ = \{"(lib[^"]+)", NULL\};$',
                      open(os.path.join(ROOT, "src/io/lazylib.c")).read(), re.M)
    assert len(sonames) >= 5 and len(lazy) >= 5, (sonames, lazy)
    pkgs = set()
    for so in sonames + lazy:
        path = os.path.realpath(ok(["gcc", "-print-file-name=" + so]).strip())
        assert os.path.isabs(path), so
        key = re.sub(r"^(/usr)?/", "", path)     # /lib or /usr/lib: merged-/usr or not
        owners = {ln.split(":")[0] for ln in ok(["dpkg", "-S", key]).splitlines()
                  if ln.endswith("/" + key)}
        assert len(owners) == 1, (so, owners)
        pkgs |= owners
    return pkgs


def expected_version_text():
    git = run(["git", "-C", ROOT, "describe", "--always", "--dirty", "--tags"])
    desc = git.stdout.strip() if git.returncode == 0 else "no git"
    ver = lambda m: ok(["pkg-config", "--modversion", m]).strip()
    ssl = ver("openssl")
    return ("redrive 0.1.0\n"
            "git: %s\n"
            "TLS bridge: libevent_openssl %s, OpenSSL %s\n"
            "AWS signer: SigV4 with OpenSSL %s\n"
            "libraries: ncursesw %s, libpq %s, hiredis %s, libcurl %s, cJSON %s, libevent %s\n"
            "test hooks: off\n"
            % (desc, ver("libevent_openssl"), ssl, ssl, ver("ncursesw"), ver("libpq"),
               ver("hiredis"), ver("libcurl"), ver("libcjson"), ver("libevent")))


def check_no_test_hooks(tmp_path, home, env):
    """The REDRIVE_* test hooks (src/core/testhook.h) are not in a package: with a fixed
    model, clock, size and keys in the environment the console still wants a terminal
    (a test build prints a screen: tests/tui/test_test_hooks.py), and a trace variable
    writes no file."""
    tui = os.path.join(ROOT, "tests", "tui")
    trace = tmp_path / "trace"
    hooks = dict(env, REDRIVE_NOW="1767225600", REDRIVE_HEADLESS="80x24",
                 REDRIVE_HEADLESS_MODEL=os.path.join(tui, "fixtures", "attune.json"),
                 REDRIVE_HEADLESS_KEYS=os.path.join(tui, "scripts", "overview.keys"),
                 REDRIVE_LOOP_TRACE=str(trace), REDRIVE_START_TRACE=str(trace),
                 REDRIVE_LATENCY_TRACE=str(trace))
    p = subprocess.run([INSTALLED, "--config", os.path.join(tui, "fixtures", "test.conf")],
                       cwd=str(home), env=hooks, stdin=subprocess.DEVNULL, capture_output=True,
                       text=True, timeout=60)
    assert (p.returncode, p.stdout, p.stderr) == (
        1, "", "redrive: the console needs a terminal (use 'redrive snapshot' in scripts)\n")
    bad = tmp_path / "bad-hooks.conf"
    bad.write_text('[system "x"]\nprofile = alakai\nstore = redis://127.0.0.1:1/0\n')
    p = run([INSTALLED, "--config", str(bad), "snapshot"], cwd=str(home), env=hooks)
    assert p.returncode != 0 and "Traceback" not in p.stderr, p.stdout + p.stderr
    assert not os.path.lexists(trace), "the installed binary wrote a trace"


@pytest.fixture(scope="module")
def deb(tmp_path_factory):
    if os.geteuid() != 0:
        pytest.fail("the package test installs a package: run it as root")
    assert not installed(), "%s is installed already: remove it before the test" % PKG
    out = tmp_path_factory.mktemp("deb")
    text = ok(["bash", os.path.join(ROOT, "scripts", "package.sh")],
              env=dict(os.environ, PKG_OUT_DIR=str(out)))
    path = text.strip().splitlines()[-1]
    assert path == str(out / ("redrive_0.1.0_%s.deb" % ok(["dpkg", "--print-architecture"]).strip()))
    return path


def test_lintian_finds_no_error(deb):
    p = run(["lintian", "--fail-on", "error", deb])
    errors = [ln for ln in p.stdout.splitlines() if ln.startswith("E:")]
    assert p.returncode == 0 and errors == [], p.stdout + p.stderr


def test_depends_covers_linked_and_lazily_loaded_libraries(deb, tmp_path):
    depends = ok(["dpkg-deb", "-f", deb, "Depends"])
    names = {re.match(r"\s*([^\s(]+)", d).group(1) for d in depends.split(",")}
    need = needed_packages(deb, tmp_path)
    assert {"libpq5", "libcurl4", "libssl3", "libhiredis0.14", "libncursesw6"} <= need
    assert need - names == set(), depends


def test_install_run_remove(deb, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    env = clean_env(str(home))
    for n in ("RD_STACK_DIR", "RD_PG_DSN_TASKER", "RD_REDIS_URL", "RD_CORE_URL_TASKER"):
        assert os.environ.get(n), "stack env not loaded (missing %s)" % n
    config = tmp_path / "demo.conf"
    config.write_text(ok(["bash", os.path.join(ROOT, "scripts", "demo-config.sh"),
                          os.path.join(os.environ["RD_STACK_DIR"], "env")]))
    want_version = expected_version_text()
    files = []
    try:
        ok(["apt-get", "install", "-y", "-q", "--no-install-recommends",
            "./" + os.path.basename(deb)], cwd=os.path.dirname(deb),
           env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
        assert installed()
        files = ok(["dpkg", "-L", PKG]).splitlines()
        for f in EXPECTED + [DATADIR + "/profiles/tasker.profile",
                             DATADIR + "/themes/default.theme",
                             DATADIR + "/keymaps/default.keymap"]:
            assert f in files and os.path.isfile(f), f

        p = run(hidden_tree([INSTALLED, "--version"]), cwd=str(home), env=env)
        assert (p.returncode, p.stderr, p.stdout) == (0, "", want_version)
        check_no_test_hooks(tmp_path, home, env)

        # the demo config names every profile; they and the default theme and keymap can
        # only come from the installed data dir: the tree is not there, HOME is empty
        p = run(hidden_tree(["sh", "-c", 'test ! -e "$0/meson.build" && exec "$@"', ROOT,
                             INSTALLED, "--config", str(config), "check"]),
                cwd=str(home), env=env)
        assert p.returncode == 0 and p.stderr == "", p.stdout + p.stderr
        assert len(re.findall(r"^system \S+ \(profile \S+\)$", p.stdout, re.M)) == 5, p.stdout

        # where an installed binary looks: the user's dir, then the data dir, never the
        # tree (visible here)
        bad = tmp_path / "bad.conf"
        bad.write_text('[system "x"]\nprofile = no-such\nstore = redis://127.0.0.1:1/0\n')
        p = run([INSTALLED, "--config", str(bad), "check"], cwd=str(home), env=env)
        assert p.returncode == 2, p.stdout + p.stderr
        assert ("config: no-such: profile not found (looked in %s/.config/redrive/profiles, "
                "%s/profiles)" % (home, DATADIR)) in p.stdout, p.stdout

        assert run(["man", "-w", "redrive"], env=env).stdout == \
            "/usr/share/man/man1/redrive.1.gz\n"
    finally:
        removed = purge()
    assert removed.returncode == 0, removed.stdout + removed.stderr
    assert not installed()
    left = [f for f in files if os.path.isfile(f) or os.path.islink(f)]
    assert left == [], left
    for d in (DATADIR, "/usr/share/doc/redrive"):
        assert not os.path.exists(d), d
