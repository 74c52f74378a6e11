#!/usr/bin/env python3
"""ldnodes_run.py - one measurement on N simulated nodes (ldnodes.py): mount
countfs over a genload.py tree (the shared file system), make N nodes, start
P driver processes on each, collect what reached the shared file system (in
total and per node), the times, each node's RAM-disk peak; tear everything
down.

    ldnodes_run.py --countfs EXE --work DIR --nodes N [--ppn P]
                   [--driver c|py|mpmd] [--mode plain|pernode|overlay]
                   [--launch rsh|mpi] [--overlay push|pull] [--launch-exe SHEAF_LAUNCH]
                   [--overlay-args "..."] [--mpiexec CMD] [--latency-us N]
                   [--read-latency-us N] [--trace] [--json FILE] [--timeout S] [--quiet]

Modes (the launch line runs in the root namespace, the "front end"):
  plain    no loader: the drivers read the shared tree themselves;
  pernode  part 1's loader, one independent server per node, no overlay:
           `bed-rsh HOST sheaf-launch --exe DRIVER -- <spawn P drivers>` per node
           (each node's server reads the tree itself: grows with N);
  overlay  part 2: `sheaf-launch --hosts ADDR,... --rsh bed-rsh --overlay push|pull
           [--overlay-args] -- <launch line>`.
Launch lines: --launch rsh: `sh FANOUT` that runs, for every node in parallel,
`bed-rsh HOST <spawn P drivers>` (P background copies, every status
checked); --launch mpi: `MPIEXEC -launcher ssh -launcher-exec bed-rsh -hosts
ADDR,... -ppn P -n N*P DRIVER` (MPICH hydra; the drivers are not MPI programs).
--driver mpmd: even nodes run the C driver (100 libraries), odd nodes the
Python driver (modules and extensions): different files on different nodes
(needs --launch rsh).
The search paths reach only the drivers (`env VAR=... DRIVER`).

Prints a summary, appends a JSON record to --json. Exit 0 when every driver
printed the expected sums, 1 otherwise, 77 (reason printed) when FUSE or the
namespaces are not available, 3 when the mode needs a sheaf-launch option
this build does not have (the overlay not merged yet).
"""
import argparse
import collections
import json
import os
import shlex
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ldbed_run  # noqa: E402
import ldnodes  # noqa: E402
import ldnodes_overlay  # noqa: E402
import ldnodes_local  # noqa: E402

BEDRSH = os.path.join(HERE, "bed-rsh")
NOT_AVAILABLE = 3


def overlay_available(launch_exe):
    try:
        r = subprocess.run([launch_exe, "--help"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return all(o in r.stdout for o in ("--hosts", "--rsh", "--overlay"))


def driver_words(kind, man, mnt, envvars):
    if kind == "c":
        drv = [os.path.join(mnt, "bin", "cdriver")]
    else:
        drv = [man["python"], os.path.join(mnt, "bin", "pydriver.py")]
    return ["env"] + ["%s=%s" % kv for kv in sorted(envvars.items())] + drv


def node_kind(a, k):
    if a.driver == "mpmd":
        return "c" if k % 2 == 0 else "py"
    return a.driver


def pernode_launcher(a, mnt, k, kind, drv):
    w = [a.launch_exe, "--stats-file", os.path.join(a.work, "nodes-stats.%d" % k), "--exe",
         drv[-1] if kind == "c" else drv[-2]]
    if kind == "py":
        w += ["--python-prefix", os.path.join(mnt, "py"), "--python-prefix",
              os.path.join(mnt, "bin")]
    return w + ["--"]


def boot(a, mnt, kind):
    """overlay-bed: sheaf-boot in front of the executable"""
    if a.mode != "overlay-bed":
        return []
    pre = [os.path.join(mnt, "py"), os.path.join(mnt, "bin")] if kind != "c" else []
    return ldnodes_overlay.boot_words(os.path.dirname(a.boot), a.ov_sock, pre, a.audit)


def with_boot(a, mnt, kind, drv):
    b = boot(a, mnt, kind)
    if not b:
        return drv
    i = len(drv) - (1 if kind == "c" else 2)   # env VAR=... [python] EXE
    return drv[:i] + b + drv[i:]


def launch_line(a, man, mnt, envvars, nodes):
    """the launch line (argv) and the fan-out script it may run"""
    addrs = [n["addr"] for n in nodes]
    lines = None
    if a.launch == "mpi":
        drv = with_boot(a, mnt, a.driver, driver_words(a.driver, man, mnt, envvars))
        mpiexec = ldbed_run.abs_cmd(shlex.split(a.mpiexec))
        line = mpiexec + ["-launcher", "ssh", "-launcher-exec", BEDRSH, "-hosts",
                          ",".join(addrs), "-ppn", str(a.ppn), "-n", str(a.ppn * len(nodes))] + drv
        if a.mode == "pernode":
            raise SystemExit("ldnodes_run: --mode pernode needs --launch rsh")
    else:
        lines = ["#!/bin/sh", "# one line per node: P drivers on it (ldnodes_run.py)", "pids="]
        for k, n in enumerate(nodes):
            kind = node_kind(a, k)
            drv = driver_words(kind, man, mnt, envvars)
            words = ["sh", "-c", ldbed_run.SPAWN, "spawn", str(a.ppn), "0"] + with_boot(a, mnt, kind, drv)
            if a.mode == "pernode":
                words = pernode_launcher(a, mnt, k, kind, drv) + words
            remote = " ".join(shlex.quote(w) for w in words)
            lines.append("%s %s %s & pids=\"$pids $!\"" % (shlex.quote(BEDRSH), n["addr"],
                                                          shlex.quote(remote)))
        lines.append('rc=0; for p in $pids; do wait "$p" || rc=1; done; exit $rc')
        if a.mode == "overlay" and a.driver != "mpmd":
            # the executable must be in the launch line (the launcher puts its
            # bootstrapper in front of it): the generic fan-out
            line = [os.path.join(HERE, "bed-fanout"), str(a.ppn)] + addrs + ["--"] + \
                driver_words(a.driver, man, mnt, envvars)
            lines = None
    if a.launch == "rsh" and lines is not None:
        fan = os.path.join(a.work, "nodes-fanout.sh")
        with open(fan, "w") as f:
            f.write("\n".join(lines) + "\n")
        os.chmod(fan, 0o755)
        line = [fan]
    if a.mode == "overlay":
        wrap = [a.launch_exe, "--hosts", ",".join(addrs), "--rsh", BEDRSH,
                "--overlay", a.overlay] + shlex.split(a.overlay_args)
        if a.driver in ("py", "mpmd"):
            wrap += ["--python-prefix", os.path.join(mnt, "py"), "--python-prefix",
                     os.path.join(mnt, "bin")]
        if a.driver == "mpmd":
            # two executables in per-node lines: no bootstrapper, LD_AUDIT and
            # SHEAF_LD_* reach the drivers in the environment (bed-rsh keeps it)
            wrap += ["--no-boot"]
        else:
            wrap += ["--exe", os.path.join(mnt, "bin", "cdriver") if a.driver == "c"
                     else man["python"]]
        # the launcher's host runs no server: the root's counters over the overlay
        wrap += ["--stats-file", os.path.join(a.work, "nodes-stats.0")]
        line = wrap + ["--"] + line
    return line


class Sampler(threading.Thread):
    """the peak of each node's RAM-disk use while the job runs"""

    def __init__(self, nodes, cache):
        super().__init__(daemon=True)
        self.nodes, self.cache = nodes, cache
        self.base = [self.used(n) for n in nodes]
        self.peak = list(self.base)
        self.stop = threading.Event()

    def used(self, n):
        try:
            return ldnodes.cache_used(n, self.cache)
        except OSError:
            return 0

    def run(self):
        while not self.stop.is_set():
            for i, n in enumerate(self.nodes):
                self.peak[i] = max(self.peak[i], self.used(n))
            self.stop.wait(0.01)

    def result(self):
        self.stop.set()
        self.join()
        return [p - b for p, b in zip(self.peak, self.base)]


def summarize(dump, drv_pids, trace_rows, hosts):
    c = ldbed_run.summarize(dump, drv_pids)
    t = c["total"]
    per_node = {n["host"]: n for n in dump["nodes"]}
    nodes = []
    for h in hosts:
        n = per_node.get(h, {k: 0 for k in ldbed_run.OPS})
        nodes.append(dict({k: n[k] for k in ldbed_run.OPS}, host=h,
                          meta=sum(n[k] for k in ldbed_run.META)))
    front = [n for n in dump["nodes"] if n["host"] not in hosts]
    out = {"total": t, "nodes": nodes,
           "front": [dict({k: n[k] for k in ldbed_run.OPS}, host=n["host"]) for n in front],
           "drivers_meta": sum(p["meta"] for p in c["drivers"]),
           "others_meta": c["others_meta"], "others": c["others"]}
    if trace_rows is not None:
        opens = collections.Counter(r[2] for r in trace_rows if r[0] == "open" and r[3] == "0")
        lists = collections.Counter(r[2] for r in trace_rows if r[0] == "opendir" and r[3] == "0")
        out["files_opened"] = len(opens)
        out["max_opens_per_file"] = max(opens.values(), default=0)
        out["dirs_listed"] = len(lists)
        out["max_listings_per_dir"] = max(lists.values(), default=0)
    return out


def start_overlay(a, nodes, extra, env):
    """overlay-bed: one sheaf-ld-server per node through bed-rsh; the wrong-key
    peer (--wrong-peer) tries the root's port once the servers are up"""
    ov = ldnodes_overlay.Overlay(nodes, a.server, a.work, a.overlay, a.cache,
                                 extra=shlex.split(a.overlay_args), env=env)
    extra["t_servers_ready_s"] = (max(ov.ready) - min(ov.ready)) / 1e9
    if a.wrong_peer:
        before = ov.stats(0) or {}
        refused = ldnodes_overlay.wrong_key_peer(nodes[0]["addr"])
        time.sleep(0.2)
        after = ov.stats(0) or {}
        extra["faults"]["wrong_peer_refused"] = refused
        extra["faults"]["net_refused"] = after.get("net_refused", -1) - before.get("net_refused", 0)
        extra["faults"]["server_log"] = ov.stderr(0)[-500:]
    return ov


class Killer:
    """--kill-node K --kill-after S: SIGKILL node K's load server (the
    sheaf-ld-server process in K's network namespace) S seconds after the
    launch (mid-start)"""

    def __init__(self, a, nodes, t0, extra):
        self.timer = None
        if a.kill_node is not None:
            node = nodes[a.kill_node]

            def kill():
                f = extra["faults"]
                f["killed_node"] = a.kill_node
                f["killed_at_s"] = (time.time_ns() - t0) / 1e9
                ino = ldnodes.netns_ino(node["pid"])
                victims = []
                for pid in ldnodes.pids_in_netns(ino) if ino else []:
                    try:
                        with open("/proc/%d/comm" % pid) as c:
                            if c.read().strip() == "sheaf-ld-server":
                                os.kill(pid, 9)
                                victims.append(pid)
                    except OSError:
                        pass
                f["killed_pids"] = victims
            self.timer = threading.Timer(a.kill_after, kill)
            self.timer.start()

    def cancel(self):
        if self.timer:
            self.timer.cancel()


def finish_overlay(a, ov, nodes, extra):
    """counters of every server and each node's RAM-disk use while the caches
    exist, then stop the servers (stdin closed)"""
    extra["server_stats"] = {"ldbn%d" % k: ov.stats(k) for k in range(len(nodes))}
    extra["ramdisk_end_bytes"] = [ldnodes.cache_used(n, a.cache) for n in nodes]
    extra["servers_alive"] = [ov.alive(k) for k in range(len(nodes))]
    ov.stop()
    extra["server_logs"] = {"ldbn%d" % k: ov_log(a, k) for k in range(len(nodes))}


def ov_log(a, k):
    try:
        with open(os.path.join(a.work, "nodes-server.%d.err" % k)) as f:
            return f.read()[-1000:]
    except OSError:
        return ""


def run(a):
    try:
        with open(os.path.join(a.work, "manifest.json")) as f:
            man = json.load(f)
    except (OSError, ValueError) as e:
        print("ldnodes_run: %s: no workload here (run genload.py first): %s" % (a.work, e),
              file=sys.stderr)
        return 1
    if a.mode != "plain" and not a.launch_exe:
        print("ldnodes_run: --mode %s needs --launch-exe" % a.mode, file=sys.stderr)
        return 2
    if a.mode == "overlay" and not overlay_available(a.launch_exe):
        print("ldnodes_run: NOT AVAILABLE: %s has no --hosts/--rsh/--overlay (the overlay is "
              "not in this build)" % a.launch_exe)
        return NOT_AVAILABLE
    reason = ldnodes.why_not()
    if reason or not os.path.exists("/dev/fuse"):
        print("ldnodes_run: SKIP: %s" % (reason or "/dev/fuse does not exist"))
        return ldnodes.SKIP
    tree, mnt = os.path.join(a.work, "tree"), os.path.join(a.work, "mnt")
    os.makedirs(mnt, exist_ok=True)
    ldbed_run.unmount(mnt)
    dump, ready = os.path.join(a.work, "counts.json"), os.path.join(a.work, "ready")
    trace = os.path.join(a.work, "trace.tsv")
    for p in [dump, ready] + [os.path.join(a.work, f) for f in os.listdir(a.work)
                              if f.startswith("nodes-stats.")]:
        if os.path.exists(p):
            os.unlink(p)
    cmd = [a.countfs, "--dump", dump, "--ready", ready, "--latency-us", str(a.latency_us),
           "--read-latency-us", str(a.read_latency_us)]
    if a.trace:
        cmd += ["--trace", trace]
    srv = subprocess.Popen(cmd + [tree, mnt], stderr=subprocess.PIPE, text=True)
    end = time.time() + 30
    while not os.path.exists(ready) and srv.poll() is None and time.time() < end:
        time.sleep(0.02)
    if not os.path.exists(ready):
        srv.kill()
        print("ldnodes_run: SKIP: cannot mount FUSE here: %s" % srv.communicate()[1].strip())
        return ldnodes.SKIP
    envvars = {"LD_LIBRARY_PATH": ":".join(os.path.join(mnt, d) for d in man["ld_library_path"]),
               "PYTHONPATH": ":".join(os.path.join(mnt, d) for d in man["pythonpath"]),
               "PYTHONDONTWRITEBYTECODE": "1"}
    state = os.path.join(a.work, "nodes-state")
    r, d, ram, err, holders, ov = None, None, [], None, [], None
    extra = {"faults": {}}
    try:
        with ldnodes.Nodes(a.nodes, state, a.cache) as nodes:
            holders = [n["pid"] for n in nodes]
            env = ldnodes.env_for(state)
            if a.node_local:
                ldnodes_local.setup(a.work, nodes, BEDRSH, env)
                envvars = ldnodes_local.env_vars(a.work, envvars)
            line = launch_line(a, man, mnt, envvars, nodes)
            sampler = Sampler(nodes, a.cache)
            sampler.start()
            t0 = time.time_ns()
            try:
                if a.mode == "overlay-bed":
                    ov = start_overlay(a, nodes, extra, env)
                killer = Killer(a, nodes, t0, extra)
                r = subprocess.run(line, env=env, cwd=a.work, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, timeout=a.timeout)
                killer.cancel()
            except (OSError, RuntimeError, subprocess.TimeoutExpired) as e:
                err = "the launch line failed: %s: %s" % (" ".join(line), e)
            t1 = time.time_ns()
            ram = sampler.result()
            if ov:
                finish_overlay(a, ov, nodes, extra)
            os.kill(srv.pid, 10)  # SIGUSR1: the dump holds the run, not the teardown
            d = ldbed_run.wait_dump(dump, 1, srv)
    except (ldnodes.BedError, ldnodes_local.LocalError) as e:
        err = str(e)
    finally:
        ldbed_run.unmount(mnt)
        try:
            srv.wait(timeout=30)
        except subprocess.TimeoutExpired:
            srv.kill()
    if err:
        print("ldnodes_run: %s" % err, file=sys.stderr)
        return ldnodes.SKIP if err.startswith("SKIP") else 1
    if d is None:
        print("ldnodes_run: countfs wrote no counts (%s)" % srv.stderr.read().strip())
        return 1
    rows = [dict(kv.split("=", 1) for kv in l.split()[1:])
            for l in r.stdout.splitlines() if l.startswith("LDBED ")]
    kinds = [node_kind(a, k) for k in range(a.nodes)]
    want_c = {"sum": str(man["c_sum"]), "dl": str(man["c_dl"])}
    want_py = {"sum": str(man["py_sum"])}
    n_c, n_py = kinds.count("c") * a.ppn, kinds.count("py") * a.ppn
    good_c = [x for x in rows if all(x.get(k) == v for k, v in want_c.items())]
    good_py = [x for x in rows if "dl" not in x and x.get("sum") == want_py["sum"]]
    ok = r.returncode == 0 and len(good_c) == n_c and len(good_py) == n_py
    trace_rows = None
    if a.trace:
        with open(trace) as f:
            trace_rows = [l.rstrip("\n").split("\t") for l in f][1:]
    hosts = ["ldbn%d" % k for k in range(a.nodes)]
    s = summarize(d, {int(x["pid"]) for x in rows}, trace_rows, hosts)
    srv_stats = {}
    for k in range(a.nodes):
        try:
            with open(os.path.join(a.work, "nodes-stats.%d" % k)) as f:
                srv_stats[hosts[k]] = {w[0]: int(w[1]) for w in (l.split() for l in f) if len(w) == 2}
        except (OSError, ValueError):
            pass
    mains = [int(x["main_ns"]) - t0 for x in rows]
    dones = [int(x["done_ns"]) - t0 for x in rows]
    rec = {"bed": "nodes", "mode": a.mode, "overlay": a.overlay if a.mode.startswith("overlay") else "",
           "launch": a.launch, "driver": a.driver, "nodes": a.nodes, "ppn": a.ppn,
           "np": a.nodes * a.ppn, "latency_us": a.latency_us,
           "read_latency_us": a.read_latency_us, "params": man["params"], "ok": ok,
           "launch_line": " ".join(shlex.quote(x) for x in line),
           "t_main_max_s": max(mains) / 1e9 if mains else None,
           "t_main_mean_s": sum(mains) / len(mains) / 1e9 if mains else None,
           "t_done_max_s": max(dones) / 1e9 if dones else None,
           "t_wall_s": (t1 - t0) / 1e9, "ramdisk_peak_bytes": ram, "counts": s,
           "server_stats": extra.get("server_stats") or srv_stats, "holders": holders,
           "ramdisk_end_bytes": extra.get("ramdisk_end_bytes"),
           "servers_alive": extra.get("servers_alive"), "server_logs": extra.get("server_logs"),
           "t_servers_ready_s": extra.get("t_servers_ready_s"), "faults": extra["faults"], "loadavg": os.getloadavg()[0],
           "stderr_tail": r.stderr[-3000:],
           "node_local": ldnodes_local.check(a.work, {int(x["pid"]) for x in rows})
           if a.node_local else None}
    if a.json:
        with open(a.json, "a") as f:
            f.write(json.dumps(rec) + "\n")
    if not a.quiet:
        print_summary(rec)
    if not ok:
        print("ldnodes_run: FAILED: %d+%d of %d+%d drivers reported the expected sums (rc %d)\n"
              "stdout: %s\nstderr: %s" % (len(good_c), len(good_py), n_c, n_py, r.returncode,
                                          r.stdout[-2000:], r.stderr[-2000:]))
    return 0 if ok else 1


def print_summary(rec):
    c, t = rec["counts"], rec["counts"]["total"]
    mode = rec["mode"] + ("-" + rec["overlay"] if rec["overlay"] else "")
    print("%-4s %-12s %-3s N=%-2d ppn=%d lat=%dus | meta=%d lookups=%d open=%d opendir=%d "
          "read=%dB | node meta max=%d | ram max=%dB | main max %.3fs done max %.3fs | load %.1f"
          % (rec["driver"], mode, rec["launch"], rec["nodes"], rec["ppn"], rec["latency_us"],
             t["meta"], t["lookup"], t["open"], t["opendir"], t["read_bytes"],
             max(n["meta"] for n in c["nodes"]), max(rec["ramdisk_peak_bytes"] or [0]),
             rec["t_main_max_s"] or -1, rec["t_done_max_s"] or -1, rec["loadavg"]))
    if "max_opens_per_file" in c:
        print("     files opened %d (max %d opens each), dirs listed %d (max %d listings each)"
              % (c["files_opened"], c["max_opens_per_file"], c["dirs_listed"],
                 c["max_listings_per_dir"]))
    nl = rec.get("node_local")
    if nl:
        print("     node-local library: %s (%d drivers, %d reports, values %s, wrong %s)"
              % ("each node its own" if nl["ok"] else "WRONG COPY", nl["drivers"], nl["reports"],
                 " ".join(nl["values"]), nl["wrong"]))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--countfs", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--nodes", type=int, required=True)
    p.add_argument("--ppn", type=int, default=2)
    p.add_argument("--driver", choices=("c", "py", "mpmd"), default="c")
    p.add_argument("--mode", choices=("plain", "pernode", "overlay", "overlay-bed"),
                   default="plain")
    p.add_argument("--launch", choices=("rsh", "mpi"), default="rsh")
    p.add_argument("--overlay", choices=("push", "pull"), default="push")
    p.add_argument("--overlay-args", default="")
    p.add_argument("--launch-exe")
    p.add_argument("--server", help="sheaf-ld-server (overlay-bed; default next to --launch-exe)")
    p.add_argument("--audit", help="libsheaf_audit.so (overlay-bed; default in the build)")
    p.add_argument("--wrong-peer", action="store_true",
                   help="overlay-bed: a peer with a wrong key tries the root first")
    p.add_argument("--kill-node", type=int, help="SIGKILL this node's load server ...")
    p.add_argument("--kill-after", type=float, default=1.0, help="... this many s after launch")
    p.add_argument("--mpiexec", default=os.environ.get("MPIEXEC", "mpiexec"))
    p.add_argument("--cache", default="/dev/shm")
    p.add_argument("--latency-us", type=int, default=0)
    p.add_argument("--read-latency-us", type=int, default=0)
    p.add_argument("--trace", action="store_true")
    p.add_argument("--json")
    p.add_argument("--timeout", type=float, default=900)
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--node-local", action="store_true",
                   help="each node's own tmpfs at WORK/nodelocal with a library of its own, "
                        "preloaded by the drivers (ldnodes_local.py): record whether each "
                        "driver loaded its own node's (C driver)")
    a = p.parse_args()
    if not 1 <= a.nodes <= 64 or not 1 <= a.ppn <= 16 or a.latency_us < 0 or a.read_latency_us < 0:
        p.error("--nodes 1..64, --ppn 1..16, latencies >= 0")
    if a.driver == "mpmd" and a.launch != "rsh":
        p.error("--driver mpmd needs --launch rsh")
    a.work = os.path.abspath(a.work)
    a.countfs = os.path.abspath(a.countfs)
    if a.launch_exe:
        a.launch_exe = os.path.abspath(a.launch_exe)
        bdir = os.path.dirname(a.launch_exe)
        a.boot = os.path.join(bdir, "sheaf-boot")
        a.server = os.path.abspath(a.server or os.path.join(bdir, "sheaf-ld-server"))
        a.audit = os.path.abspath(a.audit or os.path.join(bdir, "..", "..", "src", "loader",
                                                          "libsheaf_audit.so"))
    a.ov_sock = os.path.join(a.cache, ldnodes_overlay.SOCKDIR, "sock")
    if a.mode == "overlay-bed" and not (a.launch_exe and os.access(a.server, os.X_OK)):
        print("ldnodes_run: NOT AVAILABLE: no sheaf-ld-server next to --launch-exe (the overlay "
              "is not in this build)")
        return NOT_AVAILABLE
    return run(a)


if __name__ == "__main__":
    sys.exit(main())
