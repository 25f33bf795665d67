"""One truth (issue 23): the same stack read through every view of the console and through
`snapshot --json` gives the same numbers — the fleet (level, failures per minute,
retryable, DLQ size, workers, WHY against `reasons`), and for each system the overview
(counts by status, DLQ size, failing rate, workers and unhealthy ones, queues), the
executions page, the queues, the DLQ and the error groups.

Three demo systems on fixture data that stands still while the test reads it (Attune with
its RabbitMQ broker and DLQ, Tasker, OpenAgents); the snapshots run with the console's
environment. Needs the stack env (tests/stack/stack.sh start DIR && . DIR/env).
"""
import json
import os
import re
import subprocess

import pytest

import stack_fixtures as fx
from test_lastknown import BIN, Term

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SYSTEMS = ["attune", "tasker", "openagents"]


@pytest.fixture(autouse=True)
def stack_env():
    if not os.environ.get("RD_STACK_DIR"):
        pytest.fail("needs the local stack env (tests/stack/stack.sh start DIR; . DIR/env)")
    # the known dataset: earlier suites (the simulator, action tests) leave other rows,
    # and heartbeats that keep ageing between the snapshot and the console's reading; the
    # broker too: its worker queues' 300 s TTL moves 180 messages into Attune's DLQ five
    # minutes after its last load, which may fall between the snapshot and the screen
    for name in ("attune2", "tasker", "openagents", "rabbit"):
        fx.reload(name)


def config(tmp_path):
    text = subprocess.run(["bash", os.path.join(ROOT, "scripts", "demo-config.sh"),
                           os.path.join(os.environ["RD_STACK_DIR"], "env")],
                          check=True, capture_output=True, text=True).stdout
    keep = [s for s in re.split(r"(?m)^(?=\[system )", text)
            if any(s.startswith('[system "%s"]' % n) for n in SYSTEMS)]
    assert len(keep) == len(SYSTEMS)
    p = tmp_path / "demo.conf"
    p.write_text("".join(keep))
    return p


def snap(tmp_path, conf, *args):
    env = {k: v for k, v in os.environ.items() if k.startswith("RD_")}
    env.update(PATH="/usr/bin:/bin", LANG="C.UTF-8", LC_ALL="C.UTF-8", TZ="UTC", HOME=str(tmp_path),
               XDG_CACHE_HOME=str(tmp_path / "cache"))
    p = subprocess.run([BIN, "--config", str(conf)] + list(args) + ["--json"], env=env,
                       capture_output=True, timeout=60)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    return json.loads(p.stdout)


def num(v):
    return "-" if v is None else str(v)


def cell_is(cell, full):
    """A screen cell against its id: whole, or cut with a middle "…" that keeps the id's
    head and tail (or an end "…" that keeps its head)."""
    if cell == full:
        return True
    head, sep, tail = cell.partition("\u2026")
    return bool(sep) and len(head) >= 4 and full.startswith(head) and full.endswith(tail) \
        and len(head) + len(tail) < len(full)


def same_ids(cells, ids):
    """Screen cells against ids, in order."""
    return len(cells) <= len(ids) and all(cell_is(c, i) for c, i in zip(cells, ids))


def screen_lines(t, title):
    t.wait_for(title)
    t.pump(1.5)
    return [l.rstrip() for l in t.screen.display]


def check_fleet(t, fleet):
    lines = screen_lines(t, "Fleet  3 systems")
    rows = {l.split()[1]: l for l in lines[3:3 + len(SYSTEMS)]}
    assert set(rows) == set(SYSTEMS), lines
    for r in fleet["systems"]:
        cells = re.split(r"\s{1,}", rows[r["system"]].strip())
        line = rows[r["system"]]
        assert cells[0] == r["level"], (line, r)
        rate = "-" if r["failing_per_min"] is None else "%.1f" % r["failing_per_min"]
        assert " %s " % rate in line, (line, r)
        assert " %s " % num(r["retry_eligible"]) in line, (line, r)
        assert re.search(r"\s%s\s+-\s" % r["dlq_size"], line), (line, r)
        assert "%s unh %s drn" % (r["workers_unhealthy"], r["workers_draining"]) in line, (line, r)
        why = ", ".join(r["reasons"]) or "-"
        assert line.endswith(why), (line, why)


def check_overview(t, one, name):
    lines = screen_lines(t, "Overview  %s" % name)
    text = "\n".join(lines)
    counts = next(l for l in lines if l.startswith("Executions by status"))
    at = lines.index(counts)
    got = dict(re.findall(r"([a-z_]+) (\S+)", lines[at + 1]))
    assert got == {c["status"]: str(c["count"]) for c in one["counts"]}, (lines[at + 1], one["counts"])
    dlq = num(one["dlq_total"])
    rate = "-" if one["failing_rate"] is None else "%.1f/min" % one["failing_rate"]
    m = re.search(r"failing now %s   DLQ size %s( \(([^)]*)\))?   " % (re.escape(rate), re.escape(dlq)), text)
    assert m, text
    if m.group(2):    # several DLQ sources: each one's share, adding up to the size
        shares = [int(x.split()[-1]) for x in m.group(2).split(" + ")]
        assert sum(shares) == one["dlq_total"], m.group(0)
    unhealthy = sum(1 for w in one["workers"] if w["health"] == "unhealthy")
    assert "workers %d: %d unhealthy" % (len(one["workers"]), unhealthy) in text, text
    assert "   queues %d: " % len(one["queues"]) in text, text


def check_execs(t, one):
    lines = screen_lines(t, "Executions  page 1")
    n = len(one["executions"])
    assert re.search(r"Executions  page 1%s  %d/%d rows" % (r" \(more\)" if one["executions_more"] else "", n, n),
                     lines[1]), lines[1]
    ids = [l.split()[0] for l in lines[3:3 + min(n, 20)]]
    assert ids and same_ids(ids, [e["id"] for e in one["executions"]]), (ids, one["executions"][:5])


def check_queues(t, q):
    lines = screen_lines(t, "Queues  ")
    qs = q["queues"]
    assert lines[1].startswith("Queues  %d shown of %d  %d DLQ" % (len(qs), len(qs), sum(x["is_dlq"] for x in qs))), lines[1]
    for x in qs[:20]:
        row = next(l for l in lines[3:] if l.split()[:1] == [x["name"]])
        assert row.split()[1] == num(x["depth"]), (row, x)


def check_dlq(t, d):
    lines = screen_lines(t, "DLQ  ")
    assert lines[1].startswith("DLQ  %d peeked of %s" % (len(d["dlq"]), num(d["dlq_total"]))), (lines[1], d["dlq_total"])
    ids = [l.split()[0] for l in lines[3:3 + min(len(d["dlq"]), 10)]]
    assert same_ids(ids, [e["id"] for e in d["dlq"]]), ids


def check_groups(t, g, one):
    lines = screen_lines(t, "Error groups")
    failed = sum(x["count"] for x in g["groups"])
    if g["groups_scope"] == "store":      # the store's failures of the window (every shipped system)
        assert failed == g["groups_failures"], g
        assert lines[1].startswith("Error groups  last %s: %d group%s of %d failures in the store"
                                   % (g["window"], len(g["groups"]), "" if len(g["groups"]) == 1 else "s",
                                      failed)), lines[1]
    else:
        assert g["groups_scope"] == "loaded", g
        assert lines[1].startswith("Error groups  %d groups of %d failed executions among the %d loaded"
                                   % (len(g["groups"]), failed, len(one["executions"]))), lines[1]
    for x, l in zip(g["groups"], lines[3:3 + len(g["groups"])]):
        assert l.split()[:2] == [str(x["count"]), str(x["retry_eligible"])], (l, x)


def test_every_view_agrees_with_the_snapshot(tmp_path):
    conf = config(tmp_path)
    fleet = snap(tmp_path, conf, "snapshot", "--view", "fleet")
    per = {}
    for name in SYSTEMS:
        per[name] = {v: snap(tmp_path, conf, "--system", name, "snapshot", *(["--view", v] if v else []))
                     for v in (None, "queues", "dlq", "groups")}
    t = Term(tmp_path, conf, cols=200, rows=40)
    try:
        check_fleet(t, fleet)
        for name in SYSTEMS:
            s = per[name]
            t.child.send(":system %s\r" % name)
            check_overview(t, s[None], name)
            t.child.send("2")
            check_execs(t, s[None])
            t.child.send("4")
            check_queues(t, s["queues"])
            t.child.send("5")
            check_dlq(t, s["dlq"])
            t.child.send("7")
            check_groups(t, s["groups"], s[None])
            t.child.send("0")
        t.quit()
    finally:
        if t.child.isalive():
            t.child.kill(9)
