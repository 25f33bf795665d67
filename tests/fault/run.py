"""The long fault run (run.sh CYCLES [SERVICES]): CYCLES per service (half SIGSTOP/SIGCONT,
half SIGKILL + restart; a reset-* service: CYCLES connection-reset cycles through a proxy),
then an action in flight when its core is killed / its connection reset (CYCLES/10 times
each; once when SERVICES is given), then, for a full run, a resize storm and the quitting
signals with a dialog open; prints a table of figures.
Needs the stack env (run.sh starts a private stack when RD_STACK_DIR is not set)."""
import json
import os
import signal
import sys
import tempfile
import time

import faultlib as fl


def row_line(r):
    src = fl.SERVICES[r["service"]][1]
    return "| %s | %d | %d | %d | %d | %d | %.0f | %.1f | %s | %s | %.1f | %.1f | %s | %s |" % (
        r["service"], r["cycles"], r["crashes"], r["hangs"], r["keys"], r["slow"], r["key_max_s"] * 1000,
        r.get("inside_max_ms", 0.0),
        "%.1f" % r["max_stale_s"] if src else "n/a", "%.1f" % r["max_recover_s"] if src else "n/a",
        r["rss_start"] / 1024, r["rss_end"] / 1024, "n/a", r["resets"] if r["service"] in fl.PROXIED else "-")


def main():
    cycles = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    only_given = len(sys.argv) > 2 and bool(sys.argv[2])
    only = sys.argv[2].split(",") if only_given else list(fl.SERVICES)
    # "extras" in SERVICES: the full in-flight runs, the storm and the signals, as a whole run
    # does (so a run split over several stacks does them once)
    if "extras" in only:
        only = [s for s in only if s != "extras"]
        only_given = False
    fl.ensure_build()
    work = tempfile.mkdtemp(prefix="rdfault.")
    rows, failures = [], []
    t0 = time.time()
    load0 = os.getloadavg()[0]
    for service in only:
        if service in fl.PROXIED:
            stops, kills, resets = 0, 0, cycles
        else:
            stops, kills, resets = cycles // 2, cycles - cycles // 2, 0
        ts = time.time()
        fig = fl.run_service(work, service, stops, kills, resets)
        r = fig.row()
        r["secs"] = time.time() - ts
        rows.append(r)
        failures += fig.failures
        print("%-16s %d cycles in %.0f s, %d failure(s): %s" % (service, fig.cycles, r["secs"], len(fig.failures),
                                                              row_line(r)), file=sys.stderr, flush=True)
        with open(os.path.join(work, "figures.json"), "w") as f:    # so far, should the run be cut short
            json.dump({"rows": rows, "failures": failures}, f, indent=1, default=str)
    # an action in flight when its core is killed / its connection reset: max(1, CYCLES/10) each
    inflight = {}
    for fault in ("kill", "reset"):
        res = inflight[fault] = {"runs": 0, "failed": 0, "lost": 0, "requests": 0, "shown_max_s": 0.0,
                                 "key_max_s": 0.0, "hangs": 0, "codes": []}
        for i in range(1 if only_given else max(1, cycles // 10)):
            res["runs"] += 1
            try:
                x = fl.inflight_action(os.path.join(work, "inflight-%s-%d" % (fault, i)), fault)
                res["lost"] += x["lost_journal"]
                res["requests"] += x["requests"]
                res["shown_max_s"] = max(res["shown_max_s"], x["shown_after_s"])
                res["key_max_s"] = max(res["key_max_s"], x["key_max_s"])
                res["hangs"] += x["hangs"]
                res["codes"].append(x["journal"][-1].get("code"))
            except AssertionError as e:
                res["failed"] += 1
                if "no journal entry" in str(e):
                    res["lost"] += 1
                failures.append("in-flight action (%s) %d: %s" % (fault, i, e))
    # a dialog open: a resize storm + SIGTSTP/SIGCONT, and the three quitting signals
    storm = None
    sigs = {}
    if not only_given:
        try:
            storm = fl.resize_storm(os.path.join(work, "storm"))
        except AssertionError as e:
            failures.append("resize storm: %s" % e)
        for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            try:
                sigs[sig.name] = fl.signal_with_dialog(os.path.join(work, "sig-" + sig.name), sig)
            except AssertionError as e:
                sigs[sig.name] = "FAILED"
                failures.append("%s with a dialog open: %s" % (sig.name, e))

    hdr = ("service", "cycles", "crashes", "hangs", "keys", "keys > %.1f s" % fl.KEY_S, "max key ms",
           "max in console ms", "max stale s", "max recover s",
           "RSS start MB", "RSS end MB", "lost journal", "conns reset")
    print("| " + " | ".join(hdr) + " |")
    print("|" + "---|" * len(hdr))
    for r in rows:
        print(row_line(r))
    for fault, res in inflight.items():
        if not res["runs"]:
            continue
        print("| in-flight retry, core %s | %d | %d | %d | - | - | %.0f | - | shown %s after <= %.1f s | - | - | - | %d "
              "(core got %d request(s) for %d action(s)) |"
              % ("SIGKILLed" if fault == "kill" else "connection reset (proxy)", res["runs"], res["failed"],
                 res["hangs"], res["key_max_s"] * 1000, "/".join(sorted(set(res["codes"]))) or "-",
                 res["shown_max_s"], res["lost"], res["requests"], res["runs"] - res["failed"]))
    if storm:
        print("\nresize storm with the retry dialog open: %d sizes in %.1f s + SIGTSTP/SIGCONT; dialog %s; "
              "keys after: max %.0f ms, %d hang(s); no sanitizer report; exit 0 (SIGTSTP %s)"
              % (storm["resizes"], storm["storm_s"], "kept" if storm["dialog_kept"] else "cleanly gone",
                 storm["key_max_s"] * 1000, storm["hangs"],
                 "stopped it" if storm["tstp_stopped"] else "did not stop it: orphaned process group"))
    if sigs:
        print("signals with the retry dialog open (exit status, want 128+sig): " +
              ", ".join("%s %s" % (k, v) for k, v in sigs.items()))
    print("hang bound %.1f s (load average at the start %.1f); total %.0f s, load average at the end %s; work dir %s"
          % (fl.HANG_S, load0, time.time() - t0, " ".join("%.1f" % x for x in os.getloadavg()), work))
    if failures:
        print("\nFAILURES (%d):" % len(failures))
        for f in failures:
            print(" - " + f)
    with open(os.path.join(work, "figures.json"), "w") as f:
        json.dump({"rows": rows, "inflight": inflight, "storm": storm, "signals": sigs, "failures": failures}, f, indent=1, default=str)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
