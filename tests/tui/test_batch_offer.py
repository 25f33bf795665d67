"""The console offers unfinished batches at start (docs/error-groups.md): a batch record
with items never sent puts "1 unfinished batch: ... redrive batch resume ID" in the status
line; an abandoned or finished one does not. Headless, a fixed model, a private state dir."""
import json
import os

from test_screens import run_headless

BID = "0123456789abcdef"


def write_record(home, n, abandoned=False):
    d = os.path.join(home, "state", "redrive", "batches")
    os.makedirs(d, mode=0o700)
    head = {"batch": BID, "system": "attune-prod", "action": "retry", "reason": None,
            "selection": "status=failed", "created": "2026-01-01T00:00:00.000Z", "operator": None}
    lines = [json.dumps(head)] + [json.dumps([str(1000 + i), None, None, 1, None]) for i in range(n)]
    lines.append(json.dumps({"total": n}))
    if abandoned:
        lines.append(json.dumps({"abandoned": "2026-01-01T00:01:00.000Z", "operator": "t"}))
    fd = os.open(os.path.join(d, BID + ".batch"), os.O_WRONLY | os.O_CREAT, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write("\n".join(lines) + "\n")


def status_line(out):
    return [l for l in out.split("--\n")[0].splitlines() if "batch" in l]


def test_unfinished_batch_offered_at_start(tmp_path):
    home = str(tmp_path)
    write_record(home, 3)
    out = run_headless("attune", "batch_offer", "132x40", home=home)
    assert any("1 unfinished batch: retry on attune-prod, 3 of 3 left: redrive batch resume "
               "0123456789abcdef" in l for l in status_line(out)), out


def test_abandoned_batch_not_offered(tmp_path):
    home = str(tmp_path)
    write_record(home, 3, abandoned=True)
    out = run_headless("attune", "batch_offer", "132x40", home=home)
    assert status_line(out) == [], out


def test_batch_command_with_an_argument_is_refused_not_dropped(tmp_path):
    """`:batch resume ID` was read as `:batch` (nothing put away) and the ID dropped: it is
    refused, naming the shell command with that ID; `:batch` alone still answers."""
    keys = tmp_path / "batchcmd.keys"
    keys.write_text("type :batch resume 0123456789abcdef\nkey enter\ndump\n"
                    "type :batch frobnicate\nkey enter\ndump\ntype :batch\nkey enter\ndump\n")
    out = run_headless("attune", str(keys)[:-len(".keys")], "132x40", home=str(tmp_path))
    s = out.split("--\n")[:-1]
    assert len(s) == 3, out
    assert ("batch: the console shows the batch put away (:batch); in a shell: redrive batch "
            "resume 0123456789abcdef") in s[0], s[0]
    assert "batch: no argument (:batch shows the batch put away; redrive batch list|resume ID|" \
           "abandon ID in a shell)" in s[1], s[1]
    assert "no batch: nothing was put away" in s[2], s[2]
