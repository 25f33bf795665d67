"""The filter text is cut on a UTF-8 character boundary (issue 11): a text longer than the
filter buffer (127 bytes) never keeps half a character, on screen or sent to a store."""
import os
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BIN = os.environ.get("RD_BIN", os.path.join(ROOT, "build", "src", "cli", "redrive"))
FIXTURE = os.path.join(HERE, "fixtures", "attune.json")


def run_keys(tmp_path, script, size):
    """The headless console on the fixture model, the key script run; its dumps (text)."""
    keys = tmp_path / "script.keys"
    keys.write_text(script)
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TZ": "UTC",
           "TERM": "xterm-256color", "HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state"),
           "REDRIVE_NOW": "1767225600", "REDRIVE_HEADLESS": size,
           "REDRIVE_HEADLESS_MODEL": FIXTURE, "REDRIVE_HEADLESS_KEYS": str(keys)}
    p = subprocess.run([BIN, "--config", os.path.join(HERE, "fixtures", "test.conf")], env=env,
                       capture_output=True, timeout=20)
    assert p.returncode == 0 and p.stderr == b"", p.stderr
    return p.stdout.decode("utf-8")       # strict: any broken character fails here too


def title_after_typing(tmp_path, typed):
    out = run_keys(tmp_path, "key 2\ntype %s\nkey enter\ndump\n" % typed, "400x30")
    (title,) = [l for l in out.splitlines() if l.startswith("Executions")]
    return title


def test_filter_command_cut_on_a_character_boundary(tmp_path):
    text = "a" * 126 + "\u00e9" + "b" * 10     # the 2-byte e-acute spans bytes 127-128
    title = title_after_typing(tmp_path, ":filter text=" + text)
    assert title.rstrip().endswith("text=" + "a" * 126), title[-160:]


def test_search_prompt_cut_on_a_character_boundary(tmp_path):
    text = "a" * 125 + "\u20ac" + "b" * 10     # the 3-byte euro sign spans bytes 126-128
    title = title_after_typing(tmp_path, "/" + text)
    assert title.rstrip().endswith("text=" + "a" * 125), title[-160:]


def test_short_multibyte_text_is_kept_whole(tmp_path):
    text = "\u00e9t\u00e9\u20ac"
    title = title_after_typing(tmp_path, ":filter text=" + text)
    assert title.rstrip().endswith("text=" + text), title[-160:]


def test_a_new_filter_starts_at_page_one(tmp_path):
    """`:filter` after paging lists the first page of the new filter, and says page 1 (the
    title said `page 3` of the old paging)."""
    out = run_keys(tmp_path, "key 2\nkey ]\nkey ]\ndump\ntype :filter status=failed\nkey enter\ndump\n",
                   "132x40")
    titles = [l for l in out.splitlines() if l.startswith("Executions")]
    assert [t.split("  ")[1] for t in titles] == ["page 3 (more)", "page 1 (more)"], titles
    assert titles[1].rstrip().endswith("filter: status=failed"), titles


def test_status_picker_matches_as_you_type(tmp_path):
    """`f` opens the status picker; typing moves the cursor to the first status starting
    with the text (else containing it), shown as `typed: ...`; Enter picks it; Backspace
    takes a letter off."""
    out = run_keys(tmp_path, "key 2\nkey f\ntype tim\ndump\nkey backspace\nkey backspace\nkey backspace\n"
                   "type led\nkey enter\ndump\n", "100x30")
    first, second = out.split("--\n")[:2]
    assert "typed: tim" in first, first
    titles = [l for l in second.splitlines() if l.startswith("Executions")]
    # "led" is in no status's start: the first containing it, failed ("fai-led")
    assert titles and titles[0].rstrip().endswith("filter: status=failed"), second
    first_titles = [l for l in first.splitlines() if l.startswith("Executions")]
    assert "filter:" not in first_titles[0], first
