#!/usr/bin/env python3
"""check_plain.py - plain loading (no sheaf loader) on the bed costs what
ld.so and CPython are known to cost, per process, linearly in the processes.

    check_plain.py --countfs EXE --work DIR --driver c|py
                   [--launch plain|mpi] [--mpiexec CMD] [--np P] [--nodes K]

DIR is a genload.py output. Runs the driver at 1 and at P (default 4)
processes through ldbed_run.py (with the trace) and asserts:
  c:  every driver printed the expected sums; per process, library i in
      search directory k (of LD_LIBRARY_PATH) costs exactly one failed
      LOOKUP of its name in each of the k directories before it and none
      after, and exactly one OPEN of its file; at 1 process the READ bytes
      of each library equal its size; at P processes every counter but the
      READ bytes is exactly P times the 1-process one, and every process
      counts the same.
  py: every extension module and every .pyc is opened exactly once per
      process, no .py source is opened (the .pyc are valid), each sys.path
      directory of the tree is listed once per process; at 1 process the
      READ bytes of each .pyc and extension equal its size; at P processes
      the same linearity as for c.
  both: no process but the drivers reaches the tree (the launcher and the
      bed's spawner cost nothing); with --nodes K the P-process run is spread
      over K simulated nodes (UTS namespaces ldbnode0..K-1), each of which
      counts exactly 1/K of every metadata counter.
Exit 0, 1 on a failed assertion, 77 if FUSE cannot be mounted (skip).
"""
import argparse
import collections
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
EXACT = ("lookup", "lookup_enoent", "getattr", "readlink", "open", "opendir", "readdir")
failures = []


def check(cond, what):
    print("%s: %s" % ("ok" if cond else "FAIL", what))
    if not cond:
        failures.append(what)


def measure(a, np, nodes=0):
    out = os.path.join(a.work, "check-%s-%s-%d.json" % (a.driver, a.launch, np))
    if os.path.exists(out):
        os.unlink(out)
    cmd = [sys.executable, os.path.join(HERE, "bed", "ldbed_run.py"), "--countfs", a.countfs,
           "--work", a.work, "--driver", a.driver, "--np", str(np), "--launch", a.launch,
           "--trace", "--json", out, "--nodes", str(nodes)]
    if a.mpiexec:
        cmd += ["--mpiexec", a.mpiexec]
    r = subprocess.run(cmd)
    if r.returncode == 77:
        sys.exit(77)
    check(r.returncode == 0, "%s driver at %d processes: all printed the expected sums"
          % (a.driver, np))
    if r.returncode != 0:
        sys.exit(1)
    with open(out) as f:
        rec = json.loads(f.readline())
    with open(rec["trace"]) as f:
        rows = [l.rstrip("\n").split("\t") for l in f][1:]
    return rec, rows


def per_pid(rows, pids):
    """trace rows by driver pid: {pid: [(op, name, errno, bytes)]}"""
    by = collections.defaultdict(list)
    for op, pid, name, err, nbytes in rows:
        if int(pid) in pids:
            by[int(pid)].append((op, name, int(err), int(nbytes)))
    return by


def check_c(man, mine, pid, np):
    dirs = man["lib_dirs"]
    fails = collections.Counter(n for op, n, e, _ in mine if op == "lookup" and e == 2)
    opens = collections.Counter(n for op, n, e, _ in mine if op == "open" and e == 0)
    bad = []
    for lib in man["libs"]:
        k = lib["dir"]
        want = {"%s/%s" % (dirs[j], lib["name"]): 1 for j in range(k)}
        got = {"%s/%s" % (d, lib["name"]): fails["%s/%s" % (d, lib["name"])] for d in dirs
               if fails["%s/%s" % (d, lib["name"])]}
        if got != want or opens[lib["path"]] != 1:
            bad.append("%s: failed %s want %s, opens %d" % (lib["name"], got, want,
                                                          opens[lib["path"]]))
    nfail = sum(l["dir"] for l in man["libs"])
    check(not bad, "np=%d pid %d: each library: one failed lookup in each directory before its "
          "own (%d in all), one open %s" % (np, pid, nfail, "; ".join(bad[:3])))
    return mine


def check_py(man, mine, pid, np):
    opens = collections.Counter(n for op, n, e, _ in mine if op == "open" and e == 0)
    lists = collections.Counter(n for op, n, e, _ in mine if op == "opendir" and e == 0)
    bad = [f["path"] for f in man["py_files"]
           if opens[f.get("pyc", f["path"])] != 1 or ("pyc" in f and opens[f["path"]])]
    check(not bad, "np=%d pid %d: each extension and .pyc opened once, no .py source opened %s"
          % (np, pid, bad[:3]))
    check(all(lists[d] == 1 for d in man["py_dirs"]),
          "np=%d pid %d: each sys.path directory of the tree listed once: %s"
          % (np, pid, dict(lists)))


def sizes_read(man, mine, a):
    got = collections.Counter()
    for op, n, e, b in mine:
        if op == "read":
            got[n] += b
    if a.driver == "c":
        want = {l["path"]: l["size"] for l in man["libs"]}
    else:
        want = {f.get("pyc", f["path"]): f.get("pyc_size", f["size"]) for f in man["py_files"]}
    bad = ["%s %d != %d" % (p, got[p], s) for p, s in want.items() if got[p] != s]
    check(not bad, "np=1: READ bytes of each of the %d files = its size %s"
          % (len(want), bad[:3]))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--countfs", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--driver", choices=("c", "py"), required=True)
    p.add_argument("--launch", choices=("plain", "mpi"), default="plain")
    p.add_argument("--mpiexec")
    p.add_argument("--np", type=int, default=4)
    p.add_argument("--nodes", type=int, default=0,
                   help="run the P-process case on this many simulated nodes")
    a = p.parse_args()
    a.work = os.path.abspath(a.work)
    with open(os.path.join(a.work, "manifest.json")) as f:
        man = json.load(f)
    results = {}
    for np in (1, a.np):
        rec, rows = measure(a, np, a.nodes if np > 1 else 0)
        pids = [d["pid"] for d in rec["counts"]["drivers"]]
        check(len(pids) == np, "np=%d: %d driver processes reached the tree" % (np, len(pids)))
        by = per_pid(rows, set(pids))
        for pid in pids:
            (check_c if a.driver == "c" else check_py)(man, by[pid], pid, np)
        if np == 1 and pids:
            sizes_read(man, by[pids[0]], a)
        check(rec["counts"]["others_meta"] == 0,
              "np=%d: no process but the drivers reached the tree (launcher, spawner): %s"
              % (np, rec["counts"]["others"][:3]))
        if np > 1 and a.nodes:
            nodes = rec["counts"]["nodes"]
            check(sorted(n["host"] for n in nodes) == ["ldbnode%d" % k for k in range(a.nodes)],
                  "np=%d: counted on nodes %s" % (np, [n["host"] for n in nodes]))
            check(all(n[k] * a.nodes == rec["counts"]["total"][k] for n in nodes for k in EXACT),
                  "np=%d: every node counts 1/%d of the total" % (np, a.nodes))
        drv = rec["counts"]["drivers"]
        check(all(all(d[k] == drv[0][k] for k in EXACT) for d in drv),
              "np=%d: every process counts the same %s" % (np, [d["meta"] for d in drv]))
        results[np] = rec
    one, many = results[1]["counts"], results[a.np]["counts"]
    for k in EXACT:
        d1 = sum(d[k] for d in one["drivers"])
        dp = sum(d[k] for d in many["drivers"])
        check(dp == a.np * d1, "%s grows linearly: %d at 1 process, %d = %d x %d at %d"
              % (k, d1, dp, a.np, d1, a.np))
    rb = sum(d["read_bytes"] for d in many["drivers"])
    check(rb >= sum(d["read_bytes"] for d in one["drivers"]),
          "READ bytes at %d processes (%d) at least those of one" % (a.np, rb))
    print("%d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
