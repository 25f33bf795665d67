"""Error groups as things (issue 34): every group has a short stable id (the first six hex
digits of FNV-1a 64 of its fingerprint), shown by the groups view and its JSON, and accepted
wherever a fingerprint is: `snapshot --view executions --group ID` lists the group's
members from the store (every row of the page a member, the group's total beside them),
`retry --group ID --select-only` selects exactly the group across every page; an id that
names no group, or several, is refused with a clear error. Run on the incident of
test_groups_store (20,000 failures of one error among 60,000+ executions, Attune era 2)."""
import json
import os
import subprocess

from snaphelp import ROOT, need_env, rd_bin, snapshot, write_config
from test_groups_store import INCIDENT_FP, N_ELIGIBLE, N_INCIDENT, incident_db  # noqa: F401


def fnv1a64(text):
    h = 0xcbf29ce484222325
    for b in text.encode():
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return "%016x" % h


INCIDENT_ID = fnv1a64(INCIDENT_FP)[:6]
PERM_FP = "Permission denied: '<s>' key"      # 5 failures of the last hour, among the incident's
PERM_ID = fnv1a64(PERM_FP)[:6]


def cfg(tmp_path, dsn):
    return write_config(tmp_path, {"s": {"profile": "attune", "store": dsn, "core": "http://127.0.0.1:9"}})


def retry(config, tmp_path, *args):
    env = dict(os.environ, TZ="UTC", LANG="C.UTF-8", NO_COLOR="1", HOME=str(tmp_path),
               XDG_STATE_HOME=str(tmp_path / "state"), REDRIVE_PROFILES=os.path.join(ROOT, "profiles"))
    p = subprocess.run([rd_bin(), "--config", config, "retry"] + list(args), capture_output=True,
                       timeout=120, env=env)
    return p.returncode, [json.loads(x) for x in p.stdout.decode().splitlines() if x.strip()], p.stderr.decode()


def test_groups_carry_their_stable_id(incident_db, tmp_path):
    s = snapshot(cfg(tmp_path, incident_db), "s", "--json", "--view", "groups")
    assert s.rc == 0, s.err
    ids = {g["fingerprint"]: g["id"] for g in s.json["groups"]}
    assert ids == {fp: fnv1a64(fp)[:6] for fp in ids}
    assert ids[INCIDENT_FP] == INCIDENT_ID == "30dcba"
    text = snapshot(cfg(tmp_path, incident_db), "s", "--view", "groups")
    assert text.rc == 0, text.err
    lines = text.out.splitlines()
    head = next(i for i, l in enumerate(lines) if l.startswith("ID "))
    assert lines[head + 1].split()[:3] == [INCIDENT_ID, str(N_INCIDENT), str(N_ELIGIBLE)]


def test_executions_of_a_group_by_id_are_its_members_from_the_store(incident_db, tmp_path):
    s = snapshot(cfg(tmp_path, incident_db), "s", "--json", "--view", "executions", "--group", INCIDENT_ID[:4])
    assert s.rc == 0, s.err
    doc = s.json
    assert doc["group"] == {"id": INCIDENT_ID, "fingerprint": INCIDENT_FP, "total": N_INCIDENT, "window_s": 3600}
    rows = doc["executions"]
    assert len(rows) == 100 and doc["executions_more"] is True     # a whole first page, not 0/0
    assert {r["fingerprint"] for r in rows} == {INCIDENT_FP}
    created = [r["created_at"] for r in rows]
    assert created == sorted(created, reverse=True)                   # newest first
    # a small group among the incident's 20,000 failures: all of it on the first page
    s = snapshot(cfg(tmp_path, incident_db), "s", "--json", "--view", "executions", "--group", PERM_ID)
    assert s.rc == 0, s.err
    assert s.json["group"]["total"] == 5
    assert [r["fingerprint"] for r in s.json["executions"]] == [PERM_FP] * 5
    # the whole fingerprint still works
    s = snapshot(cfg(tmp_path, incident_db), "s", "--json", "--view", "executions", "--group", PERM_FP)
    assert s.rc == 0, s.err
    assert (s.json["group"]["id"], len(s.json["executions"])) == (PERM_ID, 5)


def test_an_id_that_names_no_group_or_several_is_refused(incident_db, tmp_path):
    c = cfg(tmp_path, incident_db)
    typo = INCIDENT_ID[:5] + ("0" if INCIDENT_ID[5] != "0" else "1")
    s = snapshot(c, "s", "--json", "--view", "executions", "--group", typo)
    assert (s.rc, s.out) == (2, "")
    assert s.err == ("redrive snapshot: --group: no error group has the id '%s' (of 5 groups) (did you mean %s?) "
                     "in the last 1h (--since widens the window)\n" % (typo, INCIDENT_ID))
    rc, lines, err = retry(c, tmp_path, "--group", typo, "--since", "1h", "--select-only")
    assert rc == 2
    assert lines == [{"error": "--group: no error group has the id '%s' (of 5 groups) (did you mean %s?) in the "
                               "last 1h (--since widens the window)" % (typo, INCIDENT_ID)}]


def test_retry_group_by_id_selects_the_whole_group_from_the_store(incident_db, tmp_path):
    rc, lines, err = retry(cfg(tmp_path, incident_db), tmp_path, "--group", INCIDENT_ID, "--since", "1h",
                           "--select-only")
    assert rc == 0, err
    end = lines[-1]
    assert end["selection"] == "group=%s since=1h" % INCIDENT_FP
    assert (end["read"], end["total"], end["eligible"], end["send"]) == (N_INCIDENT, N_INCIDENT, N_ELIGIBLE,
                                                                         N_ELIGIBLE)
    assert end["pages"] == N_INCIDENT // 1000          # a selection's pages of 1,000: each all members
    assert end["past"] is True                         # read to the window's start


def test_alakai_group_by_id_reads_its_members_from_the_index(tmp_path):
    """Alakai (Redis): the groups come from the source's swept index and a group's members
    are that index paged by the fingerprint's hash (redis_view.c): every row a member, the
    group's whole count listed."""
    need_env("RD_REDIS_URL")
    c = write_config(tmp_path, {"a": {"profile": "alakai", "store": os.environ["RD_REDIS_URL"]}})
    s = snapshot(c, "a", "--json", "--view", "groups", "--since", "30d")   # the fixture's age does not matter
    assert s.rc == 0, s.err
    g = next(x for x in s.json["groups"] if x["fingerprint"] == "OOM killed again")
    assert g["id"] == fnv1a64("OOM killed again")[:6]
    m = snapshot(c, "a", "--json", "--view", "executions", "--group", g["id"], "--since", "30d")
    assert m.rc == 0, m.err
    assert m.json["group"] == {"id": g["id"], "fingerprint": "OOM killed again", "total": g["count"],
                               "window_s": 30 * 86400}
    assert [r["fingerprint"] for r in m.json["executions"]] == ["OOM killed again"] * g["count"]
