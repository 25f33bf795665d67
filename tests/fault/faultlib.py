"""Fault injection against the real local stack: the console (ASan+UBSan build) in a pty.

Used by test_fault_short.py (CI) and run.py (run.sh: the long run with a table of figures).
A service is hung with SIGSTOP/SIGCONT and crashed with SIGKILL + restart (tests/fault/svc.sh,
which restarts one service with the stack's own functions) while keys are sent; after each
fault: every key answered within KEY_S, the source shown STALE/DOWN with its error within
its bound, back to ok within the backoff cap (30 s) after the service returns, no sanitizer
report, no crash, RSS bounded.
"""
import glob
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.parse

import pexpect

from rstproxy import Proxy

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "tui"))
sys.path.insert(0, os.path.join(ROOT, "tests"))   # lib/ (the pty harness), run outside pytest too
sys.path.insert(0, os.path.join(ROOT, "tests", "actions"))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from lib.term import Term  # noqa: E402  (pump / text / wait_for / send / finish)

BUILD = os.environ.get("RD_FAULT_BUILD", os.path.join(ROOT, "build-asan"))
BIN = os.path.join(BUILD, "src", "cli", "redrive")
SVC = os.path.join(HERE, "svc.sh")

KEY_S = float(os.environ.get("RD_FAULT_KEY_S", "0.5"))   # a key must change the screen within
# ... and counts as a hang past HANG_S: KEY_S, plus 0.5 s of slack when the machine is loaded
# beyond twice its cores (the latency is measured from this process, which waits for a CPU
# too). Keys over KEY_S are counted apart ("slow") either way.
HANG_S = float(os.environ.get("RD_FAULT_HANG_S", "0") or 0) or (
    KEY_S + 0.5 if os.getloadavg()[0] > 2 * (os.cpu_count() or 1) else KEY_S)
BACKOFF_CAP_S = 30.0
POLL_S = 1.0                                              # the config below sets poll = 1s
# Per source: longest time between two requests while nothing changes + the request deadline
# (docs/sources.md): PostgreSQL polls every `poll`, batch deadline 10 s (connect 5 s); Redis
# answers notifications and resyncs, 5 s reply deadline; RabbitMQ is polled every >= 5 s,
# deadline 8 s; SQS every poll, deadline 8 s.
STALE_BOUND_S = {"postgresql": POLL_S + 10, "redis": 30 + 5, "rabbitmq": 5 + 8, "sqs": POLL_S + 8}
CORE_PROBE_S = 2          # core_probe in the config: GET /auth/me every 2 s
CORE_BOUND_S = CORE_PROBE_S + 10   # + the probe's own deadline (a stopped core never answers)
SLACK_S = 3.0
RSS_GROWTH_MAX_KB = 64 * 1024

# service -> (system the console shows, source name in the top bar or None for a core server,
# whose state the top bar shows as "core ok as ..." / "core down: ...")
SERVICES = {
    "postgresql": ("attune2", "postgresql"),
    "redis": ("alakai", "redis"),
    "rabbitmq": ("attune2", "rabbitmq"),
    "sqs": ("alakai", "sqs"),
    "core-attune1": ("attune1", None),
    "core-attune2": ("attune2", None),
    "core-tasker": ("tasker", None),
    "core-alakai": ("alakai", None),
    "core-openagents": ("openagents", None),
    # connection resets: the console reaches the service through rstproxy.Proxy
    "reset-postgresql": ("attune2", "postgresql"),
    "reset-redis": ("alakai", "redis"),
    "reset-rabbitmq": ("attune2", "rabbitmq"),
    "reset-core-attune2": ("attune2", None),
}
# reset service -> the env variable (of the console's config) pointed at the proxy
PROXIED = {
    "reset-postgresql": "RD_PG_DSN_ATTUNE2",
    "reset-redis": "RD_REDIS_URL",
    "reset-rabbitmq": "RD_RABBIT_MGMT_URL",
    "reset-core-attune2": "RD_CORE_URL_ATTUNE2",
}


class FaultError(AssertionError):
    pass


def ensure_build():
    """The ASan+UBSan build under the worktree; set up and built when missing or stale."""
    if not os.path.exists(os.path.join(BUILD, "build.ninja")):
        subprocess.run(["meson", "setup", BUILD, "-Db_sanitize=address,undefined", "-Db_lundef=false",
                        "-Dtest_hooks=true"], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    else:   # set up before the option existed: the harness drives it through the hooks
        subprocess.run(["meson", "configure", BUILD, "-Dtest_hooks=true"], cwd=ROOT, check=True,
                       stdout=subprocess.DEVNULL)
    subprocess.run(["ninja", "-C", BUILD, "-j2", "src/cli/redrive"], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)
    return BIN


def stack_dir():
    d = os.environ.get("RD_STACK_DIR")
    if not d or not os.path.exists(os.path.join(d, "env")):
        raise FaultError("needs the local stack env (tests/stack/stack.sh start DIR; . DIR/env)")
    return d


def load_env(d):
    """DIR/env as a dict (the SQS emulator appends its variables after start)."""
    out = {}
    for line in open(os.path.join(d, "env")):
        m = re.match(r"export (\w+)=(.*)$", line.strip())
        if m:
            v = m.group(2)
            if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"":
                v = v[1:-1]
            out[m.group(1)] = v
    return out


def proxy_for(service, e):
    """A Proxy in front of the service a reset service names; `e` (the stack env) is
    changed to point at it. Returns the proxy."""
    key = PROXIED[service]
    if key.startswith("RD_PG_DSN_"):
        proxy = Proxy("127.0.0.1", int(e["RD_PG_PORT"]))
        db = re.search(r"dbname=(\S+)", e[key]).group(1)
        e[key] = "host=127.0.0.1 port=%d dbname=%s user=redrive_ro application_name=redrive" % (proxy.port, db)
        return proxy
    u = urllib.parse.urlsplit(e[key])
    proxy = Proxy(u.hostname, u.port)
    e[key] = urllib.parse.urlunsplit((u.scheme, "%s:%d" % (u.hostname, proxy.port), u.path, u.query, u.fragment))
    return proxy


def svc(verb, service, timeout=120):
    r = subprocess.run(["bash", SVC, verb, service, stack_dir()], capture_output=True, text=True,
                       timeout=timeout)
    return r


def svc_pids(service):
    r = svc("pids", service)
    pids = [int(x) for x in r.stdout.split() if x.isdigit()]
    if not pids:
        raise FaultError("no pid for %s: %s" % (service, r.stderr.strip()))
    return pids


def svc_pids_or_none(service):
    r = svc("pids", service)
    return [int(x) for x in r.stdout.split() if x.isdigit()]


def config_text(e):
    core_auth = "auth = bearer\ntoken = env:RD_CORE_TOKEN\ncore_probe = %ds\n" % CORE_PROBE_S
    s = ('[system "attune2"]\nprofile = attune\nstore = %s\nbroker = %s\nbroker_user = %s\n'
         'broker_password = env:RD_RABBIT_PASSWORD\ncore = %s\n%spoll = 1s\n\n'
         % (e["RD_PG_DSN_ATTUNE2"], e["RD_RABBIT_MGMT_URL"], e["RD_RABBIT_USER"], e["RD_CORE_URL_ATTUNE2"],
            core_auth))
    s += ('[system "alakai"]\nprofile = alakai\nstore = %s\ncore = %s\n%spoll = 1s\n'
          % (e["RD_REDIS_URL"], e["RD_CORE_URL_ALAKAI"], core_auth))
    if e.get("RD_SQS_QUEUE_URL"):
        s += "sqs_queue_url = %s\nsqs_endpoint = %s\nsqs_region = %s\n" % (
            e["RD_SQS_QUEUE_URL"], e["RD_SQS_ENDPOINT"], e.get("RD_SQS_REGION", "us-east-1"))
    s += "\n"
    for name, prof, dsn in (("attune1", "attune", "RD_PG_DSN_ATTUNE1"), ("tasker", "tasker", "RD_PG_DSN_TASKER"),
                            ("openagents", "openagents", "RD_PG_DSN_OPENAGENTS")):
        s += ('[system "%s"]\nprofile = %s\nstore = %s\ncore = %s\n%spoll = 1s\n\n'
              % (name, prof, e[dsn], e["RD_CORE_URL_" + name.upper()], core_auth))
    return s


def sanitizer_env(logdir):
    # A report makes the run fail (non-zero exit, halt on the first UBSan finding) and goes to
    # a file we check after every fault; a small quarantine keeps RSS meaningful.
    return {
        "ASAN_OPTIONS": "log_path=%s/asan:halt_on_error=1:abort_on_error=0:exitcode=86:detect_leaks=1:"
                        "quarantine_size_mb=16:malloc_context_size=20:strict_string_checks=1:"
                        "detect_stack_use_after_return=1:check_initialization_order=1" % logdir,
        "UBSAN_OPTIONS": "log_path=%s/ubsan:print_stacktrace=1:halt_on_error=1:exitcode=87" % logdir,
        "LSAN_OPTIONS": "log_path=%s/lsan" % logdir,
    }


CORE_RE = re.compile(r"\bcore (ok|down|error|\.\.\.)(?::? ([^|(]*))?")
SRC_RE = re.compile(r" (\S+) (ok|STALE [^:|]*|DOWN|\.\.\.|\d+[smhd])(: [^|]*)? \|")


class Console(Term):
    """The console in a pty (test_live.Term's helpers), configured for every system."""

    def __init__(self, workdir, system="attune2", cols=250, rows=40, extra_env=None, config=None):
        os.makedirs(workdir, exist_ok=True)
        self.workdir = str(workdir)
        self.logdir = os.path.join(self.workdir, "san")
        os.makedirs(self.logdir, exist_ok=True)
        e = load_env(stack_dir())
        conf = os.path.join(self.workdir, "config")
        with open(conf, "w") as f:
            f.write(config or config_text(e))
        env = {k: v for k, v in e.items() if k.startswith("RD_")}   # the stack's env file
        env.update(AWS_ACCESS_KEY_ID="AKIDTESTSQS", AWS_SECRET_ACCESS_KEY="test/secret+KEY",
                   AWS_EC2_METADATA_DISABLED="true")
        env.update(sanitizer_env(self.logdir))
        # the console's own time per key (input wake -> end of paint, µs, a line per key):
        # tells a loop that blocked from a process (or this harness) waiting for a CPU
        self.trace = os.path.join(self.workdir, "latency.txt")
        env["REDRIVE_LATENCY_TRACE"] = self.trace
        env.update(extra_env or {})
        self.keys = 0
        self.key_max_s = 0.0
        self.hangs = 0
        self.slow = 0
        self.inside_max_ms = 0.0     # the console's own input-to-paint time, worst key
        self.late = []               # "1160 ms (in the console 3 ms)" per key over HANG_S
        self.view = "1"
        Term.__init__(self, conf, ["--system", system], env, cols=cols, rows=rows, keep=(), binary=BIN)

    # ---- what is on screen -------------------------------------------------------------
    def sources(self):
        """{name: (state, error)} from the top bar."""
        out = {}
        for m in SRC_RE.finditer(self.screen.display[0] + " |"):
            st = m.group(2)
            state = "stale" if st.startswith("STALE") else "down" if st == "DOWN" else \
                "connecting" if st == "..." else "ok"
            out[m.group(1)] = (state, (m.group(3) or "")[2:].strip())
        return out

    def core(self):
        """The core API's state from the top bar: ("ok"|"down"|"error"|"checking", text) or None."""
        m = CORE_RE.search(self.screen.display[0])
        if not m:
            return None
        return ({"...": "checking"}.get(m.group(1), m.group(1)), m.group(2) or "")

    def rss_kb(self):
        try:
            for line in open("/proc/%d/status" % self.child.pid):
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        except OSError:
            pass
        return 0

    def sanitizer_reports(self):
        return sorted(glob.glob(os.path.join(self.logdir, "*")))

    def check_alive(self, what):
        self.pump(0.05)
        m = re.search(rb"(runtime error:|ERROR: \w*Sanitizer|WARNING: \w*Sanitizer)", bytes(self.raw))
        if m:   # a report written to the terminal (UBSan in a combined build ignores log_path)
            tail = bytes(self.raw[m.start():m.start() + 3000]).decode(errors="replace")
            raise FaultError("%s: sanitizer report on the terminal:\n%s" % (what, tail))
        reports = self.sanitizer_reports()
        if reports:
            raise FaultError("%s: sanitizer report(s):\n%s" % (what, "".join(open(p).read()[:4000] for p in reports)))
        if not self.child.isalive():
            raise FaultError("%s: the console exited (status %s, signal %s)"
                             % (what, self.child.exitstatus, self.child.signalstatus))

    # ---- keys --------------------------------------------------------------------------
    def probe_key(self):
        """Switch between the overview and the executions view: the screen must change
        (title row) within KEY_S (else "slow"); past HANG_S it counts as a hang. Returns the
        latency (None: no change within 5 s)."""
        key, want = ("2", "Executions") if self.view == "1" else ("1", "Overview")
        before = self.screen.display[1:3]
        t0 = time.monotonic()
        self.child.send(key)
        self.keys += 1
        answered = None
        while time.monotonic() - t0 < 5.0:
            self.pump(0.02)
            if self.screen.display[1:3] != before and want in "".join(self.screen.display[:3]):
                answered = time.monotonic() - t0
                break
        inside = self.inside_ms() if answered is not None else None
        if inside is not None:
            self.inside_max_ms = max(self.inside_max_ms, inside)
        if answered is None or answered > KEY_S:
            self.slow += 1
        if answered is None or answered > HANG_S:
            self.hangs += 1
            self.late.append("%s (in the console %s)" % (
                "none in 5 s" if answered is None else "%.0f ms" % (answered * 1000),
                "-" if inside is None else "%.1f ms" % inside))
        if answered is not None:
            self.view = key
            self.key_max_s = max(self.key_max_s, answered)
        return answered

    def inside_ms(self):
        """The console's time for the last key it painted (the trace's last line), in ms."""
        try:
            with open(self.trace, "rb") as f:
                f.seek(0, os.SEEK_END)
                f.seek(max(0, f.tell() - 64))
                last = f.read().split(b"\n")
            vals = [x for x in last if x.strip()]
            return float(vals[-1]) / 1000.0 if vals else None
        except (OSError, ValueError):
            return None

    def keys_for(self, secs, until=None, gap=0.25):
        """Send probe keys for up to `secs`; stop early when until() is true. Returns the
        time until() first held (None if never)."""
        t0 = time.monotonic()
        while time.monotonic() - t0 < secs:
            self.probe_key()
            self.pump(gap)
            if until and until():
                return time.monotonic() - t0
        return None

    def quit(self):
        self.child.send("Q")
        try:
            status = self.finish()
        except pexpect.TIMEOUT:
            self.child.kill(signal.SIGKILL)
            raise FaultError("the console did not quit within 5 s")
        return status


def pids_gone(pids, secs=10):
    end = time.time() + secs
    while time.time() < end:
        if not any(os.path.exists("/proc/%d" % p) and open("/proc/%d/stat" % p).read().split()[2] != "Z"
                   for p in pids):
            return True
        time.sleep(0.05)
    return False


def send_signal(pids, sig):
    for p in pids:
        try:
            os.kill(p, sig)
        except ProcessLookupError:
            pass


class Figures:
    def __init__(self, service):
        self.service = service
        self.cycles = 0
        self.crashes = 0
        self.hangs = 0
        self.max_stale_s = 0.0
        self.max_recover_s = 0.0
        self.rss_start = 0
        self.rss_end = 0
        self.lost_journal = 0
        self.failures = []
        self.key_max_s = 0.0
        self.keys = 0
        self.resets = 0          # connections the proxy reset (reset-* services)
        self.slow = 0            # keys answered after KEY_S (but within HANG_S)
        self.inside_max_ms = 0.0  # the console's own input-to-paint time, worst key

    def row(self):
        return self.__dict__


def fault_cycle(con, service, kind, fig):
    """One fault on `service` while sending keys; asserts and records figures. kind: "stop"
    (SIGSTOP, SIGCONT once shown), "kill" (SIGKILL, restart) or "reset" (through con.proxy:
    one reset of every connection, then every connection and reconnection reset until the
    source is shown, then passed again). The console must already show the service's system."""
    source = SERVICES[service][1]
    what = "%s %s cycle %d" % (service, kind, fig.cycles + 1)
    pids = svc_pids(service) if kind != "reset" else []
    hangs0 = con.hangs

    def shown_bad():
        if not source:       # a core server: its probe's state
            c = con.core()
            return c is not None and c[0] == "down" and c[1].strip() != ""
        s = con.sources().get(source)
        return s is not None and s[0] in ("stale", "down") and s[1] != ""

    def shown_ok():
        if not source:
            c = con.core()
            return c is not None and c[0] == "ok"
        s = con.sources().get(source)
        return s is not None and s[0] == "ok"

    def shown():
        return con.sources().get(source) if source else con.core()

    bad_bound = STALE_BOUND_S[source] if source else CORE_BOUND_S
    if not con.keys_for(BACKOFF_CAP_S + 10, until=shown_ok):
        raise FaultError("%s: %s not ok before the fault: %r" % (what, source or "core", shown()))
    if kind == "reset":
        # a single reset: the source reconnects by itself (it may show the blip)
        con.proxy.reset_all()
        con.keys_for(1.0)
        con.check_alive(what + " (after a single reset)")
    t_fault = time.monotonic()
    if kind == "stop":
        send_signal(pids, signal.SIGSTOP)
    elif kind == "reset":
        con.proxy.block()
    else:
        killed = set()
        for _ in range(20):      # PostgreSQL: a backend forked meanwhile dies too
            live = [p for p in svc_pids_or_none(service) if p not in killed or not pids_gone([p], 0.2)]
            if not live:
                break
            send_signal(live, signal.SIGKILL)
            killed.update(live)
            if not pids_gone(live):
                raise FaultError("%s: pids %s still there after SIGKILL" % (what, live))
    try:
        bound = bad_bound + SLACK_S
        t = con.keys_for(bound, until=shown_bad)
        if t is None:
            fig.failures.append("%s: not shown stale/down with an error within %.0f s (top bar: %r)"
                                % (what, bound, shown()))
        else:
            fig.max_stale_s = max(fig.max_stale_s, t)
        con.check_alive(what + " (while down)")
    finally:
        if kind == "stop":
            send_signal(pids, signal.SIGCONT)
        elif kind == "reset":
            con.proxy.unblock()
        else:
            r = svc("restart", service)
            if r.returncode != 0:
                raise FaultError("%s: restart failed: %s" % (what, r.stderr[-2000:]))
    t_back = time.monotonic()
    # a core: the next probe (one in flight on a stopped core ends at its deadline first)
    bound = (BACKOFF_CAP_S + STALE_BOUND_S[source] if source else CORE_BOUND_S) + SLACK_S
    t = con.keys_for(bound, until=shown_ok)
    if t is None:
        fig.failures.append("%s: not back to ok within %.0f s after the service returned (top bar: %r)"
                            % (what, bound, shown()))
    else:
        fig.max_recover_s = max(fig.max_recover_s, t)
    con.check_alive(what)
    fig.cycles += 1
    fig.hangs += con.hangs - hangs0
    fig.key_max_s = max(fig.key_max_s, con.key_max_s)
    fig.keys = con.keys
    fig.slow = con.slow
    fig.rss_end = con.rss_kb()
    fig.inside_max_ms = max(fig.inside_max_ms, con.inside_max_ms)
    if con.hangs - hangs0:
        fig.failures.append("%s: %d key(s) not answered within %.1f s: %s" % (
            what, con.hangs - hangs0, HANG_S, ", ".join(con.late[-(con.hangs - hangs0):])))
    if fig.rss_start and fig.rss_end - fig.rss_start > RSS_GROWTH_MAX_KB:
        fig.failures.append("%s: RSS grew from %d to %d kB" % (what, fig.rss_start, fig.rss_end))
    return time.monotonic() - t_fault


def run_service(workdir, service, stops, kills, resets=0):
    """A console on the service's system; `stops` SIGSTOP/SIGCONT, `kills` SIGKILL+restart
    and `resets` connection-reset cycles (a reset-* service: the console reaches it through
    a proxy). Returns Figures (failures listed, never raised, except for a crash)."""
    fig = Figures(service)
    system, source = SERVICES[service]
    real = service[len("reset-"):] if service in PROXIED else service
    r = svc("restart", real)             # up before we start (a no-op when it answers)
    if r.returncode != 0:
        fig.failures.append("%s: not running and could not be started: %s" % (service, r.stderr[-2000:]))
        return fig
    proxy = config = None
    if service in PROXIED:
        e = load_env(stack_dir())
        proxy = proxy_for(service, e)
        config = config_text(e)
    elif resets:
        raise FaultError("%s: reset cycles need a reset-* service" % service)
    con = Console(os.path.join(str(workdir), service), system=system, config=config)
    con.proxy = proxy
    try:
        con.wait_for("Overview", secs=20)
        if source:
            con.keys_for(BACKOFF_CAP_S, until=lambda: con.sources().get(source, ("",))[0] == "ok")
        fig.rss_start = con.rss_kb()
        kinds = ["stop"] * stops + ["kill"] * kills + ["reset"] * resets
        for kind in kinds:
            try:
                fault_cycle(con, service, kind, fig)
            except FaultError as e:
                fig.failures.append(str(e))
                if not con.child.isalive() or con.sanitizer_reports():
                    fig.crashes += 1
                    break
        if con.child.isalive():
            # every view of this system once; ctrl-r peeks the DLQ (an SQS DLQ only on request)
            for k in ("5", "\x12", "3", "6", "1"):
                con.send(k, wait=1.0)
            try:
                con.check_alive("%s: views after the cycles" % service)
            except FaultError as e:
                fig.failures.append(str(e))
                fig.crashes += 1
        if con.child.isalive():
            st = con.quit()
            if st != 0:
                fig.failures.append("%s: exit status %s at quit" % (service, st))
        reports = con.sanitizer_reports()
        if reports:
            fig.crashes += 1 if not fig.crashes else 0
            fig.failures.append("%s: sanitizer report(s): %s\n%s" % (service, reports, open(reports[0]).read()[:4000]))
        if proxy:
            fig.resets = proxy.resets
    finally:
        if con.child.isalive():
            con.child.kill(signal.SIGKILL)
        if proxy:
            proxy.close()
        if kills:
            svc("restore", service, timeout=300)
    return fig


def quit_while_hung(workdir, service):
    """The console quits while `service` is hung (SIGSTOP): its requests are in flight and
    cancelled at teardown. Exit 0, no sanitizer report (LeakSanitizer: a request's callback
    data must not leak when it is cancelled without a callback)."""
    system, source = SERVICES[service]
    if svc("restart", service).returncode != 0:
        raise FaultError("%s: not running" % service)
    con = Console(os.path.join(str(workdir), "console"), system=system)
    pids = svc_pids(service)
    try:
        con.wait_for("Overview", secs=20)
        if source:
            con.keys_for(BACKOFF_CAP_S, until=lambda: con.sources().get(source, ("",))[0] == "ok")
        send_signal(pids, signal.SIGSTOP)
        con.keys_for(3.0)          # a poll or two sent to the hung service, never answered
        con.check_alive("%s hung" % service)
        st = con.quit()
        if st != 0:
            reports = con.sanitizer_reports()
            raise FaultError("quit with %s hung: exit status %s\n%s" % (
                service, st, "".join(open(p).read()[:4000] for p in reports)))
        if con.sanitizer_reports():
            raise FaultError("quit with %s hung: sanitizer report(s) %s" % (service, con.sanitizer_reports()))
        return st
    finally:
        send_signal(pids, signal.SIGCONT)
        if con.child.isalive():
            con.child.kill(signal.SIGKILL)


# ---- an action in flight when its core is killed --------------------------------------------

def journal_lines(workdir):
    out = []
    p = os.path.join(str(workdir), "state", "redrive", "journal.jsonl")   # beside it: history
    if os.path.exists(p):
        for line in open(p):
            line = line.strip()
            if line:
                out.append(json.loads(line))
    return out


def open_retry_dialog(con):
    """Executions filtered to failed, 'r' on the oldest one (execution 2 of the fixture,
    retry-eligible: the guards send only eligible executions without an override): the
    confirmation dialog open."""
    con.send("2")
    con.wait_for("Executions")
    con.view = "2"
    con.send(":filter status=failed\r")
    con.wait_for("filter: status=failed")
    con.pump(1.5)
    con.send("G")
    con.wait_for("eligible: yes")
    con.send("r")
    con.wait_for("retry 1 execution")


def inflight_action(workdir, fault="kill"):
    """attune2 retry sent to a private core that applies it and never answers. fault "kill":
    the core is SIGKILLed with the request in flight and started again on the same port;
    fault "reset": the console reaches the core through a Proxy that resets the connection
    (RST) with the request in flight, the core staying up. The action must end as
    unknown/maybe_applied on screen and in the journal, the core must have received exactly
    one request (and the proxy forwarded exactly one POST): nothing is re-sent. Returns a
    dict of figures; raises on failure."""
    import actlib
    import stack_fixtures as fx
    workdir = str(workdir)
    os.makedirs(workdir, exist_ok=True)
    fx.reload("attune2")   # execution 2 eligible again (earlier retries supersede it)
    srv = actlib.CoreServer("attune2", workdir, "--stall-route", r"/retry$", "--stall-seconds", "0")
    port, log = srv.port, srv.log
    e = load_env(stack_dir())
    e["RD_CORE_URL_ATTUNE2"] = srv.url
    proxy = None
    if fault == "reset":
        proxy = Proxy("127.0.0.1", port)
        e["RD_CORE_URL_ATTUNE2"] = "http://127.0.0.1:%d" % proxy.port
    con = Console(os.path.join(workdir, "console"), system="attune2", config=config_text(e))
    srv2 = None
    try:
        con.wait_for("Overview", secs=20)
        open_retry_dialog(con)
        con.send("y")
        end = time.time() + 10
        while time.time() < end and not [a for a in actions_in(log) if a["route"].endswith("/retry")]:
            con.pump(0.1)
        sent = [a for a in actions_in(log) if a["route"].endswith("/retry")]
        if len(sent) != 1:
            raise FaultError("the core did not receive the retry once: %r" % sent)
        key = sent[0]["key"]
        if fault == "reset":
            if proxy.reset_all() < 1:
                raise FaultError("the proxy had no connection to reset")
        else:
            srv.proc.send_signal(signal.SIGKILL)
            srv.proc.wait(5)
            srv2 = actlib.CoreServer.__new__(actlib.CoreServer)
            restart_core_on(srv2, port, log, workdir)
        t0 = time.monotonic()
        # the outcome must say it may have been applied, without a new request
        end_state = None
        while time.monotonic() - t0 < 15:
            con.pump(0.2)
            txt = con.text()
            if "unknown" in txt or "maybe_applied" in txt or "may have been applied" in txt:
                end_state = time.monotonic() - t0
                break
        if end_state is None:
            raise FaultError("the action did not end as unknown/maybe_applied:\n" + con.text())
        con.send("n")           # close the outcome dialog: the probe keys switch views
        con.keys_for(3.0)       # keys still answered; and time for any (wrong) re-send
        con.check_alive("in-flight action (%s)" % fault)
        st = con.quit()
        if st != 0:
            raise FaultError("exit status %s" % st)
        reports = con.sanitizer_reports()
        if reports:
            raise FaultError("sanitizer report(s): %s" % reports)
        retries = [a for a in actions_in(log) if a["route"].endswith("/retry")]
        if len(retries) != 1:
            raise FaultError("the core received %d retry requests (re-sent?): %r" % (len(retries), retries))
        posts = proxy.count("POST", r"/retry$") if proxy else None
        if proxy and posts != 1:
            raise FaultError("the proxy forwarded %d retry POSTs (re-sent?): %r" % (posts, proxy.requests))
        jl = [j for j in journal_lines(con.workdir) if j.get("idempotency_key") == key]
        lost = 0 if jl else 1
        if not jl:
            raise FaultError("no journal entry for key %s: %r" % (key[:8], journal_lines(con.workdir)))
        final = jl[-1].get("code")
        if final not in ("maybe_applied", "unknown"):
            raise FaultError("journal outcome %r, not unknown/maybe_applied: %r" % (final, jl))
        return {"fault": fault, "key_max_s": con.key_max_s, "hangs": con.hangs, "journal": jl,
                "shown_after_s": end_state, "requests": len(retries), "proxy_posts": posts, "lost_journal": lost}
    finally:
        if con.child.isalive():
            con.child.kill(signal.SIGKILL)
        if proxy:
            proxy.close()
        for s in (srv, srv2):
            if s is not None and getattr(s, "proc", None) is not None and s.proc.poll() is None:
                s.proc.kill()
                s.proc.wait(5)
        fx.reload("attune2")


# ---- a dialog open: resize storms and signals --------------------------------------------

def resize_storm(workdir, n=200, seed=11):
    """The retry confirmation dialog open (a private core: nothing may be sent), then `n`
    window-size changes (SIGWINCH) with random sizes, among them 10x3 and 1000x500, then
    SIGTSTP/SIGCONT. Then: the console answers keys, the dialog is still there or cleanly
    gone, the core got no request, no sanitizer report, exit 0 at quit. Returns figures."""
    import random
    import actlib
    workdir = str(workdir)
    os.makedirs(workdir, exist_ok=True)
    rnd = random.Random(seed)
    srv = actlib.CoreServer("attune2", workdir)
    e = load_env(stack_dir())
    e["RD_CORE_URL_ATTUNE2"] = srv.url
    cols, rows = 250, 40
    con = Console(os.path.join(workdir, "console"), system="attune2", config=config_text(e), cols=cols, rows=rows)
    try:
        con.wait_for("Overview", secs=20)
        open_retry_dialog(con)
        sizes = [(10, 3), (1000, 500), (1, 1), (11, 4)]
        while len(sizes) < n:
            sizes.append(rnd.choice([(rnd.randint(1, 40), rnd.randint(1, 12)),
                                     (rnd.randint(40, 300), rnd.randint(12, 90)),
                                     (rnd.randint(300, 1000), rnd.randint(90, 500))]))
        rnd.shuffle(sizes)
        t0 = time.monotonic()
        for c, r in sizes:
            con.child.setwinsize(r, c)     # TIOCSWINSZ: the kernel sends SIGWINCH
            con.pump(0.005)                # keep draining: a full pty would block the console
        storm_s = time.monotonic() - t0
        con.check_alive("resize storm")
        # SIGTSTP runs ncurses' handler (leave curses, stop, re-enter on SIGCONT). The console
        # leads its own session here (pexpect), an orphaned process group, so the kernel does
        # not stop it on SIGTSTP; SIGSTOP then stops it for real (as a shell's job control would).
        con.child.kill(signal.SIGTSTP)
        con.pump(1.0)
        tstp_stopped = proc_state(con.child.pid) == "T"
        con.child.kill(signal.SIGCONT)
        con.pump(0.5)
        con.child.kill(signal.SIGSTOP)
        end = time.monotonic() + 5         # the stop happens when the process next runs
        while proc_state(con.child.pid) != "T" and time.monotonic() < end:
            time.sleep(0.05)
        if proc_state(con.child.pid) != "T":
            raise FaultError("SIGSTOP did not stop the console within 5 s")
        time.sleep(0.3)
        con.child.kill(signal.SIGCONT)
        con.pump(0.5)
        con.check_alive("SIGTSTP/SIGCONT, SIGSTOP/SIGCONT")
        con.resize(cols, rows)
        con.pump(1.0)
        txt = con.text()
        dialog = "retry 1 execution" in txt
        if not dialog and "Executions" not in txt:
            raise FaultError("after the storm neither the dialog nor the executions view is shown:\n" + txt)
        if dialog:
            con.send("n")
            con.pump(0.5)
            if "retry 1 execution" in con.text():
                raise FaultError("the dialog does not close after the storm:\n" + con.text())
        con.keys_for(3.0)
        con.check_alive("keys after the storm")
        hangs, key_max, rss = con.hangs, con.key_max_s, con.rss_kb()
        if hangs:
            raise FaultError("%d key(s) not answered within %.1f s after the storm" % (hangs, HANG_S))
        st = con.quit()
        if st != 0:
            raise FaultError("exit status %s after the storm" % st)
        if con.sanitizer_reports():
            raise FaultError("sanitizer report(s): %s" % con.sanitizer_reports())
        posts = [a for a in actions_in(srv.log) if a["route"].endswith("/retry")]
        if posts:
            raise FaultError("the storm sent a retry: %r" % posts)
        return {"resizes": len(sizes), "storm_s": storm_s, "dialog_kept": dialog, "key_max_s": key_max,
                "hangs": hangs, "rss_kb": rss, "tstp_stopped": tstp_stopped}
    finally:
        if con.child.isalive():
            con.child.kill(signal.SIGKILL)
        srv.stop()


def proc_state(pid):
    try:
        return open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "?"


def signal_with_dialog(workdir, sig):
    """SIGTERM/SIGHUP/SIGINT with the retry confirmation dialog open: the console exits by
    itself with 128 + sig, the terminal restored (alternate screen left, cursor shown), no
    sanitizer report (leaks included), nothing sent to the core."""
    import actlib
    workdir = str(workdir)
    os.makedirs(workdir, exist_ok=True)
    srv = actlib.CoreServer("attune2", workdir)
    e = load_env(stack_dir())
    e["RD_CORE_URL_ATTUNE2"] = srv.url
    con = Console(os.path.join(workdir, "console"), system="attune2", config=config_text(e))
    try:
        con.wait_for("Overview", secs=20)
        open_retry_dialog(con)
        con.child.kill(sig)
        try:
            status = con.finish()
        except pexpect.TIMEOUT:
            raise FaultError("signal %d with the dialog open: the console did not exit within 5 s" % sig)
        if con.child.signalstatus is not None or status != 128 + sig:
            raise FaultError("signal %d with the dialog open: exit status %s, killed by signal %s (want %d)"
                             % (sig, status, con.child.signalstatus, 128 + sig))
        tail = bytes(con.raw[-200:])
        if b"\x1b[?1049l" not in tail or b"\x1b[?25h" not in tail:
            raise FaultError("signal %d: terminal not restored, output ends %r" % (sig, tail))
        m = re.search(rb"(runtime error:|ERROR: \w*Sanitizer)", bytes(con.raw))
        if m or con.sanitizer_reports():
            raise FaultError("signal %d: sanitizer report(s): %s %s" % (
                sig, con.sanitizer_reports(), "".join(open(p).read()[:3000] for p in con.sanitizer_reports())))
        posts = [a for a in actions_in(srv.log) if a["route"].endswith("/retry")]
        if posts:
            raise FaultError("signal %d with the dialog open sent a retry: %r" % (sig, posts))
        return status
    finally:
        if con.child.isalive():
            con.child.kill(signal.SIGKILL)
        srv.stop()


def actions_in(log):
    out = []
    try:
        for line in open(log):
            line = line.strip()
            if line:
                out.append(json.loads(line))
    except FileNotFoundError:
        pass
    return out


def restart_core_on(srv, port, log, workdir):
    """A core server again on the same port and action log (appended)."""
    import actlib
    srv.port, srv.url, srv.log = port, "http://127.0.0.1:%d" % port, log
    args = [actlib.PY, os.path.join(ROOT, "tools", "coresrv", "coresrv.py"), "--system", "attune2",
            "--port", str(port), "--log", log, "--quiet", "--env-file", os.path.join(stack_dir(), "env")]
    end = time.time() + 15
    while time.time() < end:
        srv.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=open(log + ".err2", "a"))
        t = time.time()
        while time.time() - t < 5:
            try:
                if actlib.http_json("GET", srv.url + "/health", timeout=1)[0] == 200:
                    return
            except OSError:
                pass
            if srv.proc.poll() is not None:
                break
            time.sleep(0.1)
        if srv.proc.poll() is None:
            srv.proc.kill()
        time.sleep(0.5)    # the port may still be held a moment
    raise FaultError("could not restart the core on port %d" % port)
