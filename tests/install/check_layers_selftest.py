#!/usr/bin/env python3
"""check_layers_selftest.py - check_layers.py catches what it is for.

Builds small source trees in a temporary directory and runs check_layers.py
on them: a clean tree passes (and lists a folder the table does not know);
a core file including src/par, api including par, par including api, a
binding including the core, core including <mpi.h>, a tool including src/,
and an include cycle in src/core each fail with their own message.
Exit status 0 when every case behaves, 1 otherwise.
"""
import os
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
]


def make(root, files):
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as fh:
            fh.write(text)


def run(files):
    with tempfile.TemporaryDirectory() as d:
        make(d, files)
        p = subprocess.run([sys.executable, CHECK, d], capture_output=True, text=True)
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
    print("%d case(s) failed" % bad if bad else "all cases behave")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
