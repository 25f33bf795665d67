"""The :batches view drawn headless over batch records and journal lines the test writes
(src/ui/view_batches.c): every record newest first with its state (open with an unknown
item, paused, done, abandoned), its counts from the journal, its rate and window (its own
from a control line, else the system's marked `*`, none for a system not in this config),
a damaged record counted and left out, a hostile system name drawn inert; Enter lists a
batch's items grouped by state, failed first. The whole screen is compared at 80x24 and
160x45 (tests/tui/expected/batches_*.txt; REDRIVE_REGEN=1 rewrites them, see
test_screens.py)."""
import json
import os

import pytest

from test_screens import HERE, check_screen, run_headless, screens


def record(d, bid, system, created, items, extra=()):
    lines = [{"batch": bid, "system": system, "action": "retry", "reason": "manual_retry",
              "selection": "status=failed", "created": created, "operator": "ops"}]
    text = json.dumps(lines[0]) + "\n"
    text += "".join(json.dumps([str(i), None, None, 0, None]) + "\n" for i in items)
    text += json.dumps({"total": len(items)}) + "\n"
    text += "".join(json.dumps(x) + "\n" for x in extra)
    p = d / ("%s.batch" % bid)
    p.write_text(text)
    p.chmod(0o600)


def jline(bid, item, code, second):
    return {"time": "2025-12-31T23:50:%02d.000Z" % second, "operator": "ops", "system": "attune-prod",
            "action": "retry", "targets": [str(item)], "idempotency_key": "%032x" % (item + 1),
            "http_status": 202 if code == "ok" else 409, "result": code, "code": code,
            "batch": bid, "item": item}


A, B, C, D, E = ("aaaa000000000001", "bbbb000000000002", "cccc000000000003", "dddd000000000004",
                 "eeee000000000005")


def write_state(home):
    state = home / "state" / "redrive"
    batches = state / "batches"
    batches.mkdir(parents=True, mode=0o700)
    state.chmod(0o700)
    # A: newest, 6 items: 3 ok, 1 failed, 1 pending (unknown), 1 never sent; its own pace
    record(batches, A, "attune-prod", "2025-12-31T23:40:00.000Z", range(1001, 1007),
           [{"control": "open", "at": "t", "operator": "ops", "rate": 20, "concurrency": 4}])
    # B: done; C: paused before anything left (tasker-dev: another system of the config)
    record(batches, B, "attune-prod", "2025-12-31T23:00:00.000Z", range(2001, 2004))
    record(batches, C, "tasker-dev", "2025-12-31T22:00:00.000Z", range(3001, 3005),
           [{"control": "paused", "at": "t", "operator": "ops"}])
    # D: a system this config does not have, its name hostile; abandoned
    record(batches, D, "else\x1b[31mwhere", "2025-12-31T21:00:00.000Z", range(4001, 4003),
           [{"abandoned": "t", "operator": "ops"}])
    (batches / ("%s.batch" % E)).write_text('{"batch":"0000000000000000"}\n')   # damaged
    (batches / ("%s.batch" % E)).chmod(0o600)
    lines = [jline(A, 0, "ok", 1), jline(A, 1, "ok", 2), jline(A, 2, "ok", 3),
             jline(A, 3, "conflict_budget", 4), dict(jline(A, 4, "pending", 5), http_status=0),
             jline(B, 0, "ok", 6), jline(B, 1, "ok", 7), jline(B, 2, "ok", 8)]
    j = state / "journal.jsonl"
    j.write_text("".join(json.dumps(x) + "\n" for x in lines))
    j.chmod(0o600)


@pytest.mark.parametrize("size", ["80x24", "160x45"])
def test_batches_screens(tmp_path, size):
    write_state(tmp_path)
    out = run_headless("attune", "batches", size, home=str(tmp_path))
    got = screens(out, 3)
    assert "\x1b[31m" not in out, "a record's string reaches the terminal inert"
    first = got[0].splitlines()
    assert first[1].startswith("Batches  4, 0 running; 1 damaged left out"), first[1]
    assert [ln[:8] for ln in first[3:7]] == [A[:8], B[:8], C[:8], D[:8]], first[3:7]
    assert got[1].splitlines()[1].startswith("Batch %s  retry on attune-prod, open: 3 ok, 1 failed, 1 unknown"
                                             % A), got[1]
    assert got[2] == got[0], "Back: the list as it was"
    check_screen(out, os.path.join(HERE, "expected", "batches_%s.txt" % size))
