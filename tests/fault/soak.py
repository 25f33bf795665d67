"""The soak (soak.sh MINUTES): the simulator writing to every store while the console
(ASan+UBSan build, LeakSanitizer on) switches views and systems; RSS sampled every 10 s; at
quit LeakSanitizer reports go to files, split into leaks with a frame in our code (src/) and
the rest. Prints the figures; exit 1 on a leak in our code, a sanitizer error, a crash or an
unanswered key."""
import glob
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

import faultlib as fl

# each key a different view from the one shown, so each must change the screen (a key that
# re-selects the shown view changes nothing and would be counted as late)
VIEWS = ["1", "2", "3", "4", "5", "6"]
TITLES = {"1": "Overview", "2": "Executions", "3": "Workers", "4": "Queues", "5": "DLQ", "6": "Journal"}
SYSTEMS = ["attune2", "alakai", "attune1", "tasker", "openagents"]


def main():
    minutes = float(sys.argv[1]) if len(sys.argv) > 1 else 10
    fl.ensure_build()
    work = tempfile.mkdtemp(prefix="rdsoak.")
    d = fl.stack_dir()
    sim = subprocess.Popen(["/usr/bin/python3", os.path.join(fl.ROOT, "tools", "sim", "sim.py"), "--env-file",
                            os.path.join(d, "env"), "--rate", "5", "--seed", "1", "--quiet"],
                           stdout=open(os.path.join(work, "sim.out"), "w"), stderr=subprocess.STDOUT)
    con = fl.Console(os.path.join(work, "console"), system="attune2")
    rss = []
    keys = late = 0
    slow = []
    worst = 0.0
    failures = []
    t0 = time.monotonic()
    try:
        con.wait_for("Overview", secs=30)
        next_sample = 0.0
        i = 0
        while time.monotonic() - t0 < minutes * 60:
            el = time.monotonic() - t0
            if el >= next_sample:
                rss.append((int(el), con.rss_kb()))
                next_sample += 10
            i += 1
            if i % 40 == 0:           # another system every ~10 s
                con.send(":system %s\r" % SYSTEMS[(i // 40) % len(SYSTEMS)], wait=0.5)
            else:
                key = VIEWS[i % len(VIEWS)]
                if con.screen.display[1].startswith(TITLES[key]):   # after :system: maybe shown
                    key = VIEWS[(i + 1) % len(VIEWS)]
                before = con.screen.display[:]
                k = time.monotonic()
                con.child.send(key)
                keys += 1
                answered = None
                while time.monotonic() - k < 5:
                    con.pump(0.02)
                    if con.screen.display != before:
                        answered = time.monotonic() - k
                        break
                if answered is None or answered > fl.KEY_S:
                    late += 1
                    slow.append("%s@%.0fs:%s" % (key, el,
                                                 "none" if answered is None else "%.0fms" % (answered * 1000)))
                if answered is not None:
                    worst = max(worst, answered)
                con.pump(0.2)
            con.check_alive("soak at %.0f s" % el)
        rss.append((int(time.monotonic() - t0), con.rss_kb()))
        st = con.quit()
    except AssertionError as e:
        failures.append(str(e))
        st = None
    finally:
        if con.child.isalive():
            con.child.kill(signal.SIGKILL)
        sim.send_signal(signal.SIGTERM)
        try:
            sim.wait(30)
        except subprocess.TimeoutExpired:
            sim.kill()
    ours, other, errors = [], [], []
    for p in sorted(glob.glob(os.path.join(con.logdir, "*"))):
        text = open(p, errors="replace").read()
        if "LeakSanitizer" not in text:
            errors.append((p, text[:4000]))
            continue
        for block in re.split(r"\n(?=(?:Direct|Indirect) leak of)", text):
            if not re.match(r"(Direct|Indirect) leak of", block):
                continue
            (ours if re.search(r"\bsrc/(core|io|sources|session|actions|ui|cli)/", block) else other).append(block)
    print("soak: %.1f min, %d keys (%d over %.1f s, worst %.0f ms), %d system switches, exit status %s"
          % (minutes, keys, late, fl.KEY_S, worst * 1000, i // 40, st))
    if slow:
        print("slow keys (key@time:latency): " + " ".join(slow))
    print("RSS (s: MB): " + ", ".join("%d: %.1f" % (t, kb / 1024) for t, kb in rss))
    print("leaks in our code: %d; elsewhere (libraries): %d; other sanitizer reports: %d"
          % (len(ours), len(other), len(errors)))
    for b in ours:
        print("---- leak in our code ----\n" + b[:3000])
    for b in other[:3]:
        print("---- leak outside our code (first lines) ----\n" + "\n".join(b.splitlines()[:8]))
    for p, t in errors:
        print("---- %s ----\n%s" % (p, t))
    for f in failures:
        print("FAILURE: " + f)
    print("work dir %s" % work)
    bad = failures or ours or errors or late or st != 0
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
