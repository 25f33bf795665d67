"""The console's whole-set retry and the guard again at send time (issue 35,
src/ui/setretry.c over batchrun.h's check): before each part leaves, a child `redrive
batch check` reads its items again from the store (the console's loop never waits on the
store); what was handled between the selection and the confirmation (a successor made by
someone else, succeeded) is held back: never sent (the reference core's request log), its
reasons counted in the progress dialog, journaled as held. Real terminal (pexpect + pyte),
attune2, a private reference core.

Needs the stack env (tests/stack/stack.sh start DIR && . DIR/env); fails without it.
"""
import json

from setlib import actlib, batch_list, core, sent, stack_env  # noqa: F401
from test_set_retry import CONF, confirm_typed, insert
from lib.term import LiveTerm as Term


def test_items_handled_after_the_selection_are_held_back_at_send_time(tmp_path, core):
    ids, _ = insert("Flywheel wobbled at rpm %d", 20, exhausted_every=0)
    t = Term(tmp_path, cols=140, rows=36, core=core.url, extra_conf=CONF)
    t.wait_for("postgresql")
    t.send(":filter status=failed text=Flywheel\r")
    t.wait_for("Flywheel wobbled at rpm")
    t.send("R")
    t.wait_for("breakdown: 20 eligible, 0 ineligible (not sent), 0 loop retries", secs=20)
    # between the selection and the confirmation: 4 retried by someone else, 2 succeeded
    order = sorted(ids, key=int)
    sup, done = order[:4], order[4:6]
    actlib.admin_sql(
        "INSERT INTO execution (action_ref, status, retry_count, max_retries,"
        " original_execution, created, updated) SELECT action_ref, 'requested',"
        " retry_count + 1, max_retries, COALESCE(original_execution, id), now(), now()"
        " FROM execution WHERE id = ANY(%s::bigint[])", ([int(i) for i in sup],))
    actlib.admin_sql("UPDATE execution SET status = 'completed' WHERE id = ANY(%s::bigint[])",
                     ([int(i) for i in done],))
    confirm_typed(t, 20)
    t.wait_for("held back at send time, no longer eligible in the store: 4 superseded, "
               "2 now completed", secs=30)
    t.wait_for("retry: 14/14 done, 14 ok, 0 failed", secs=30)
    t.wait_for("retry: 14 of 14 succeeded; 6 held back at send time (no longer eligible)")
    got = sent(core)
    held = set(sup + done)
    assert sorted(got) == sorted(set(ids) - held) and set(got.values()) == {1}, got
    [b] = batch_list(tmp_path)
    assert (b["total"], b["ok"], b["held"], b["done"], b["state"]) == (20, 14, 6, 20, "done"), b
    journal = [json.loads(x) for x in
               (tmp_path / "state" / "redrive" / "journal.jsonl").read_text().splitlines()]
    assert sorted(j["targets"][0] for j in journal
                  if j.get("batch") == b["id"] and j.get("code") == "held") == sorted(held)
    t.send("n")
    t.send(":q\r")
    assert t.finish() == 0
