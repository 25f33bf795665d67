"""journal_syslog: each audit journal line also goes to syslog as one RFC 3164 datagram
(facility authpriv, severity info: <86>; tag redrive[PID]) carrying the same JSON. The
test binds its own AF_UNIX datagram socket and names it in the config
(`journal_syslog = /path`): it sees the pending line and the outcome, equal to the journal
file's, and never a secret."""
import json
import os
import re
import shutil
import socket
import tempfile

import pytest

import actlib
from conftest import assert_no_secrets

LINE_RE = re.compile(r"^<86>(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ 123]\d "
                     r"\d\d:\d\d:\d\d redrive\[(\d+)\]: (\{.*\})$", re.S)


@pytest.fixture
def syslog_sock():
    d = tempfile.mkdtemp(prefix="rdlog.", dir="/tmp")   # short: sun_path has 108 bytes
    path = os.path.join(d, "log")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(path)
    s.settimeout(0.5)
    yield s, path
    s.close()
    shutil.rmtree(d)


def received(sock):
    out = []
    while True:
        try:
            out.append(sock.recv(1 << 20).decode())
        except socket.timeout:
            return out


def test_pending_and_outcome_reach_syslog(act, tmp_path, syslog_sock):
    sock, path = syslog_sock
    a = act("attune1", journal_syslog=path)
    p = a.run("retry", "424242", "--yes", "--force")
    assert p.returncode == 1 and "not_found" in p.stdout, p.stdout + p.stderr
    grams = received(sock)
    assert_no_secrets(*grams)
    assert os.environ["RD_CORE_TOKEN"] not in "".join(grams)
    journal = actlib.read_journal(tmp_path)
    assert [j["code"] for j in journal] == ["pending", "not_found"], journal
    assert len(grams) == 2, grams
    for g, j in zip(grams, journal):
        m = LINE_RE.match(g)
        assert m, g
        assert "\n" not in g
        assert json.loads(m.group(3)) == j
    # the same line as the file, byte for byte
    raw = open(actlib.journal_path(tmp_path)).read().splitlines()
    assert [LINE_RE.match(g).group(3) for g in grams] == raw


def test_refusal_reaches_syslog_and_off_sends_nothing(act, tmp_path, syslog_sock):
    sock, path = syslog_sock
    a = act("attune1", journal_syslog=path, read_only="true")
    p = a.run("retry", "2", "--yes")
    assert p.returncode != 0
    grams = received(sock)
    journal = actlib.read_journal(tmp_path)
    assert len(journal) == 1 and journal[0]["code"] == "refused", journal
    assert [json.loads(LINE_RE.match(g).group(3)) for g in grams] == journal
    b = act("attune1", journal_syslog="no")
    b.run("retry", "424242", "--yes", "--force")
    assert received(sock) == []


def test_syslog_down_loses_only_the_copy(act, tmp_path):
    a = act("attune1", journal_syslog="/nonexistent/redrive-test-log")
    p = a.run("retry", "424242", "--yes", "--force")
    assert p.returncode == 1 and "not_found" in p.stdout, p.stdout + p.stderr
    assert [j["code"] for j in actlib.read_journal(tmp_path)] == ["pending", "not_found"]


def test_bad_value_is_a_config_error(act):
    a = act("attune1", journal_syslog="maybe")
    p = a.run("retry", "424242", "--yes", "--force")
    assert p.returncode == 2
    assert re.search(r":\d+: journal_syslog must be yes, no or the absolute path of a syslog socket, "
                     r"not 'maybe'", p.stderr), p.stderr


NOBODY_RECV = r"""
import json, os, select, socket, sys
path = sys.argv[1]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
print("ready", os.geteuid(), flush=True)
got = []
while True:
    r, _, _ = select.select([s, sys.stdin], [], [], 10)
    if not r:
        break
    if s in r:
        got.append(s.recv(1 << 20).decode())
    if sys.stdin in r and s not in r:
        break
print(json.dumps(got), flush=True)
"""


@pytest.mark.parametrize("mode", [0o1777, 0o777])
def test_a_socket_of_another_user_is_refused(act, tmp_path, mode):
    """A socket bound by another user (nobody) in a world-writable directory would read
    every audit line: the config is refused with the reason, nothing reaches it. In a
    sticky directory of root's (like /tmp) the socket's owner is what is wrong; in a
    plain world-writable one, the directory already is."""
    if os.geteuid() != 0:
        pytest.fail("a socket of another user needs root (CI runs as root)")
    import subprocess
    d = tempfile.mkdtemp(prefix="rdlog.", dir="/tmp")
    os.chmod(d, mode)
    path = os.path.join(d, "log")
    recv = subprocess.Popen(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                             "/usr/bin/python3", "-c", NOBODY_RECV, path],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert recv.stdout.readline() == "ready 65534\n"
        a = act("attune1", journal_syslog=path)
        p = a.run("retry", "424242", "--yes", "--force")
        if mode == 0o1777:
            why = "syslog socket %s is owned by uid 65534, not by you (uid 0)" % path
        else:
            why = ("syslog socket %s: the directory %s is group/world writable (mode 0777): "
                   "chmod go-w it" % (path, d))
        assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
        assert re.search(r":\d+: journal_syslog refused: " + re.escape(why), p.stderr), p.stderr
        assert not os.path.exists(actlib.journal_path(tmp_path))
        out, _ = recv.communicate("done\n", timeout=15)
        assert out == "[]\n", out
    finally:
        if recv.poll() is None:
            recv.kill()
            recv.wait()
        shutil.rmtree(d)

