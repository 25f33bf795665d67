"""redrive snapshot against each Attune era: era 1 (database attune1) and era 2 (attune2) —
tests/stack/README.md. Every test runs once per era."""
import os

import pytest

import attune_checks as ac
import stack_fixtures as fx
from snaphelp import need_env


@pytest.fixture(scope="module", params=[1, 2], ids=["attune1", "attune2"])
def era(request):
    return request.param


@pytest.fixture(scope="module")
def cfg(era, tmp_path_factory):
    db = "attune%d" % era
    need_env("RD_PG_DSN_" + db.upper())
    fx.reload(db)
    return ac.config(tmp_path_factory.mktemp(db), os.environ["RD_PG_DSN_" + db.upper()])


def test_overview(cfg, era):
    ac.check_overview(cfg, era)


def test_workers_health(cfg, era):
    ac.check_workers(cfg, era)


def test_chains(cfg):
    ac.check_chains(cfg)


def test_filters(cfg):
    ac.check_filters(cfg)


def test_text_is_sanitized(cfg):
    ac.check_text(cfg)


def test_fast(cfg):
    ac.check_speed(cfg)
