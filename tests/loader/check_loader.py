#!/usr/bin/env python3
"""check_loader.py - sheaf's loader on the bed: what reaches the shared tree
does not depend on the process count, and the application processes reach
it not at all.

    check_loader.py --countfs EXE --work DIR --driver c|py --launch-exe SHEAF_LAUNCH
                    --mpiexec CMD [--np P] [--llp-suffix :]

DIR is a genload.py output. Runs the driver under
`sheaf-launch --stats-file F [--python-prefix mnt/py --python-prefix mnt/bin] --
 MPIEXEC -n N DRIVER` at 1 and P (default 4) processes (ldbed_run.py, with
the trace) and asserts:
  - every driver printed the expected sums;
  - no driver process reaches the tree at all: c, not even its executable (the
    bootstrapper execs the server's copy); py, not even the script (CPython's
    realpath(3) and readlink of it are answered by the server);
  - no other process but the load server (comm sheaf-launch) reaches it;
  - every file of the tree is opened once and every directory listed at most
    once in the whole run; every countfs counter and every server counter
    (listings, stats, reads, bytes, realpaths) is the same at 1 and at P.
With --llp-suffix ':' (a trailing empty entry in LD_LIBRARY_PATH, the working
directory for ld.so) the same must hold: the client searches the working
directory itself instead of handing the search back to ld.so (issue 26).
With --no-prefix (py) sheaf-launch gets no --python-prefix and must infer the
directories (the script's, PYTHONPATH's, the interpreter's): the same must
hold (issue 26).
Exit 0, 1 on a failed assertion, 77 if FUSE cannot be mounted (skip).
"""
import argparse
import collections
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
COUNTERS = ("lookup", "lookup_enoent", "getattr", "readlink", "open", "opendir", "readdir",
            "read_bytes")
SERVER = ("listings", "stats", "reads", "bytes", "realpaths")
failures = []


def check(cond, what):
    print("%s: %s" % ("ok" if cond else "FAIL", what))
    if not cond:
        failures.append(what)


def measure(a, np):
    tag = "%s%s%s-%d" % (a.driver, "-colon" if a.llp_suffix else "", "-noopt" if a.no_prefix else "", np)
    out = os.path.join(a.work, "loader-%s.json" % tag)
    stats = os.path.join(a.work, "loader-%s.stats" % tag)
    for f in (out, stats):
        if os.path.exists(f):
            os.unlink(f)
    wrapper = [a.launch_exe, "--stats-file", stats]
    if a.driver == "py" and not a.no_prefix:
        for d in ("py", "bin"):
            wrapper += ["--python-prefix", os.path.join(a.work, "mnt", d)]
    wrapper.append("--")
    cmd = [sys.executable, os.path.join(HERE, "bed", "ldbed_run.py"), "--countfs", a.countfs,
           "--work", a.work, "--driver", a.driver, "--np", str(np), "--launch", "mpi",
           "--mpiexec", a.mpiexec, "--wrapper", " ".join(wrapper), "--trace", "--json", out,
           "--llp-suffix=" + a.llp_suffix]
    r = subprocess.run(cmd)
    if r.returncode == 77:
        sys.exit(77)
    check(r.returncode == 0, "%s driver at %d processes under sheaf-launch%s%s: all printed the "
          "expected sums" % (a.driver, np, " (LD_LIBRARY_PATH + %r)" % a.llp_suffix if a.llp_suffix else "",
                             " without --python-prefix" if a.no_prefix else ""))
    if r.returncode != 0:
        sys.exit(1)
    with open(out) as f:
        rec = json.loads(f.readline())
    with open(rec["trace"]) as f:
        rows = [l.rstrip("\n").split("\t") for l in f][1:]
    with open(stats) as f:
        srv = {k: int(v) for k, v in (l.split() for l in f if l.strip())}
    return rec, rows, srv


def check_run(a, np, rec, rows):
    c = rec["counts"]
    drv = c["drivers"]
    check(not drv, "np=%d: no driver process reached the tree (%s driver): %s"
          % (np, a.driver, drv[:2]))
    others = {o["comm"] for o in c["others"]}
    check(others <= {"sheaf-launch"}, "np=%d: no other process but the load server reached the "
          "tree: %s" % (np, sorted(others)))
    opens = collections.Counter(n for op, pid, n, e, b in rows if op == "open")
    check(opens and max(opens.values()) == 1,
          "np=%d: every file of the tree opened once in the whole run (%d files)"
          % (np, len(opens)))
    lists = collections.Counter(n for op, pid, n, e, b in rows if op == "opendir")
    check(not lists or max(lists.values()) == 1,
          "np=%d: every directory listed at most once (%d directories)" % (np, len(lists)))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--countfs", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--driver", choices=("c", "py"), required=True)
    p.add_argument("--launch-exe", required=True)
    p.add_argument("--mpiexec", required=True)
    p.add_argument("--np", type=int, default=4)
    p.add_argument("--llp-suffix", default="",
                   help="appended to LD_LIBRARY_PATH: ':' makes an empty entry (the working "
                        "directory, as ld.so reads it); the client must search it itself")
    p.add_argument("--no-prefix", action="store_true",
                   help="no --python-prefix: sheaf-launch must infer it (issue 26)")
    a = p.parse_args()
    a.work = os.path.abspath(a.work)
    res = {}
    for np in (1, a.np):
        rec, rows, srv = measure(a, np)
        check_run(a, np, rec, rows)
        res[np] = (rec, srv)
    t1, tp = res[1][0]["counts"]["total"], res[a.np][0]["counts"]["total"]
    for k in COUNTERS:
        check(t1[k] == tp[k], "%s on the tree independent of the process count: %d at 1, %d at %d"
              % (k, t1[k], tp[k], a.np))
    s1, sp = res[1][1], res[a.np][1]
    for k in SERVER:
        check(s1.get(k) == sp.get(k), "server %s the same: %s at 1, %s at %d"
              % (k, s1.get(k), sp.get(k), a.np))
    print("%d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
