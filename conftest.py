# pytest root: tests import helpers from tests/ and tools/, and every test gets its layer's
# markers (pytest.ini) from its file, so a new file is marked without editing it.
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, os.path.join(ROOT, "tools"))

# Files (relative to tests/) that need no service: `headless`; every other test is `stack`.
HEADLESS = {
    "tui/test_screens.py", "tui/test_columns_fit.py", "tui/test_cockpit.py", "tui/test_fleet_screens.py", "tui/test_filter_text.py",
    "tui/test_follow.py", "tui/test_topbar_error.py", "tui/test_history.py", "tui/test_journal_fifo.py",
    "tui/test_batch_offer.py", "actions/test_http.py",
    "completions/test_completions.py", "integration/test_config_init.py", "integration/test_trust.py",
    "house/test_layering.py", "unit/test_no_libevent.py", "unit/test_dialog_split.py", "tui/test_groups_export.py",
    "tui/test_hangup.py", "tui/test_journal_view.py", "tui/test_batches_screens.py",
}
# Files, directories (ending in "/") or tests (file::name, parameters left off) that are
# `slow`: tens of seconds each (pytest --durations, scripts/test.sh prints the 25 slowest).
SLOW = ("package/", "fault/", "bench/", "sim/", "stack/test_demo_exit.py", "tui/test_idle.py", "tui/test_dlq_scale.py",
        "tui/test_set_retry_mem.py", "actions/test_act_batch_mem.py", "integration/test_standby.py",
        "integration/test_redis_sweep_budget.py", "integration/test_counts_scale.py",
        "tui/test_consistency.py", "integration/test_pg_costs.py::test_lists_off_screen_are_not_fetched",
        "integration/test_sqs_console.py::test_demo_shows_alakai_sqs_queue_and_dlq_live")
# The quick lane's one test against the stack: every view of a real store, and quit.
SMOKE = "tui/test_live.py::test_visit_every_view_and_quit"


def layer_of(item):
    rel = os.path.relpath(str(item.fspath), os.path.join(ROOT, "tests")).replace(os.sep, "/")
    marks = ["headless" if rel in HEADLESS else "stack"]
    test = "%s::%s" % (rel, item.originalname)
    if any(s in (rel, test) or (s.endswith("/") and rel.startswith(s)) for s in SLOW):
        marks.append("slow")
    if "%s::%s" % (rel, item.name) == SMOKE:
        marks.append("smoke")
    return marks


def pytest_collection_modifyitems(config, items):
    for item in items:
        for m in layer_of(item):
            item.add_marker(m)


@pytest.fixture(autouse=True)
def _stack_needed(request):
    """A stack test without the stack env fails (never skips): a missing stack is a failure."""
    if request.node.get_closest_marker("stack") and not os.environ.get("RD_STACK_DIR"):
        pytest.fail("needs the local stack env (tests/stack/stack.sh start DIR; . DIR/env)")

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
