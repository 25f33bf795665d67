"""Fault injection, the CI version: a few SIGSTOP/SIGCONT and SIGKILL+restart cycles per
service of the local stack with the console (ASan+UBSan build) running in a pty, and an
action in flight when its core is killed. See README.md beside this file; run.sh is the
long run."""
import os

import pytest

import faultlib as fl

# service -> (SIGSTOP cycles, SIGKILL cycles); RabbitMQ's restart alone takes ~15 s
CYCLES = {
    "postgresql": (1, 1),
    "redis": (1, 1),
    "rabbitmq": (1, 1),
    "sqs": (1, 1),
    "core-attune1": (1, 1),
    "core-attune2": (1, 1),
    "core-tasker": (1, 1),
    "core-alakai": (1, 1),
    "core-openagents": (1, 1),
}


@pytest.fixture(scope="module", autouse=True)
def asan_build():
    if not os.environ.get("RD_PG_DSN_ATTUNE2"):
        pytest.fail("needs the local stack env (tests/stack/stack.sh start DIR; . DIR/env)")
    fl.ensure_build()


@pytest.mark.parametrize("service", list(CYCLES))
def test_fault_cycles(service, tmp_path):
    stops, kills = CYCLES[service]
    fig = fl.run_service(tmp_path, service, stops, kills)
    print("\n%s: %r" % (service, fig.row()))
    assert fig.cycles == stops + kills and not fig.failures and not fig.crashes and not fig.hangs, fig.row()


def test_action_in_flight_when_core_killed(tmp_path):
    res = fl.inflight_action(tmp_path)
    print("\nin flight: %r" % res)
    assert res["requests"] == 1 and res["hangs"] == 0, res
