"""The rooms' layering, read from the source: every #include and every use of a function
another file defines, checked against the room table of docs/architecture.md.

A room is a directory of src/ (core, io, sources, session, actions, ui, cli). An edge goes
from a file to the room of each header it includes (resolved from the file's own directory,
as the compiler does without -I: a bare "x.h" of another room does not resolve) and to the
room of each function it uses that another room's file defines (a call, or the function
taken as a value). The table says which rooms a room may use; "(only ui/ui.h)" narrows an
entry to those headers. Inside a room the files read downward: the graph of files (a
file -> the header it includes, a .c -> the .c defining a function it uses) has no circle
but the ones tests/house/circles.txt still lists (a new one fails, and so does a listed one
that is gone: the list only shrinks).

python3 tests/house/layering.py [ROOT] prints every problem and exits 1 when there is one.
"""
import os
import re
import sys

ROOMS = ("core", "io", "sources", "session", "actions", "ui", "cli")
EXTS = (".c", ".h")


def read_table(root):
    """{room: {used_room: set of headers or None (any)}} from docs/architecture.md."""
    text = open(os.path.join(root, "docs", "architecture.md"), encoding="utf-8").read()
    table = {}
    for line in text.splitlines():
        m = re.match(r"^\|\s*(\w+)\s*\|\s*(.*?)\s*\|\s*$", line)
        if not m or m.group(1) not in ROOMS:
            continue
        room, uses = m.group(1), {}
        for part in re.split(r",(?![^(]*\))", m.group(2)):
            pm = re.match(r"\s*(\w+)\s*(?:\((.*)\))?\s*$", part)
            if not pm or pm.group(1) not in ROOMS:
                continue
            only = None
            if pm.group(2) and pm.group(2).strip().startswith("only"):
                only = set(re.findall(r"`?([\w/]+\.h)`?", pm.group(2)))
            uses[pm.group(1)] = only
        table[room] = uses
    missing = [r for r in ROOMS if r not in table]
    if missing:
        raise ValueError("docs/architecture.md: no row for room(s) " + ", ".join(missing))
    return table


def strip_code(text):
    """The text without comments, string and char literals (lines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.M)
DEF_HEAD = re.compile(r"([A-Za-z_]\w*)\s*\($")
# A function used: called (not a member: no . or -> before it), or taken as a value
# (after = , ( & or { and before , ) ; or }).
USE = re.compile(r"(?<![\w.>])([A-Za-z_]\w*)\s*\(|(?<=[=,(&{])\s*([A-Za-z_]\w*)\s*(?=[,);}])")


KEYWORDS = {"if", "while", "for", "switch", "return", "sizeof", "do", "else", "case"}


def strip_preprocessor(code):
    """Blank every preprocessor line, continued lines (backslash) included."""
    return re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", lambda m: "\n" * m.group(0).count("\n"), code, flags=re.M)


def top_level_functions(code):
    """[(name, is_static)] of the functions defined at file level in stripped code."""
    found, depth, start, i = [], 0, 0, 0
    code = strip_preprocessor(code)
    while i < len(code):
        c = code[i]
        if c == "{":
            if depth == 0:
                head = code[start:i].strip()
                paren = head.find("(")
                if paren > 0 and not re.match(r"(typedef|struct|enum|union)\b", head) and "=" not in head[:paren]:
                    m = DEF_HEAD.search(head[:paren + 1])
                    if m and m.group(1) not in KEYWORDS:
                        found.append((m.group(1), bool(re.match(r"(static|inline)\b", head))))
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                start = i + 1
        elif c == ";" and depth == 0:
            start = i + 1
        i += 1
    return found


class Tree:
    def __init__(self, root):
        self.root = root
        self.src = os.path.join(root, "src")
        self.files = {}      # rel path (room/x.c) -> stripped code
        self.raw = {}
        for room in ROOMS:
            for dirpath, _, names in os.walk(os.path.join(self.src, room)):
                for name in sorted(names):
                    if name.endswith(EXTS) or name.endswith(".h.in"):
                        full = os.path.join(dirpath, name)
                        rel = os.path.relpath(full, self.src)
                        raw = open(full, encoding="utf-8", errors="replace").read()
                        self.raw[rel] = raw
                        self.files[rel] = strip_code(raw)
        self.defines = {}    # function name -> defining file (non-static, or static inline in a header)
        self.local = {}      # file -> names it defines itself
        for rel, code in self.files.items():
            names = set()
            for name, static in top_level_functions(code):
                names.add(name)
                if name != "main" and (not static or rel.endswith(".h")):
                    self.defines.setdefault(name, rel)
            self.local[rel] = names

    @staticmethod
    def room(rel):
        return rel.split("/", 1)[0]

    def resolve(self, rel, inc):
        """The included file, as a path under src/, or None when it is not ours."""
        path = os.path.normpath(os.path.join(os.path.dirname(rel), inc))
        if path in self.files:
            return path
        if path + ".in" in self.files:     # configured by meson (rd_vcs.h)
            return path + ".in"
        return None

    def generated(self, inc):
        """A header meson writes into the build directory (configure_file: rd_build.h)."""
        meson = open(os.path.join(self.root, "meson.build"), encoding="utf-8").read()
        return re.search(r"configure_file\(output\s*:\s*'" + re.escape(inc) + "'", meson) is not None

    def reach(self, rel):
        """Every header rel includes, directly or through another."""
        seen, todo = set(), [rel]
        while todo:
            f = todo.pop()
            for m in INCLUDE.finditer(self.raw[f]):
                to = self.resolve(f, m.group(1))
                if to and to not in seen:
                    seen.add(to)
                    todo.append(to)
        return seen

    def edges(self):
        """[(from_file, to_file, kind, detail)]: includes and function uses."""
        out = []
        for rel in sorted(self.files):
            for m in INCLUDE.finditer(self.raw[rel]):
                inc = m.group(1)
                to = self.resolve(rel, inc)
                out.append((rel, to, "include", inc))
            if not rel.endswith(".c"):
                continue
            body = self.files[rel]
            body = strip_preprocessor(body)
            seen, reach = set(), self.reach(rel)
            for name in (a or b for a, b in USE.findall(body)):
                if name in seen or name in self.local[rel]:
                    continue
                seen.add(name)
                to = self.defines.get(name)
                if to and to.endswith(".h") and to not in reach:   # an inline function it cannot see
                    continue
                if to and to != rel:
                    out.append((rel, to, "use", name))
        return out


def cycles(nodes, adj):
    """Each circle found (a list of nodes), one per strongly connected component."""
    index, low, stack, on, found = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in adj.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return found


def check(root):
    """Every problem, one line each; empty when the layering holds."""
    table = read_table(root)
    tree = Tree(root)
    problems, adj = [], {}
    for frm, to, kind, what in tree.edges():
        a = tree.room(frm)
        if to is None:
            if kind == "include" and not tree.generated(what):
                problems.append(f"src/{frm}: #include \"{what}\" does not resolve from its own directory")
            continue
        b = tree.room(to)
        if a == b:
            if to != frm:
                adj.setdefault(frm, set()).add(to)
            continue
        allowed = table[a]
        if b not in allowed:
            problems.append(f"src/{frm}: {a} may not use {b}: {kind} {what} (src/{to})")
        elif allowed[b] is not None and to not in allowed[b] and not (kind == "use" and any(
                re.search(r"\b" + what + r"\s*\(", tree.files.get(h, "")) for h in allowed[b])):
            problems.append(f"src/{frm}: {a} may use only {', '.join(sorted(allowed[b]))} of {b}: {kind} {what} (src/{to})")
    known = read_known_circles(root)
    found = set()
    for comp in cycles(tree.files, adj):
        line = "a circle inside " + tree.room(comp[0]) + ": " + " <-> ".join("src/" + c for c in comp)
        found.add(line)
        if line not in known:
            problems.append(line)
    for line in sorted(known - found):
        problems.append(f"{KNOWN}: gone, take it off the list: {line}")
    return problems


KNOWN = "tests/house/circles.txt"


def read_known_circles(root):
    """The circles not broken yet, as check() prints them (one a line, # comments)."""
    path = os.path.join(root, KNOWN)
    if not os.path.exists(path):
        return set()
    return {line.strip() for line in open(path, encoding="utf-8")
            if line.strip() and not line.startswith("#")}


def main(argv):
    root = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    problems = check(root)
    for p in problems:
        print(p)
    print(f"layering: {len(problems)} problem(s)", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
