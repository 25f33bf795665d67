"""redrive snapshot when a store is down, hangs, or the config is wrong: it must still
answer within its deadline, report the source with an error, and never hang or crash."""
import os
import socket
import subprocess
import threading

import pytest

from snaphelp import need_env, rd_bin, snapshot, write_config


class HangingServer:
    """Accepts TCP connections and never answers (a hung PostgreSQL)."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.conns = []
        self.stop = False
        self.t = threading.Thread(target=self._run, daemon=True)
        self.t.start()

    def _run(self):
        self.sock.settimeout(0.2)
        while not self.stop:
            try:
                c, _ = self.sock.accept()
                self.conns.append(c)
            except OSError:
                pass

    def close(self):
        self.stop = True
        self.t.join()
        for c in self.conns:
            c.close()
        self.sock.close()


@pytest.fixture
def hanging():
    h = HangingServer()
    yield h
    h.close()


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def pg_state(snap):
    return snap.source("postgresql")


def test_hanging_store_returns_within_deadline(tmp_path, hanging):
    sysd = {"profile": "attune",
            "store": "host=127.0.0.1 port=%d dbname=x user=redrive_ro" % hanging.port}
    broker = os.environ.get("RD_RABBIT_MGMT_URL")
    if broker:
        sysd.update({"broker": broker, "broker_user": os.environ.get("RD_RABBIT_USER", ""),
                     "broker_password": "env:RD_RABBIT_PASSWORD"})
    cfg = write_config(tmp_path, {"hang": sysd})
    s = snapshot(cfg, "hang", "--json", timeout=20)
    assert s.elapsed < 9.5, "snapshot must not wait past its deadline (%.1f s)" % s.elapsed
    assert s.rc == 3, s.err
    pg = pg_state(s)
    assert pg["state"] in ("down", "stale")
    assert "timed out" in pg["error"]
    assert len(hanging.conns) >= 1, "it did connect"
    # any other configured source (the broker) still answered
    others = [x for x in s.json["sources"] if x["name"] != "postgresql"]
    if broker:
        assert others, "the broker source is reported"
    for o in others:
        assert o["state"] == "ok", o


def test_dead_port_is_down_quickly(tmp_path):
    cfg = write_config(tmp_path, {"dead": {
        "profile": "tasker", "store": "host=127.0.0.1 port=%d dbname=x" % free_port()}})
    s = snapshot(cfg, "dead", "--json")
    assert s.rc == 3
    assert s.elapsed < 3
    pg = pg_state(s)
    assert pg["state"] == "down" and pg["error"]
    # text mode prints the partial output too
    s = snapshot(cfg, "dead")
    assert s.rc == 3 and "down" in s.out


def test_unresolvable_host_is_down(tmp_path):
    cfg = write_config(tmp_path, {"dns": {
        "profile": "openagents", "store": "host=no-such-host.invalid port=5432 dbname=x"}})
    s = snapshot(cfg, "dns", "--json")
    assert s.rc == 3 and s.elapsed < 9.5
    assert pg_state(s)["state"] == "down"


def test_host_name_is_resolved_off_the_loop(tmp_path):
    """The store's host name is looked up with evdns and libpq is given the address: the C
    library's blocking getaddrinfo (which libpq would run on the loop) never sees the name.
    A shim (tests/integration/nogai.c) makes that call fail and logs it."""
    need_env("RD_PG_PORT")
    shim = os.path.join(os.path.dirname(rd_bin()), "..", "..", "tests", "integration", "libnogai.so")
    assert os.path.exists(shim), shim
    log = tmp_path / "gai.log"
    env = {"LD_PRELOAD": os.path.abspath(shim), "RD_NOGAI": "localhost", "RD_NOGAI_LOG": str(log)}
    # the shim works: the C library's lookup of the name fails and is logged
    p = subprocess.run(["getent", "ahosts", "localhost"], env=dict(os.environ, **env), capture_output=True)
    assert p.returncode != 0 and log.read_text() == "getaddrinfo localhost\n", (p.returncode, p.stdout)
    log.unlink()
    cfg = write_config(tmp_path, {"lh": {
        "profile": "openagents",
        "store": "host=localhost port=%s dbname=openagents user=redrive_ro"
                 % os.environ["RD_PG_PORT"]}})
    s = snapshot(cfg, "lh", "--json", env=env)
    assert s.rc == 0, s.out + s.err
    assert pg_state(s)["state"] == "ok", s.json["sources"]
    assert not log.exists(), log.read_text()


def test_bad_query_in_profile_is_reported(tmp_path):
    need_env("RD_PG_DSN_OPENAGENTS")
    prof = tmp_path / "broken.profile"
    prof.write_text("[profile]\nname = broken\nstore = postgresql\nsemantics = openagents\n"
                    "[query counts]\nSELECT nonsense FROM nowhere\n")
    cfg = write_config(tmp_path, {"b": {"profile": str(prof),
                                        "store": os.environ["RD_PG_DSN_OPENAGENTS"]}})
    s = snapshot(cfg, "b", "--json")
    assert s.rc == 3
    assert "query counts" in pg_state(s)["error"]


def test_config_errors_exit_2_with_file_line(tmp_path):
    p = tmp_path / "config"
    p.write_text('[system "x"]\nprofile = attune\nthis is not a key value line\n'
                 'poll = forever\n')
    s = snapshot(str(p), "x")
    assert s.rc == 2
    assert "%s:3:" % p in s.err and "%s:4:" % p in s.err, s.err


def test_unknown_system_and_bad_usage_exit_2(tmp_path):
    cfg = write_config(tmp_path, {"x": {"profile": "attune", "store": "host=/nonexistent"}})
    assert snapshot(cfg, "nope").rc == 2
    assert snapshot(cfg, "x", "--view", "bogus").rc == 2
    assert snapshot(cfg, "x", "--view", "chain").rc == 2
    assert snapshot(cfg, "x", "--frobnicate").rc == 2


def test_unknown_profile_exit_2(tmp_path):
    cfg = write_config(tmp_path, {"x": {"profile": "no-such-profile",
                                        "store": "host=/nonexistent"}})
    s = snapshot(cfg, "x")
    assert s.rc == 2 and "no-such-profile" in s.err


# ---- config problems found before connecting (issue 11): exit 2 with file:line --------

def key_line(cfg, key):
    for n, line in enumerate(open(cfg).read().splitlines(), 1):
        if line.split("=")[0].strip() == key:
            return n
    raise AssertionError("no %s in %s" % (key, cfg))


def broker_system(password, store=None):
    return {"profile": "attune", "store": store or "host=127.0.0.1 port=%d dbname=x" % free_port(),
            "broker": "http://127.0.0.1:%d" % free_port(), "broker_user": "guest",
            "broker_password": password}


def assert_config_error(cfg, system, key, *words):
    s = snapshot(cfg, system, "--json", timeout=20)
    assert s.rc == 2, (s.rc, s.err)
    where = "%s:%d:" % (cfg, key_line(cfg, key))
    lines = [l for l in s.err.splitlines() if l.startswith(where)]
    assert lines, "no %s message in:\n%s" % (where, s.err)
    for w in words:
        assert w in lines[0], lines[0]
    assert s.elapsed < 5, "a config error is found before connecting (%.1f s)" % s.elapsed
    return lines[0]


def test_missing_env_secret_is_a_config_error(tmp_path):
    os.environ.pop("RD_NO_SUCH_VAR_XYZ", None)
    cfg = write_config(tmp_path, {"e": broker_system("env:RD_NO_SUCH_VAR_XYZ")})
    assert_config_error(cfg, "e", "broker_password", "broker_password", "RD_NO_SUCH_VAR_XYZ")


def test_missing_secret_file_is_a_config_error(tmp_path):
    cfg = write_config(tmp_path, {"f": broker_system("file:/nonexistent/redrive-secret")})
    assert_config_error(cfg, "f", "broker_password", "broker_password", "/nonexistent/redrive-secret")


def test_world_readable_secret_file_is_a_config_error(tmp_path):
    secret = tmp_path / "pw"
    secret.write_text("not-a-real-password\n")
    secret.chmod(0o644)
    cfg = write_config(tmp_path, {"w": broker_system("file:%s" % secret)})
    line = assert_config_error(cfg, "w", "broker_password", "broker_password")
    assert "not-a-real-password" not in line


def test_bad_conninfo_is_a_config_error(tmp_path):
    cfg = write_config(tmp_path, {"c": {"profile": "attune",
                                        "store": "host=127.0.0.1 no_such_option=1 dbname=x"}})
    assert_config_error(cfg, "c", "store", "store", "no_such_option")


def test_bad_redis_url_is_a_config_error(tmp_path):
    cfg = write_config(tmp_path, {"r": {"profile": "alakai", "store": "redis://127.0.0.1:99999/0"}})
    assert_config_error(cfg, "r", "store", "store")


def test_good_secret_file_is_no_config_error(tmp_path):
    secret = tmp_path / "pw"
    secret.write_text("pw\n")
    secret.chmod(0o600)
    cfg = write_config(tmp_path, {"g": broker_system("file:%s" % secret)})
    s = snapshot(cfg, "g", "--json", timeout=20)
    assert s.rc == 3, (s.rc, s.err)      # dead ports: sources down, the config is fine
    assert "%s:" % cfg not in s.err, s.err
