# pytest root: tests import helpers from tests/ and tools/
import os, sys
ROOT = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, os.path.join(ROOT, "tools"))


def pytest_sessionstart(session):
    """The tests drive the console through the REDRIVE_* test hooks (src/core/testhook.h),
    which only a build set up with -Dtest_hooks=true has: refuse to run against one without
    them rather than fail test by test."""
    import subprocess
    import pytest
    b = os.environ.get("RD_BIN") or os.path.join(ROOT, "build", "src", "cli", "redrive")
    if not os.access(b, os.X_OK):
        return
    out = subprocess.run([b, "--version"], capture_output=True, text=True, timeout=30).stdout
    if "\ntest hooks: on\n" not in out:
        pytest.exit("%s has no test hooks: `meson configure %s -Dtest_hooks=true` and rebuild "
                    "(scripts/setup.sh does)" % (b, os.path.dirname(os.path.dirname(os.path.dirname(b)))),
                    returncode=2)
