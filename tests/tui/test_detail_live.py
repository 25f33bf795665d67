"""The detail pane (issue 24, "one execution in full") in a real terminal against the
local stack (attune2): `d` on an execution row, Enter on a chain attempt and `:detail ID`
open it; the hostile error is defused, the parameters and result are pretty-printed JSON,
the pane scrolls, and `c` copies the parameters (OSC 52 with clipboard = osc52)."""
import base64
import re

from lib.term import LiveTerm as Term

import stack_fixtures as fx

HOSTILE_SHOWN = "boom \u241b[2J\u241b]52;c;cHduZWQ=\u2407 after-clear\u240dSPOOFED LINE\u2408\u2408\u2408"


def title(t):
    m = re.search(r"Execution (\S+)  lines (\d+)-(\d+) of (\d+)", t.text())
    assert m, t.text()
    return m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4))


def assert_no_escape(raw):
    # the hostile error's OSC 52 (a clipboard write) never reaches the terminal
    assert b"\x1b]52;c;cHduZWQ=" not in raw
    assert "\u202e".encode() not in raw


def test_d_on_a_row_shows_the_execution_in_full(tmp_path):
    fx.reload("attune2")
    t = Term(tmp_path, cols=160, rows=24)
    t.wait_for("postgresql ok")
    t.send("2")
    t.wait_for("Executions")
    t.send("#13\r")                  # the page that starts at 13: the cursor on it
    t.wait_for("core.http_request")
    t.pump(0.5)
    t.send("d")
    t.wait_for("lines 1-")
    xid, first, last, total = title(t)
    assert xid == "13" and first == 1 and total > last, t.text()
    text = t.text()
    assert "execution 13  core.http_request  status failed" in text
    assert "chain position: attempt 1 of 2 allowed  chain root 13, 1 attempt in all" in text
    assert "worker 1" in text and "times (UTC):" in text and "  created_at " in text
    rows = t.screen.display
    err = rows.index(next(r for r in rows if r.startswith("error:")))
    assert rows[err + 1].startswith(HOSTILE_SHOWN), rows[err + 1]
    t.send("G")                      # the end: the parameters and the result, pretty-printed
    t.pump(0.3)
    _, first2, last2, total2 = title(t)
    assert last2 == total2 and first2 > 1, t.text()
    text = t.text()
    assert "parameters:" in text and '  "timeout": 600' in text and '    "n": 13' in text, text
    assert "result:" in text and '  "error": "boom' in text, text
    t.send("g")
    t.pump(0.3)
    assert title(t)[1] == 1
    t.send("j")                      # a line down
    t.pump(0.3)
    assert title(t)[1:3] == (2, last + 1), t.text()
    t.send("\x06")                   # ctrl-f: a page down, at most to the end
    t.pump(0.3)
    rows = last - first + 1
    assert title(t)[1] == min(2 + rows, total - rows + 1), t.text()
    assert_no_escape(t.raw)
    t.send("Q")
    assert t.finish() == 0


def test_enter_on_a_chain_attempt_and_copy(tmp_path):
    fx.reload("attune2")
    t = Term(tmp_path, cols=120, rows=30, extra_conf="clipboard = osc52\n")
    t.wait_for("postgresql ok")
    t.send(":chain 13\r")
    t.wait_for("verdict:")
    t.send("\r")                     # Enter on the attempt: the detail pane
    t.wait_for("lines 1-")
    assert title(t)[0] == "13"
    before = len(t.raw)
    t.send("c")
    t.wait_for("copied the payload to the clipboard (OSC 52)")
    want = base64.b64encode(b'{"args":{"n":13},"timeout":600}')
    assert b"\x1b]52;c;" + want + b"\x07" in bytes(t.raw[before:]), bytes(t.raw[before:])[:300]
    t.send("q")                      # back to the chain
    t.wait_for("verdict:")
    t.send(":detail 999999\r")       # no such execution: said, nothing else
    t.wait_for("Execution 999999: no such execution in the store")
    assert_no_escape(t.raw)
    t.send("Q")
    assert t.finish() == 0
