#!/usr/bin/env python3
"""run.py - the job I/O monitor's overhead, plain vs monitored side by side.

usage: run.py BUILD_DIR [--reps R] [--n N] [--bulk BYTES] [--dir DIR]

Runs BUILD_DIR/bench/monitor/bench_monitor for each pattern (fputc, fwrite
and write: N one-byte calls, default 10^7; bulk: BYTES in 1 MiB writes +
fsync, default 1 GiB) alternately plain and monitored (the environment of
`sheaf stats env`, default snapshot interval), R times each (default 3), and
prints the median CPU time (user + system of the child, getrusage) and wall
time of each, and their ratio. The monitored runs' log is summarized and its
byte total checked against what the program wrote.
"""
import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def timed(cmd, env):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    t1 = time.perf_counter()
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise SystemExit("failed: %s\n%s" % (" ".join(cmd), p.stderr))
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return cpu, t1 - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--bulk", type=int, default=1 << 30)
    ap.add_argument("--dir", default=None)
    ap.add_argument("--patterns", default="fputc,fwrite,write,bulk")
    a = ap.parse_args()
    prog = os.path.join(a.build, "bench", "monitor", "bench_monitor")
    sheaf = os.path.join(a.build, "tools", "sheaf")
    work = tempfile.mkdtemp(prefix="monbench.", dir=a.dir)
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    menv = dict(env)
    lines = subprocess.run([sheaf, "stats", "env", "-o", os.path.join(work, "log")], capture_output=True,
                           text=True, check=True).stdout
    for ln in lines.splitlines():
        k, v = ln[len("export "):].split("=", 1)
        menv[k] = v.strip("'")
    pats = a.patterns.split(",")
    print("# bench/monitor/run.py %s --reps %d --n %d --bulk %d --patterns %s" % (a.build, a.reps, a.n, a.bulk,
                                                                                  a.patterns))
    print("%-7s %12s %12s %8s %12s %12s %8s" % ("pattern", "plain cpu s", "mon cpu s", "cpu x", "plain wall",
                                                "mon wall", "wall x"))
    want = 0
    for pat in pats:
        n = a.bulk if pat == "bulk" else a.n
        res = {"plain": [], "mon": []}
        for _ in range(a.reps):
            for kind in ("plain", "mon"):
                out = os.path.join(work, "%s.%s" % (pat, kind))
                res[kind].append(timed([prog, pat, out, str(n)], env if kind == "plain" else menv))
                os.unlink(out)
        want += a.reps * n
        pc = statistics.median(c for c, _ in res["plain"])
        mc = statistics.median(c for c, _ in res["mon"])
        pw = statistics.median(w for _, w in res["plain"])
        mw = statistics.median(w for _, w in res["mon"])
        print("%-7s %12.3f %12.3f %8.3f %12.3f %12.3f %8.3f" % (pat, pc, mc, mc / pc if pc else 0, pw, mw,
                                                               mw / pw if pw else 0))
        sys.stdout.flush()
    js = json.loads(subprocess.run([sheaf, "stats", "summary", "--json", os.path.join(work, "log")],
                                   capture_output=True, text=True, check=True).stdout)
    got = js["totals"]["bytes_written"]
    print("# monitored bytes written: %d (expected %d) %s" % (got, want, "ok" if got == want else "MISMATCH"))
    shutil.rmtree(work)
    return 0 if got == want else 1


if __name__ == "__main__":
    sys.exit(main())
