#!/usr/bin/env python3
"""test_node.py - `sheaf stats node`, the per-node sampler (tools/cmd_stats_node.c).

usage: test_node.py SHEAF WORKDIR
  1. diskstats against the kernel: /proc/diskstats read by the test before
     and after two samples around a known write (dd oflag=direct,fsync of
     8 MiB to a file in WORKDIR): every counter of every device lies between
     the test's readings, and the device holding WORKDIR wrote >= 8 MiB and
     >= 1 write between the two samples (skipped with a note when WORKDIR is
     not on a block device listed in /proc/diskstats).
  2. the text file: Prometheus format (node_exporter's textfile collector)
     and OpenMetrics, parsed with prometheus_client's parsers when it can be
     imported, else with a strict line-format check; the values equal the
     JSON line of the same sample; the file is replaced by rename (no
     temporary file left behind); job_id from SLURM_JOB_ID.
  3. NFS and Lustre parsers on synthetic /proc/self/mountstats and llite
     stats (--mountstats, --llite): exact bytes and per-op counts; garbage
     lines skipped and counted, never a crash.
  4. bad usage and a missing diskstats file: exit 2 / 1 with the file named.
Exit 0 pass, 1 fail.
"""
import json
import os
import re
import subprocess
import sys
import time

FAILS = []


def check(cond, what):
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        FAILS.append(what)


def eq(got, want, what):
    check(got == want, "%s: got %r, want %r" % (what, got, want))


def run(*args, env=None):
    return subprocess.run(list(args), capture_output=True, text=True, env=env)


def read_diskstats():
    out = {}
    with open("/proc/diskstats") as f:
        for line in f:
            p = line.split()
            if len(p) >= 14:
                out[p[2]] = (int(p[0]), int(p[1]), [int(x) for x in p[3:14]])
    return out


FIELDS = {"reads": (0, 1), "read_bytes": (2, 512), "read_ms": (3, 1), "writes": (4, 1),
          "write_bytes": (6, 512), "write_ms": (7, 1), "io_ms": (9, 1)}


def sample(sheaf, work, n, env=None, *extra):
    out = os.path.join(work, "s%d.jsonl" % n)
    p = run(sheaf, "stats", "node", "--count", "1", "-o", out, *extra, env=env)
    eq(p.returncode, 0, "sample %d (%s)" % (n, p.stderr.strip()))
    with open(out) as f:
        lines = f.read().splitlines()
    eq(len(lines), 1, "one JSON line per sample")
    return json.loads(lines[-1])


LINE = re.compile(r'^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\[\\"n])*",?)*\})? '
                  r'-?[0-9.e+]+$')


def parse_metrics(text, om):
    """{(name, frozenset(labels)): value}; prometheus_client when available, else a strict check"""
    out = {}
    try:
        if om:
            from prometheus_client.openmetrics.parser import text_string_to_metric_families
        else:
            from prometheus_client.parser import text_string_to_metric_families
        for fam in text_string_to_metric_families(text):
            for s in fam.samples:
                out[(s.name, frozenset(s.labels.items()))] = s.value
        print("ok: parsed with prometheus_client (%s)" % ("OpenMetrics" if om else "Prometheus text"))
        return out
    except ImportError:
        pass
    lines = text.splitlines()
    if om:
        eq(lines[-1], "# EOF", "OpenMetrics ends with # EOF")
        lines = lines[:-1]
    typed = set()
    for ln in lines:
        if ln.startswith("# HELP "):
            continue
        if ln.startswith("# TYPE "):
            name, typ = ln.split()[2:4]
            check(typ in ("counter", "gauge"), "type of " + name)
            check(name not in typed, "family %s declared once" % name)
            typed.add(name)
            continue
        check(bool(LINE.match(ln)), "sample line format: " + ln)
        name, rest = (ln.split("{", 1) + [""])[:2] if "{" in ln else (ln.split()[0], "")
        labels = frozenset(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"', rest))
        fam = name[:-6] if name.endswith("_total") and om else name
        check(fam in typed, "sample %s after its TYPE" % name)
        out[(name, labels)] = float(ln.rsplit(" ", 1)[1])
    return out


def case_disks(sheaf, work):
    before = read_diskstats()
    s1 = sample(sheaf, work, 1)
    target = os.path.join(work, "dd.out")
    st = os.stat(work)
    major, minor = os.major(st.st_dev), os.minor(st.st_dev)
    dd = run("dd", "if=/dev/zero", "of=" + target, "bs=1M", "count=8", "oflag=direct", "conv=fsync")
    if dd.returncode != 0:  # a file system without O_DIRECT: fsync alone
        dd = run("dd", "if=/dev/zero", "of=" + target, "bs=1M", "count=8", "conv=fsync")
    eq(dd.returncode, 0, "dd wrote 8 MiB (%s)" % dd.stderr.strip().splitlines()[-1:])
    s2 = sample(sheaf, work, 2)
    after = read_diskstats()
    d1 = {d["device"]: d for d in s1["disks"]}
    d2 = {d["device"]: d for d in s2["disks"]}
    eq(sorted(d1), sorted(before), "the sampler lists every device of /proc/diskstats")
    bad = []
    for dev, (_, _, b) in before.items():
        a = after.get(dev)
        if not a or dev not in d1 or dev not in d2:
            continue
        for k, (i, scale) in FIELDS.items():
            if not (b[i] * scale <= d1[dev][k] <= d2[dev][k] <= a[2][i] * scale):
                bad.append((dev, k, b[i] * scale, d1[dev][k], d2[dev][k], a[2][i] * scale))
    eq(bad, [], "every counter lies between the test's own readings (before <= s1 <= s2 <= after)")
    dev = [n for n, (ma, mi, _) in before.items() if (ma, mi) == (major, minor)]
    if not dev:
        print("note: %s is on %d:%d, not a block device in /proc/diskstats: the known-write check is skipped"
              % (work, major, minor))
        return
    dev = dev[0]
    wb = d2[dev]["write_bytes"] - d1[dev]["write_bytes"]
    check(wb >= 8 << 20, "%s: %d bytes written between the samples >= 8 MiB of dd" % (dev, wb))
    check(d2[dev]["writes"] > d1[dev]["writes"], "%s: writes completed grew" % dev)
    eq(s1["job_id"], "", "no job id in the environment")


def case_textfile(sheaf, work):
    for om in (0, 1):
        prom = os.path.join(work, "node%d.prom" % om)
        env = dict(os.environ, SLURM_JOB_ID="4242")
        extra = ["--textfile", prom] + (["--openmetrics"] if om else [])
        js = sample(sheaf, work, 10 + om, env, *extra)
        eq(js["job_id"], "4242", "job id from SLURM_JOB_ID")
        with open(prom) as f:
            text = f.read()
        check(not [x for x in os.listdir(work) if ".tmp." in x], "no temporary file left")
        m = parse_metrics(text, om)
        for d in js["disks"][:8]:
            for key, name in (("read_bytes", "sheaf_node_disk_read_bytes_total"),
                              ("write_bytes", "sheaf_node_disk_written_bytes_total"),
                              ("writes", "sheaf_node_disk_writes_total")):
                got = m.get((name, frozenset({("job_id", "4242"), ("device", d["device"])})))
                eq(got, float(d[key]), "%s %s %s = JSON %s" % ("OM" if om else "prom", name, d["device"], key))
        check(any(k[0] == "sheaf_node_sample_time_seconds" for k in m), "sample time gauge")


MOUNTSTATS = """device rootfs mounted on / with fstype rootfs
device srvA:/export mounted on /mnt/a with fstype nfs4 statvers=1.1
\topts:\trw,vers=4.2,rsize=1048576
\tage:\t100
\tbytes:\t1000 2000 300 400 1300 2400 1 1
\tRPC iostats version: 1.1  p/v: 100003/4 (nfs)
\tper-op statistics
\t        NULL: 1 1 0 44 24 0 0 0 0
\t        READ: 10 10 0 1600 4096 1 25 30 0
\t       WRITE: 5 6 1 2400 800 2 40 50 0
\tthis line is garbage
device /dev/sda1 mounted on /boot with fstype ext4
device srvB:/data mounted on /mnt/b with fstype nfs statvers=1.1
\tbytes:\t7 8 0 0 7 8 0 0
\tper-op statistics
\t     GETATTR: 3 3 0 300 400 0 2 3
\t      LOOKUP: 1 2
"""

LLITE = """snapshot_time             1700000000.123456 secs.nsecs
read_bytes                10 samples [bytes] 4096 1048576 5242880
write_bytes               4 samples [bytes] 4096 1048576 2097152
open                      3 samples [usecs] 1 10 20
we"ird\\                  2 samples [reqs]
bogus
"""


def case_parsers(sheaf, work):
    ms = os.path.join(work, "mountstats")
    with open(ms, "w") as f:
        f.write(MOUNTSTATS)
    d = os.path.join(work, "llite", "scratch-ffff8800")
    os.makedirs(d)
    with open(os.path.join(d, "stats"), "w") as f:
        f.write(LLITE)
    prom = os.path.join(work, "fs.prom")
    js = sample(sheaf, work, 20, None, "--mountstats", ms, "--llite", os.path.join(work, "llite", "*", "stats"),
                "--textfile", prom)
    nfs = {n["mountpoint"]: n for n in js["nfs"]}
    eq(sorted(nfs), ["/mnt/a", "/mnt/b"], "NFS mounts (not rootfs, not ext4)")
    a = nfs["/mnt/a"]
    eq((a["source"], a["read_bytes"], a["write_bytes"], a["direct_read_bytes"], a["server_write_bytes"]),
       ("srvA:/export", 1000, 2000, 300, 2400), "srvA bytes")
    eq(a["ops"]["READ"], {"ops": 10, "timeouts": 0, "bytes_sent": 1600, "bytes_recv": 4096, "rtt_ms": 25,
                          "exe_ms": 30}, "READ op")
    eq(a["ops"]["WRITE"]["timeouts"], 1, "WRITE timeouts")
    eq(list(nfs["/mnt/b"]["ops"]), ["GETATTR"], "an op line of older kernels (8 numbers) read, a short one skipped")
    eq(nfs["/mnt/b"]["ops"]["GETATTR"]["exe_ms"], 3, "GETATTR execute ms")
    check(js["skipped_lines"] == 3, "skipped lines counted: %d (want 3)" % js["skipped_lines"])
    lus = js["lustre"]
    eq([(x["source"], x["read_bytes"], x["write_bytes"], x["ops"]["open"]["samples"]) for x in lus],
       [("scratch-ffff8800", 5242880, 2097152, 3)], "Lustre llite stats")
    eq(lus[0]["ops"].get('we"ird\\'), {"samples": 2, "sum": 0}, "an op name with a quote stays valid JSON")
    with open(prom) as f:
        m = parse_metrics(f.read(), 0)
    eq(m.get(("sheaf_node_nfs_read_bytes_total",
              frozenset({("job_id", ""), ("export", "srvA:/export"), ("mountpoint", "/mnt/a")}))), 1300.0,
       "prom: NFS bytes read (normal + direct)")
    eq(m.get(("sheaf_node_nfs_ops_total", frozenset({("job_id", ""), ("mountpoint", "/mnt/a"), ("op", "READ")}))),
       10.0, "prom: NFS READ ops")
    eq(m.get(("sheaf_node_lustre_written_bytes_total", frozenset({("job_id", ""), ("fs", "scratch-ffff8800")}))),
       2097152.0, "prom: Lustre bytes written")
    # hostile input: binary junk and huge numbers, never a crash
    with open(ms, "wb") as f:
        f.write(os.urandom(200000) + b"\ndevice x mounted on /y with fstype nfs\n\tbytes: 99999999999999999999999 1\n")
    p = run(sheaf, "stats", "node", "--count", "1", "--mountstats", ms, "--diskstats", ms)
    eq(p.returncode, 0, "junk input: a sample with the junk skipped (%s)" % p.stderr.strip()[:200])


def case_bad(sheaf, work):
    p = run(sheaf, "stats", "node", "--count", "0")
    eq(p.returncode, 2, "--count 0 refused")
    p = run(sheaf, "stats", "node", "--interval", "x")
    eq(p.returncode, 2, "--interval x refused")
    p = run(sheaf, "stats", "node", "extra")
    eq(p.returncode, 2, "a positional argument refused")
    p = run(sheaf, "stats", "node", "--count", "1", "--diskstats", os.path.join(work, "nope"))
    check(p.returncode == 1 and "nope" in p.stderr, "a missing diskstats names the file (%s)" % p.stderr.strip())
    p = run(sheaf, "stats", "node", "--count", "1", "--textfile", os.path.join(work, "no", "dir.prom"))
    check(p.returncode == 1 and "dir.prom" in p.stderr, "an unwritable text file is named")


def main(argv):
    if len(argv) != 3:
        print(__doc__)
        return 2
    sheaf, work = argv[1:]
    subprocess.run(["rm", "-rf", work])
    os.makedirs(work)
    case_disks(sheaf, work)
    case_textfile(sheaf, work)
    case_parsers(sheaf, work)
    case_bad(sheaf, work)
    print("node: %s" % ("FAILED (%d)" % len(FAILS) if FAILS else "ok"))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
