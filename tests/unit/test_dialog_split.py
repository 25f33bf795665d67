"""The dialog runner apart from the dialog's drawing (issue 33): src/ui/dialog.c draws and
reads keys and drives no batch; src/ui/dlgrun.c owns the batch_* and actor_* calls. No stack
needed."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_no_libevent import strip_comments  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DRIVES = re.compile(r"\b(batch|actor)_\w+\s*\(")


def calls(name):
    with open(os.path.join(ROOT, "src", "ui", name), encoding="utf-8") as f:
        code = strip_comments(f.read())
    return [f"{name}:{no}: {line.strip()}" for no, line in enumerate(code.split("\n"), 1)
            if DRIVES.search(line)]


def test_dialog_drives_no_batch():
    assert calls("dialog.c") == []


def test_the_runner_drives_it():
    found = "\n".join(calls("dlgrun.c"))
    for call in ("actor_run_batch(", "actor_resend(", "batch_abort(", "batch_free(", "batch_result("):
        assert call in found, call
