"""`:export` of the groups view (a postmortem's table): CSV and JSON with each group's
count, retry-eligible, first/last seen and trend, the same groups the view shows."""
import csv
import io
import json
import os

from test_screens import run_headless, screens

HERE = os.path.dirname(os.path.abspath(__file__))


def test_groups_view_exports_csv_and_json(tmp_path):
    out_csv, out_json = tmp_path / "groups.csv", tmp_path / "groups.json"
    keys = tmp_path / "export.keys"
    keys.write_text("key 7\ntype :export csv %s\nkey enter\ndump\ntype :export json %s\nkey enter\n"
                    "dump\n" % (out_csv, out_json))
    (tmp_path / "state").mkdir()
    # an absolute script path: run_headless joins it to its scripts/ directory unchanged
    out = run_headless("attune", str(keys)[:-len(".keys")], "132x40", home=str(tmp_path))
    first, second = screens(out, 2)
    assert "exported the groups view to %s (csv" % out_csv in first, first
    assert "exported the groups view to %s (json" % out_json in second, second
    doc = json.loads(out_json.read_text())
    groups = doc["groups"]
    assert len(groups) >= 2, groups
    rows = list(csv.DictReader(io.StringIO(out_csv.read_text(), newline="")))
    assert [r["fingerprint"] for r in rows] == [g["fingerprint"] for g in groups]
    assert [r["id"] for r in rows] == [g["id"] for g in groups]
    assert [int(r["count"]) for r in rows] == [g["count"] for g in groups]
    assert [int(r["retry_eligible"]) for r in rows] == [g["retry_eligible"] for g in groups]
    assert [r["trend"] for r in rows] == [g["trend"] for g in groups]
    assert all(r["scope"] == "loaded" for r in rows)        # the fixture has no store groups
    assert all(r["first_seen"] and r["last_seen"] >= r["first_seen"] for r in rows)
