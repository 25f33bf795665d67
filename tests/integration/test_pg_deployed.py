"""PostgreSQL stores as deployed (issue 9): credentials, TLS, schemas, partial permissions.

A private PostgreSQL 15 for this module (port RD_PORT_BASE+40, data under /var/tmp): `ssl = on`
with a certificate from a CA made here (openssl CLI), a SCRAM role that may log in over TLS
only, Attune era 2 in a schema not named attune and in public, OpenAgents without job_tags
and a role that may not read its workers. Every check runs `redrive snapshot --json` on a
generated config and reads its exit code, its JSON and its stderr.
"""
import os
import re
import secrets
import shutil
import subprocess
import tempfile

import psycopg2
import pytest

from snaphelp import ROOT, by_id, snapshot, write_config

PGBIN = "/usr/lib/postgresql/15/bin"
SCHEMA = os.path.join(ROOT, "tests", "stack", "schema")


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    assert p.returncode == 0, "%s: %s%s" % (cmd[0], p.stdout, p.stderr)
    return p


def make_certs(d):
    """CA, server cert for 127.0.0.1/localhost, and a second CA that signed nothing."""
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    ca = ["-addext", "basicConstraints=critical,CA:TRUE",
          "-addext", "keyUsage=critical,keyCertSign,cRLSign"]
    for name, cn in (("ca", "rd deployed test CA"), ("wrong-ca", "rd WRONG CA")):
        run(["openssl", "req", "-x509", *ec, "-keyout", f"{d}/{name}.key", "-out",
             f"{d}/{name}.crt", "-days", "30", "-subj", f"/CN={cn}", *ca])
    run(["openssl", "req", "-new", *ec, "-keyout", f"{d}/server.key", "-out",
         f"{d}/server.csr", "-subj", "/CN=127.0.0.1"])
    with open(f"{d}/server.ext", "w") as f:
        f.write("subjectAltName = IP:127.0.0.1, DNS:localhost\n"
                "basicConstraints = critical, CA:FALSE\nextendedKeyUsage = serverAuth\n")
    run(["openssl", "x509", "-req", "-in", f"{d}/server.csr", "-CA", f"{d}/ca.crt",
         "-CAkey", f"{d}/ca.key", "-set_serial", "0x2001", "-days", "30",
         "-extfile", f"{d}/server.ext", "-out", f"{d}/server.crt"])


def attune_ddl(schema):
    """The era-2 DDL of the stack, retargeted to `schema` (the DDL names it only here)."""
    with open(os.path.join(SCHEMA, "attune_era2.sql")) as f:
        ddl = f.read()
    head = "CREATE SCHEMA attune;\nSET search_path = attune, public;\n"
    assert head in ddl
    new = ("SET search_path = public;\n" if schema == "public" else
           "CREATE SCHEMA %s;\nSET search_path = %s;\n" % (schema, schema))
    return ddl.replace(head, new)


ATTUNE_DATA = """
INSERT INTO worker (id, name, status, last_heartbeat, cordoned, cordon_reason, capabilities)
VALUES (1, 'w-active', 'active', now(), false, NULL, '{}'),
       (2, 'w-cordoned', 'active', now(), true, 'disk replacement', '{}');
INSERT INTO execution (id, action_ref, status, retry_count, max_retries, retry_reason,
                       original_execution, worker, created, result)
VALUES (10, 'core.echo', 'failed', 0, 3, NULL, NULL, 1, now() - interval '3 minutes',
        '{"error": "first attempt"}'),
       (11, 'core.echo', 'failed', 1, 3, 'worker_unavailable', 10, 2,
        now() - interval '2 minutes', '{"error": "second attempt"}');
"""


def openagents_ddl():
    with open(os.path.join(SCHEMA, "openagents.sql")) as f:
        ddl = f.read()
    start = ddl.index("CREATE TABLE job_tags")
    end = ddl.index("CREATE INDEX idx_job_tags_tag ON job_tags (tag);\n")
    ddl = ddl[:start] + ddl[end + len("CREATE INDEX idx_job_tags_tag ON job_tags (tag);\n"):]
    assert "job_tags" not in ddl
    return ddl


OA_DATA = """
INSERT INTO jobs (job_id, name, status, max_retries, retry_count, created_at, updated_at,
                  error, worker_id)
VALUES ('job-a', 'render', 'FAILED', 3, 1, extract(epoch FROM now()) - 60,
        extract(epoch FROM now()) - 50, '{"type": "Timeout", "message": "took too long"}', 'w1'),
       ('job-b', 'render', 'queued', 3, 0, extract(epoch FROM now()) - 30, NULL, NULL, NULL);
INSERT INTO workers (worker_id, hostname, tags, last_heartbeat, status, running_jobs)
VALUES ('w1', 'host-1', '["gpu"]', extract(epoch FROM now()), 'active', '[]');
"""


@pytest.fixture(scope="module")
def srv():
    base = int(os.environ.get("RD_PORT_BASE", "25400"))
    port = base + 40
    d = tempfile.mkdtemp(prefix="rdpgdep.", dir="/var/tmp")   # postgres must reach it
    os.chmod(d, 0o755)
    tls = os.path.join(d, "tls")
    os.mkdir(tls)
    make_certs(tls)
    data, sock = os.path.join(d, "data"), os.path.join(d, "sock")
    for p in (data, sock):
        os.mkdir(p)
        shutil.chown(p, "postgres", "postgres")
    run(["runuser", "-u", "postgres", "--", f"{PGBIN}/initdb", "-D", data, "-A", "trust",
         "-U", "postgres", "-E", "UTF8", "--no-locale"])
    for name, mode in (("server.crt", 0o644), ("server.key", 0o600)):
        shutil.copy(os.path.join(tls, name), os.path.join(data, name))
        shutil.chown(os.path.join(data, name), "postgres", "postgres")
        os.chmod(os.path.join(data, name), mode)
    with open(os.path.join(data, "postgresql.conf"), "a") as f:
        f.write(f"listen_addresses = '127.0.0.1'\nport = {port}\n"
                f"unix_socket_directories = '{sock}'\nssl = on\n"
                "ssl_cert_file = 'server.crt'\nssl_key_file = 'server.key'\n"
                "password_encryption = 'scram-sha-256'\nfsync = off\n")
    with open(os.path.join(data, "pg_hba.conf"), "w") as f:
        f.write("local all rd_scram reject\n"
                "hostnossl all rd_scram 0.0.0.0/0 reject\n"
                "hostssl all rd_scram 127.0.0.1/32 scram-sha-256\n"
                "local all all trust\n"
                "host all all 127.0.0.1/32 trust\n")
    log = os.path.join(d, "postgres.log")
    shutil.chown(d, "postgres", "postgres")
    run(["runuser", "-u", "postgres", "--", f"{PGBIN}/pg_ctl", "-D", data, "-l", log, "-w",
         "-t", "60", "start"])
    password = secrets.token_hex(16)
    pwfile = os.path.join(d, "scram_password")
    with open(os.open(pwfile, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as f:
        f.write(password)
    shutil.chown(pwfile, os.getuid(), os.getgid())
    try:
        def admin(db):
            c = psycopg2.connect(host=sock, port=port, dbname=db, user="postgres")
            c.autocommit = True
            return c
        c = admin("postgres")
        cur = c.cursor()
        cur.execute("CREATE ROLE rd_ro LOGIN")
        cur.execute("CREATE ROLE rd_scram LOGIN PASSWORD %s", (password,))
        cur.execute("CREATE ROLE rd_noworkers LOGIN")
        for db in ("attune_alt", "attune_public", "oa_notags"):
            cur.execute("CREATE DATABASE %s" % db)
        c.close()
        for db, schema in (("attune_alt", "attune_alt"), ("attune_public", "public")):
            c = admin(db)
            cur = c.cursor()
            cur.execute(attune_ddl(schema))
            cur.execute("SET search_path = %s" % schema)
            cur.execute(ATTUNE_DATA)
            cur.execute(f"GRANT USAGE ON SCHEMA {schema} TO rd_ro, rd_scram")
            cur.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA {schema} TO rd_ro, rd_scram")
            c.close()
        c = admin("oa_notags")
        cur = c.cursor()
        cur.execute(openagents_ddl())
        cur.execute(OA_DATA)
        cur.execute("GRANT SELECT ON ALL TABLES IN SCHEMA public TO rd_ro")
        cur.execute("GRANT SELECT ON jobs, tags, job_dependencies TO rd_noworkers")
        c.close()
        yield {"port": port, "sock": sock, "tls": tls, "pwfile": pwfile, "password": password,
               "dir": d}
    finally:
        subprocess.run(["runuser", "-u", "postgres", "--", f"{PGBIN}/pg_ctl", "-D", data,
                        "-m", "immediate", "-w", "stop"], capture_output=True)
        shutil.rmtree(d, ignore_errors=True)


def tcp(srv, db, **extra):
    kw = {"host": "127.0.0.1", "port": str(srv["port"]), "dbname": db}
    kw.update(extra)
    return " ".join("%s=%s" % kv for kv in kw.items())


def snap(tmp_path, keys, *args):
    cfg = write_config(tmp_path, {"s": keys})
    return snapshot(cfg, "s", "--json", *args, timeout=40)


def assert_no_secret(srv, s):
    for text in (s.out, s.err):
        assert srv["password"] not in text


def scram(srv, db="attune_alt", **over):
    keys = {"profile": "attune", "store": tcp(srv, db), "store_user": "rd_scram",
            "store_password": "file:" + srv["pwfile"], "store_sslmode": "verify-full",
            "store_sslrootcert": os.path.join(srv["tls"], "ca.crt"), "schema": "attune_alt",
            "poll": "1s"}
    keys.update(over)
    return {k: v for k, v in keys.items() if v is not None}


def assert_era2(s):
    ex = by_id(s.json["executions"])
    assert set(ex) == {"10", "11"}
    assert ex["11"]["worker"] == "2" and ex["10"]["worker"] == "1"       # execution.worker
    assert ex["11"]["attempt"] == 2 and ex["11"]["chain_root"] == "10"   # retry columns
    assert ex["11"]["reason"] == "worker_unavailable"
    w = by_id(s.json["workers"])
    assert w["2"]["status"] == "draining" and "disk replacement" in w["2"]["tags"]
    assert w["1"]["status"] == "active"


# ---- credentials and TLS -------------------------------------------------------------

def test_scram_over_verify_full(srv, tmp_path):
    s = snap(tmp_path, scram(srv))
    assert s.rc == 0, s.err
    src = s.source("postgresql")
    assert src["state"] == "ok" and src["notes"] == []
    assert_era2(s)
    assert_no_secret(srv, s)


def test_password_from_env_and_whole_store_as_reference(srv, tmp_path, monkeypatch):
    monkeypatch.setenv("RD_TEST_PGPW", srv["password"])
    s = snap(tmp_path, scram(srv, store_password="env:RD_TEST_PGPW"))
    assert s.rc == 0, s.err
    assert_era2(s)
    # the whole store a reference: credentials inside the URL are accepted
    url = "postgresql://rd_scram:%s@127.0.0.1:%d/attune_alt?sslmode=verify-full&sslrootcert=%s" % (
        srv["password"], srv["port"], os.path.join(srv["tls"], "ca.crt"))
    monkeypatch.setenv("RD_TEST_DATABASE_URL", url)
    s = snap(tmp_path, {"profile": "attune", "store": "env:RD_TEST_DATABASE_URL",
                        "schema": "attune_alt"})
    assert s.rc == 0, s.err
    assert_era2(s)
    assert_no_secret(srv, s)


def test_pgpassword_still_works(srv, tmp_path, monkeypatch):
    monkeypatch.setenv("PGPASSWORD", srv["password"])
    s = snap(tmp_path, scram(srv, store_password=None))
    assert s.rc == 0, s.err
    assert_era2(s)


def test_wrong_password_names_the_user(srv, tmp_path):
    bad = os.path.join(srv["dir"], "bad_password")
    wrong = "not-" + secrets.token_hex(8)
    with open(os.open(bad, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
        f.write(wrong)
    s = snap(tmp_path, scram(srv, store_password="file:" + bad))
    assert s.rc == 3, (s.rc, s.err)
    src = s.source("postgresql")
    assert src["state"] == "down"
    assert 'password authentication failed for user "rd_scram"' in src["error"]
    for text in (s.out, s.err):
        assert wrong not in text and srv["password"] not in text


def test_missing_password_says_whose(srv, tmp_path, monkeypatch):
    monkeypatch.delenv("PGPASSWORD", raising=False)
    monkeypatch.setenv("PGPASSFILE", os.path.join(srv["dir"], "no-such-pgpass"))
    s = snap(tmp_path, scram(srv, store_password=None))
    assert s.rc == 3
    err = s.source("postgresql")["error"]
    assert "no password supplied" in err and 'user "rd_scram"' in err


def test_unresolvable_password_reference(srv, tmp_path, monkeypatch):
    monkeypatch.delenv("RD_TEST_UNSET_PW", raising=False)
    s = snap(tmp_path, scram(srv, store_password="env:RD_TEST_UNSET_PW"))
    # a reference that cannot resolve is a configuration error, named by file:line
    assert s.rc == 2, s.err
    assert re.search(r':\d+: system "[^"]+": store_password: environment variable '
                     r'RD_TEST_UNSET_PW is not set', s.err), s.err


def test_wrong_ca_fails_clearly(srv, tmp_path):
    s = snap(tmp_path, scram(srv, store_sslrootcert=os.path.join(srv["tls"], "wrong-ca.crt")))
    assert s.rc == 3
    err = s.source("postgresql")["error"]
    assert "certificate verify failed" in err, err
    assert_no_secret(srv, s)


def test_verify_full_name_mismatch_fails_clearly(srv, tmp_path):
    # the certificate is for 127.0.0.1/localhost; we connect to that address by another name
    store = "host=db.wrong.example hostaddr=127.0.0.1 port=%d dbname=attune_alt" % srv["port"]
    s = snap(tmp_path, scram(srv, store=store))
    assert s.rc == 3
    err = s.source("postgresql")["error"]
    assert "does not match host name" in err and "db.wrong.example" in err, err
    # verify-ca checks the chain only: the same connection is accepted
    s = snap(tmp_path, scram(srv, store=store, store_sslmode="verify-ca"))
    assert s.rc == 0, s.err
    assert_era2(s)


def test_scram_role_refused_without_tls(srv, tmp_path):
    s = snap(tmp_path, scram(srv, store_sslmode="disable", store_sslrootcert=None))
    assert s.rc == 3
    err = s.source("postgresql")["error"]
    assert 'user "rd_scram"' in err and "no encryption" in err, err
    assert_no_secret(srv, s)


# ---- schemas ------------------------------------------------------------------------

def test_era2_in_public_is_era2(srv, tmp_path):
    # default schema (attune) does not exist there: search_path falls back to public
    s = snap(tmp_path, {"profile": "attune", "store": tcp(srv, "attune_public", user="rd_ro")})
    assert s.rc == 0, s.err
    assert_era2(s)
    s = snap(tmp_path, {"profile": "attune", "store": tcp(srv, "attune_public", user="rd_ro"),
                        "schema": "public"})
    assert s.rc == 0, s.err
    assert_era2(s)


def test_era2_in_other_schema_needs_the_schema_key(srv, tmp_path):
    store = "host=%s port=%d dbname=attune_alt user=rd_ro" % (srv["sock"], srv["port"])
    s = snap(tmp_path, {"profile": "attune", "store": store, "schema": "attune_alt"})
    assert s.rc == 0, s.err
    assert_era2(s)
    # without it nothing of Attune is on the search_path: a clear error, not era 1 data
    s = snap(tmp_path, {"profile": "attune", "store": store})
    assert s.rc == 3
    assert "does not exist" in s.source("postgresql")["error"]


# ---- per-query degradation ----------------------------------------------------------

def test_openagents_without_job_tags(srv, tmp_path):
    s = snap(tmp_path, {"profile": "openagents", "store": tcp(srv, "oa_notags", user="rd_ro")})
    assert s.rc == 0, s.err
    src = s.source("postgresql")
    assert src["state"] == "ok" and src["error"] is None
    assert src["notes"] == ['queues: relation "job_tags" does not exist']
    assert s.json["queues"] == []
    assert set(by_id(s.json["executions"])) == {"job-a", "job-b"}
    assert set(by_id(s.json["workers"])) == {"w1"}
    # the text snapshot shows the note too
    t = snapshot(write_config(tmp_path, {"s": {"profile": "openagents",
                                                "store": tcp(srv, "oa_notags", user="rd_ro")}}),
                 "s")
    assert t.rc == 0 and 'note: queues: relation "job_tags" does not exist' in t.out


def test_role_without_select_on_workers(srv, tmp_path):
    store = "host=%s port=%d dbname=oa_notags user=rd_noworkers" % (srv["sock"], srv["port"])
    s = snap(tmp_path, {"profile": "openagents", "store": store})
    assert s.rc == 0, s.err
    src = s.source("postgresql")
    assert src["state"] == "ok"
    assert "workers: permission denied for table workers" in src["notes"]
    assert s.json["workers"] == []
    ex = by_id(s.json["executions"])
    assert set(ex) == {"job-a", "job-b"} and ex["job-a"]["status"] == "failed"
    assert {c["status"]: c["count"] for c in s.json["counts"]} == {"failed": 1, "queued": 1}


def test_required_query_failure_still_fails(srv, tmp_path):
    # executions is required: a store without `jobs` is down, exit 3
    s = snap(tmp_path, {"profile": "openagents", "store": tcp(srv, "attune_public", user="rd_ro")})
    assert s.rc == 3
    assert 'relation "jobs" does not exist' in s.source("postgresql")["error"]


def test_literal_password_in_store_is_refused(srv, tmp_path):
    s = snap(tmp_path, {"profile": "attune",
                        "store": tcp(srv, "attune_alt", user="rd_scram", password="hunter2")})
    assert s.rc == 2
    assert "password in 'store' is refused" in s.err and "hunter2" not in s.err
