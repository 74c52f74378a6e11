#!/usr/bin/env python3
"""test_monitor.py - the job I/O monitor end to end (src/monitor, doc/monitor.md).

usage: test_monitor.py CASE SHEAF BINDIR WORKDIR
CASE:
  pattern  mon_pattern under `sheaf stats run`: exact counters per file and per
           process (POSIX, stdio, readv/writev, mmap, stat, 2 threads on one
           descriptor, a forked child with its own record stream)
  pattern-static  the same, mon_pattern_static: linked -static with the
           --wrap options file (no LD_PRELOAD at work)
  kill     4 mon_worker processes killed with SIGKILL mid-run: the log holds
           exactly the 3 phases each flushed before the kill, not the 4th
  budget   5,000 files with a budget of 1,024 records: totals exact, the
           folded files reported per directory
  memory   10^4 and 10^5 files: the monitored process's peak memory does not
           grow with the files touched
  python   a multiprocessing pool (forked workers, os._exit): bytes exact per file
  cli      usage errors and a log that was never closed without --recover
Exit 0 pass, 1 fail, 77 skip.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

FAILS = []


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL:", what)


def eq(got, want, what):
    check(got == want, "%s: got %r, want %r" % (what, got, want))


def run(*args, **kw):
    return subprocess.run(list(args), capture_output=True, text=True, **kw)


def summary(sheaf, log, *extra):
    p = run(sheaf, "stats", "summary", "--json", *extra, log)
    if p.returncode != 0:
        print(p.stderr)
        raise SystemExit("summary failed: %d" % p.returncode)
    return json.loads(p.stdout)


def files_by_name(js):
    return {os.path.basename(f["name"]): f for f in js["files"]}


def case_pattern(sheaf, bindir, work, prog="mon_pattern"):
    d = os.path.join(work, "data")
    os.makedirs(d)
    log = os.path.join(work, "pattern.mon")
    p = run(sheaf, "stats", "run", "-o", log, "--", os.path.join(bindir, prog), d)
    eq(p.returncode, 0, "mon_pattern exit (%s)" % p.stderr.strip())
    js = summary(sheaf, log)
    eq(js["processes_count"], 2, "processes (parent and forked child)")
    f = files_by_name(js)
    eq(sorted(f), ["A", "B", "C", "D", "E", "F"], "files")
    eq((f["F"]["counters"]["writes"], f["F"]["counters"]["bytes_written"]), (1, 10),
       "F: a pipe on its reused descriptor (after close_range) is not counted")
    a = f["A"]["counters"]
    want_a = dict(opens=2, writes=11, bytes_written=10100, reads=5, bytes_read=10100, seeks=1, fsyncs=1,
                  stats=2, mmaps=1, mmap_bytes=4096, seq_writes=10, consec_writes=9, seq_reads=4,
                  consec_reads=3, rw_switches=1, max_byte_written=20100, max_byte_read=20100,
                  file_not_aligned=14, write_100_1K=11, read_1K_10K=4, read_100_1K=1, stdio_ops=0)
    for k, v in want_a.items():
        eq(a[k], v, "A." + k)
    check(a["write_ns"] > 0 and a["read_ns"] > 0 and a["meta_ns"] > 0, "A: times measured")
    check(0 < a["first_ns"] <= a["last_ns"], "A: first <= last")
    b = f["B"]["counters"]
    for k, v in dict(opens=3, writes=10, bytes_written=1013, reads=3, bytes_read=1019, seeks=1,
                     stdio_ops=13, write_0_100=5, write_100_1K=5).items():
        eq(b[k], v, "B." + k)
    c = f["C"]["counters"]
    for k, v in dict(opens=1, writes=1, bytes_written=60, reads=1, bytes_read=60, seeks=1).items():
        eq(c[k], v, "C." + k)
    dd = f["D"]
    eq(dd["processes"], 2, "D written by parent and child")
    eq(dd["counters"]["writes"], 2001, "D.writes (2 threads x 1000 + child 1)")
    eq(dd["counters"]["bytes_written"], 16050, "D.bytes_written")
    e = f["E"]
    eq(e["processes"], 1, "E: child only")
    eq((e["counters"]["opens"], e["counters"]["writes"], e["counters"]["bytes_written"]), (1, 3, 333), "E")
    procs = sorted(js["processes"], key=lambda q: q["counters"]["writes"])
    child, parent = procs
    eq(child["ppid"], parent["pid"], "child's parent")
    eq(child["counters"]["writes"], 4, "child's writes")
    eq(parent["counters"]["writes"], 2023, "parent's writes")
    check(child["clean_end"] and parent["clean_end"], "both logs closed cleanly")
    eq(js["totals"]["bytes_written"], 10100 + 1013 + 60 + 16050 + 333 + 10, "total bytes written")
    eq(js["folded"], [], "nothing folded")
    # the text form names the files and processes
    t = run(sheaf, "stats", "summary", log)
    eq(t.returncode, 0, "text summary")
    check("per process:" in t.stdout and "/data/D" in t.stdout, "text summary content")


def case_kill(sheaf, bindir, work):
    log = os.path.join(work, "kill.mon")
    worker = os.path.join(bindir, "mon_worker")
    cmd = " ".join("%s %s/w%d 600 &" % (worker, work, i) for i in range(4)) + " wait"
    p = subprocess.Popen([sheaf, "stats", "run", "-o", log, "--interval-ms", "250", "--", "sh", "-c", cmd],
                         stdout=subprocess.PIPE, text=True)
    seen = {}
    deadline = time.time() + 60
    while sum(1 for v in seen.values() if v == 4) < 4 and time.time() < deadline:
        line = p.stdout.readline()
        if not line:
            break
        pid, phase = map(int, line.split())
        seen[pid] = phase
    eq(sorted(seen.values()), [4, 4, 4, 4], "every worker reached phase 4")
    for pid in seen:
        os.kill(pid, signal.SIGKILL)
    p.wait(timeout=30)
    # a log never closed is an error without --recover
    r = run(sheaf, "stats", "summary", log)
    eq(r.returncode, 1, "summary of killed logs without --recover")
    check("never closed" in r.stderr and "--recover" in r.stderr, "message says never closed: " + r.stderr)
    js = summary(sheaf, log, "--recover")
    f = files_by_name(js)
    for i in range(4):
        c = f["w%d" % i]["counters"]
        # phases 1-3 were each followed by a snapshot and sion_flush; phase 4 was not
        eq((c["writes"], c["bytes_written"], c["fsyncs"], c["opens"]), (30, 3000, 3, 1), "w%d after SIGKILL" % i)
    killed = [q for q in js["processes"] if not q["clean_end"]]
    eq(len(killed), 4, "4 processes without a clean end")
    check(all(q["recovered"] for q in killed), "their logs were recovered")
    # and a second read needs no recovery
    js2 = summary(sheaf, log)
    eq(js2["totals"]["bytes_written"], js["totals"]["bytes_written"], "second read")


def case_budget(sheaf, bindir, work):
    d = os.path.join(work, "many")
    os.makedirs(d)
    log = os.path.join(work, "budget.mon")
    n = 5000
    p = run(sheaf, "stats", "run", "-o", log, "--max-files", "1024", "--", os.path.join(bindir, "mon_many"), d,
            str(n))
    eq(p.returncode, 0, "mon_many exit")
    total = int(p.stdout.split()[0])
    eq(total, sum(i % 100 + 1 for i in range(n)), "program's total")
    js = summary(sheaf, log)
    eq(js["totals"]["bytes_written"], total, "total bytes written (exact past the budget)")
    eq(js["totals"]["writes"], n, "total writes")
    eq(js["totals"]["opens"], n, "total opens")
    eq(js["files_count"], 1024, "files with a record of their own")
    eq(js["folded_opens"], n - 1024, "opens folded")
    folded = {os.path.basename(a["name"]): a for a in js["folded"]}
    eq(sorted(folded), ["a", "b"], "aggregates per directory")
    eq(sum(a["counters"]["files"] for a in folded.values()), n - 1024, "files in the aggregates")
    own = sum(f["counters"]["bytes_written"] for f in js["files"])
    eq(own + sum(a["counters"]["bytes_written"] for a in folded.values()), total, "own + folded bytes")
    eq(folded["a"]["counters"]["files"], (n - 1024) // 2, "files folded into a")
    t = run(sheaf, "stats", "summary", log)
    check("folded past the file-record budget" in t.stdout and "more files" in t.stdout, "text names the folding")


def case_memory(sheaf, bindir, work):
    """10^4 and 10^5 files touched with the default budget (4096 records): the
    peak memory of the monitored process does not grow with the files (the
    table is fixed at start), and the monitored - plain difference stays
    under the table's size plus libsheaf's mapping (16 MiB)."""
    base = "/dev/shm"
    if not os.path.isdir(base) or not os.access(base, os.W_OK):
        print("SKIP: no writable /dev/shm for 10^5 files")
        raise SystemExit(77)
    hwm = {}
    for n in (10000, 100000):
        for kind in ("plain", "mon"):
            d = tempfile.mkdtemp(prefix="monmem.", dir=base)
            try:
                cmd = [os.path.join(bindir, "mon_many"), d, str(n), "hwm"]
                if kind == "mon":
                    cmd = [sheaf, "stats", "run", "-o", os.path.join(work, "mem%d.mon" % n), "--"] + cmd
                p = run(*cmd)
                eq(p.returncode, 0, "mon_many %d %s" % (n, kind))
                hwm[(n, kind)] = int(p.stdout.split()[1])
            finally:
                shutil.rmtree(d, ignore_errors=True)
        js = summary(sheaf, os.path.join(work, "mem%d.mon" % n))
        eq(js["totals"]["opens"], n + 1, "opens at %d files (+ /proc/self/status)" % n)
        eq(js["files_count"], min(n + 1, 4096), "own records at %d files" % n)
    print("peak resident kB:", hwm)
    grow = hwm[(100000, "mon")] - hwm[(10000, "mon")]
    check(grow < 1024, "monitored peak grew by %d kB from 10^4 to 10^5 files (bound: fixed table)" % grow)
    extra = hwm[(100000, "mon")] - hwm[(100000, "plain")]
    check(extra < 16 * 1024, "monitored - plain at 10^5 files: %d kB (< 16 MiB)" % extra)


PY_POOL = r"""
import multiprocessing as mp, os, sys
def job(i):
    with open(os.path.join(sys.argv[1], "p%d" % i), "wb", buffering=0) as f:
        for _ in range(i + 1):
            f.write(b"p" * 1000)
    return os.getpid()
if __name__ == "__main__":
    mp.set_start_method("fork")
    pool = mp.Pool(2)
    pids = pool.map(job, range(4), chunksize=1)
    pool.close()   # workers end by os._exit (not terminate(): SIGTERM loses their last interval)
    pool.join()
    print(len(set(pids)))
"""


def case_python(sheaf, bindir, work):
    """Python's multiprocessing (forked workers that leave by os._exit after
    pool.close/join): each file's bytes exact, written by worker processes."""
    d = os.path.join(work, "py")
    os.makedirs(d)
    log = os.path.join(work, "py.mon")
    p = run(sheaf, "stats", "run", "-o", log, "--", sys.executable, "-c", PY_POOL, d)
    eq(p.returncode, 0, "python pool (%s)" % p.stderr.strip()[-300:])
    js = summary(sheaf, log)
    f = files_by_name(js)
    for i in range(4):
        c = f["p%d" % i]["counters"]
        eq((c["opens"], c["writes"], c["bytes_written"]), (1, i + 1, 1000 * (i + 1)), "p%d" % i)
    writers = [q for q in js["processes"] if q["counters"]["bytes_written"] >= 1000]
    check(len(writers) >= 1 and all(q["ppid"] != 0 for q in writers), "written by the pool's workers")
    eq(sum(q["counters"]["bytes_written"] for q in writers), 10000, "the workers' bytes")
    check(all(q["clean_end"] for q in writers), "workers' logs closed (os._exit)")


def case_cli(sheaf, bindir, work):
    eq(run(sheaf, "stats").returncode, 2, "no subcommand")
    eq(run(sheaf, "stats", "run").returncode, 2, "run without a command")
    eq(run(sheaf, "stats", "frob").returncode, 2, "unknown subcommand")
    eq(run(sheaf, "stats", "run", "--max-files", "x", "--", "true").returncode, 2, "bad number")
    r = run(sheaf, "stats", "summary", os.path.join(work, "nothing-here"))
    eq(r.returncode, 1, "summary of a missing log")
    check("nothing-here" in r.stderr, "message names the path")
    os.makedirs(os.path.join(work, "empty.mon"))
    r = run(sheaf, "stats", "summary", os.path.join(work, "empty.mon"))
    eq(r.returncode, 1, "empty directory")
    check("no monitor logs" in r.stderr, "says so: " + r.stderr)
    # a command that fails passes its status through
    eq(run(sheaf, "stats", "run", "-o", os.path.join(work, "f.mon"), "--", "sh", "-c", "exit 7").returncode, 7,
       "exit status passed through")
    e = run(sheaf, "stats", "env", "-o", "job.mon")
    eq(e.returncode, 0, "env")
    check("export SHEAF_MONITOR=" in e.stdout and "libsheaf_monitor_preload" in e.stdout, "env lines")
    # a log cut short: a clear error naming the file
    log = os.path.join(work, "cut.mon")
    eq(run(sheaf, "stats", "run", "-o", log, "--", "sh", "-c", "echo x > %s/x" % work).returncode, 0, "small run")
    name = [x for x in os.listdir(log) if x.endswith(".smon")][0]
    path = os.path.join(log, name)
    size = os.path.getsize(path)
    with open(path, "r+b") as fh:
        fh.truncate(size // 2)
    r = run(sheaf, "stats", "summary", log)
    eq(r.returncode, 1, "truncated log")
    check(name in r.stderr, "message names the file: " + r.stderr)


def main(argv):
    if len(argv) != 5:
        print(__doc__)
        return 2
    case, sheaf, bindir, work = argv[1:]
    if os.environ.get("SHEAF_SANITIZE_BUILD") == "1":
        print("SKIP: the interposition library is not used in a sanitizer build")
        return 77
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    if case == "pattern-static":
        p = run("ldd", os.path.join(bindir, "mon_pattern_static"))
        check("not a dynamic executable" in p.stdout + p.stderr, "mon_pattern_static is static: " + p.stdout)
        case_pattern(sheaf, bindir, work, "mon_pattern_static")
        print("%s: %s" % (case, "FAILED (%d)" % len(FAILS) if FAILS else "ok"))
        return 1 if FAILS else 0
    {"pattern": case_pattern, "kill": case_kill, "budget": case_budget, "cli": case_cli, "python": case_python,
     "memory": case_memory}[case](sheaf, bindir, work)
    print("%s: %s" % (case, "FAILED (%d)" % len(FAILS) if FAILS else "ok"))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
