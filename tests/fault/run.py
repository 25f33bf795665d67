"""The long fault run (run.sh CYCLES): CYCLES per service (half SIGSTOP/SIGCONT, half
SIGKILL + restart), then the in-flight action check; prints a table of figures.
Needs the stack env (run.sh starts a private stack when RD_STACK_DIR is not set)."""
import json
import os
import sys
import tempfile
import time

import faultlib as fl


def main():
    cycles = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    only = sys.argv[2].split(",") if len(sys.argv) > 2 and sys.argv[2] else list(fl.SERVICES)
    fl.ensure_build()
    work = tempfile.mkdtemp(prefix="rdfault.")
    rows, failures = [], []
    t0 = time.time()
    for service in only:
        stops = cycles // 2
        kills = cycles - stops
        ts = time.time()
        fig = fl.run_service(work, service, stops, kills)
        r = fig.row()
        r["secs"] = time.time() - ts
        rows.append(r)
        failures += fig.failures
        print("%-16s %d cycles in %.0f s, %d failure(s)" % (service, fig.cycles, r["secs"], len(fig.failures)),
              file=sys.stderr, flush=True)
    inflight = None
    try:
        inflight = fl.inflight_action(os.path.join(work, "inflight"))
    except AssertionError as e:
        failures.append("in-flight action: %s" % e)

    hdr = ("service", "cycles", "crashes", "hangs", "keys", "max key ms", "max stale s", "max recover s",
           "RSS start MB", "RSS end MB", "lost journal")
    print("| " + " | ".join(hdr) + " |")
    print("|" + "---|" * len(hdr))
    for r in rows:
        src = fl.SERVICES[r["service"]][1]
        print("| %s | %d | %d | %d | %d | %.0f | %s | %s | %.1f | %.1f | %s |" % (
            r["service"], r["cycles"], r["crashes"], r["hangs"], r["keys"], r["key_max_s"] * 1000,
            "%.1f" % r["max_stale_s"] if src else "n/a", "%.1f" % r["max_recover_s"] if src else "n/a",
            r["rss_start"] / 1024, r["rss_end"] / 1024, "n/a"))
    if inflight:
        print("| in-flight retry, core SIGKILLed | 1 | 0 | %d | - | %.0f | shown %s after %.1f s | - | - | - | %d "
              "(core got %d request) |" % (inflight["hangs"], inflight["key_max_s"] * 1000,
                                           inflight["journal"][-1].get("code"), inflight["shown_after_s"],
                                           inflight["lost_journal"], inflight["requests"]))
    print("total %.0f s; work dir %s" % (time.time() - t0, work))
    if failures:
        print("\nFAILURES (%d):" % len(failures))
        for f in failures:
            print(" - " + f)
    with open(os.path.join(work, "figures.json"), "w") as f:
        json.dump({"rows": rows, "inflight": inflight, "failures": failures}, f, indent=1, default=str)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
