"""Batches in the console (issue 35; src/ui/view_batches.c, batches.c, batchruns.c): a
whole-set retry made in the test is listed by `:batches` with the counts its record and the
journal give (compared with `redrive batch list`); P pauses it (the record says paused on
disk, the sending stops), S S resumes it to the end; a running batch never holds the
console (`:system alakai` while it sends, and it finishes); a second batch on the same
system is refused naming the running one; + in the progress dialog raises the rate, seen at
the core (requests per second) and in the record; quitting while it sends asks, and says
what becomes of it. Real store (attune2), a private reference core; 160x45 and 80x24.

Needs the stack env (tests/stack/stack.sh start DIR && . DIR/env); fails without it.
"""
import json
import os
import re
import subprocess
import time
from datetime import datetime

from lib.term import BIN, LiveTerm as Term
from test_set_retry import batch_list, core, insert, sent, stack_env  # noqa: F401


def record_lines(tmp_path, bid):
    path = tmp_path / "state" / "redrive" / "batches" / ("%s.batch" % bid)
    return [json.loads(ln) for ln in path.read_text().splitlines() if ln.startswith("{")]


def controls(tmp_path, bid):
    return [o for o in record_lines(tmp_path, bid) if "control" in o]


def cli(tmp_path, *args):
    env = {k: v for k, v in os.environ.items() if k.startswith("RD_")}
    env.update(PATH="/usr/bin:/bin", HOME=str(tmp_path), XDG_STATE_HOME=str(tmp_path / "state"))
    return subprocess.run([BIN, "--config", str(tmp_path / "config")] + list(args), env=env,
                          capture_output=True, text=True, timeout=60)


def start_batch(t, text, n):
    """R on the executions filtered by text: the typed count, the run starts."""
    t.send(":filter status=failed text=%s\r" % text)
    t.wait_for("text=%s" % text)
    t.send("R")
    t.wait_for("breakdown: %d eligible, 0 ineligible (not sent), 0 loop retries" % n, secs=40)
    if n > 100:                                   # over 100: no canary (dlg_canary.c), all at once
        t.send("c")
        t.send("0\r")
        t.wait_for("canary: none: everything is sent at once")
    t.send("y")
    t.send("%d\r" % n)
    t.wait_for("retry: ", secs=10)
    t.wait_for("x: abort the rest")


def core_times(core):
    """Seconds (epoch) of each retry the core received, in order."""
    out = []
    for a in core.actions():
        if a["action"] == "retry":
            out.append(datetime.strptime(a["time"], "%Y-%m-%dT%H:%M:%S.%fZ").timestamp())
    return sorted(out)


def b_paused_ok(tmp_path):
    [b] = batch_list(tmp_path)
    return b["done"]


def batch_row(t, bid):
    """The :batches row of batch bid (its 8-character id), split into cells."""
    for ln in t.screen.display:
        if ln.startswith(bid[:8] + " "):
            return ln.split()
    return None


def test_batches_lists_pauses_and_resumes(tmp_path, core):
    n = 60
    ids, _ = insert("Bview %d", n, exhausted_every=0)
    t = Term(tmp_path, cols=160, rows=45, core=core.url, extra_conf="page_size = 100\nrate_limit = 10\n")
    t.wait_for("postgresql")
    start_batch(t, "Bview", n)
    t.send("\x1b")                                    # on in the background
    t.wait_for("goes on in the background")
    t.send(":batches\r")
    t.wait_for("Batches  1, 1 running")
    [b] = batch_list(tmp_path)
    bid = b["id"]
    t.wait_until(lambda: batch_row(t, bid) is not None)
    row = batch_row(t, bid)
    assert row[1:4] == ["attune2", "retry", "running"], row
    assert row[9:11] == ["10/s*", "8"], row            # the system's rate_limit, marked; the window
    # the CLI sees it running and will not run it a second time
    assert batch_list(tmp_path)[0]["state"] == "running"
    p = cli(tmp_path, "batch", "resume", bid, "--yes")
    assert p.returncode == 1 and "batch %s: it is running (in this console or another redrive)" % bid in p.stderr, \
        p.stderr
    t.send("P")
    t.wait_for("succeeded (paused: S in :batches resumes it)")
    t.wait_until(lambda: batch_list(tmp_path)[0]["state"] == "paused", secs=10)
    assert controls(tmp_path, bid)[-1]["control"] == "paused"
    t.wait_until(lambda: (batch_row(t, bid) or [""] * 4)[3] == "paused", secs=10)
    time.sleep(1.0)
    paused_at = sum(sent(core).values())
    time.sleep(1.5)
    assert sum(sent(core).values()) == paused_at < n, "nothing sent while paused"
    # the row's counts are the record's and the journal's (redrive batch list)
    [b] = batch_list(tmp_path)
    t.send("\x12")                                    # ctrl-r: read again
    t.wait_until(lambda: batch_row(t, bid)[4] == "%d/%d" % (b["done"], n), secs=10)
    row = batch_row(t, bid)
    assert row[4:8] == ["%d/%d" % (b["done"], n), str(b["ok"]), str(b["failed"]), str(b["unknown"])], (row, b)
    assert b["ok"] == paused_at and b["failed"] == 0 and b["unknown"] == 0, b
    # Enter: its items grouped by state (not sent first after none failed), Back: the list
    t.send("\r")
    t.wait_for("Batch %s  retry on attune2, paused: %d ok, 0 failed, 0 unknown, %d not sent of %d"
               % (bid, paused_at, n - paused_at, n))
    t.wait_for("items grouped by state, failed first")
    items = [ln.split() for ln in t.screen.display if re.match(r"^(ok|not sent|failed|unknown) ", ln)]
    assert items and items[0][0] == "not", items[:3]   # "not sent" before "ok"
    # resume: S says what it sends, S again asks for the count typed (above confirm_over)
    left = n - paused_at
    t.send("S")
    t.wait_for("resume batch %s on attune2: %d to send at 10/s, 8 in flight? S again: type the count"
               % (bid[:8], left))
    t.send("S")
    t.wait_for("resume batch %s: type %d and Enter to send %d (Escape: not): " % (bid[:8], left, left))
    t.send("%d\r" % (left - 1))                        # a wrong count sends nothing
    t.wait_for("typed '%d', the count is %d: nothing sent" % (left - 1, left))
    time.sleep(1.0)
    assert sum(sent(core).values()) == paused_at and batch_list(tmp_path)[0]["state"] == "paused"
    t.send("S")
    t.send("S")
    t.wait_for("type %d and Enter to send %d" % (left, left))
    t.send("%d\r" % left)
    t.wait_for("batch %s on attune2 resumed: %d to send" % (bid, left), secs=15)
    t.wait_for("retry: %d of %d succeeded" % (n - paused_at, n - paused_at), secs=30)
    assert sent(core) == {i: 1 for i in ids}, "every execution once, across the pause"
    [b] = batch_list(tmp_path)
    assert (b["state"], b["ok"], b["done"]) == ("done", n, n), b
    assert controls(tmp_path, bid)[-1]["control"] == "open"
    t.send("h")                                       # back to the list
    t.wait_until(lambda: (batch_row(t, bid) or [""] * 4)[3] == "done", secs=10)
    t.send("Q")
    assert t.finish() == 0


def test_switch_systems_while_a_batch_runs_and_one_per_system(tmp_path, core):
    n = 60
    ids, _ = insert("Bswitch %d", n, exhausted_every=0)
    t = Term(tmp_path, cols=80, rows=24, core=core.url, extra_conf="page_size = 100\nrate_limit = 5\n")
    t.wait_for("postgresql")
    start_batch(t, "Bswitch", n)
    t.send("\x1b")
    t.wait_until(lambda: "x: abort the rest" not in t.text())
    t.send("R")                                       # a second batch on attune2: refused, named
    [b] = batch_list(tmp_path)
    t.wait_for("retry: batch %s is running on attune2: one batch per system" % b["id"])
    # nor from the CLI: another record of attune2 is not resumed while this one sends
    other = "0123456789abcdef"
    rec = tmp_path / "state" / "redrive" / "batches" / ("%s.batch" % other)
    head = dict(record_lines(tmp_path, b["id"])[0], batch=other)
    rec.write_text(json.dumps(head) + "\n" + json.dumps([ids[0], None, None, 0, None]) + "\n" + '{"total":1}\n')
    rec.chmod(0o600)
    p = cli(tmp_path, "batch", "resume", other, "--yes")
    assert p.returncode == 1 and ("batch %s is running on attune2: one batch per system" % b["id"]) in p.stderr, \
        p.stderr
    p = cli(tmp_path, "retry", "--status", "failed", "--filter", "Bswitch", "--yes")   # nor a new one
    assert p.returncode == 1 and ("redrive: nothing selected: batch %s is running on attune2: one batch per "
                                  "system" % b["id"]) in p.stderr, p.stderr
    assert len(batch_list(tmp_path)) == 2, "no record made for it"
    t.send(":system alakai\r")                        # the console is not held
    t.wait_until(lambda: "alakai" in t.screen.display[0], secs=10)
    assert "PROD" not in t.screen.display[0]
    t.wait_for("retry: %d of %d succeeded (batch %s on attune2)" % (n, n, b["id"][:8]), secs=30)
    assert sent(core) == {i: 1 for i in ids}
    b = [x for x in batch_list(tmp_path) if x["id"] == b["id"]][0]
    assert (b["state"], b["ok"]) == ("done", n), b
    t.send("Q")
    assert t.finish() == 0


def test_plus_raises_the_rate_at_the_core_and_quit_asks(tmp_path, core):
    n = 500
    ids, _ = insert("Brate %d", n, exhausted_every=0)
    t = Term(tmp_path, cols=160, rows=45, core=core.url, extra_conf="page_size = 600\nrate_limit = 5\n")
    t.wait_for("postgresql")
    start_batch(t, "Brate", n)
    t.wait_for("rate 5/s (+ -), 8 in flight at most (> <)")
    time.sleep(3.0)
    t_first = time.time()
    t.send("+")
    t.wait_for("rate 10/s (was 5/s) from now on, journaled")
    t.send("+")
    t.wait_for("rate 20/s (was 10/s) from now on, journaled")
    t.wait_for("rate 20/s (+ -)")
    t_change = time.time()
    time.sleep(3.5)
    times = core_times(core)
    before = [x for x in times if x < t_first]
    after = [x for x in times if t_change + 0.5 <= x < t_change + 3.0]
    rate_before = (len(before) - 1) / (before[-1] - before[0])
    rate_after = len(after) / 2.5
    print("measured at the core: %.2f/s before +, %.2f/s after" % (rate_before, rate_after))
    assert 3.5 <= rate_before <= 5.6, rate_before      # 5/s at the core
    assert 14 <= rate_after <= 21, rate_after          # 20/s at the core (never faster), at once
    [b] = batch_list(tmp_path)
    c = controls(tmp_path, b["id"])[-1]
    assert (c["control"], c["rate"], c["concurrency"]) == ("open", 20, 8), c
    t.send(">")                                        # the window: from its next part, recorded
    t.wait_for("batch %s: 16 in flight at most (was 8) from its next part, journaled" % b["id"][:8])
    t.wait_for("rate 20/s (+ -), 16 in flight at most (> <)")
    t.wait_until(lambda: controls(tmp_path, b["id"])[-1].get("concurrency") == 16)
    assert controls(tmp_path, b["id"])[-1]["rate"] == 20
    # quitting while it sends asks, and says what becomes of it
    t.send("\x1b")
    t.wait_for("goes on in the background")
    t.send("Q")
    t.wait_for("quit? 1 batch running (%s on attune2): it stops sending and stays open, resumable "
               "(:batches). y: quit, other: stay" % b["id"][:8])
    t.send("n")
    t.wait_for("not quitting")
    assert t.child.isalive()
    t.send("Q")
    t.wait_for("quit? 1 batch running")
    t.send("y")
    assert t.finish() == 0
    [b] = batch_list(tmp_path)
    assert b["state"] == "open" and b["done"] < n, b
    assert b["unknown"] <= 8, b                        # at most the window was in flight
    assert sum(sent(core).values()) == b["ok"] + b["unknown"] + b["failed"]
    # a resume keeps the rate it was left at: the CLI says so before it asks
    p = cli(tmp_path, "batch", "resume", b["id"], "--yes")
    assert p.returncode == 0, p.stderr
    assert "rate 20/s, 16 in flight at most" in p.stderr, p.stderr
    got = sent(core)                                   # never twice; the unknown ones held back
    assert max(got.values()) == 1 and len(got) >= n - b["unknown"], (len(got), b)


def test_resume_under_another_store_is_refused(tmp_path, core):
    """S S on a batch whose record names another store: refused, naming both, nothing sent,
    the batch stays paused (the check runs off the loop, as `batch resume`'s)."""
    n = 30
    ids, _ = insert("Bbound %d", n, exhausted_every=0)
    t = Term(tmp_path, cols=160, rows=45, core=core.url, extra_conf="page_size = 100\nrate_limit = 5\n")
    t.wait_for("postgresql")
    start_batch(t, "Bbound", n)
    t.send("\x1b")
    t.send(":batches\r")
    [b] = batch_list(tmp_path)
    bid = b["id"]
    t.wait_until(lambda: batch_row(t, bid) is not None)
    t.send("P")
    t.wait_for("succeeded (paused: S in :batches resumes it)")
    t.wait_until(lambda: batch_list(tmp_path)[0]["state"] == "paused", secs=10)
    path = tmp_path / "state" / "redrive" / "batches" / ("%s.batch" % bid)
    lines = path.read_text().splitlines(keepends=True)
    head = json.loads(lines[0])
    assert head["store"].startswith("postgresql system "), head
    lines[0] = json.dumps(dict(head, store="postgresql system 1 db elsewhere")) + "\n"
    path.write_text("".join(lines))
    sent_before = sum(sent(core).values())
    t.send("\x12")
    time.sleep(0.5)
    t.send("S")
    t.wait_for("resume batch %s on attune2" % bid[:8])
    t.send("S")
    left = n - b_paused_ok(tmp_path)
    t.wait_for("type %d and Enter" % left)
    t.send("%d\r" % left)
    t.wait_for("batch %s: refused, nothing sent: made against store postgresql system 1 db elsewhere; "
               "attune2's is %s" % (bid[:8], head["store"]), secs=15)
    time.sleep(1.0)
    assert sum(sent(core).values()) == sent_before, "nothing sent"
    assert batch_list(tmp_path)[0]["state"] == "paused"
    t.send("Q")
    assert t.finish() == 0
