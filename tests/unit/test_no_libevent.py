"""libevent only behind src/io (issue 33): every file outside src/io reaches the loop through
src/io/loop.h, never event2/ headers, hiredis's libevent adapter, or libevent's calls and
types. No stack needed."""
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SRC = os.path.join(ROOT, "src")

FORBIDDEN = [
    (re.compile(r'#\s*include\s*[<"]event2/'), "includes event2/"),
    (re.compile(r'#\s*include\s*[<"]hiredis/adapters/libevent\.h'), "includes hiredis's libevent adapter"),
    (re.compile(r"\b(event|evtimer|evsignal|evutil|evbuffer|bufferevent)_\w+\s*\("), "calls libevent"),
    (re.compile(r"\bstruct\s+(event|event_base|event_config)\b"), "uses a libevent type"),
    (re.compile(r"\bevutil_socket_t\b"), "uses a libevent type"),
    (re.compile(r"\bEV_(READ|WRITE|PERSIST|TIMEOUT|SIGNAL|ET|CLOSED)\b"), "uses libevent's flags"),
    (re.compile(r"\bredisLibevent\w*"), "uses hiredis's libevent adapter"),
]


def strip_comments(text):
    """Code only: comments and (outside #include lines) string literals blanked, lines kept."""
    out = re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)
    out = re.sub(r"//[^\n]*", "", out)
    return "\n".join(l if l.lstrip().startswith("#") else re.sub(r'"(?:\\.|[^"\\\n])*"', '""', l)
                     for l in out.split("\n"))


def offences(path, text):
    found = []
    for no, line in enumerate(strip_comments(text).split("\n"), 1):
        for rx, why in FORBIDDEN:
            if rx.search(line):
                found.append(f"{path}:{no}: {why}: {line.strip()}")
    return found


def test_checker_catches_each_kind():
    bad = {
        "#include <event2/event.h>\n": 1,
        "#include <hiredis/adapters/libevent.h>\n": 1,
        "    evtimer_add(t, &tv);\n": 1,
        "    struct event *ev = event_new(b, -1, 0, cb, ud);\n": 2,
        "static void cb(evutil_socket_t fd, short w, void *u)\n": 1,
        "    int what = EV_READ;\n": 1,
        "    if (redisLibeventAttach(ac, b) != 0)\n": 1,
    }
    for text, n in bad.items():
        assert len(offences("x.c", text)) == n, text
    fine = ("/* evtimer_add(t) in a comment */\n"
            'puts("event_new(");\n'
            "rd_event *t = loop_timer_new(l, on_tick, ud);\n"
            "loop_timer_in(t, 2.5);\n"
            "model_event_add(m);\n")
    assert offences("x.c", fine) == []


def test_no_libevent_outside_io():
    found, seen = [], 0
    for d, _, files in os.walk(SRC):
        rel = os.path.relpath(d, SRC)
        if rel == "io" or rel.startswith("io" + os.sep):
            continue
        for f in sorted(files):
            if not f.endswith((".c", ".h")):
                continue
            path = os.path.join(d, f)
            with open(path, encoding="utf-8", errors="replace") as fh:
                found += offences(os.path.relpath(path, ROOT), fh.read())
            seen += 1
    assert seen > 100, f"only {seen} files scanned under {SRC}"
    assert found == [], "libevent outside src/io:\n" + "\n".join(found)
