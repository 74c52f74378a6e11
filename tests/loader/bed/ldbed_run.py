#!/usr/bin/env python3
"""ldbed_run.py - one measurement on the loader bed: mount countfs over a
genload.py tree, start P driver processes, collect the counts and times.

    ldbed_run.py --countfs EXE --work DIR --driver c|py --np P
                 [--launch plain|mpi] [--mpiexec CMD] [--wrapper CMD]
                 [--nodes K] [--latency-us N] [--read-latency-us N]
                 [--keep-cache] [--env-inherit] [--trace] [--json FILE] [--quiet]

DIR is the output of genload.py (DIR/tree, DIR/manifest.json); the tree is
mounted at DIR/mnt for the run. The launch line is
    [WRAPPER...] <spawner> <driver>
where the spawner is, for --launch plain, `sh -c` starting P copies in the
background and waiting for all, and for --launch mpi, `MPIEXEC -n P`
(--mpiexec, default $MPIEXEC or `mpiexec`). --wrapper is split like a shell
line (shlex) and put in front, e.g. --wrapper "sheaf-launch --" measures
`sheaf-launch -- mpiexec -n 8 cdriver`. --nodes K puts process (rank) i of P
in a UTS namespace named ldbnode<i*K/P> (simulated nodes, blocks of P/K).
LD_LIBRARY_PATH and PYTHONPATH (into the mounted tree) reach the drivers
through `env VAR=... DRIVER` at the end of the launch line, so that only the
drivers search the tree; with --env-inherit they are in the environment of
the whole launch line instead (then every dynamically linked launcher or
wrapper process searches LD_LIBRARY_PATH too; counted as "others").

Prints one summary and (with --json) appends one JSON record to FILE:
counts of the operations that reached the tree (total, per node, per process:
the first process that touched the tree against the rest), the times to main
and to done (from the launch, over all processes), and whether every driver
printed the expected sums. Exit 0 when all P drivers reported the expected
sums, 1 otherwise; 77 when FUSE cannot be mounted here (reason printed).
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
import time

OPS = ("lookup", "lookup_enoent", "getattr", "readlink", "open", "opendir", "readdir",
       "read", "read_bytes", "statfs")
META = ("lookup", "getattr", "readlink", "open", "opendir", "readdir", "statfs")

# the plain launcher: P copies in the background, each one's exit status checked;
# with K > 0 nodes, copy i runs in a UTS namespace named ldbnode<i*K/P>
SPAWN = ('n=$1; k=$2; shift 2; i=0; pids=; '
         'while [ $i -lt $n ]; do '
         '  if [ "$k" -gt 0 ]; then '
         '    unshare -u sh -c \'hostname "$0"; exec "$@"\' ldbnode$((i * k / n)) "$@" & '
         '  else "$@" & fi; '
         '  pids="$pids $!"; i=$((i+1)); done; '
         'rc=0; for p in $pids; do wait $p || rc=1; done; exit $rc')
# under mpiexec: rank r (PMI_RANK from MPICH's hydra, OMPI_COMM_WORLD_RANK from
# Open MPI) of P runs in a UTS namespace named ldbnode<r*K/P>
NODEWRAP = ('n=$1; k=$2; shift 2; r=${PMI_RANK:-${OMPI_COMM_WORLD_RANK:-0}}; '
            'exec unshare -u sh -c \'hostname "$0"; exec "$@"\' ldbnode$((r * k / n)) "$@"')


def mounted(path):
    with open("/proc/self/mountinfo") as f:
        return any(line.split()[4] == path for line in f)


def unmount(mnt):
    if mounted(mnt):
        if subprocess.run(["umount", mnt], stderr=subprocess.DEVNULL).returncode != 0:
            subprocess.run(["umount", "-l", mnt], stderr=subprocess.DEVNULL)


def wait_dump(path, seq, proc, timeout=30.0):
    """the dump numbered at least seq, or None"""
    end = time.time() + timeout
    while time.time() < end:
        try:
            with open(path) as f:
                d = json.load(f)
            if d["seq"] >= seq:
                return d
        except (OSError, ValueError, KeyError):
            pass
        if proc.poll() is not None:
            return None
        time.sleep(0.02)
    return None


def abs_cmd(words):
    """a command whose first word is a relative path: made absolute (the launch
    line runs in the work directory)"""
    if words and "/" in words[0] and not os.path.isabs(words[0]):
        words[0] = os.path.abspath(words[0])
    return words


def launch_line(a, man, mnt, envvars):
    if a.driver == "c":
        drv = [os.path.join(mnt, "bin", "cdriver")]
    else:
        drv = [man["python"], os.path.join(mnt, "bin", "pydriver.py")]
    if not a.env_inherit:
        drv = ["env"] + ["%s=%s" % kv for kv in sorted(envvars.items())] + drv
    wrapper = abs_cmd(shlex.split(a.wrapper)) if a.wrapper else []
    if a.launch == "mpi":
        mpiexec = abs_cmd(shlex.split(a.mpiexec or os.environ.get("MPIEXEC", "mpiexec")))
        if a.nodes:
            drv = ["sh", "-c", NODEWRAP, "nodewrap", str(a.np), str(a.nodes)] + drv
        return wrapper + mpiexec + ["-n", str(a.np)] + drv
    return wrapper + ["sh", "-c", SPAWN, "spawn", str(a.np), str(a.nodes)] + drv


def summarize(dump, drv_pids):
    """counts of the tree: total, per node, the first driver process (first to
    touch the tree) against the other drivers, and other processes (launcher,
    load server) together"""
    procs = dump["procs"]
    tot = {k: dump["total"][k] for k in OPS}
    tot["meta"] = sum(tot[k] for k in META)
    for p in procs:
        p["meta"] = sum(p[k] for k in META)
    drivers = [p for p in procs if p["pid"] in drv_pids]
    others = [p for p in procs if p["pid"] not in drv_pids]
    rest = drivers[1:]
    return {"total": tot,
            "nodes": [{k: n[k] for k in ("host",) + OPS} for n in dump["nodes"]],
            "first": drivers[0] if drivers else None,
            "rest_max_meta": max((p["meta"] for p in rest), default=0),
            "rest_sum_meta": sum(p["meta"] for p in rest),
            "others_meta": sum(p["meta"] for p in others),
            "others": [{k: p[k] for k in ("pid", "comm", "meta", "read_bytes")} for p in others],
            "drivers": drivers}


def run(a):
    try:
        with open(os.path.join(a.work, "manifest.json")) as f:
            man = json.load(f)
    except (OSError, ValueError) as e:
        print("ldbed: %s: no workload here (run genload.py first): %s" % (a.work, e),
              file=sys.stderr)
        return 1
    tree, mnt = os.path.join(a.work, "tree"), os.path.join(a.work, "mnt")
    os.makedirs(mnt, exist_ok=True)
    unmount(mnt)
    dump, ready = os.path.join(a.work, "counts.json"), os.path.join(a.work, "ready")
    trace = os.path.join(a.work, "trace.tsv")
    for p in (dump, ready):
        if os.path.exists(p):
            os.unlink(p)
    cmd = [a.countfs, "--dump", dump, "--ready", ready,
           "--latency-us", str(a.latency_us), "--read-latency-us", str(a.read_latency_us)]
    if a.keep_cache:
        cmd.append("--keep-cache")
    if a.trace:
        cmd += ["--trace", trace]
    if not os.path.exists("/dev/fuse"):
        print("ldbed: SKIP: /dev/fuse does not exist")
        return 77
    srv = subprocess.Popen(cmd + [tree, mnt], stderr=subprocess.PIPE, text=True)
    end = time.time() + 20
    while not os.path.exists(ready) and srv.poll() is None and time.time() < end:
        time.sleep(0.02)
    if not os.path.exists(ready):
        srv.kill()
        err = srv.communicate()[1].strip()
        print("ldbed: SKIP: cannot mount FUSE here: %s" % err)
        return 77
    envvars = {"LD_LIBRARY_PATH": ":".join(os.path.join(mnt, d) for d in man["ld_library_path"]) +
               a.llp_suffix,
               "PYTHONPATH": ":".join(os.path.join(mnt, d) for d in man["pythonpath"]),
               "PYTHONDONTWRITEBYTECODE": "1"}
    env = dict(os.environ)
    if a.env_inherit:
        env.update(envvars)
    line = launch_line(a, man, mnt, envvars)
    try:
        t0 = time.time_ns()
        try:
            r = subprocess.run(line, env=env, cwd=a.work, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, timeout=a.timeout)
        except (OSError, subprocess.TimeoutExpired) as e:
            print("ldbed: the launch line failed: %s: %s" % (" ".join(line), e), file=sys.stderr)
            return 1
        t1 = time.time_ns()
        os.kill(srv.pid, 10)  # SIGUSR1: dump now (before the unmount adds its own requests)
        d = wait_dump(dump, 1, srv)
    finally:
        unmount(mnt)
        try:
            srv.wait(timeout=20)
        except subprocess.TimeoutExpired:
            srv.kill()
    if d is None:
        print("ldbed: countfs wrote no counts (%s)" % srv.stderr.read().strip())
        return 1
    rows = [dict(kv.split("=", 1) for kv in l.split()[1:])
            for l in r.stdout.splitlines() if l.startswith("LDBED ")]
    want = {"sum": str(man["c_sum"] if a.driver == "c" else man["py_sum"])}
    if a.driver == "c":
        want["dl"] = str(man["c_dl"])
    good = [x for x in rows if all(x.get(k) == v for k, v in want.items())]
    ok = r.returncode == 0 and len(good) == a.np
    pids = {int(x["pid"]) for x in rows}
    s = summarize(d, pids)
    mains = [int(x["main_ns"]) - t0 for x in rows]
    dones = [int(x["done_ns"]) - t0 for x in rows]
    rec = {"driver": a.driver, "np": a.np, "launch": a.launch, "wrapper": a.wrapper or "",
           "nodes": a.nodes, "latency_us": a.latency_us, "read_latency_us": a.read_latency_us,
           "keep_cache": a.keep_cache, "env_inherit": a.env_inherit, "params": man["params"], "ok": ok,
           "launch_line": " ".join(shlex.quote(x) for x in line),
           "t_main_max_s": max(mains) / 1e9 if mains else None,
           "t_main_mean_s": sum(mains) / len(mains) / 1e9 if mains else None,
           "t_done_max_s": max(dones) / 1e9 if dones else None,
           "t_wall_s": (t1 - t0) / 1e9, "counts": s}
    if a.trace:
        rec["trace"] = trace
    if a.json:
        with open(a.json, "a") as f:
            f.write(json.dumps(rec) + "\n")
    if not a.quiet:
        print_summary(rec)
    if not ok:
        print("ldbed: FAILED: %d of %d drivers reported the expected sums (rc %d)\n"
              "stdout: %s\nstderr: %s" % (len(good), a.np, r.returncode, r.stdout[-3000:],
                                          r.stderr[-2000:]))
    return 0 if ok else 1


def print_summary(rec):
    c = rec["counts"]
    t = c["total"]
    first = c["first"] or {k: 0 for k in OPS + ("meta",)}
    print("%-2s np=%-3d %-5s%s lookups=%d (enoent %d) getattr=%d open=%d opendir=%d "
          "readdir=%d read=%dB | first=%d rest max=%d sum=%d others=%d | main max %.3fs done max %.3fs"
          % (rec["driver"], rec["np"], rec["launch"],
             " [" + rec["wrapper"] + "]" if rec["wrapper"] else "",
             t["lookup"], t["lookup_enoent"], t["getattr"], t["open"], t["opendir"],
             t["readdir"], t["read_bytes"], first["meta"], c["rest_max_meta"],
             c["rest_sum_meta"], c["others_meta"], rec["t_main_max_s"] or -1, rec["t_done_max_s"] or -1))
    if len(c["nodes"]) > 1:
        for n in c["nodes"]:
            print("   node %-10s lookups=%d getattr=%d open=%d read=%dB" %
                  (n["host"], n["lookup"], n["getattr"], n["open"], n["read_bytes"]))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--countfs", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--driver", choices=("c", "py"), default="c")
    p.add_argument("--np", type=int, default=1)
    p.add_argument("--launch", choices=("plain", "mpi"), default="plain")
    p.add_argument("--mpiexec")
    p.add_argument("--wrapper", default=os.environ.get("LAUNCH_WRAPPER", ""))
    p.add_argument("--nodes", type=int, default=0)
    p.add_argument("--latency-us", type=int, default=0)
    p.add_argument("--read-latency-us", type=int, default=0)
    p.add_argument("--keep-cache", action="store_true")
    p.add_argument("--env-inherit", action="store_true")
    p.add_argument("--trace", action="store_true")
    p.add_argument("--llp-suffix", default="",
                   help="appended to LD_LIBRARY_PATH, e.g. ':' (an empty entry, as module systems leave)")
    p.add_argument("--json")
    p.add_argument("--timeout", type=float, default=600)
    p.add_argument("--quiet", action="store_true")
    a = p.parse_args()
    if a.np < 1 or a.nodes < 0 or a.latency_us < 0 or a.read_latency_us < 0:
        p.error("--np must be >= 1, --nodes and latencies >= 0")
    a.work = os.path.abspath(a.work)
    return run(a)


if __name__ == "__main__":
    sys.exit(main())
