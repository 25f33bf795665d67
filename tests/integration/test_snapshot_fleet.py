"""`redrive snapshot --view fleet` against the local stack with the demo's five systems
(scripts/demo-config.sh): one row per system from its own session, worst first, the same
numbers as each system's own snapshot; a system that cannot connect is DOWN, first, and
the exit status says the output is partial.

Run with the stack env loaded (scripts/test.sh does it).
"""
import os
import subprocess

from snaphelp import ROOT, assert_clean_text, need_env, snapshot

SYSTEMS = {"attune", "attune-era1", "tasker", "alakai", "openagents"}
FIELDS = {"system", "banner", "profile", "level", "sources_state", "sources_age_s", "failing_per_min",
          "retry_eligible", "retry_eligible_lower_bound", "dlq_size", "dlq_trend", "workers",
          "workers_unhealthy", "workers_draining", "oldest_queued_age_s"}
RANK = {"DOWN": 4, "FAIL": 3, "warn": 2, "wait": 1, "ok": 0}


def demo_config(tmp_path, extra=""):
    need_env("RD_STACK_DIR")
    text = subprocess.run(["bash", os.path.join(ROOT, "scripts", "demo-config.sh"),
                           os.path.join(os.environ["RD_STACK_DIR"], "env")],
                          check=True, capture_output=True, text=True).stdout
    p = tmp_path / "demo.conf"
    p.write_text(text + extra)
    return str(p)


def test_fleet_json_has_every_system_worst_first(tmp_path):
    conf = demo_config(tmp_path)
    s = snapshot(conf, None, "--json", "--view", "fleet")
    assert s.rc == 0, s.err
    assert s.err == "", s.err
    j = s.json
    assert j["view"] == "fleet"
    rows = j["systems"]
    assert {r["system"] for r in rows} == SYSTEMS and len(rows) == 5
    for r in rows:
        assert set(r) == FIELDS, r          # no sources_error: nothing failed
        assert r["sources_state"] == "ok", r
        assert 0 <= r["sources_age_s"] < 10, r
        assert r["banner"] == ("LOCAL" if r["system"] == "alakai" else "DEMO")
        assert r["dlq_trend"] is None       # one look: no trend yet
        assert isinstance(r["retry_eligible"], int) and r["retry_eligible"] >= 0, r
    ranks = [RANK[r["level"]] for r in rows]
    assert ranks == sorted(ranks, reverse=True), rows

    # the same numbers as each system's own snapshot (fixture data: stable between reads)
    for r in rows:
        one = snapshot(conf, r["system"], "--json").json
        assert r["workers"] == (len(one["workers"]) or None), (r, len(one["workers"]))
        assert r["dlq_size"] == one["dlq_total"] or one["dlq_total"] is None, (r, one["dlq_total"])
        eligible = sum(1 for e in one["executions"] if e["eligibility"] == "yes")
        assert r["retry_eligible"] == eligible, (r["system"], r["retry_eligible"], eligible)


def test_fleet_text_and_a_system_down(tmp_path):
    conf = demo_config(tmp_path, '\n[system "gone"]\nprofile = attune\n'
                                 'store = host=127.0.0.1 port=1 dbname=x user=redrive_ro\nbanner = PROD\n')
    s = snapshot(conf, None, "--view", "fleet")
    assert s.rc == 3, (s.rc, s.err)         # partial: one system's source never answered
    assert_clean_text(s.out)
    lines = s.out.splitlines()
    assert lines[0] == "FLEET"
    assert lines[1].split()[:4] == ["STATE", "SYSTEM", "ENV", "SOURCES"], lines[1]
    body = lines[2:8]
    assert [l.split()[1] for l in body if l.split()][:1] == ["gone"], s.out
    assert body[0].split()[0] == "DOWN" and "PROD" in body[0], body[0]
    assert {l.split()[1] for l in body} == SYSTEMS | {"gone"}, s.out
    assert any(l.startswith("gone: postgresql: ") for l in lines[8:]), s.out

    j = snapshot(conf, None, "--json", "--view", "fleet")
    assert j.rc == 3
    gone = j.json["systems"][0]
    assert gone["system"] == "gone" and gone["level"] == "DOWN"
    assert gone["sources_state"] == "down" and gone["sources_error"].startswith("postgresql: ")


def test_fleet_view_is_listed_in_usage(tmp_path):
    s = snapshot(demo_config(tmp_path), None, "--view", "nope")
    assert s.rc == 2
    assert "fleet" in s.err
