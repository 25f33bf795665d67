"""Enter on a store's error group lists its members from the store (issue 34), in a real
terminal against the local stack: 24 failures of one error an hour-old-ish, under 60 newer
failures of other errors (so the newest rows of the store hold none of them). The
executions view shows a whole page of the group's members at once (not `0/0 rows`), pages
through all 24 with `]`, and its title gives the group's id and the store's count; then
`:filter error=ID` names the same group by its id, and an id that names none is refused.

Needs the stack env (tests/stack/stack.sh start DIR && . DIR/env); fails without it.
"""
from setlib import actlib, core, stack_env  # noqa: F401
from lib.term import LiveTerm as Term
from test_set_retry import fnv_id, insert

PAGE = 10
CONF = "page_size = %d\n" % PAGE
GIZMO = "Gizmo exploded on shard %d"
GIZMO_FP = "Gizmo exploded on shard <n>"


def member_rows(t):
    """The list's rows (an id first) of the group's error; not the title, not the detail."""
    return [ln for ln in t.screen.display if "Gizmo exploded on shard" in ln and ln.split()[0].isdigit()]


def test_enter_on_a_group_pages_its_members_from_the_store(tmp_path, core):
    ids, _ = insert(GIZMO, 24, secs_ago=600)              # 10 to 34 minutes ago
    insert("Sprocket jammed at %d rpm", 60, secs_ago=1)   # newer: the newest rows hold no Gizmo
    gid = fnv_id(GIZMO_FP)
    t = Term(tmp_path, cols=160, rows=40, core=core.url, extra_conf=CONF)
    t.wait_for("postgresql")
    t.send("7")
    t.wait_for(GIZMO_FP)
    t.send("/Gizmo\r")
    t.wait_for("1 shown of")
    t.send("\r")
    t.wait_for("group %s: 24 in the store's last 1h" % gid)
    t.wait_for("page 1 (more)  10/10 rows")
    assert len(member_rows(t)) == 10
    seen = set()
    for page, n in ((1, 10), (2, 10), (3, 4)):
        if page > 1:
            t.send("]")
            t.wait_for("page %d" % page)
            t.wait_for("%d/%d rows" % (n, n))
        seen |= {ln.split()[0] for ln in member_rows(t)}
    assert seen == set(ids)                               # every member, each once
    t.send(":filter error=%s\r" % gid[:4])
    t.wait_for("(more)  10/10 rows  sort: newest  group %s: 24 in the store's last 1h" % gid)
    assert {ln.split()[0] for ln in member_rows(t)} == set(ids[:10])   # the newest ten again
    bad = gid[:5] + ("0" if gid[5] != "0" else "1")
    t.send(":filter error=%s\r" % bad)
    t.wait_for("filter: error=%s: no error group has the id '%s'" % (bad, bad))
    t.send(":q\r")
    assert t.finish() == 0
