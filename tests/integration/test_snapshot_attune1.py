"""redrive snapshot against Attune era 1 (database attune1) — tests/stack/README.md."""
import os

import pytest

import attune_checks as ac
import stack_fixtures as fx
from snaphelp import need_env


@pytest.fixture(scope="module")
def cfg(tmp_path_factory):
    need_env("RD_PG_DSN_ATTUNE1")
    fx.reload("attune1")
    return ac.config(tmp_path_factory.mktemp("attune1"), os.environ["RD_PG_DSN_ATTUNE1"])


def test_overview(cfg):
    ac.check_overview(cfg, 1)


def test_workers_health(cfg):
    ac.check_workers(cfg, 1)


def test_chains(cfg):
    ac.check_chains(cfg)


def test_filters(cfg):
    ac.check_filters(cfg)


def test_text_is_sanitized(cfg):
    ac.check_text(cfg)


def test_fast(cfg):
    ac.check_speed(cfg)
