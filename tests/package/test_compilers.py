"""Warnings are errors with gcc and clang, at every optimisation level we ship or bench.

The suite's own build is gcc at -O2 (debugoptimized); the package is gcc with Debian's flags.
Some warnings only show at other levels: gcc -O3 found a -Wformat-truncation that -O2 did
not (the release build did not compile while every test passed). So the side lane builds the
program twice more from this tree, clang -O2 and gcc -O3, each in a build directory of its
own, and a warning anywhere fails the test with the compiler's own words.

Only the program and its libraries are built (not the test binaries): that is what ships.
"""
import os
import shutil
import subprocess
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def build(cc, buildtype, extra=()):
    d = tempfile.mkdtemp(prefix="rd-cc-")
    try:
        env = dict(os.environ, CC=cc)
        p = subprocess.run(["meson", "setup", d, "--buildtype=" + buildtype,
                            "-Dtest_hooks=false", *extra],
                           cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, "meson setup (%s): %s%s" % (cc, p.stdout, p.stderr)
        p = subprocess.run(["nice", "ninja", "-C", d, "src/cli/redrive"], env=env,
                           capture_output=True, text=True, timeout=1200)
        out = p.stdout + p.stderr
        assert p.returncode == 0, "%s %s build failed:\n%s" % (cc, buildtype, out[-6000:])
        warned = [l for l in out.splitlines() if "warning:" in l]
        assert warned == [], "%s %s warned:\n%s" % (cc, buildtype, "\n".join(warned[:20]))
        assert os.access(os.path.join(d, "src", "cli", "redrive"), os.X_OK), "no redrive binary built"
    finally:
        shutil.rmtree(d, ignore_errors=True)


@pytest.mark.parametrize("cc,buildtype", [("clang", "debugoptimized"), ("gcc", "release")])
def test_builds_without_a_warning(cc, buildtype):
    assert shutil.which(cc), "%s is not installed (scripts/setup.sh installs it)" % cc
    build(cc, buildtype)
