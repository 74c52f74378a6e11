#!/usr/bin/env python3
"""test_targets.py - the monitor's storage targets and online view
(src/monitor target.c, live.c; `sheaf stats summary`, `sheaf stats top`).

usage: test_targets.py CASE SHEAF BINDIR WORKDIR
CASE:
  synthetic  a synthetic mount table (SHEAF_FGFS_MOUNTINFO) puts two local
             directories on NFS servers srvA:/export and srvB:/data and one
             on Lustre; mon_targets writes known bytes to each: bytes,
             writes and file records per target are exact, also when the
             files fold past the file budget (per-directory and per-target
             "(other)" aggregates) and when targets fold past
             SHEAF_MONITOR_MAX_TARGETS
  fuse       the simulated-node bed: in a private mount and UTS namespace
             (node "monnode1") two monfs FUSE servers (srvA:/export,
             srvB:/data) and a node-local directory; the bytes per target in
             the summary equal what the program wrote and what each server
             counted. Exit 77 when namespaces or FUSE are not permitted.
  top        the online view: 4 ranks write known bytes (rank 3 the most),
             then wait on a pipe the test holds; `sheaf stats top --once
             --json` of the running job gives the bytes per rank, per rank
             group and per target, rank 3 slowest; after the pipe closes
             every process shows as ended with the same bytes
Exit 0 pass, 1 fail, 77 skip.
"""
import json
import os
import shutil
import subprocess
import sys
import time

FAILS = []


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL:", what)
    else:
        print("ok:", what)


def eq(got, want, what):
    check(got == want, "%s: got %r, want %r" % (what, got, want))


def run(*args, **kw):
    return subprocess.run(list(args), capture_output=True, text=True, **kw)


def summary(sheaf, log):
    p = run(sheaf, "stats", "summary", "--json", log)
    if p.returncode != 0:
        print(p.stderr)
        raise SystemExit("summary failed: %d" % p.returncode)
    return json.loads(p.stdout)


def targets(js):
    return {t["name"]: t for t in js["targets"]}


def mountinfo(work):
    """a root file system and three mounts on directories of work/"""
    lines = ["1 0 8:1 / / rw,relatime - ext4 /dev/sda1 rw",
             "50 1 0:50 / %s/srvA rw,relatime - nfs4 srvA:/export rw,vers=4.2" % work,
             "51 1 0:51 / %s/srvB rw,relatime - nfs srvB:/data rw,vers=3" % work,
             "52 1 0:52 / %s/lus rw - lustre 10.0.0.1@o2ib:10.0.0.2@o2ib:/scratch rw,flock" % work]
    path = os.path.join(work, "mountinfo")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def case_synthetic(sheaf, bindir, work):
    for d in ("srvA", "srvB", "lus"):
        os.makedirs(os.path.join(work, d))
    env = dict(os.environ, SHEAF_FGFS_MOUNTINFO=mountinfo(work))
    prog = os.path.join(bindir, "mon_targets")
    args = [prog, work + "/srvA:3:100000", work + "/srvB:2:70001", work + "/lus:4:5000"]
    want = {"nfs://srvA:/export": (300000, 3, "nfs"), "nfs://srvB:/data": (140002, 2, "nfs"),
            "lustre://10.0.0.1@o2ib,10.0.0.2@o2ib/scratch": (20000, 4, "lustre")}
    for label, extra in (("own records", {}),
                         ("files folded (budget 2 files, 1 directory)",
                          {"SHEAF_MONITOR_MAX_FILES": "2", "SHEAF_MONITOR_MAX_DIRS": "1"})):
        log = os.path.join(work, "log.%d" % len(extra))
        p = run(sheaf, "stats", "run", "-o", log, "--", *args, env=dict(env, **extra))
        eq(p.returncode, 0, "%s: mon_targets exit (%s)" % (label, p.stderr.strip()))
        js = summary(sheaf, log)
        t = targets(js)
        for name, (b, files, kind) in want.items():
            check(name in t, "%s: target %s listed (%s)" % (label, name, sorted(t)))
            if name not in t:
                continue
            c = t[name]["counters"]
            eq(c["bytes_written"], b, "%s: %s bytes written" % (label, name))
            eq(c["opens"], 2 * files, "%s: %s opens (open + fopen per file)" % (label, name))
            eq(t[name]["kind"], kind, "%s: %s kind" % (label, name))
        total = sum(v[0] for v in want.values())
        eq(js["totals"]["bytes_written"], total, "%s: job total" % label)
        eq(sum(x["counters"]["bytes_written"] for x in js["targets"]), total, "%s: targets sum to the total" % label)
        if extra:
            eq(js["files_count"], 2, "%s: 2 files with records" % label)
            kinds = sorted(f["kind"] for f in js["folded"])
            check("dir" in kinds and "other" in kinds, "%s: dir and other aggregates (%s)" % (label, kinds))
    # targets past the budget fold into "(other targets)" with their bytes
    log = os.path.join(work, "log.tfold")
    p = run(sheaf, "stats", "run", "-o", log, "--", *args, env=dict(env, SHEAF_MONITOR_MAX_TARGETS="1"))
    eq(p.returncode, 0, "max targets 1: exit")
    t = targets(summary(sheaf, log))
    eq(sorted(t), ["(other targets)", "nfs://srvA:/export"], "max targets 1: the first and the fold")
    if "(other targets)" in t:
        eq(t["(other targets)"]["counters"]["bytes_written"], 140002 + 20000, "the fold's bytes")
    # bad setting: refused with a message, defaults used, still exact
    p = run(sheaf, "stats", "run", "-o", os.path.join(work, "log.bad"), "--", *args,
            env=dict(env, SHEAF_MONITOR_MAX_TARGETS="0"))
    check("SHEAF_MONITOR_MAX_TARGETS=0" in p.stderr, "a bad target budget is named (%s)" % p.stderr.strip())
    # a broken mount table: every file "(unresolved)", totals still exact
    bad = os.path.join(work, "bad-mountinfo")
    with open(bad, "w") as f:
        f.write("garbage\n")
    log = os.path.join(work, "log.unres")
    p = run(sheaf, "stats", "run", "-o", log, "--", *args, env=dict(env, SHEAF_FGFS_MOUNTINFO=bad))
    eq(p.returncode, 0, "unusable mount table: the program still runs")
    t = targets(summary(sheaf, log))
    check("(unresolved)" in t and t["(unresolved)"]["counters"]["bytes_written"] == 460002,
          "unusable mount table: all bytes under (unresolved) (%s)" % sorted(t))
    return 0


def bed_inner(sheaf, bindir, work):
    """runs inside unshare -m -u: mount two monfs servers, run, unmount"""
    run("mount", "--make-rprivate", "/")
    run("hostname", "monnode1")
    monfs = os.path.join(bindir, "monfs")
    srv = {}
    for name, src in (("srvA", "srvA:/export"), ("srvB", "srvB:/data")):
        mnt = os.path.join(work, name)
        os.makedirs(mnt)
        stats = os.path.join(work, name + ".stats")
        p = subprocess.Popen([monfs, mnt, src, stats], stderr=subprocess.PIPE, text=True)
        for _ in range(100):
            if os.path.ismount(mnt):
                break
            if p.poll() is not None:
                print("SKIP: monfs cannot mount FUSE here: %s" % p.stderr.read().strip())
                for sp, m, _ in srv.values():  # the one mounted already
                    run("umount", m)
                    sp.kill()
                    sp.wait()
                return 77
            time.sleep(0.05)
        srv[name] = (p, mnt, stats)
    local = os.path.join(work, "local")
    os.makedirs(local)
    log = os.path.join(work, "log")
    prog = os.path.join(bindir, "mon_targets")
    try:
        p = run(sheaf, "stats", "run", "-o", log, "--", prog, srv["srvA"][1] + ":3:123457",
                srv["srvB"][1] + ":5:65536", local + ":2:4096", timeout=120)
        eq(p.returncode, 0, "mon_targets in the bed (%s)" % p.stderr.strip())
    finally:  # never leave a server behind (it would keep this mount namespace alive)
        for name, (sp, mnt, stats) in srv.items():
            run("umount", mnt)
            try:
                sp.wait(timeout=30)
            except subprocess.TimeoutExpired:
                sp.kill()
                sp.wait()
    counted = {}
    for name, (sp, mnt, stats) in srv.items():
        with open(stats) as f:
            counted[name] = dict(line.split() for line in f)
    js = summary(sheaf, log)
    t = targets(js)
    a, b = "fuse.monfs://srvA:/export", "fuse.monfs://srvB:/data"
    for name, want, srvname in ((a, 3 * 123457, "srvA"), (b, 5 * 65536, "srvB")):
        check(name in t, "target %s listed (%s)" % (name, sorted(t)))
        if name in t:
            eq(t[name]["counters"]["bytes_written"], want, "%s: bytes in the summary" % name)
            eq(t[name]["kind"], "fuse", "%s: kind" % name)
            eq(t[name]["fstype"], "fuse.monfs", "%s: fstype" % name)
        eq(int(counted[srvname]["bytes_written"]), want, "%s: bytes the server received" % srvname)
    loc = [x for x in js["targets"] if x["kind"] == "local" and x["counters"]["bytes_written"]]
    eq([x["counters"]["bytes_written"] for x in loc], [8192], "the node-local target's bytes")
    check(loc and loc[0]["name"].startswith("file://monnode1"), "node-local target named by the node (%s)" %
          (loc[0]["name"] if loc else None))
    p = run(sheaf, "stats", "summary", log)
    check(a in p.stdout and "per storage target" in p.stdout, "text summary lists the targets")
    return 0


def case_fuse(sheaf, bindir, work):
    if not os.path.exists(os.path.join(bindir, "monfs")):
        print("SKIP: monfs not built (libfuse3-dev missing)")
        return 77
    if not os.path.exists("/dev/fuse"):
        print("SKIP: no /dev/fuse")
        return 77
    probe = run("unshare", "-m", "-u", "true")
    if probe.returncode != 0:
        print("SKIP: no mount/UTS namespace here (unshare -m -u: %s)" % probe.stderr.strip())
        return 77
    p = subprocess.run(["unshare", "-m", "-u", sys.executable, __file__, "fuse-inner", sheaf, bindir, work])
    return p.returncode


def top_json(sheaf, log, *extra):
    p = run(sheaf, "stats", "top", "--once", "--json", *extra, log)
    if p.returncode != 0:
        print(p.stdout, p.stderr)
        raise SystemExit("top failed: %d" % p.returncode)
    return json.loads(p.stdout)


def case_top(sheaf, bindir, work):
    for d in ("srvA", "srvB", "lus"):
        os.makedirs(os.path.join(work, d))
    env = dict(os.environ, SHEAF_FGFS_MOUNTINFO=mountinfo(work), SHEAF_STATS_INTERVAL="0.3")
    prog = os.path.join(bindir, "mon_targets")
    log = os.path.join(work, "log")
    # rank r: r+1 files of 10000 bytes on srvA; rank 3 also 48 MiB on srvB (the slowest)
    script = " ".join('SHEAF_MONITOR_RANK=%d "$0" --wait %s/srvA:%d:10000 %s < "$1" > "$2.%d" &'
                       % (r, work, r + 1, (work + "/srvB:1:50331648") if r == 3 else "", r) for r in range(4))
    fifo = os.path.join(work, "ctl")
    os.mkfifo(fifo)
    outs = os.path.join(work, "out")
    p = subprocess.Popen([sheaf, "stats", "run", "-o", log, "--", "sh", "-c", script + " wait", prog, fifo, outs],
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ctl = os.open(fifo, os.O_RDWR)  # the processes block on it until the test closes it (RDWR: never blocks here)
    try:
        for _ in range(300):
            ready = [os.path.exists(outs + ".%d" % r) and "ready" in open(outs + ".%d" % r).read() for r in range(4)]
            if all(ready):
                break
            time.sleep(0.1)
        check(all(ready), "4 ranks wrote and wait")
        time.sleep(1.0)  # > 3 refresh intervals of the live file
        js = top_json(sheaf, log, "--group", "2")
        ranks = {r["rank"]: r for r in js["ranks"]}
        # the shell (no rank) may run too; its forked children before exec have ended
        eq(sum(r["running"] for r in js["ranks"] if r["rank"] >= 0), 4, "running ranks")
        check(js["processes"]["running"] >= 4, "running processes >= 4")
        for r in range(4):
            want = (r + 1) * 10000 + (50331648 if r == 3 else 0)
            eq(ranks.get(r, {}).get("bytes_written"), want, "rank %d bytes written (live)" % r)
        groups = {g["group"]: g["bytes_written"] for g in js["groups"] if g["group"] != "no rank"}
        eq(groups, {"0-1": 30000, "2-3": 30000 + 40000 + 50331648}, "bytes per rank group of 2")
        t = {x["name"]: x for x in js["targets"]}
        eq(t.get("nfs://srvA:/export", {}).get("bytes_written"), 100000, "srvA bytes (live)")
        eq(t.get("nfs://srvB:/data", {}).get("bytes_written"), 50331648, "srvB bytes (live)")
        eq(js["slowest"][0]["rank"], 3, "the slowest rank")
        check(all(x["bytes_per_s"] == 0 for x in js["targets"]), "idle job: 0 bytes/s per target now")
        p2 = run(sheaf, "stats", "top", "--once", log)
        check(p2.returncode == 0 and "srvB" in p2.stdout and "slowest" in p2.stdout, "text view:\n" + p2.stdout)
    finally:
        os.close(ctl)
    p.communicate(timeout=60)
    eq(p.returncode, 0, "the job ends")
    js = top_json(sheaf, log)
    eq(js["processes"]["running"], 0, "after the end: nothing runs")
    eq(sorted((r["rank"], r["running"], r["processes"]) for r in js["ranks"] if r["rank"] >= 0),
       [(r, 0, 1) for r in range(4)], "after the end: every rank ended")
    eq(js["totals"]["bytes_written"], 100000 + 50331648, "after the end: job bytes")
    # bad input: a hostile live file is refused with its name, never crashes
    with open(os.path.join(log, "x.1.2.0.live"), "w") as f:
        f.write("sheaf-live 1\npid 99999999999999999999999\n")
    p3 = run(sheaf, "stats", "top", "--once", log)
    check(p3.returncode != 0 and "x.1.2.0.live" in p3.stderr, "hostile live file named (%s)" % p3.stderr.strip())
    p4 = run(sheaf, "stats", "top", "--once", os.path.join(work, "missing"))
    check(p4.returncode != 0 and "missing" in p4.stderr, "missing log named")
    p5 = run(sheaf, "stats", "top", "--group", "0", "--once", log)
    check(p5.returncode == 2, "bad --group refused")
    return 0


def main(argv):
    if len(argv) != 5:
        print(__doc__)
        return 2
    case, sheaf, bindir, work = argv[1:]
    if os.environ.get("SHEAF_SANITIZE_BUILD") == "1":
        print("SKIP: the interposition library is not used in a sanitizer build")
        return 77
    if case == "fuse-inner":
        rc = bed_inner(sheaf, bindir, work)
        return rc if rc else (1 if FAILS else 0)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    fn = {"synthetic": case_synthetic, "fuse": case_fuse, "top": case_top}.get(case)
    if not fn:
        print(__doc__)
        return 2
    rc = fn(sheaf, bindir, work)
    if rc:
        return rc
    print("%s: %s" % (case, "FAILED (%d)" % len(FAILS) if FAILS else "ok"))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
