"""`import stack_fixtures` = tests/stack/fixtures.py (conftest.py puts tests/ on sys.path).
See tests/stack/README.md for the dataset: reload(what="all"), touch(), the id constants,
HOSTILE strings, and `stacklib` (env, PostgreSQL/Redis connections, RabbitMQ management API)."""
import importlib.util
import os
import sys

_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "stack")
if _DIR not in sys.path:
    sys.path.insert(0, _DIR)
_spec = importlib.util.spec_from_file_location("rd_stack_fixtures", os.path.join(_DIR, "fixtures.py"))
_mod = importlib.util.module_from_spec(_spec)
sys.modules["rd_stack_fixtures"] = _mod
_spec.loader.exec_module(_mod)

globals().update({k: v for k, v in vars(_mod).items() if not k.startswith("__")})
import stacklib  # noqa: E402,F401
