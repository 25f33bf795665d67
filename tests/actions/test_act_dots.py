"""Security issue 32: a target id that is a dot segment must not reach another route.

An id of "..", "." (or an empty one) escaped into a route path as is (dots are unreserved)
and libcurl removed the segment: `retry ..` on Attune sent POST /api/v1/retry, an Alakai
task hash `alakai-executions:..` retried with `retry --status failed` sent
POST /dashboard/retry. Every route of every shipped profile now refuses such a value: the
item is `refused` with its reason (CLI and journal), nothing is sent for it, the rest of a
batch goes on, and the exit status says it failed. Action paths are also sent as built
(CURLOPT_PATH_AS_IS): libcurl never rewrites them.

Private reference core servers (tools/coresrv) with their access log, so that every
request that reached a core, on any route, is seen; the real stores of the local stack."""
import json
import os
import re

import pytest
import redis

import actlib

TASK2 = "00000000-0000-4000-8000-100000000002"
STEP3 = "00000000-0000-4000-8000-200000000003"
WHY = 'not sent: an empty, "." or ".." path segment would reach another route'
REQ_RE = re.compile(r'"([A-Z]+) (\S+) HTTP/1\.[01]"')


@pytest.fixture(scope="module")
def cores(tmp_path_factory):
    """One private core per system, started on first use, its access log on."""
    if not actlib.have_stack():
        pytest.fail("needs the local stack env (tests/stack/stack.sh; source DIR/env)")
    made = {}
    tmp = tmp_path_factory.mktemp("cores")

    def get(system):
        if system not in made:
            made[system] = actlib.CoreServer(system, tmp, quiet=False)
        return made[system]
    yield get
    for c in made.values():
        c.stop()


def requests_of(core, since=0):
    """(method, path) of every request the core received after byte `since` of its log."""
    return [m.groups() for m in REQ_RE.finditer(core.access_log()[since:])]


def changes(reqs):
    """The requests that could change something (anything but GET)."""
    return [r for r in reqs if r[0] != "GET"]


# Every route of every system profile: (system, action, target on the command line,
# placeholder that gets the dot value). Tasker's retry has two variables: both are tested.
ROUTES = [
    ("attune2", "retry", "{v}", "id"),
    ("attune2", "drain", "{v}", "worker"),
    ("attune2", "undrain", "{v}", "worker"),
    ("attune2", "deactivate", "{v}", "worker"),
    ("attune2", "activate", "{v}", "worker"),
    ("attune1", "retry", "{v}", "id"),
    ("attune1", "drain", "{v}", "worker"),
    ("openagents", "retry", "{v}", "id"),
    ("openagents", "drain", "{v}", "worker"),
    ("openagents", "undrain", "{v}", "worker"),
    ("openagents", "deactivate", "{v}", "worker"),
    ("openagents", "activate", "{v}", "worker"),
    ("alakai", "retry", "{v}", "id"),
    ("tasker", "retry", TASK2 + "/{v}", "id"),
    ("tasker", "retry", "{v}/" + STEP3, "task"),
    ("tasker", "resolve", "{v}", "id"),
]


def tasker_kw(system):
    return dict(auth="api-key", token="env:RD_CORE_API_KEY") if system == "tasker" else {}


@pytest.mark.parametrize("value", ["..", "."])
@pytest.mark.parametrize("system,action,target,var", ROUTES,
                         ids=["%s-%s-%s" % (s, a, v) for s, a, _, v in ROUTES])
def test_dot_target_refused_on_every_route(act, cores, system, action, target, var, value):
    core = cores(system)
    since = len(core.access_log())
    a = act(system, core=core.url, **tasker_kw(system))
    target = target.format(v=value)
    p = a.run(action, target, "--yes", "--force")
    assert p.returncode == 1, p.stdout + p.stderr
    msg = '{%s} is "%s": %s' % (var, value, WHY)
    assert re.fullmatch(r"%s: refused: %s \(not sent, key [0-9a-f]{32}\)\n"
                        % (re.escape(target), re.escape(msg)), p.stdout), p.stdout
    assert changes(requests_of(core, since)) == [], "a request reached the core"
    assert not [x for x in core.actions() if x.get("target") in (value, target)]
    j = a.journal()
    assert [(x["targets"], x["action"], x["code"], x["result"], x["http_status"])
            for x in j] == [([target], action, "refused", msg, 0)], j


def test_retry_dots_among_good_ids_goes_on(act, cores):
    """`retry 4 .. 5`: the dot item is refused, the others are retried, exit 1."""
    actlib.reload_fixture("attune2")
    try:
        core = cores("attune2")
        since = len(core.access_log())
        a = act("attune2", core=core.url)
        p = a.run("retry", "4", "..", "--yes", "--force")
        assert p.returncode == 1, p.stdout + p.stderr
        lines = p.stdout.splitlines()
        assert len(lines) == 2, p.stdout
        assert lines[0].startswith("4: ok: retried: attempt 3 queued (HTTP 202, key "), p.stdout
        assert lines[1].startswith('..: refused: {id} is "..": %s (not sent, key ' % WHY), p.stdout
        assert changes(requests_of(core, since)) == [("POST", "/api/v1/executions/4/retry")]
        codes = [(x["targets"], x["code"]) for x in a.journal()]
        assert codes == [(["4"], "ok"), ([".."], "refused")], codes
    finally:
        actlib.reload_fixture("attune2")


def alakai_failed(r, task):
    rec = {"status": "failed", "attempt": 1, "taskSnapshot": {"taskId": task},
           "dispatchedAt": "2026-01-01T00:00:00.000Z", "resolvedAt": "2026-01-01T00:01:00.000Z",
           "errorCode": "DOTS", "errorMessage": "dot task"}
    r.hset("alakai-executions:" + task, "1", json.dumps(rec))


def test_alakai_dot_hashes_retried_by_status(act, cores):
    """Hashes alakai-executions:.. and :. in the store beside a good one, `retry --status
    failed --filter TEXT --yes`: both dot tasks refused with the reason, no request to
    /dashboard/retry or /dashboard/executions/retry, the good task retried, exit 1.
    (The filter leaves out the fixture's task-hostile, whose raw bytes are another matter.)"""
    actlib.reload_fixture("alakai")
    try:
        r = redis.Redis.from_url(os.environ["RD_REDIS_URL"])
        for t in ("..", ".", "task-dot-good"):
            alakai_failed(r, t)
        core = cores("alakai")
        since = len(core.access_log())
        a = act("alakai", core=core.url)
        p = a.run("retry", "--status", "failed", "--filter", "dot task", "--yes")
        assert p.returncode == 1, p.stdout + p.stderr
        assert "redrive: selected 3 executions (status=failed text=dot task) from 1 page of " \
               "the store" in p.stderr.splitlines(), p.stderr
        out = {}
        for line in p.stdout.splitlines():
            tid, rest = line.split(": ", 1)
            out[tid] = re.sub(r"key [0-9a-f]{32}", "key K", rest)
        assert out == {
            "..": 'refused: {id} is "..": %s (not sent, key K)' % WHY,
            ".": 'refused: {id} is ".": %s (not sent, key K)' % WHY,
            "task-dot-good": "ok: retried: attempt 2 queued (HTTP 202, key K)"}, p.stdout
        assert changes(requests_of(core, since)) == [
            ("POST", "/dashboard/executions/task-dot-good/retry")]
        outcomes = sorted((x["targets"][0], x["code"], x["result"]) for x in a.journal())
        assert outcomes == [(".", "refused", '{id} is ".": ' + WHY),
                            ("..", "refused", '{id} is "..": ' + WHY),
                            ("task-dot-good", "ok", "retried: attempt 2 queued")], outcomes
        st = a.run("batch", "list", "--json")
        assert st.returncode == 0, st.stderr
        [b] = json.loads(st.stdout)
        assert (b["total"], b["done"], b["ok"], b["failed"], b["state"]) == (3, 3, 1, 2, "done"), b
        assert [r.hlen("alakai-executions:" + t) for t in ("..", ".")] == [1, 1]
        assert r.hlen("alakai-executions:task-dot-good") == 2
    finally:
        actlib.reload_fixture("alakai")


def test_action_path_sent_as_built(act, cores):
    """Defence in depth: libcurl removes no dot segment of an action's path (here one in
    the core URL), so the core sees what redrive built; before, it saw the path squashed
    (POST /api/v1/executions/4/retry) and applied it."""
    actlib.reload_fixture("attune2")
    try:
        core = cores("attune2")
        since = len(core.access_log())
        a = act("attune2", core=core.url + "/x/..")
        p = a.run("retry", "4", "--yes")
        assert p.returncode == 1, p.stdout + p.stderr
        assert p.stdout.startswith("4: other: core has no such route: "
                                   "POST /x/../api/v1/executions/4/retry (HTTP 404, key "), p.stdout
        assert changes(requests_of(core, since)) == [("POST", "/x/../api/v1/executions/4/retry")]
    finally:
        actlib.reload_fixture("attune2")
