"""The console starts whatever the batch records hold (docs/error-groups.md): it lists them
at start to offer an unfinished one, so a record with a total of 999999999999 (an
allocation that aborts), an OSC title sequence in its action and strings, or 1e300 must
not stop it, nor reach the terminal. The sound one is offered with its strings sanitized,
the damaged ones counted. A real terminal (pexpect + pyte), the local stack.

Needs the stack env (tests/stack/stack.sh start DIR && . DIR/env); fails without it.
"""
import json
import os

from test_live import Term, stack_env  # noqa: F401

OSC = "\x1b]0;owned\x07"
ITEMS = [["1001", None, None, 1, None], ["1002", None, None, 0, None]]
SOUND, ACTION, HUGE, E300, NEG = ("%016x" % (0xa0 + i) for i in range(5))


def write(home, bid, lines):
    d = home / "state" / "redrive" / "batches"
    d.mkdir(parents=True, mode=0o700, exist_ok=True)
    fd = os.open(str(d / (bid + ".batch")), os.O_WRONLY | os.O_CREAT, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write("".join((l if isinstance(l, str) else json.dumps(l)) + "\n" for l in lines))


def head(bid, **kw):
    h = {"batch": bid, "system": "attune2", "action": "retry", "reason": None,
         "selection": "status=failed", "created": "2026-01-01T00:00:00.000Z", "operator": "op"}
    h.update(kw)
    return h


def test_console_starts_over_hostile_batch_records(tmp_path):
    write(tmp_path, SOUND, [head(SOUND, system="attune2" + OSC, reason=OSC, selection=OSC,
                                 operator=OSC)] + ITEMS + [{"total": 2}])
    write(tmp_path, ACTION, [head(ACTION, action="retry" + OSC)] + ITEMS + [{"total": 2}])
    write(tmp_path, HUGE, [head(HUGE)] + ITEMS + [{"total": 999999999999}])
    write(tmp_path, E300, [head(E300)] + ITEMS + ['{"total":1e300}'])
    write(tmp_path, NEG, [head(NEG)] + ITEMS + [{"total": -1}])
    t = Term(tmp_path, cols=200, rows=30)
    t.wait_for("1 unfinished batch: retry on attune2\u241b]0;owned\u2407, 2 of 2 left: "
               "redrive batch resume %s (redrive batch list); 4 damaged batch records" % SOUND)
    t.send(":q\r")
    assert t.finish() == 0
    raw = bytes(t.raw)
    for seq in (b"\x1b]0;", b"\x1b]2;", b"\x07", b"owned\x07"):
        assert seq not in raw, seq


def test_console_counts_damaged_records_alone(tmp_path):
    write(tmp_path, HUGE, [head(HUGE)] + ITEMS + [{"total": 999999999999}])
    t = Term(tmp_path, cols=160, rows=30)
    t.wait_for("1 damaged batch record: not offered (redrive batch list)")
    t.send(":q\r")
    assert t.finish() == 0
