"""Fixtures for the action-layer tests: the stack env, per-system configs, secret checks."""
import os
import re

import pytest

import actlib

SECRET_VARS = ("RD_CORE_TOKEN", "RD_CORE_VIEWER_TOKEN", "RD_CORE_API_KEY", "RD_CORE_PASSWORD",
               "RD_CORE_VIEWER_PASSWORD", "RD_CORE_JWT_SECRET")
JWT_RE = re.compile(r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")

def secrets():
    vals = [os.environ.get(v) for v in SECRET_VARS]
    return [v for v in vals if v]


def assert_no_secrets(*texts):
    for t in texts:
        if not t:
            continue
        for s in secrets():
            assert s not in t, "a secret leaked into output"
        assert not JWT_RE.search(t), "a JWT leaked into output"


@pytest.fixture(scope="session")
def stack():
    if not actlib.have_stack():
        pytest.fail("needs the local stack env (tests/stack/stack.sh; source DIR/env)")
    return os.environ


def profile_ref(name):
    """The shipped profile by name; a missing one is a failure, never replaced."""
    shipped = os.path.join(actlib.ROOT, "profiles", name + ".profile")
    assert os.path.exists(shipped), "shipped profile missing: %s" % shipped
    return name


SYSTEMS = {
    # name: (profile, core env var, store env var)
    "attune1": ("attune", "RD_CORE_URL_ATTUNE1", "RD_PG_DSN_ATTUNE1"),
    "attune2": ("attune", "RD_CORE_URL_ATTUNE2", "RD_PG_DSN_ATTUNE2"),
    "tasker": ("tasker", "RD_CORE_URL_TASKER", "RD_PG_DSN_TASKER"),
    "alakai": ("alakai", "RD_CORE_URL_ALAKAI", "RD_REDIS_URL"),
    "openagents": ("openagents", "RD_CORE_URL_OPENAGENTS", "RD_PG_DSN_OPENAGENTS"),
}


class Act:
    """Runs `redrive ACTION ...` against one system with a private journal."""

    def __init__(self, tmpdir, system, core=None, **cfg):
        prof, core_var, store_var = SYSTEMS[system]
        self.tmpdir = tmpdir
        self.system = system
        self.core = core or os.environ[core_var]
        kv = dict(profile=profile_ref(prof), store=os.environ.get(store_var),
                  core=self.core, auth="bearer", token="env:RD_CORE_TOKEN")
        kv.update(cfg)
        self.config = actlib.write_config(tmpdir, system, **kv)

    def run(self, *args, env=None, stdin=None, timeout=60):
        p = actlib.run_redrive(["--config", self.config] + list(args), env_extra=env,
                               stdin=stdin, timeout=timeout, tmpdir=self.tmpdir)
        assert_no_secrets(p.stdout, p.stderr)
        if os.path.exists(actlib.journal_path(self.tmpdir)):
            assert_no_secrets(open(actlib.journal_path(self.tmpdir)).read())
        return p

    def journal(self):
        """The outcome lines (each action is first journaled as "pending", then completed)."""
        return [j for j in actlib.read_journal(self.tmpdir) if j.get("code") != "pending"]


def keys_of(stdout):
    return re.findall(r"key ([0-9a-f]{32})", stdout)


def core_entries(core, key):
    return [a for a in actlib.core_actions(core) if a.get("key") == key]


@pytest.fixture
def act(stack, tmp_path):
    def make(system, **kw):
        return Act(tmp_path, system, **kw)
    return make
