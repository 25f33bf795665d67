"""Moved to tests/lib/pyte_rep.py (imported by tests/lib/term.py); kept for older imports."""
from lib.pyte_rep import *  # noqa: F401,F403
