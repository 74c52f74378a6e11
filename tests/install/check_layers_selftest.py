#!/usr/bin/env python3
"""check_layers_selftest.py - check_layers.py catches what it is for.

Builds small source trees in a temporary directory and runs check_layers.py
on them: a clean tree passes (and lists a folder the table does not know);
a core file including src/par, api including par, par including api, a
binding including the core, core including <mpi.h>, a tool including src/,
an include cycle in src/core, in src/par (a row not marked acyclic) and in
tools/, and (with a C compiler: objects in a fake build tree read with nm) a
call cycle in src/par each fail with their own message; a cycle in a folder
of PENDING_CYCLES is printed and passes.
Exit status 0 when every case behaves, 1 otherwise.
"""
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CHECK = os.path.join(HERE, "check_layers.py")

CLEAN = {
    "include/sion.h": "",
    "src/core/a.h": '#include "b.h"\n',
    "src/core/a.c": '#include "a.h"\n#include <stdio.h>\n#include "sion.h"\n',
    "src/core/b.h": "\n",
    "src/sid/sid.h": '#include "../core/a.h"\n',
    "src/api/x.c": '#include "../sid/sid.h"\n#include "../core/a.h"\n',
    "src/par/par.h": '#include "../core/b.h"\n',
    "src/par/p.c": '#include "par.h"\n#include "../sid/sid.h"\n/* #include "../api/x.h" in a comment */\n',
    "src/par/binding.h": "\n",
    "src/mpi/m.c": '#include "../par/binding.h"\n#include <mpi.h>\n',
    "src/newpart/n.c": '#include "../api/anything.h"\n',
    "tools/t.c": '#include "sion.h"\n',
}

CASES = [
    ("core climbs to par", {"src/core/c.c": '#include "../par/par.h"\n'}, "climbs to a higher layer"),
    ("api calls into par", {"src/api/y.c": '#include "../par/par.h"\n'}, "src/api (rank 2) -> src/par/par.h"),
    ("par includes api", {"src/api/x.h": "\n", "src/par/q.c": '#include "../api/x.h"\n'},
     "src/par (rank 3) -> src/api/x.h"),
    ("binding reaches the core", {"src/mpi/k.c": '#include "../core/a.h"\n'}, "src/mpi (rank 4) -> src/core/a.h"),
    ("MPI in the core", {"src/core/d.c": "#include <mpi.h>\n"}, "src/core may not use mpi.h"),
    ("tool includes src", {"tools/u.c": '#include "../src/core/a.h"\n'}, "tools (rank 9) -> src/core/a.h"),
    ("core cycle", {"src/core/b.h": '#include "a.h"\n'}, "include cycle between modules {a, b}"),
    # every folder is checked, not only the rows marked acyclic (issue 29)
    ("par cycle (row not marked acyclic)", {"src/par/q.h": '#include "par.h"\n', "src/par/par.h": '#include "q.h"\n'},
     "src/par: include cycle between modules {par, q}"),
    ("tools cycle", {"tools/t.h": '#include "u.h"\n', "tools/u.h": '#include "t.h"\n'},
     "tools: include cycle between modules {t, u}"),
]

# (name, files, wanted rc, wanted text): a folder in PENDING_CYCLES has its
# cycle printed, not counted. The real set may be empty (every circle broken),
# so these cases run a copy of check_layers.py whose set is PENDING_SET
# (src/par: a row not marked acyclic, which would win over the set).
PENDING_SET = {"src/par"}
PENDING = [
    ("pending folder's cycle", {"src/par/a.h": '#include "b.h"\n', "src/par/b.h": '#include "a.h"\n'}, 0,
     "pending src/par: include cycle between modules {a, b}"),
]

# A call cycle seen only in the objects: src/par/p1.c and p2.c include no
# header of each other, yet call each other (declared in a third header).
CALLS = {
    "src/par/decl.h": "int par_p1(int);\nint par_p2(int);\n",
    "src/par/p1.c": '#include "decl.h"\nint par_p1(int x) { return x ? par_p2(x - 1) : 0; }\n',
    "src/par/p2.c": '#include "decl.h"\nint par_p2(int x) { return x ? par_p1(x - 1) : 1; }\n',
}


def make(root, files):
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as fh:
            fh.write(text)


def run(files, pending=None):
    """check_layers.py on a tree of `files`; with `pending`, a copy of it
    whose PENDING_CYCLES is that set (rc 2 and a message if it has none)."""
    with tempfile.TemporaryDirectory() as d:
        make(d, files)
        check = CHECK
        if pending is not None:
            with open(CHECK) as fh:
                text = fh.read()
            text, n = re.subn(r"^PENDING_CYCLES = (?:set\(\)|\{.*?\n\})", "PENDING_CYCLES = %r" % pending,
                              text, count=1, flags=re.M | re.S)
            if n != 1:
                return 2, "check_layers.py has no PENDING_CYCLES assignment to replace"
            check = os.path.join(d, "check_layers_pending.py")
            with open(check, "w") as fh:
                fh.write(text)
        p = subprocess.run([sys.executable, check, d], capture_output=True, text=True)
        return p.returncode, p.stdout + p.stderr


def run_objects(files, compiled):
    """The tree plus a build tree <d>/build holding CMake-style objects of the
    files in `compiled` (as target sheaf_obj of src/CMakeLists.txt would put
    them); None when there is no C compiler."""
    cc = os.environ.get("CC") or "cc"
    with tempfile.TemporaryDirectory() as d:
        make(d, files)
        obj = os.path.join(d, "build", "src", "CMakeFiles", "sheaf_obj.dir")
        for rel in compiled:
            out = os.path.join(obj, os.path.relpath(rel, "src") + ".o")
            os.makedirs(os.path.dirname(out), exist_ok=True)
            try:
                c = subprocess.run([cc, "-c", "-o", out, os.path.join(d, rel)], capture_output=True, text=True)
            except OSError:
                return None
            if c.returncode != 0:
                return None
        p = subprocess.run([sys.executable, CHECK, d, os.path.join(d, "build")], capture_output=True, text=True)
        return p.returncode, p.stdout + p.stderr


def main():
    bad = 0
    rc, out = run(CLEAN)
    if rc != 0 or "folders not in the table" not in out or "src/newpart" not in out:
        print("FAIL clean tree: rc %d\n%s" % (rc, out))
        bad += 1
    else:
        print("ok   clean tree passes, src/newpart listed as unknown")
    for name, extra, want in CASES:
        files = dict(CLEAN)
        files.update(extra)
        rc, out = run(files)
        if rc != 1 or want not in out:
            print("FAIL %s: rc %d, wanted %r in\n%s" % (name, rc, want, out))
            bad += 1
        else:
            print("ok   %s: rc 1, %r" % (name, want))
    for name, extra, want_rc, want in PENDING:
        files = dict(CLEAN)
        files.update(extra)
        rc, out = run(files, PENDING_SET)
        if rc != want_rc or want not in out:
            print("FAIL %s: rc %d, wanted rc %d and %r in\n%s" % (name, rc, want_rc, want, out))
            bad += 1
        else:
            print("ok   %s: rc %d, %r" % (name, rc, want))
    files = dict(CLEAN)
    files.update(CALLS)
    got = run_objects(files, ["src/par/p1.c", "src/par/p2.c"])
    want = "src/par: call cycle between modules (object files) {p1, p2}"
    if got is None:
        print("skip call cycle in the objects: no C compiler (cc or $CC)")
    elif got[0] != 1 or want not in got[1] or "include cycle" in got[1]:
        print("FAIL call cycle in the objects: rc %d, wanted %r in\n%s" % (got[0], want, got[1]))
        bad += 1
    else:
        print("ok   call cycle in the objects: rc 1, %r" % want)
    print("%d case(s) failed" % bad if bad else "all cases behave")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
