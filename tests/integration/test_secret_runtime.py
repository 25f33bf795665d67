"""A cmd: secret that works at start and fails later, at run time (issue 11): the
PostgreSQL source runs store_password's command again at every connect (short-lived
tokens); when the command then exits non-zero, the source's error names the config's
file:line and the exit status ("exited with status 3"), never a raw wait status such as
"status 768"."""
import json
import os
import re
import time

import psycopg2

from snaphelp import need_env, write_config
from test_redis_alakai import Watch


def sources(w):
    return {s["name"]: s for s in json.loads(w.ask("json overview")[len("json "):])["sources"]}


def kick_connections(dsn_admin):
    """Ends redrive's PostgreSQL sessions: the source reconnects (and runs the command)."""
    c = psycopg2.connect(dsn_admin)
    c.autocommit = True
    with c.cursor() as cur:
        cur.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE application_name = 'redrive' AND pid <> pg_backend_pid()")
    c.close()


def test_store_password_command_failing_at_run_time(tmp_path):
    need_env("RD_PG_DSN_ATTUNE1", "RD_PG_ADMIN_DSN_ATTUNE1")
    count = tmp_path / "count"
    script = tmp_path / "pw.sh"
    script.write_text('#!/bin/sh\nn=$(cat "%s" 2>/dev/null || echo 0); n=$((n+1)); echo $n > "%s"\n'
                      '[ "$n" -le 1 ] && { echo redrive-ro; exit 0; }\necho "no token" >&2; exit 3\n'
                      % (count, count))
    script.chmod(0o700)
    cfg = write_config(tmp_path, {"p": {"profile": "attune", "store": os.environ["RD_PG_DSN_ATTUNE1"],
                                        "store_password": "cmd:%s" % script}})
    line = next(i for i, l in enumerate(open(cfg).read().splitlines(), 1) if l.startswith("store_password"))
    w = Watch(cfg, "p", ready_timeout=30)
    try:
        assert w.ask("state postgresql ok 30").startswith("ok")
        assert count.read_text().strip() == "1"
        kick_connections(os.environ["RD_PG_ADMIN_DSN_ATTUNE1"])
        want = "%s:%d: store_password: command exited with status 3" % (cfg, line)
        end, err = time.time() + 40, ""
        while time.time() < end:
            err = sources(w)["postgresql"]["error"] or ""
            if want in err:
                break
            time.sleep(0.3)
        assert want in err, err
        assert not re.search(r"status (256|768)\b", err), err
        assert "no token" not in err                     # what it printed is never shown
        assert sources(w)["postgresql"]["state"] in ("stale", "down")
        assert int(count.read_text()) >= 2
    finally:
        if w.p.poll() is None:
            w.ask("quit", timeout=5)
        w.p.wait(timeout=10)
