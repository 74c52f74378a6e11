#!/usr/bin/env python3
"""Run an MPI round trip that keeps its container, then check the `sheaf` tools on it.

usage: check_cli.py --sheaf SHEAF --base DIR -- MPIEXEC ... mpi_sion_test roundtrip ARGS...

A fresh directory is made under DIR and passed to the MPI program as keep=DIR;
the program leaves the container there, plus expect.<task> (the bytes each rank
wrote) and expect.json (sizes, chunk sizes, file/local task of every task).
Checks: `sheaf dump` (text) succeeds; `sheaf dump --json` reports the task
count, files, mapping, chunk sizes, byte counts and global ranks; `sheaf cat -t
N` returns exactly the bytes rank N wrote; `sheaf cat` (all tasks) their
concatenation. The directory is removed at the end (kept on failure only if
SHEAF_KEEP_FAILED is set).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

FAILS = []
CHECKS = 0


def check(cond, what):
    global CHECKS
    CHECKS += 1
    if not cond:
        FAILS.append(what)
        print("FAIL:", what, file=sys.stderr)


def run(cmd, timeout=300):
    p = subprocess.run([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       stdin=subprocess.DEVNULL, timeout=timeout)
    return p


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sheaf", required=True)
    ap.add_argument("--base", required=True)
    ap.add_argument("mpicmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.mpicmd[1:] if a.mpicmd and a.mpicmd[0] == "--" else a.mpicmd
    work = tempfile.mkdtemp(prefix="mpicli-", dir=a.base)
    try:
        p = run(cmd + ["keep=" + work])
        sys.stdout.write(p.stdout.decode(errors="replace"))
        check(p.returncode == 0, "MPI writer %s exited %d: %s" % (" ".join(cmd), p.returncode,
                                                                   p.stderr.decode(errors="replace")[-3000:]))
        if p.returncode != 0:
            return
        with open(os.path.join(work, "expect.json")) as f:
            exp = json.load(f)
        cont = exp["container"]
        tasks = exp["tasks"]

        p = run([a.sheaf, "dump", cont])
        check(p.returncode == 0 and len(p.stdout) > 0, "sheaf dump %s exit %d: %s" % (cont, p.returncode, p.stderr.decode()))

        p = run([a.sheaf, "dump", "--json", cont])
        check(p.returncode == 0, "sheaf dump --json exit %d: %s" % (p.returncode, p.stderr.decode()))
        d = None
        try:
            d = json.loads(p.stdout.decode())
        except ValueError as e:
            check(False, "sheaf dump --json: invalid JSON: %s" % e)
        if d is not None:
            check(d.get("ntasks") == exp["ntasks"], "dump ntasks %s != %s" % (d.get("ntasks"), exp["ntasks"]))
            check(d.get("nfiles") == exp["nfiles"], "dump nfiles %s != %s" % (d.get("nfiles"), exp["nfiles"]))
            check(d.get("fsblksize") == exp["fsblksize"], "dump fsblksize %s != %s" % (d.get("fsblksize"), exp["fsblksize"]))
            check(d.get("total_bytes") == sum(t["bytes"] for t in tasks),
                  "dump total_bytes %s != %s" % (d.get("total_bytes"), sum(t["bytes"] for t in tasks)))
            files = d.get("files") or []
            check(len(files) == exp["nfiles"], "dump lists %d files, expected %d" % (len(files), exp["nfiles"]))
            for f in files:
                fn = f.get("filenumber")
                want = cont if fn == 0 else "%s.%06d" % (cont, fn)
                check(f.get("name") == want, "dump file %s named %s, expected %s" % (fn, f.get("name"), want))
                nt = sum(1 for t in tasks if t["file"] == fn)
                check(f.get("ntasks") == nt, "dump file %s has %s tasks, expected %d" % (fn, f.get("ntasks"), nt))
            mapping = d.get("mapping")
            if exp["nfiles"] > 1:
                check(isinstance(mapping, list) and len(mapping) == exp["ntasks"],
                      "dump mapping %r does not list %d tasks" % (mapping, exp["ntasks"]))
                for m in mapping or []:
                    t = tasks[m["task"]]
                    check(m["file"] == t["file"] and m["local_task"] == t["local_task"],
                          "dump mapping of task %d: file %d local %d, expected %d/%d" %
                          (m["task"], m["file"], m["local_task"], t["file"], t["local_task"]))
            dt = d.get("tasks") or []
            check(len(dt) == exp["ntasks"], "dump lists %d tasks" % len(dt))
            for t, e in zip(dt, tasks):
                check(t.get("globalrank") == e["task"], "dump task %d globalrank %s" % (e["task"], t.get("globalrank")))
                check(t.get("bytes") == e["bytes"], "dump task %d bytes %s, expected %d" % (e["task"], t.get("bytes"), e["bytes"]))
                check(t.get("chunksize") == e["chunksize"],
                      "dump task %d chunksize %s, expected %d" % (e["task"], t.get("chunksize"), e["chunksize"]))
                check(sum(t.get("blocksizes", [])) == e["bytes"],
                      "dump task %d blocksizes %s do not add up to %d" % (e["task"], t.get("blocksizes"), e["bytes"]))

        allbytes = b""
        for e in tasks:
            with open(os.path.join(work, "expect.%d" % e["task"]), "rb") as f:
                want = f.read()
            allbytes += want
            p = run([a.sheaf, "cat", "-t", e["task"], cont])
            check(p.returncode == 0, "sheaf cat -t %d exit %d: %s" % (e["task"], p.returncode, p.stderr.decode()))
            got = p.stdout
            if got != want:
                i = next((k for k in range(min(len(got), len(want))) if got[k] != want[k]), min(len(got), len(want)))
                check(False, "sheaf cat -t %d: %d bytes, rank wrote %d; first difference at offset %d" %
                      (e["task"], len(got), len(want), i))
            else:
                check(True, "")
        p = run([a.sheaf, "cat", cont])
        check(p.returncode == 0 and p.stdout == allbytes,
              "sheaf cat (all tasks): exit %d, %d bytes, expected %d" % (p.returncode, len(p.stdout), len(allbytes)))
    finally:
        if FAILS and os.environ.get("SHEAF_KEEP_FAILED"):
            print("kept", work, file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    print("check_cli: %d passed, %d failed" % (CHECKS - len(FAILS), len(FAILS)))


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # report, do not hide
        FAILS.append(repr(e))
        print("FAIL: exception", repr(e), file=sys.stderr)
    sys.exit(1 if FAILS else 0)
