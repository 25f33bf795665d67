# pytest root: tests import helpers from tests/ and tools/
import os, sys
ROOT = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, os.path.join(ROOT, "tools"))


def pytest_configure(config):
    # `-m fast`: the tests that need neither the stack nor the build (tests/house)
    config.addinivalue_line("markers", "fast: needs no stack and no build; runs in seconds")
