#!/usr/bin/env python3
"""test_countfs.py COUNTFS WORKDIR - countfs counts exactly.

A scripted sequence (stat of a missing file, stat of a file, open + read of
it, listing of a directory, a refused create) runs in two processes, the second in its own UTS
namespace named cfsnode1 (a simulated node). Asserted: per process exactly
9 LOOKUPs of which 2 failed, 1 OPEN, READ bytes = the file size, 1 OPENDIR;
the two processes count the same; total = sum of the processes = sum of the
nodes; the node of the second process is cfsnode1; the trace file has one
line per counted request. Then: injected latency (--latency-us) slows a
known number of lookups by at least that much; the file system is read-only;
bad arguments are refused with exit 1. Exit 77 (skip) when FUSE cannot be
mounted here, with the reason.
"""
import json
import os
import shutil
import subprocess
import sys
import time

SEQ = r'''
import errno, os, sys
m = sys.argv[1]
try:
    os.stat(m + "/a/missing")
    sys.exit("missing file exists")
except FileNotFoundError:
    pass
assert os.stat(m + "/a/f").st_size == 10000
with open(m + "/a/f", "rb") as f:
    assert len(f.read()) == 10000
assert sorted(os.listdir(m + "/b")) == ["x", "y", "z"]
try:
    open(m + "/a/new", "w")
    sys.exit("created a file on a read-only mount")
except OSError as e:
    assert e.errno == errno.EROFS, e
print(os.getpid())
'''

OPS = ("lookup", "lookup_enoent", "getattr", "readlink", "open", "opendir", "readdir",
       "read", "read_bytes", "statfs")
failures = []


def check(cond, what):
    print("%s: %s" % ("ok" if cond else "FAIL", what))
    if not cond:
        failures.append(what)


def mount(countfs, work, extra):
    src, mnt = os.path.join(work, "src"), os.path.join(work, "mnt")
    ready = os.path.join(work, "ready")
    if os.path.exists(ready):
        os.unlink(ready)
    p = subprocess.Popen([countfs, "--ready", ready] + extra + [src, mnt],
                         stderr=subprocess.PIPE, text=True)
    end = time.time() + 20
    while not os.path.exists(ready) and p.poll() is None and time.time() < end:
        time.sleep(0.02)
    if not os.path.exists(ready):
        p.kill()
        print("SKIP: countfs cannot mount FUSE here: %s" % p.communicate()[1].strip())
        sys.exit(77)
    return p, mnt


def unmount(p, mnt):
    subprocess.run(["umount", mnt])
    try:
        return p.wait(timeout=20)
    except subprocess.TimeoutExpired:
        p.kill()
        subprocess.run(["umount", "-l", mnt])
        return -1


def make_tree(work):
    shutil.rmtree(work, ignore_errors=True)
    for d in ("src/a", "src/b", "mnt"):
        os.makedirs(os.path.join(work, d))
    with open(os.path.join(work, "src/a/f"), "wb") as f:
        f.write(bytes(range(256)) * 39 + bytes(16))
    for n in "xyz":
        open(os.path.join(work, "src/b", n), "w").close()


def main():
    countfs, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    if not os.path.exists("/dev/fuse"):
        print("SKIP: /dev/fuse does not exist")
        return 77
    make_tree(work)
    dump, trace = os.path.join(work, "counts.json"), os.path.join(work, "trace.tsv")
    p, mnt = mount(countfs, work, ["--dump", dump, "--trace", trace])
    try:
        r1 = subprocess.run([sys.executable, "-c", SEQ, mnt], cwd="/", stdout=subprocess.PIPE,
                            text=True)
        node_cmd = ["unshare", "-u", "sh", "-c", 'hostname cfsnode1 && exec "$@"', "sh",
                    sys.executable, "-c", SEQ, mnt]
        r2 = subprocess.run(node_cmd, cwd="/", stdout=subprocess.PIPE, text=True)
        os.kill(p.pid, 10)  # SIGUSR1: dump
        d = None
        for _ in range(500):
            try:
                with open(dump) as f:
                    d = json.load(f)
                break
            except (OSError, ValueError):
                time.sleep(0.02)
    finally:
        rc = unmount(p, mnt)
    check(r1.returncode == 0 and r2.returncode == 0, "the sequence ran in both processes")
    check(rc == 0, "countfs exits 0 after umount")
    check(d is not None and d["final"] is False, "SIGUSR1 wrote a dump")
    if failures:
        return 1
    pids = [int(r1.stdout.split()[-1]), int(r2.stdout.split()[-1])]
    procs = {x["pid"]: x for x in d["procs"]}
    check(set(pids) <= set(procs), "both processes are counted")
    if failures:
        return 1
    for pid in pids:
        c = procs[pid]
        check(c["lookup"] == 9, "pid %d: 9 lookups (a, a/missing, a, a/f, a, a/f, b, a, a/new):"
              " %d" % (pid, c["lookup"]))
        check(c["lookup_enoent"] == 2, "pid %d: 2 failed lookups: %d" % (pid, c["lookup_enoent"]))
        check(c["open"] == 1 and c["opendir"] == 1, "pid %d: 1 open, 1 opendir" % pid)
        check(c["read_bytes"] == 10000, "pid %d: READ bytes = file size: %d"
              % (pid, c["read_bytes"]))
        check(c["readdir"] >= 1 and c["getattr"] >= 1, "pid %d: readdir and getattr seen" % pid)
    a, b = procs[pids[0]], procs[pids[1]]
    check(all(a[k] == b[k] for k in OPS), "the two processes count the same")
    for k in OPS:
        check(d["total"][k] == sum(x[k] for x in d["procs"]) == sum(n[k] for n in d["nodes"]),
              "total %s = sum of processes = sum of nodes" % k)
    node_of = {x["pid"]: d["nodes"][x["node"]]["host"] for x in d["procs"]}
    check(node_of[pids[1]] == "cfsnode1", "second process on node cfsnode1: %s"
          % node_of[pids[1]])
    check(node_of[pids[0]] != "cfsnode1", "first process on another node")
    with open(trace) as f:
        lines = [l.rstrip("\n").split("\t") for l in f][1:]
    for pid in pids:
        mine = [l for l in lines if int(l[1]) == pid]
        for op in ("lookup", "getattr", "open", "opendir", "readdir", "read"):
            check(sum(1 for l in mine if l[0] == op) == procs[pid][op],
                  "pid %d: trace lines of %s = count" % (pid, op))
        check(sum(int(l[4]) for l in mine if l[0] == "read") == 10000,
              "pid %d: traced READ bytes = 10000" % pid)
        check([l[2] for l in mine if l[0] == "lookup" and l[3] == "2"] == ["a/missing", "a/new"],
              "pid %d: the failed lookups are a/missing and a/new" % pid)

    # injected latency: 20 stats of a missing file are 40 lookups of >= 2 ms
    p, mnt = mount(countfs, work, ["--latency-us", "2000"])
    try:
        t0 = time.time()
        for _ in range(20):
            try:
                os.stat(mnt + "/a/missing")
            except FileNotFoundError:
                pass
        dt = time.time() - t0
    finally:
        unmount(p, mnt)
    check(dt >= 0.080, "injected latency: 40 lookups took %.3f s >= 0.080 s" % dt)

    # bad input
    for args in (["--latency-us", "x"], ["--latency-us", "-1"], ["--bogus"], ["only-one"],
                 [os.path.join(work, "nonexistent"), mnt]):
        r = subprocess.run([countfs] + args, stderr=subprocess.PIPE, text=True)
        check(r.returncode == 1 and r.stderr.strip() != "",
              "refused with a message: %s" % " ".join(args))
    print("%d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
