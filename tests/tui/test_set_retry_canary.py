"""The console's whole-set retry watched by its outcome (issue 35; src/ui/dlg_canary.c) in a
real terminal (pexpect + pyte) against the local stack and a private reference core server
whose retries are made to end (POST /_coresrv/outcome):
- a set over 100 is offered a canary (batch_canary, `c` changes it, 0 skips it): with the
  core's retries failing again the canary's N are sent, their outcome read from the store,
  and the batch is paused with the CLI's reason (`redrive batch show` says it), the rest
  not sent; with the retries succeeding it goes on and finishes;
- the breaker: with no canary, once 20 outcomes are in and more than half fail again the
  rest is not sent and the batch is paused.
The outcome is read by a child `redrive batch show ID --json` (never on the loop).

Needs the stack env (tests/stack/stack.sh start DIR && . DIR/env); fails without it.
"""
import json
import os
import re
import subprocess

from setlib import actlib, batch_list, core, sent, stack_env  # noqa: F401
from lib.term import BIN, LiveTerm as Term
from test_set_retry import insert

CONF = "page_size = 50\nrate_limit = 200\nbatch_canary = 5\nbatch_canary_wait = 30s\n"


def outcome(c, result):
    st, body = actlib.http_json("POST", c.url + "/_coresrv/outcome?result=" + result)
    assert st == 200 and body == {"outcome": result}, body


def show(tmp_path, bid):
    env = {k: v for k, v in os.environ.items() if k.startswith("RD_")}
    env.update(PATH="/usr/bin:/bin", HOME=str(tmp_path), XDG_STATE_HOME=str(tmp_path / "state"))
    p = subprocess.run([BIN, "--config", str(tmp_path / "config"), "batch", "show", bid, "--json"],
                       env=env, capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def box(t):
    """The dialog box's lines, inside its border (the whole box compared, not a piece)."""
    rows = t.screen.display
    top = next(i for i, r in enumerate(rows) if "lqqqq" in r)
    x0 = rows[top].index("lqqqq")
    x1 = rows[top].index("k", x0)
    out = []
    for r in rows[top + 1:]:
        if r[x0] == "m":
            return out
        out.append(r[x0 + 2:x1].rstrip())       # the box's lines start 2 in
    raise AssertionError("no box end:\n" + t.text())


def select(t, text, n):
    """The filter's failures selected; the confirmation up with n to send."""
    t.wait_for("postgresql")
    t.send(":filter status=failed text=%s\r" % text)
    t.wait_for(text)
    t.send("R")
    t.wait_for("breakdown: %d eligible, 0 ineligible (not sent), 0 loop retries" % n, secs=30)


def confirm_typed(t, n):
    t.send("y")
    t.wait_for("type %d and Enter to retry %d" % (n, n))
    t.send("%d\r" % n)


def test_canary_pauses_when_retries_fail_again(tmp_path, core):
    insert("Gizmo jammed %d", 120, exhausted_every=0)
    outcome(core, "failed_again")
    t = Term(tmp_path, cols=260, rows=40, core=core.url, extra_conf=CONF)
    select(t, "Gizmo", 120)
    t.wait_for("canary: 5 sent first, their outcome waited for up to 30s;")
    t.wait_for("  the rest only if at most 50% fail again (c: change, 0: none)")
    t.wait_for("breaker: pauses the batch once 20 outcomes are in and more than 50% fail again")
    t.send("c")
    t.wait_for("canary: how many first? _   (Enter: set, 0: none, Escape: back)")
    t.send("120\r")                                  # not fewer than the set: refused
    t.wait_for("canary: 120 is not fewer than the 120 to send (0: none)")
    t.send("\x7f\x7f\x7f7\r")
    t.wait_for("canary: 7 sent first, their outcome waited for up to 30s")
    assert sent(core) == {}
    confirm_typed(t, 120)
    reason = ("canary: 7 of 7 finished retries failed again in the same error group (100% > 50%): "
              "0 succeeded, 7 failed again, 0 new errors, 0 running, 0 not yet in the store")
    t.wait_for(" paused: " + reason, secs=40)
    [b] = batch_list(tmp_path)
    assert "retry: batch %s paused: %s" % (b["id"], reason) in t.text(), t.text()
    t.wait_for("redrive batch resume %s asks again" % b["id"])
    assert box(t) == [
        "retry: 7/120 done, 7 ok, 0 failed (paused)",
        "[##" + "." * 38 + "]   5%  ETA - (paused)",
        "batch %s  0 not sent (ineligible or loop retries); resumable: redrive b\u2026" % b["id"],
        "batch %s paused:" % b["id"],
        "  canary: 7 of 7 finished retries failed again in the same error group (100% >",
        "  50%): 0 succeeded, 7 failed again, 0 new errors, 0 running, 0 not yet in the",
        "  store",
        "the rest not sent: redrive batch show %s" % b["id"],
        "redrive batch resume %s asks again" % b["id"],
        "",
        "Escape/n: close",
    ], "\n".join(box(t))
    got = sent(core)
    assert len(got) == 7 and set(got.values()) == {1}, got
    s = show(tmp_path, b["id"])
    assert (s["state"], s["pause_reason"], s["sent"], s["ok"], s["total"]) == ("paused", reason, 7, 7, 120), s
    assert s["outcome"]["failed_again"] == 7
    t.send("\x1b")
    t.send(":q\r")
    assert t.finish() == 0


def test_canary_goes_on_when_retries_succeed(tmp_path, core):
    ids, _ = insert("Widget bent %d", 110, exhausted_every=0)
    outcome(core, "succeeded")
    t = Term(tmp_path, cols=260, rows=40, core=core.url, extra_conf=CONF)
    select(t, "Widget", 110)
    t.wait_for("canary: 5 sent first")
    confirm_typed(t, 110)
    t.wait_for("canary: 0 of 5 finished retries failed again in the same error group (0% <=", secs=40)
    t.wait_for("retry: 110 of 110 succeeded", secs=60)
    [b] = batch_list(tmp_path)
    t.wait_for("  110 succeeded, 0 failed again, 0 new errors, 0 running, 0 not yet in the store", secs=20)
    assert box(t) == [
        "retry: 110/110 done, 110 ok, 0 failed",
        "[" + "#" * 40 + "] 100%  ETA done",
        "batch %s  0 not sent (ineligible or loop retries); resumable: redrive b\u2026" % b["id"],
        "canary: 0 of 5 finished retries failed again in the same error group (0% <=",
        "  50%): 5 succeeded, 0 failed again, 0 new errors, 0 running, 0 not yet in the",
        "  store: going on",
        "outcome so far (the store):",
        "  110 succeeded, 0 failed again, 0 new errors, 0 running, 0 not yet in the store",
        "",
        "Escape/n: close",
    ], "\n".join(box(t))
    assert "paused" not in t.text()
    got = sent(core)
    assert sorted(got) == sorted(ids) and set(got.values()) == {1}
    s = show(tmp_path, b["id"])
    assert (s["state"], s["sent"], s["ok"], s["pause_reason"]) == ("done", 110, 110, None), s
    t.send("\x1b")
    t.send(":q\r")
    assert t.finish() == 0


def test_breaker_pauses_mid_batch(tmp_path, core):
    insert("Sprocket sheared %d", 150, exhausted_every=0)
    outcome(core, "failed_again")
    t = Term(tmp_path, cols=260, rows=40, core=core.url,
             extra_conf="page_size = 50\nrate_limit = 10\nbatch_canary = 5\n")
    select(t, "Sprocket", 150)
    t.send("c")
    t.send("0\r")                                    # the canary skipped: the breaker alone
    t.wait_for("canary: none: everything is sent at once (c: send some first)")
    confirm_typed(t, 150)
    t.wait_for("outcome so far (the store):", secs=20)
    t.wait_for("retry: batch ", secs=60)
    [b] = batch_list(tmp_path)
    s = show(tmp_path, b["id"])
    n = len(sent(core))
    assert s["state"] == "paused" and s["sent"] == n and 20 <= n < 150, (n, s)
    assert re.fullmatch(r"breaker: (\d+) of \1 finished retries failed again in the same error group "
                        r"\(100% > 50%\): 0 succeeded, \1 failed again, 0 new errors, \d+ running, \d+ not yet "
                        r"in the store", s["pause_reason"]), s
    assert int(s["pause_reason"].split()[1]) >= 20
    assert "retry: batch %s paused: %s" % (b["id"], s["pause_reason"]) in t.text(), t.text()
    assert "batch %s paused:" % b["id"] in t.text()
    assert "the rest not sent: redrive batch show %s" % b["id"] in t.text()
    t.send("\x1b")
    t.send(":q\r")
    assert t.finish() == 0


def test_canary_without_an_outcome_in_time_pauses(tmp_path, core):
    """The core's retries left running (its default): nothing finished within the wait."""
    insert("Gadget stuck %d", 105, exhausted_every=0)
    t = Term(tmp_path, cols=260, rows=40, core=core.url,
             extra_conf="page_size = 50\nrate_limit = 200\nbatch_canary = 4\nbatch_canary_wait = 3s\n")
    select(t, "Gadget", 105)
    t.wait_for("canary: 4 sent first, their outcome waited for up to 3s;")
    confirm_typed(t, 105)
    t.wait_for("canary: 4 sent: waiting up to 3s for their outcome in the store:", secs=20)
    reason = ("canary: no outcome of its 4 retries within 3s (0 succeeded, 0 failed again, 0 new errors, "
              "4 running, 0 not yet in the store)")
    t.wait_for(" paused: " + reason, secs=30)
    [b] = batch_list(tmp_path)
    s = show(tmp_path, b["id"])
    assert (s["state"], s["pause_reason"], s["sent"]) == ("paused", reason, 4), s
    assert len(sent(core)) == 4
    t.send("\x1b")
    t.send(":q\r")
    assert t.finish() == 0


def test_abort_while_the_canary_is_awaited(tmp_path, core):
    insert("Gadget stuck %d", 105, exhausted_every=0)
    t = Term(tmp_path, cols=260, rows=40, core=core.url, extra_conf=CONF)
    select(t, "Gadget", 105)
    confirm_typed(t, 105)
    t.wait_for("canary: 5 sent: waiting up to 30s for their outcome in the store:", secs=20)
    t.wait_for("  0 succeeded, 0 failed again, 0 new errors, 5 running, 0 not yet in the store", secs=20)
    [b] = batch_list(tmp_path)
    assert b["state"] == "running", b                         # the record's lock kept through the wait
    t.send("x")
    t.wait_for("retry: 5 of 105 succeeded (the rest not sent: redrive batch resume, or S in :batches)")
    t.wait_for("Escape/n: close")
    [b] = batch_list(tmp_path)
    assert (b["state"], b["done"]) == ("open", 5), b           # stopped, not paused
    assert len(sent(core)) == 5
    t.send("\x1b")
    t.send(":q\r")
    assert t.finish() == 0


def test_canary_and_breaker_go_on_with_the_dialog_put_away(tmp_path, core):
    """The canary and the breaker are the batch's (src/ui/batchruns.c), not the dialog's:
    escape as the canary is sent, and its verdict still pauses the batch
    with the reason, written by the run with no dialog left."""
    insert("Cog slipped %d", 120, exhausted_every=0)
    outcome(core, "failed_again")
    t = Term(tmp_path, cols=260, rows=40, core=core.url, extra_conf=CONF)
    select(t, "Cog", 120)
    t.wait_for("canary: 5 sent first, their outcome waited for up to 30s;")
    confirm_typed(t, 120)
    t.send("\x1b")                                   # at once: the canary's part sent, then its wait
    [b] = batch_list(tmp_path)
    reason = ("canary: 5 of 5 finished retries failed again in the same error group (100% > 50%): "
              "0 succeeded, 5 failed again, 0 new errors, 0 running, 0 not yet in the store")
    t.wait_for("retry: batch %s paused: canary: 5 of 5" % b["id"], secs=40)   # the header's last word
    assert "Escape/n: close" not in t.text() and "canary: 5 sent" not in t.text(), t.text()   # no dialog
    s = show(tmp_path, b["id"])
    assert (s["state"], s["pause_reason"], s["sent"], s["total"]) == ("paused", reason, 5, 120), s
    assert len(sent(core)) == 5
    t.send(":q\r")
    assert t.finish() == 0


def test_breaker_trips_with_the_dialog_put_away(tmp_path, core):
    """The breaker watches the batch, not the dialog: put away at once, it still pauses."""
    insert("Ratchet stuck %d", 150, exhausted_every=0)
    outcome(core, "failed_again")
    t = Term(tmp_path, cols=260, rows=40, core=core.url,
             extra_conf="page_size = 50\nrate_limit = 10\nbatch_canary = 5\n")
    select(t, "Ratchet", 150)
    t.send("c")
    t.send("0\r")                                    # the canary skipped: the breaker alone
    t.wait_for("canary: none: everything is sent at once (c: send some first)")
    confirm_typed(t, 150)
    t.send("\x1b")
    t.wait_for("the retry batch goes on in the background: :batch shows it")
    [b] = batch_list(tmp_path)
    t.wait_for("retry: batch %s paused: breaker: " % b["id"], secs=60)
    assert "Escape/n: close" not in t.text() and "outcome so far" not in t.text(), t.text()   # no dialog
    s = show(tmp_path, b["id"])
    n = s["sent"]
    assert s["state"] == "paused" and 20 <= n < 150, (n, s)
    assert s["pause_reason"].startswith("breaker: ") and int(s["pause_reason"].split()[1]) >= 20, s
    t.send(":q\r")
    assert t.finish() == 0


def test_batch_canary_zero_offers_none(tmp_path, core):
    """batch_canary = 0 in the config says no canary, in the console as on the CLI: a set
    over 100 is not offered one (not set, the console offers 10)."""
    insert("Flange cracked %d", 105, exhausted_every=0)
    t = Term(tmp_path, cols=260, rows=40, core=core.url,
             extra_conf="page_size = 50\nrate_limit = 200\nbatch_canary = 0\n")
    select(t, "Flange", 105)
    t.wait_for("y: confirm", secs=10)
    lines = box(t)
    assert not [l for l in lines if "canary" in l], "\n".join(lines)
    t.send("\x1b")
    t.send(":q\r")
    assert t.finish() == 0
    assert not sent(core), sent(core)
