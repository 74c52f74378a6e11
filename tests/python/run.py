#!/usr/bin/env python3
"""Run one Python test with the interpreter python.env made (see setup_env.py).

usage: run.py ENVDIR [--need mpi4py|skbuild|mypy|pyarrow|pandas]... -- ARGS...

ARGS are run with the env's python substituted for the word PYTHON (e.g.
`-- PYTHON -m pytest x.py`, or an MPI launcher line `-- mpiexec -n 2 PYTHON
prog.py`); several commands are separated by `+++`. Exits 77 (ctest skip) with
the reason when the env lacks what --need names; otherwise the first non-zero
exit status, or 0."""
import json
import os
import subprocess
import sys


def main():
    args = sys.argv[1:]
    if len(args) < 3 or "--" not in args:
        print(__doc__)
        return 2
    envdir, rest = args[0], args[1:]
    sep = rest.index("--")
    opts, cmd = rest[:sep], rest[sep + 1:]
    try:
        info = json.load(open(os.path.join(envdir, "info.json")))
    except (OSError, ValueError):
        info = {}
    if not info.get("python"):
        print("SKIP: no Python environment with numpy and pytest (see the output of the test python.env)")
        return 77
    for i, o in enumerate(opts):
        if o == "--need" and i + 1 < len(opts) and not info.get(opts[i + 1]):
            print(f"SKIP: the test environment has no {opts[i + 1]}: {'; '.join(info.get('notes', []))}")
            return 77
    cmds, cur = [], []
    for a in cmd:
        if a == "+++":
            cmds.append(cur)
            cur = []
        else:
            cur.append(info["python"] if a == "PYTHON" else a)
    cmds.append(cur)
    for c in cmds:
        print("+", " ".join(c), flush=True)
        rc = subprocess.run(c).returncode
        if rc != 0:
            return rc
    return 0


if __name__ == "__main__":
    sys.exit(main())
