"""The console's whole-set retry (docs/error-groups.md, src/ui/setretry.c) in a real
terminal (pexpect + pyte) against the local stack and a private reference core server
whose request log says what was sent:
- `r` on a store error group retries the WHOLE group in the view's window, not the
  loaded rows (most of its failures are on later pages);
- `R` in the executions view retries everything its filter matches, every page;
- escape while the store is selecting stops it: nothing is sent, no batch is left.
The selection is made by a child `redrive retry --select-only` off the loop, the breakdown
comes first, the count is typed above confirm_over, and the batch is journaled and listed
by `redrive batch list` like a CLI batch.

Needs the stack env (tests/stack/stack.sh start DIR && . DIR/env); fails without it.
"""
import json
from collections import Counter

from setlib import actlib, batch_files, batch_list, core, escape_while_selecting, sent, stack_env  # noqa: F401
from lib.term import LiveTerm as Term

PAGE = 10
CONF = "page_size = %d\nrate_limit = 200\n" % PAGE
GIZMO = "Gizmo exploded on shard %d"
GIZMO_FP = "Gizmo exploded on shard <n>"


def insert(error, n, secs_ago=1, exhausted_every=10):
    """n failed executions with error ERROR % g, created secs_ago + g seconds ago; their ids
    and the ids of the exhausted ones (retry_count 3 of 3: ineligible)."""
    rows = actlib.admin_sql(
        "INSERT INTO execution (action, action_ref, config, env_vars, executor, status, result, created,"
        " updated, retry_count, max_retries, worker, started_at)"
        " SELECT x.action, x.action_ref, x.config, x.env_vars, x.executor, 'failed',"
        " jsonb_build_object('error', format(%s, g)), now() - make_interval(secs => %s + g), now(),"
        " CASE WHEN %s > 0 AND g %% %s = 0 THEN 3 ELSE 0 END, 3, x.worker, now()"
        " FROM generate_series(1, %s) g, (SELECT * FROM execution WHERE id = 2) x"
        " RETURNING id, retry_count", (error.replace("%d", "%s"), secs_ago, exhausted_every,
                                       max(exhausted_every, 1), n))
    return [str(r[0]) for r in rows], [str(r[0]) for r in rows if r[1] == 3]


def confirm_typed(t, n):
    t.wait_for("more than 10: confirm by typing the count")
    t.send("y")
    t.wait_for("type %d and Enter to retry %d" % (n, n))
    t.send("%d\r" % n)


def test_group_retry_sends_the_whole_group_in_the_window(tmp_path, core):
    ids, bad = insert(GIZMO, 24)                        # 24 in the last hour, 2 exhausted
    old, _ = insert(GIZMO, 4, secs_ago=7200, exhausted_every=0)   # outside the 1h window
    t = Term(tmp_path, cols=140, rows=36, core=core.url, extra_conf=CONF)
    t.wait_for("postgresql")
    t.send("7")
    t.wait_for(GIZMO_FP)
    t.send("/Gizmo\r")
    t.wait_for("1 shown of")
    row = [ln for ln in t.screen.display if GIZMO_FP in ln][0]
    assert row.split()[:3] == [fnv_id(GIZMO_FP), "24", "22"], row   # its id; the store's count: 24, 22 eligible
    t.send("r")
    t.wait_for("breakdown: 22 eligible, 2 ineligible (not sent), 0 loop retries", secs=20)
    t.wait_for("selected by the store: group=%s since=3600s" % GIZMO_FP)
    t.wait_for("%s: not sent: budget exhausted (3/3 retries)" % bad[0])
    assert sent(core) == Counter()                       # the breakdown first: nothing yet
    confirm_typed(t, 22)
    t.wait_for("retry: 22/22 done, 22 ok, 0 failed", secs=30)
    t.wait_for("retry: 22 of 22 succeeded")
    got = sent(core)
    assert sorted(got) == sorted(set(ids) - set(bad)), "exactly the eligible ids of the window"
    assert set(got.values()) == {1}, "none twice"
    assert not set(old) & set(got)
    [b] = batch_list(tmp_path)
    assert (b["system"], b["total"], b["done"], b["ok"], b["state"]) == ("attune2", 22, 22, 22, "done"), b
    assert b["selection"] == "group=%s since=3600s" % GIZMO_FP
    assert batch_files(tmp_path) == [b["id"] + ".batch"]
    t.send("n")
    t.send(":q\r")
    assert t.finish() == 0


def test_filter_retry_covers_every_page(tmp_path, core):
    ids, bad = insert("Widget jammed in slot %d", 23)
    other, _ = insert("Sprocket slipped %d", 6, exhausted_every=0)
    t = Term(tmp_path, cols=140, rows=36, core=core.url, extra_conf=CONF)
    t.wait_for("postgresql")
    t.send(":filter status=failed text=Widget\r")
    t.wait_for("Widget jammed in slot")
    t.send("R")
    t.wait_for("breakdown: 21 eligible, 2 ineligible (not sent), 0 loop retries", secs=20)
    t.wait_for("selected by the store: status=failed text=Widget, 23 read from 3 pages")
    confirm_typed(t, 21)
    t.wait_for("retry: 21/21 done, 21 ok, 0 failed", secs=30)
    got = sent(core)
    assert sorted(got) == sorted(set(ids) - set(bad)) and set(got.values()) == {1}
    assert not set(other) & set(got)
    [b] = batch_list(tmp_path)
    assert (b["total"], b["ok"], b["selection"]) == (21, 21, "status=failed text=Widget"), b
    journal = [json.loads(x) for x in (tmp_path / "state" / "redrive" / "journal.jsonl").read_text().splitlines()]
    items = [j for j in journal if j.get("batch") == b["id"] and j.get("code") != "pending"]
    assert sorted(j["item"] for j in items) == list(range(21))
    t.send("n")
    t.send(":q\r")
    assert t.finish() == 0


def test_escape_while_selecting_sends_nothing(tmp_path, core):
    insert("Widget jammed in slot %d", 15)
    t = Term(tmp_path, cols=140, rows=36, core=core.url, extra_conf=CONF)
    t.wait_for("postgresql")
    t.send("2R")                                          # no filter: never the whole store
    t.wait_for("retry: retry everything matching a filter: pick a status (f) or an error (F) first")
    t.send(":retry-all 6x\r")
    t.wait_for("retry-all: the window is a duration (30m, 6h, 2d), not '6x'")
    t.send(":filter status=failed text=Widget\r")
    t.wait_for("Widget jammed in slot")
    escape_while_selecting(t, tmp_path, core, "RD_PG_ADMIN_DSN_ATTUNE2", "attune.execution")   # the store hangs
    # selected again, then cancelled at the confirmation: the staged record goes too
    t.send("R")
    t.wait_for("breakdown: 14 eligible, 1 ineligible (not sent), 0 loop retries", secs=20)
    t.send("n")
    t.wait_for("retry cancelled: nothing was sent")
    assert sent(core) == Counter() and batch_files(tmp_path) == []
    t.send(":q\r")
    assert t.finish() == 0


def fnv_id(fp):
    """The group's id (core/groupid.c): the first 6 hex digits of FNV-1a 64 of the fingerprint."""
    h = 0xcbf29ce484222325
    for b in fp.encode():
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return ("%016x" % h)[:6]
