#!/usr/bin/env python3
"""check_nodes.py - the multi-node bed (ldnodes.py, bed-rsh, ldnodes_run.py)
and what reaches the shared file system from N simulated nodes.

    check_nodes.py --countfs EXE --work DIR [--launch-exe SHEAF_LAUNCH]
                   [--mpiexec CMD] [--nodes 2,4] [--ppn 2]

DIR is a genload.py output (the small workload). Asserts:
  bed:     bed-rsh runs a command in the node's namespaces (its host name,
           its own RAM disk, the caller's environment and directory, the other
           nodes reachable by name over TCP); an unknown host exits 255; a
           failing command and a SIGTERM still tear the nodes down (no holder,
           no state left);
  plain:   (C driver, N nodes x P processes, rsh fan-out) every driver prints
           the expected sums; every metadata counter of the shared tree is
           exactly N*P times that of 1 process on 1 node, and each node counts
           exactly P times one process; nothing else reaches the tree; after
           every run the node holders are gone;
  mpi:     (with --mpiexec) the same through MPICH hydra with
           `-launcher ssh -launcher-exec bed-rsh` at the largest N;
  pernode: (with --launch-exe) part 1's loader, one server per node, at 1
           node and the smallest N: the drivers reach nothing, every metadata
           counter is exactly N times that of the single node's server (it
           grows with N: the baseline the overlay must flatten), READ bytes
           grow;
  local:   (pernode and overlay runs) each node has its own tmpfs at
           WORK/nodelocal with a library of its own (ldnodes_local.py), which
           every driver preloads: each driver loaded its own node's copy
           (issue 26: with default options, never the root's);
  overlay: (with --launch-exe, if it has --hosts/--rsh/--overlay)
           `sheaf-launch --hosts ... --rsh bed-rsh --overlay M` (no other
           option: the default classification) for each M of
           --overlay-modes (push,pull): every driver printed the expected sums,
           every file opened and every directory listed at most once in the
           whole run, drivers reach nothing, only the servers do, every counter
           (READ bytes too) the same at every N and equal to one node's
           server (one process's reading); a peer with a wrong key is refused,
           counted and logged by a server of the overlay (started by the bed).
           If sheaf-launch has no overlay, this part prints NOT CHECKED.
--only-local: only the pernode baseline at 1 node and the overlay runs (the
node-local library and the flat counts; ctest loader.nodes.local).
Exit 0, 1 on a failed assertion, 77 (reason printed) when namespaces or
FUSE are not available.
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BED = os.path.join(HERE, "bed")
sys.path.insert(0, BED)
import ldnodes  # noqa: E402

EXACT = ("lookup", "lookup_enoent", "getattr", "readlink", "open", "opendir", "readdir")
COUNT = EXACT + ("read_bytes",)
failures = []


def check(cond, what):
    print("%s: %s" % ("ok" if cond else "FAIL", what), flush=True)
    if not cond:
        failures.append(what)


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def measure(a, nodes, ppn, mode, launch="rsh", driver="c", overlay="push", more=()):
    out = os.path.join(a.work, "nodes-check.json")
    if os.path.exists(out):
        os.unlink(out)
    cmd = [sys.executable, os.path.join(BED, "ldnodes_run.py"), "--countfs", a.countfs,
           "--work", a.work, "--nodes", str(nodes), "--ppn", str(ppn), "--mode", mode,
           "--launch", launch, "--driver", driver, "--trace", "--json", out, "--timeout", "240",
           "--overlay", overlay] + list(more)
    if a.launch_exe:
        cmd += ["--launch-exe", a.launch_exe]
    if mode in ("pernode", "overlay"):
        cmd += ["--node-local"]
    if a.mpiexec:
        cmd += ["--mpiexec", a.mpiexec]
    r = subprocess.run(cmd)
    if r.returncode == ldnodes.SKIP:
        sys.exit(ldnodes.SKIP)
    what = "%s %s, %d nodes x %d: every driver printed the expected sums" % (mode, launch, nodes,
                                                                              ppn)
    check(r.returncode == 0, what)
    if r.returncode != 0:
        return None
    with open(out) as f:
        rec = json.loads(f.readline())
    nl = rec.get("node_local")
    if nl is not None:
        check(nl["ok"], "%s %s, %d nodes x %d: every driver loaded its own node's copy of the "
              "node-local library (values %s, wrong %s)" % (mode, overlay if mode == "overlay" else "",
                                                             nodes, ppn, nl["values"], nl["wrong"]))
    check(rec["holders"] and not any(alive(p) for p in rec["holders"])
          and not os.path.exists(os.path.join(a.work, "nodes-state", "nodes")),
          "%s %d nodes: torn down (no holder process, no state)" % (mode, nodes))
    return rec


def check_bed(a):
    state = os.path.join(a.work, "bed-state")
    env = ldnodes.env_for(state)
    env["LDBED_PROBE"] = "kept"
    with ldnodes.Nodes(2, state) as nodes:
        r = subprocess.run(["bed-rsh", "-x", nodes[1]["addr"],
                            'echo $(hostname) $LDBED_PROBE $(pwd) $(stat -f -c %T /dev/shm); '
                            'python3 -c "import socket; socket.create_connection((\'ldbn0\', 9), 5)"'
                            ' 2>&1 | tail -1'],
                           env=env, cwd=a.work, stdout=subprocess.PIPE, text=True, timeout=60)
        words = r.stdout.split("\n")[0].split()
        check(words == ["ldbn1", "kept", a.work, "tmpfs"],
              "bed-rsh: in the node (host name, environment, directory, tmpfs RAM disk): %s" % words)
        check("ConnectionRefused" in r.stdout,
              "bed-rsh: node ldbn0 reachable by name from ldbn1 (port 9 refused, not unreachable)")
        subprocess.run(["bed-rsh", "ldbn0", "touch /dev/shm/only-here"], env=env, timeout=60)
        r = subprocess.run(["bed-rsh", "ldbn1", "ls /dev/shm"], env=env, stdout=subprocess.PIPE,
                           text=True, timeout=60)
        check("only-here" not in r.stdout and not os.path.exists("/dev/shm/only-here"),
              "each node has its own RAM disk")
        r = subprocess.run(["bed-rsh", "nosuchnode", "true"], env=env, stderr=subprocess.PIPE,
                           text=True, timeout=60)
        check(r.returncode == 255 and "no such node" in r.stderr,
              "bed-rsh: an unknown host exits 255 with a message")
        holders = [n["pid"] for n in nodes]
    check(not any(alive(p) for p in holders), "nodes torn down after use")
    ln = [sys.executable, os.path.join(BED, "ldnodes.py")]
    r = subprocess.run(ln + ["run", "2", "--state", state, "--", "sh", "-c",
                             "cat $LDBED_STATE/nodes > %s/st; exit 3" % a.work], timeout=120)
    pids = [int(l.split()[2]) for l in open(os.path.join(a.work, "st"))]
    check(r.returncode == 3 and len(pids) == 2 and not any(alive(p) for p in pids),
          "a failing command (exit 3): status passed on, nodes torn down")
    r = subprocess.run(ln + ["run", "2", "--state", state, "--", "sh", "-c",
                             "cat $LDBED_STATE/nodes > %s/st; kill -TERM $PPID; sleep 30"
                             % a.work], timeout=120, stderr=subprocess.PIPE, text=True)
    pids = [int(l.split()[2]) for l in open(os.path.join(a.work, "st"))]
    time.sleep(0.2)
    check(r.returncode != 0 and not any(alive(p) for p in pids)
          and not os.path.exists(os.path.join(state, "nodes")),
          "SIGTERM to the bed: nodes torn down (rc %d)" % r.returncode)


def per_node_equal(rec, factor, ref, what):
    bad = [(n["host"], k, n[k], factor * ref[k]) for n in rec["counts"]["nodes"] for k in EXACT
           if n[k] != factor * ref[k]]
    check(not bad, "%s: each node counts exactly %d x %s %s" % (what, factor, "one process"
                                                                 if factor > 1 else "", bad[:3]))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--countfs", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--launch-exe")
    p.add_argument("--mpiexec")
    p.add_argument("--nodes", default="2,4")
    p.add_argument("--ppn", type=int, default=2)
    p.add_argument("--overlay-modes", default="push,pull")
    p.add_argument("--only-local", action="store_true",
                   help="only the per-node server baseline and the overlay with default options "
                        "(the node-local library and the flat counts), no bed or plain checks")
    a = p.parse_args()
    a.work = os.path.abspath(a.work)
    reason = ldnodes.why_not()
    if reason or not os.path.exists("/dev/fuse"):
        print("SKIP: %s" % (reason or "/dev/fuse does not exist"))
        return 77
    ns = [int(x) for x in a.nodes.split(",")]
    if a.only_local:
        if not a.launch_exe:
            print("SKIP: --only-local needs --launch-exe (the loader is not built)")
            return 77
        base = measure(a, 1, a.ppn, "pernode")
        if base:
            check_overlay(a, ns, base["counts"]["total"], wrong_peer=False)
        print("%d failures" % len(failures))
        return 1 if failures else 0
    check_bed(a)

    one = measure(a, 1, 1, "plain")
    if one is None:
        return 1
    t1 = one["counts"]["total"]
    for n in ns:
        rec = measure(a, n, a.ppn, "plain")
        if rec is None:
            continue
        t = rec["counts"]["total"]
        bad = [(k, t[k], n * a.ppn * t1[k]) for k in EXACT if t[k] != n * a.ppn * t1[k]]
        check(not bad, "plain %d nodes x %d: every counter exactly %d x one process's %s"
              % (n, a.ppn, n * a.ppn, bad))
        per_node_equal(rec, a.ppn, t1, "plain %d nodes" % n)
        check(rec["counts"]["others_meta"] == 0 and not rec["counts"]["front"],
              "plain %d nodes: nothing but the drivers reached the tree" % n)
    if a.mpiexec:
        n = ns[-1]
        rec = measure(a, n, a.ppn, "plain", launch="mpi")
        if rec:
            t = rec["counts"]["total"]
            check(all(t[k] == n * a.ppn * t1[k] for k in EXACT),
                  "plain under hydra + bed-rsh, %d nodes x %d: every counter %d x one process's"
                  % (n, a.ppn, n * a.ppn))
            per_node_equal(rec, a.ppn, t1, "hydra %d nodes" % n)

    if not a.launch_exe:
        print("NOT CHECKED: pernode/overlay (no --launch-exe: the loader is not built)")
    else:
        base = measure(a, 1, a.ppn, "pernode")
        if base:
            b = base["counts"]["total"]
            check(base["counts"]["drivers_meta"] == 0, "pernode 1 node: the drivers reach nothing")
            for n in ns[:1]:
                rec = measure(a, n, a.ppn, "pernode")
                if rec is None:
                    continue
                t = rec["counts"]["total"]
                check(rec["counts"]["drivers_meta"] == 0,
                      "pernode %d nodes: the drivers reach nothing" % n)
                bad = [(k, t[k], n * b[k]) for k in EXACT if t[k] != n * b[k]]
                check(not bad, "pernode %d nodes: every metadata counter exactly %d x one node's "
                      "server (grows with N) %s" % (n, n, bad))
                # READ bytes: the nodes share one page cache, so concurrent servers may
                # find pages another just read (doc/loader-bed.md, "Page cache")
                check(b["read_bytes"] < t["read_bytes"] <= n * b["read_bytes"],
                      "pernode %d nodes: READ bytes grow, at most %d x one server's: %d"
                      % (n, n, t["read_bytes"]))
            check_overlay(a, ns, b)
    print("%d failures" % len(failures))
    return 1 if failures else 0


def check_overlay(a, ns, b, wrong_peer=True):
    probe = subprocess.run([a.launch_exe, "--help"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
    if not all(o in probe.stdout for o in ("--hosts", "--rsh", "--overlay")):
        print("NOT CHECKED: overlay (%s has no --hosts/--rsh/--overlay)" % a.launch_exe)
        return
    for ov in a.overlay_modes.split(","):
        prev = None
        for n in ns:
            rec = measure(a, n, a.ppn, "overlay", overlay=ov)
            if rec is None:
                continue
            c, t = rec["counts"], rec["counts"]["total"]
            what = "overlay %s, %d nodes x %d" % (ov, n, a.ppn)
            check(c["drivers_meta"] == 0, "%s: the drivers reach nothing" % what)
            others = {o["comm"] for o in c["others"]}
            check(others <= {"sheaf-ld-server"}, "%s: only the servers reach the tree: %s"
                  % (what, sorted(others)))
            check(c["max_opens_per_file"] <= 1 and c["max_listings_per_dir"] <= 1,
                  "%s: every file opened (%d) and directory listed (%d) at most once"
                  % (what, c["files_opened"], c["dirs_listed"]))
            bad = [(k, t[k], b[k]) for k in COUNT if t[k] != b[k]]
            check(not bad, "%s: every counter (and READ bytes) equal to one node's server %s"
                  % (what, bad))
            if prev:
                check(all(t[k] == prev[k] for k in COUNT),
                      "overlay %s: counters independent of N (%d nodes = %d nodes)"
                      % (ov, n, ns[0]))
            prev = prev or t
    if not wrong_peer:
        return
    # a peer with a wrong key is refused by a server of the bed's overlay
    rec = measure(a, 2, 1, "overlay-bed", overlay="pull", more=["--wrong-peer"])
    if rec:
        f = rec["faults"]
        check(f.get("wrong_peer_refused") is True and f.get("net_refused") == 1
              and "refused peer" in f.get("server_log", ""),
              "a peer with a wrong key: refused, counted (net_refused 1), logged: %s" % f)


if __name__ == "__main__":
    sys.exit(main())
