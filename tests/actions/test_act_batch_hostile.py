"""Batch records are not trusted as written (docs/error-groups.md, redrive(1) BATCHES): a
record anyone with our uid could have edited — an OSC title sequence in every string, an
unknown action, a total of 999999999999 or 1e300 or -1, an attempt of 1e300, an escape in
an item's id. `redrive batch list` names each damaged record and lists the rest with their
strings sanitized; resume and abandon refuse a damaged record by name; a record whose items
cannot be read sends nothing. No ESC byte reaches the output. Real store (attune2), a
private reference core server."""
import json
import os

from test_act_batch import core, sent  # noqa: F401

OSC = "\x1b]0;owned\x07"
ITEMS = [["1001", None, None, 1, None], ["1002", None, None, 0, None]]
SOUND, ACTION, HUGE, E300, NEG, ATTEMPT, ESCID = (
    "%016x" % (0xa0 + i) for i in range(7))


def head(bid, **kw):
    h = {"batch": bid, "system": "attune2", "action": "retry", "reason": None,
         "selection": "status=failed", "created": "2026-01-01T00:00:0%d.000Z" % int(bid[-1], 16),
         "operator": "op"}
    h.update(kw)
    return h


def write(a, bid, lines):
    d = os.path.join(str(a.tmpdir), "state", "redrive", "batches")
    os.makedirs(d, mode=0o700, exist_ok=True)
    path = os.path.join(d, bid + ".batch")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write("".join((l if isinstance(l, str) else json.dumps(l)) + "\n" for l in lines))
    return path


def hostile_records(a):
    p = {}
    p[SOUND] = write(a, SOUND, [head(SOUND, system="attune2" + OSC, reason="r" + OSC,
                                     selection="s" + OSC + "\x9b31m", created="2026" + OSC,
                                     operator="o" + OSC)] + ITEMS + [{"total": 2}])
    p[ACTION] = write(a, ACTION, [head(ACTION, action="retry" + OSC)] + ITEMS + [{"total": 2}])
    p[HUGE] = write(a, HUGE, [head(HUGE)] + ITEMS + [{"total": 999999999999}])
    p[E300] = write(a, E300, [head(E300)] + ITEMS + ['{"total":1e300}'])
    p[NEG] = write(a, NEG, [head(NEG)] + ITEMS + [{"total": -1}])
    p[ATTEMPT] = write(a, ATTEMPT, [head(ATTEMPT), '["1001",null,null,1e300,null]', ITEMS[1],
                                    {"total": 2}])
    p[ESCID] = write(a, ESCID, [head(ESCID), ["10" + OSC, None, None, 0, None], ITEMS[1],
                                {"total": 2}])
    return p


def damaged(path, what):
    return "redrive: batch record %s is damaged: %s" % (path, what)


def no_escape(r):
    assert "\x1b" not in r.stdout and "\x1b" not in r.stderr, (r.stdout, r.stderr)
    assert "\x9b" not in r.stdout and "\x07" not in r.stdout + r.stderr


def test_hostile_records_are_named_not_used(act, core):
    a = act("attune2", core=core.url)
    p = hostile_records(a)
    named = [damaged(p[ACTION], "line 1: the header's action is not one redrive knows"),
             damaged(p[HUGE], "its end line says 999999999999 items, it has 2"),
             damaged(p[E300], "line 4: the end line's total is not a count"),
             damaged(p[NEG], "line 4: the end line's total is not a count")]

    r = a.run("batch", "list")
    assert r.returncode == 0, r.stdout + r.stderr
    no_escape(r)
    assert r.stderr.splitlines() == named
    rows = r.stdout.splitlines()
    # oldest first: the created of SOUND ("2026\u241b...") sorts after "2026-01-01"
    assert [l.split()[0] for l in rows] == ["ID", ATTEMPT, ESCID, SOUND], r.stdout
    assert rows[3] == ("%s  attune2\u241b]0;\u2026  retry         2       0       0       0"
                       "       0  open       s\u241b]0;owned\u2407<U+009B>31m" % SOUND)

    r = a.run("batch", "list", "--json")
    assert r.returncode == 0, r.stderr
    no_escape(r)
    assert r.stderr.splitlines() == named
    v = json.loads(r.stdout)
    assert [b["id"] for b in v] == [ATTEMPT, ESCID, SOUND]
    assert (v[2]["system"], v[2]["action"], v[2]["selection"], v[2]["created"]) == (
        "attune2\u241b]0;owned\u2407", "retry", "s\u241b]0;owned\u2407<U+009B>31m",
        "2026\u241b]0;owned\u2407")

    for verb, bid in [("resume", HUGE), ("resume", E300), ("abandon", NEG), ("resume", ACTION)]:
        r = a.run("batch", verb, bid, "--yes") if verb == "resume" else a.run("batch", verb, bid)
        assert r.returncode == 1, (verb, bid, r.stderr)
        no_escape(r)
        assert r.stderr.splitlines() == [l for l in named if bid in l], (verb, bid, r.stderr)

    # sound headers, items that cannot be read: refused before anything is sent
    for bid, what in [(ATTEMPT, "line 2: item 0: its attempt is not a count"),
                      (ESCID, "line 2: item 0 cannot be read")]:
        r = a.run("batch", "resume", bid, "--yes")
        assert r.returncode == 1, r.stdout + r.stderr
        no_escape(r)
        assert "redrive: not sent: batch record %s is damaged: %s" % (p[bid], what) \
            in r.stderr.splitlines(), r.stderr
    assert sent(core) == {}
    # nothing was changed: the same records, the same damage
    r = a.run("batch", "list")
    assert r.returncode == 0 and r.stderr.splitlines() == named
