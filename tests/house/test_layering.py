"""The rooms' layering, as the build's sources have it (tests/house/layering.py): no stack,
no build, a second or two. Every case on a copy of the tree breaks it one way and sees the
checker fail with that one problem."""
import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import layering  # noqa: E402

pytestmark = pytest.mark.fast


@pytest.fixture
def tree(tmp_path):
    """A copy of what the checker reads: src/, the docs' table, meson.build, the circles."""
    shutil.copytree(os.path.join(ROOT, "src"), tmp_path / "src")
    (tmp_path / "docs").mkdir()
    shutil.copy(os.path.join(ROOT, "docs", "architecture.md"), tmp_path / "docs")
    shutil.copy(os.path.join(ROOT, "meson.build"), tmp_path)
    (tmp_path / "tests" / "house").mkdir(parents=True)
    shutil.copy(os.path.join(ROOT, layering.KNOWN), tmp_path / layering.KNOWN)
    return tmp_path


def append(path, text):
    with open(path, "a", encoding="utf-8") as f:
        f.write(text)


def run(root):
    p = subprocess.run([sys.executable, os.path.join(HERE, "layering.py"), str(root)],
                       capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout.splitlines()


def test_the_tree_keeps_the_rooms_table():
    rc, out = run(ROOT)
    assert (rc, out) == (0, [])


def test_the_table_is_the_one_the_docs_show():
    t = layering.read_table(ROOT)
    assert sorted(t) == sorted(layering.ROOMS)
    assert t["core"] == {}
    assert t["io"] == {"core": None}
    assert t["ui"] == {"session": None, "actions": None, "io": None, "core": None}
    assert t["cli"]["ui"] == {"ui/ui.h"}
    assert t["session"]["sources"] == {"sources/sources.h"}
    assert "sources" not in t["actions"] and "sources" not in t["cli"]


def test_an_upward_include_fails(tree):
    append(tree / "src" / "core" / "retry.c", '#include "../ui/app.h"\n')
    rc, out = run(tree)
    assert rc == 1
    assert out == ['src/core/retry.c: core may not use ui: include ../ui/app.h (src/ui/app.h)']


def test_an_upward_call_fails(tree):
    append(tree / "src" / "io" / "url.c", "void url_probe(void);\nvoid url_probe(void) { sources_refresh(0); }\n")
    rc, out = run(tree)
    assert rc == 1
    assert out == ['src/io/url.c: io may not use sources: use sources_refresh (src/sources/sources.c)']


def test_the_console_asks_the_session_not_the_sources(tree):
    append(tree / "src" / "ui" / "view_help.c", "void help_probe(void);\nvoid help_probe(void) { sources_idle(0); }\n")
    rc, out = run(tree)
    assert rc == 1
    assert out == ['src/ui/view_help.c: ui may not use sources: use sources_idle (src/sources/sources.c)']


def test_a_narrowed_entry_allows_only_its_headers(tree):
    append(tree / "src" / "session" / "sessions.c", '#include "../sources/redis_url.h"\n')
    append(tree / "src" / "cli" / "version.c", '#include "../ui/app.h"\n')
    rc, out = run(tree)
    assert rc == 1
    assert out == [
        'src/cli/version.c: cli may use only ui/ui.h of ui: include ../ui/app.h (src/ui/app.h)',
        'src/session/sessions.c: session may use only sources/sources.h of sources: '
        'include ../sources/redis_url.h (src/sources/redis_url.h)',
    ]


def test_a_bare_include_of_another_rooms_header_fails(tree):
    append(tree / "src" / "io" / "url.c", '#include "xalloc.h"\n')
    rc, out = run(tree)
    assert rc == 1
    assert out == ['src/io/url.c: #include "xalloc.h" does not resolve from its own directory']


def test_a_circle_inside_a_room_fails(tree):
    append(tree / "src" / "core" / "retry.c", '#include "fleet.h"\n')
    append(tree / "src" / "core" / "fleet.c", "void fleet_probe(void);\nvoid fleet_probe(void) { retry_probe(); }\n")
    append(tree / "src" / "core" / "retry.c", "void retry_probe(void);\nvoid retry_probe(void) { fleet_probe(); }\n")
    rc, out = run(tree)
    assert rc == 1
    assert out == ['a circle inside core: src/core/fleet.c <-> src/core/retry.c']


def test_a_circle_broken_comes_off_the_list(tree):
    append(tree / layering.KNOWN, "a circle inside io: src/io/a.c <-> src/io/b.c\n")
    rc, out = run(tree)
    assert rc == 1
    assert out == [f"{layering.KNOWN}: gone, take it off the list: a circle inside io: src/io/a.c <-> src/io/b.c"]
