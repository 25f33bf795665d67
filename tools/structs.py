#!/usr/bin/env python3
"""The big structs of src/ (docs/architecture.md "The big structs"), measured from the code.

    tools/structs.py [--min N]   a Markdown table: each struct of N members or more (20),
                                 its members, the .c files that see its definition (include
                                 its header, directly or not) and those that write a member
    tools/structs.py --who S     the files that write struct S, one a line
    tools/structs.py --root DIR  measure the checkout at DIR
    tools/structs.py --check     every member of the records with a field table
                                 (src/core/model_tables.c) has a row there; exit 1 if not

"Writes" is a heuristic: `v->m =`, `v.m =`, `v[i].m +=`, `++`... of a member m through a
variable v declared of the struct's type in that file (`rd_model *m`), or of a member name
that no other struct of src/ uses (a common name such as `name` would count every
struct's writers). A write through a call (`model(s)->x =`) is missed.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if "--root" in sys.argv:          # measure another checkout
    ROOT = os.path.abspath(sys.argv[sys.argv.index("--root") + 1])
SRC = os.path.join(ROOT, "src")
TABLED = {"rd_execution": "rd_execution", "rd_worker": "rd_worker", "rd_queue": "rd_queue",
          "rd_dlq_entry": "rd_dlq_entry", "rd_count": "rd_count",
          "rd_core_status": "rd_core_status", "rd_source_status": "rd_source_status"}


def read(p):
    with open(p, encoding="utf-8", errors="replace") as f:
        return f.read()


def strip_comments(s):
    s = re.sub(r"/\*.*?\*/", " ", s, flags=re.S)
    return re.sub(r"//[^\n]*", " ", s)


def files(ext):
    for d, _, names in os.walk(SRC):
        for n in sorted(names):
            if n.endswith(ext):
                yield os.path.join(d, n)


def members(body):
    """Top-level member names of a struct body (nested braces kept as one member)."""
    out, depth, cur = [], 0, ""
    for ch in body:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == ";" and depth == 0:
            decl = re.sub(r"\{.*\}", " ", cur, flags=re.S).strip()
            fp = re.search(r"\(\s*\*\s*(\w+)\s*\)\s*\(", decl)
            if fp:                                          # a function pointer
                out.append(fp.group(1))
                cur = ""
                continue
            decl = re.sub(r"\[[^\]]*\]", "", decl)
            decl = re.sub(r"\([^()]*\)\s*\(", "(", decl)   # function pointers
            m = re.match(r"\s*(?:RD_VEC\([^)]*\)|[\w\s\*]+?)\s*([\w\s\*,\(\)]+)$", decl)
            if m:
                for part in m.group(1).split(","):
                    name = re.findall(r"(\w+)\s*\)?\s*$", part.strip()) if part.strip() else []
                    if name:
                        out.append(name[0])
            cur = ""
        else:
            cur += ch
    return out


def structs():
    """{name: (header, [members])} of every `typedef struct X {...} X;` in src/*.h and .c."""
    found = {}
    for p in list(files(".h")) + list(files(".c")):
        s = strip_comments(read(p))
        for m in re.finditer(r"typedef\s+struct\s+\w*\s*\{", s):
            i, depth = m.end(), 1
            while depth and i < len(s):
                depth += {"{": 1, "}": -1}.get(s[i], 0)
                i += 1
            tail = re.match(r"\s*(\w+)\s*;", s[i:])
            if tail:
                found[tail.group(1)] = (p, members(s[m.end():i - 1]))
    return found


def include_graph():
    by_base = {}
    for p in list(files(".h")) + list(files(".c")):
        by_base.setdefault(os.path.basename(p), []).append(p)
    inc = {}
    for p in list(files(".h")) + list(files(".c")):
        names = re.findall(r'#include\s+"([^"]+)"', read(p))
        inc[p] = [q for n in names for q in by_base.get(os.path.basename(n), [])]
    return inc


def sees(inc, header):
    out = set()
    for p in files(".c"):
        seen, todo = set(), [p]
        while todo:
            q = todo.pop()
            if q in seen:
                continue
            seen.add(q)
            todo.extend(inc.get(q, []))
        if header in seen:
            out.add(p)
    return out


ASSIGN = r"(?:\.\w+|\[[^\]]*\])*\s*(?:[-+*/|&]?=(?!=)|\+\+|--)"


def writers(cfiles, name, own, others):
    """Files that assign a member of struct `name`: through a variable declared of that
    type (`rd_model *m` ... `m->failing_rate =`), or by a member name no other struct has."""
    uniq = [m for m in own if m not in others]
    by_name = re.compile(r"(?:->|\.)(?:%s)\b%s" % ("|".join(uniq), ASSIGN)) if uniq else None
    decl = re.compile(r"\b%s\s*(?:\*\s*(?:const\s+)?)?(\w+)\s*[,;=)\[]" % re.escape(name))
    member = "|".join(own)
    out = set()
    for p in cfiles:
        s = strip_comments(read(p))
        if by_name and by_name.search(s):
            out.add(p)
            continue
        for v in set(decl.findall(s)):
            if re.search(r"\b%s(?:\[[^\]]*\])?(?:->|\.)(?:%s)\b%s" % (v, member, ASSIGN), s):
                out.add(p)
                break
    return out


def check(st):
    tab = strip_comments(read(os.path.join(SRC, "core", "model_tables.c")))
    rows = {}
    for t, mem in re.findall(r"F\((\w+),\s*([\w.]+),", tab):
        rows.setdefault(t, set()).add(mem.split(".")[0])
    bad = 0
    for t in TABLED:
        for m in st[t][1]:
            if m not in rows.get(t, set()):
                print("%s.%s: no row in src/core/model_tables.c" % (t, m))
                bad += 1
    print("field tables: %d records, %s" % (len(TABLED), "%d members missing" % bad if bad
                                            else "every member has a row"))
    return 1 if bad else 0


def main(argv):
    st = structs()
    if "--check" in argv:
        return check(st)
    least = int(argv[argv.index("--min") + 1]) if "--min" in argv else 20
    inc = include_graph()
    count = {}
    for _, (_, mem) in st.items():
        for m in mem:
            count[m] = count.get(m, 0) + 1
    ncs = len(list(files(".c")))
    if "--who" in argv:
        name = argv[argv.index("--who") + 1]
        hdr, mem = st[name]
        cf = sees(inc, hdr) if hdr.endswith(".h") else {hdr}
        for p in sorted(writers(cf, name, mem, {m for m in mem if count[m] > 1})):
            print(os.path.relpath(p, ROOT))
        return 0
    print("| struct | members | .c files that see it (of %d) | .c files that write it |" % ncs)
    print("|---|---:|---:|---:|")
    for name, (hdr, mem) in sorted(st.items(), key=lambda kv: -len(kv[1][1])):
        if len(mem) < least and name not in TABLED:
            continue
        cf = sees(inc, hdr) if hdr.endswith(".h") else {hdr}
        others = {m for m in mem if count[m] > 1}
        w = writers(cf, name, mem, others)
        print("| `%s` (%s) | %d | %d | %d |" % (name, os.path.relpath(hdr, ROOT), len(mem),
                                                len(cf), len(w)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
