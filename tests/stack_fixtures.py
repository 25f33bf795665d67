"""Re-export of tests/stack/fixtures.py so tests can `import stack_fixtures`
(conftest.py puts tests/ on sys.path). See tests/stack/README.md for the dataset."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "stack"))
from fixtures import *  # noqa: E402,F401,F403
from fixtures import reload, setup, touch  # noqa: E402,F401
import stacklib  # noqa: E402,F401
