"""Fault injection, the CI version: a few SIGSTOP/SIGCONT and SIGKILL+restart cycles per
service of the local stack with the console (ASan+UBSan build) running in a pty, one
connection-reset cycle per proxied service, an action in flight when its core is killed or
its connection reset, a resize storm and the quitting signals with a dialog open. See
README.md beside this file; run.sh is the long run."""
import os
import signal

import pytest

import faultlib as fl

# service -> (SIGSTOP cycles, SIGKILL cycles, reset cycles); RabbitMQ's restart alone takes ~15 s
CYCLES = {
    "postgresql": (1, 1, 0),
    "redis": (1, 1, 0),
    "rabbitmq": (1, 1, 0),
    "sqs": (1, 1, 0),
    "core-attune1": (1, 1, 0),
    "core-attune2": (1, 1, 0),
    "core-tasker": (1, 1, 0),
    "core-alakai": (1, 1, 0),
    "core-openagents": (1, 1, 0),
    "reset-postgresql": (0, 0, 1),
    "reset-redis": (0, 0, 1),
    "reset-rabbitmq": (0, 0, 1),
    "reset-core-attune2": (0, 0, 1),
}


@pytest.fixture(scope="module", autouse=True)
def asan_build():
    if not os.environ.get("RD_PG_DSN_ATTUNE2"):
        pytest.fail("needs the local stack env (tests/stack/stack.sh start DIR; . DIR/env)")
    fl.ensure_build()


@pytest.mark.parametrize("service", list(CYCLES))
def test_fault_cycles(service, tmp_path):
    stops, kills, resets = CYCLES[service]
    fig = fl.run_service(tmp_path, service, stops, kills, resets)
    print("\n%s: %r" % (service, fig.row()))
    assert fig.cycles == stops + kills + resets and not fig.failures and not fig.crashes and not fig.hangs, fig.row()


@pytest.mark.parametrize("fault", ["kill", "reset"])
def test_action_in_flight_when_core_killed_or_reset(fault, tmp_path):
    res = fl.inflight_action(tmp_path, fault)
    print("\nin flight: %r" % res)
    assert res["requests"] == 1 and res["hangs"] == 0 and res["lost_journal"] == 0, res
    assert res["proxy_posts"] == (1 if fault == "reset" else None), res


def test_resize_storm_and_sigtstp_with_dialog_open(tmp_path):
    res = fl.resize_storm(tmp_path)
    print("\nstorm: %r" % res)
    assert res["resizes"] == 200 and res["hangs"] == 0, res


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_quitting_signal_with_dialog_open(sig, tmp_path):
    assert fl.signal_with_dialog(tmp_path, sig) == 128 + sig


@pytest.mark.parametrize("service", ["postgresql", "redis", "rabbitmq", "sqs"])
def test_quit_while_service_hung_leaks_nothing(service, tmp_path):
    assert fl.quit_while_hung(tmp_path, service) == 0
