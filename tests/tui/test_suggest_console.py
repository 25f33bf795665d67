"""Did you mean, in the console (issue 37), in a real terminal (pexpect + pyte) against the
local stack (tests/stack, attune2): a misspelled `:` command, system or filter status is
refused on the status line with the closest known names; `:filter status=faild` is never
searched (no "0/0 rows" that reads as "no failures") and the filter in place stays.
"""
from test_live import Term, stack_env  # noqa: F401  (the fixture checks the stack env)


def status(t):
    return t.screen.display[-2].rstrip()


def test_misspelled_command_and_system(tmp_path):
    t = Term(tmp_path, cols=200)
    t.wait_for("postgresql ok")
    t.send(":wo")                                  # matched as it is typed
    assert status(t) == ":wo   workers", status(t)
    t.send("kers")
    assert status(t) == ":wokers   no such command (did you mean workers?)", status(t)
    t.send("\r")
    t.wait_for("(see ? for the list)")
    assert status(t) == "unknown command 'wokers' (did you mean workers?) (see ? for the list)", t.text()
    assert "Overview" in t.text()                  # still where it was
    t.send(":system atune2\r")
    t.wait_for("no system named")
    assert status(t) == "no system named 'atune2' (did you mean attune2?) in %s" % (tmp_path / "config"), \
        t.text()
    t.send("Q")
    assert t.finish() == 0


def test_filter_with_a_misspelled_status_is_refused(tmp_path):
    t = Term(tmp_path)
    t.wait_for("postgresql ok")
    t.send(":filter status=failed\r")
    t.wait_for("filter: status=failed")
    t.wait_for("13/13 rows")
    t.send(":filter status=faild\r")
    t.wait_for("did you mean")
    assert status(t) == "filter: no status 'faild' in attune (did you mean failed?)", t.text()
    t.pump(1.0)
    text = t.text()
    assert "0/0 rows" not in text and "status=faild" not in text, text
    assert "filter: status=failed" in text and "13/13 rows" in text, text   # the filter stays
    t.send("Q")
    assert t.finish() == 0
