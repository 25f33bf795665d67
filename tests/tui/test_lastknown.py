"""Start-up order and the last-known snapshot (issue 12): the frame is painted before any
answer from a store, the last-known data (from $XDG_CACHE_HOME/redrive/) follows, marked
"stale (cached HH:MM)" until the first refresh answers, and a bad cache file is ignored
with a note, never a crash.

The console under pexpect + pyte against the local stack (attune1 in PostgreSQL); a "slow
source" is a TCP listener that accepts connections and never answers.
Needs the stack env (tests/stack/stack.sh start DIR && . DIR/env); fails without it.
"""
import glob
import os
import re
import socket
import stat
import time

import pytest


from lib.term import Term as BaseTerm

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BIN = os.environ.get("RD_BIN", os.path.join(ROOT, "build", "src", "cli", "redrive"))
SYSTEM = "lk-attune"


@pytest.fixture(autouse=True)
def stack_env():
    if not os.environ.get("RD_PG_DSN_ATTUNE1"):
        pytest.fail("needs the local stack env (tests/stack/stack.sh start DIR; . DIR/env)")


@pytest.fixture
def silent():
    """A PostgreSQL address that accepts and never answers."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    s.listen(16)
    yield "host=127.0.0.1 port=%d dbname=attune1 user=redrive_ro connect_timeout=60" % s.getsockname()[1]
    s.close()


def write_config(tmp_path, store):
    conf = tmp_path / "config"
    conf.write_text('[system "%s"]\nprofile = attune\nstore = %s\ncore = http://127.0.0.1:1\n'
                    'auth = bearer\ntoken = env:RD_CORE_TOKEN\n' % (SYSTEM, store))
    return conf


class Term(BaseTerm):
    """The harness's terminal, started without --system and with a cache dir of the test's
    own; wait_for returns when the text appeared (seconds since the start)."""
    QUIT = "Q"
    WAIT_S = 10

    def __init__(self, tmp_path, conf, cols=120, rows=30):
        super().__init__(conf, env={"XDG_CACHE_HOME": str(tmp_path / "cache")}, cols=cols, rows=rows,
                         home=tmp_path)


def cache_files(tmp_path):
    return sorted(glob.glob(str(tmp_path / "cache" / "redrive" / "*.json")))


def fill_cache(tmp_path, silent_store, content, mode=0o600):
    """A cache file at the right name: made by a run that writes one, then replaced."""
    conf = write_config(tmp_path, os.environ["RD_PG_DSN_ATTUNE1"])
    t = Term(tmp_path, conf)
    t.wait_for("completed")
    end = time.time() + 10
    while not cache_files(tmp_path) and time.time() < end:
        t.pump(0.1)
    t.quit()
    (path,) = cache_files(tmp_path)
    os.unlink(path)
    if content is not None:
        with open(path, "wb") as f:
            f.write(content)
        os.chmod(path, mode)
    return write_config(tmp_path, silent_store), path


def test_cache_round_trip(tmp_path, silent):
    conf = write_config(tmp_path, os.environ["RD_PG_DSN_ATTUNE1"])
    t = Term(tmp_path, conf)
    t.wait_for("completed")
    end = time.time() + 10
    while not cache_files(tmp_path) and time.time() < end:
        t.pump(0.1)
    files = cache_files(tmp_path)
    assert len(files) == 1, files
    live_ids = set(re.findall(r"\b\d{1,6}\b", t.text()))
    t.child.send("2")                 # the executions view: ids to find again
    t.wait_for("Executions")
    t.pump(0.5)
    # id, name, status, attempts of the first rows: the later columns are ages and ETAs,
    # which move with the clock between the two runs
    def row_keys(lines):
        return [" ".join(l.split()[:4]) for l in lines]
    first_rows = row_keys(t.screen.display[3:8])
    assert all(first_rows), first_rows
    t.quit()
    path = files[0]
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode) == 0o700
    assert os.path.basename(path).startswith(SYSTEM + "-")
    with open(path, "rb") as f:
        body = f.read()
    head, _, js = body.partition(b"\n")
    assert head.startswith(b"redrive-cache 1 ") and head.endswith(b" " + SYSTEM.encode()), head
    assert b'"executions"' in js and b'"counts"' in js
    # never the sources (their errors may quote an address), the DLQ, a token or the store
    for never in (b'"sources"', b'"dlq"', os.environ["RD_CORE_TOKEN"].encode(), b"redrive_ro", b"dbname"):
        assert never not in body, never
    assert live_ids

    # same config file, the store now silent: the cached rows, marked stale
    write_config(tmp_path, silent)
    t = Term(tmp_path, conf)
    t.wait_for("stale (cached ")
    hhmm = re.search(r"stale \(cached (\d\d:\d\d)\)", t.text()).group(1)
    assert hhmm == time.strftime("%H:%M", time.gmtime(float(head.split()[2])))   # TZ=UTC
    t.wait_for("completed")           # the overview's counts from the cache
    assert "postgresql ..." in t.screen.display[0], t.screen.display[0]
    t.child.send("2")
    t.wait_for("Executions")
    t.pump(0.5)
    assert row_keys(t.screen.display[3:8]) == first_rows, (t.screen.display[3:8], first_rows)
    assert "stale (cached" in t.screen.display[0]
    t.quit()
    # nothing live arrived: the cache is left as it was
    with open(path, "rb") as f:
        assert f.read() == body


def test_stale_mark_goes_with_the_first_refresh(tmp_path):
    conf = write_config(tmp_path, os.environ["RD_PG_DSN_ATTUNE1"])
    t = Term(tmp_path, conf)
    t.wait_for("completed")
    end = time.time() + 10
    while not cache_files(tmp_path) and time.time() < end:
        t.pump(0.1)
    t.quit()
    assert cache_files(tmp_path)
    t = Term(tmp_path, conf)
    t.wait_for("completed")
    t.wait_for("postgresql ok")
    t.pump(0.5)
    assert "stale" not in t.screen.display[0], t.screen.display[0]
    t.quit()


def test_first_frame_before_a_silent_store_answers(tmp_path, silent):
    conf = write_config(tmp_path, silent)
    t = Term(tmp_path, conf)
    took = t.wait_for("redrive " + SYSTEM, secs=5)
    t.pump(1.0)
    top = t.screen.display[0]
    assert "postgresql ..." in top, top    # still waiting for its first answer
    assert "stale" not in top, top          # no cache: nothing marked
    assert took < 5
    t.quit()


HOSTILE = [
    ("garbage", b"\x00\xff\x1b[2J\x1b]0;pwned\x07 not a cache\n", "not a redrive cache file"),
    ("no header", b'{"executions": []}\n', "not a redrive cache file"),
    ("bad time", b"redrive-cache 1 nan " + SYSTEM.encode() + b"\n{}", "no valid time"),
    ("other system", b"redrive-cache 1 1700000000.000 other\n{}", "written for another system"),
    ("malformed json", b"redrive-cache 1 1700000000.000 " + SYSTEM.encode() + b"\n{\"executions\": [",
     "malformed JSON"),
    ("not an object", b"redrive-cache 1 1700000000.000 " + SYSTEM.encode() + b"\n[1,2]", "JSON is not an object"),
    ("nul inside", b"redrive-cache 1 1700000000.000 " + SYSTEM.encode() + b"\n{\x00}", "not a redrive cache"),
]


@pytest.mark.parametrize("content,why", [(c, w) for _, c, w in HOSTILE], ids=[n for n, _, _ in HOSTILE])
def test_bad_cache_is_ignored_with_a_note(tmp_path, silent, content, why):
    conf, _ = fill_cache(tmp_path, silent, content)
    t = Term(tmp_path, conf, cols=200)
    t.wait_for("last-known snapshot ignored: " + why)
    assert "stale" not in t.screen.display[0]
    for seq in (b"\x1b]0;", b"\x07"):
        assert seq not in bytes(t.raw), seq
    t.quit()


def test_cache_writable_by_others_or_not_a_file_is_ignored(tmp_path, silent):
    good = None
    conf, path = fill_cache(tmp_path, silent, None)
    # a good file first, kept to reuse below
    conf2 = write_config(tmp_path, os.environ["RD_PG_DSN_ATTUNE1"])
    t = Term(tmp_path, conf2)
    t.wait_for("completed")
    end = time.time() + 10
    while not os.path.exists(path) and time.time() < end:
        t.pump(0.1)
    t.quit()
    with open(path, "rb") as f:
        good = f.read()
    write_config(tmp_path, silent)
    cases = []
    os.chmod(path, 0o666)
    cases.append("writable by others (mode 666)")
    for why in cases:
        t = Term(tmp_path, conf, cols=200)
        t.wait_for("last-known snapshot ignored: not ours or " + why)
        assert "stale" not in t.screen.display[0]
        t.quit()
    os.unlink(path)
    os.mkfifo(path, 0o600)            # a FIFO must not hang the start
    t = Term(tmp_path, conf, cols=200)
    t.wait_for("last-known snapshot ignored: not a regular file")
    t.quit()
    os.unlink(path)
    target = tmp_path / "elsewhere.json"
    target.write_bytes(good)
    os.chmod(target, 0o600)
    os.symlink(target, path)          # a symlink is not followed
    t = Term(tmp_path, conf, cols=200)
    t.wait_for("last-known snapshot ignored: ")
    assert "stale" not in t.screen.display[0]
    t.quit()
    os.unlink(path)
    with open(path, "wb") as f:       # the good file again: loaded
        f.write(good)
    os.chmod(path, 0o600)
    t = Term(tmp_path, conf)
    t.wait_for("stale (cached ")
    t.quit()


def test_hostile_strings_in_a_cache_are_sanitized(tmp_path, silent):
    hostile = '{"executions": [{"id": "9\\u001b]0;pwned\\u0007", "name": "x\\u202eevil\\u001b[2J", ' \
              '"status": "failed", "error": "\\u001b]52;c;AAAA\\u0007boom"}], "counts": [{"status": "failed", ' \
              '"count": 1}]}'
    content = b"redrive-cache 1 1700000000.000 " + SYSTEM.encode() + b"\n" + hostile.encode()
    conf, _ = fill_cache(tmp_path, silent, content)
    t = Term(tmp_path, conf)
    t.wait_for("stale (cached ")
    t.child.send("2")
    t.wait_for("Executions")
    t.pump(0.5)
    t.quit()
    raw = bytes(t.raw)
    for seq in (b"\x1b]52", b"\x1b]0;", b"\xe2\x80\xae", b"\x07"):
        assert seq not in raw, seq
