"""ldnodes_local.py - a node-local library directory that differs per node
(issue 26, "wrong libraries by default"), for ldnodes_run.py --node-local.

Every node gets its own tmpfs at the same path, WORK/nodelocal (mounted in
the node's mount namespace through bed-rsh, so the front end and the other
nodes do not see it), holding libldbnl.so built for that node: its
constructor appends "HOST PID VALUE" to $LDBED_NL_OUT (one write), VALUE
being the node's index. The drivers get it as LD_PRELOAD=libldbnl.so (a bare
name: searched through LD_LIBRARY_PATH, whose last entry is the directory),
so ld.so loads it like a DT_NEEDED library. Plain loading gives every node
its own copy; a loader that served node 0's copy to the others would make
node k report 0. check() says whether every driver loaded its own node's.
"""
import os
import subprocess

SRC = r"""
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
int ldbnl_value(void) { return NODEVAL; }
__attribute__((constructor)) static void ldbnl_report(void)
{
    const char *f = getenv("LDBED_NL_OUT");
    char h[256] = "", line[400];
    if (!f)
        return;
    gethostname(h, sizeof h - 1);
    int n = snprintf(line, sizeof line, "%s %d %d\n", h, (int)getpid(), ldbnl_value());
    int fd = open(f, O_WRONLY | O_APPEND | O_CREAT, 0644);
    if (fd >= 0) {
        if (write(fd, line, (size_t)n) != n)
            fprintf(stderr, "ldbnl: short write to %s\n", f);
        close(fd);
    }
}
"""


class LocalError(Exception):
    pass


def paths(work):
    return {"dir": os.path.join(work, "nodelocal"), "src": os.path.join(work, "nodelocal-src"),
            "out": os.path.join(work, "nodelocal.out")}


def build(work, n, cc="cc"):
    """libldbnl<k>.so for k < n (different bytes per node), kept for reuse"""
    p = paths(work)
    os.makedirs(p["src"], exist_ok=True)
    c = os.path.join(p["src"], "ldbnl.c")
    with open(c, "w") as f:
        f.write(SRC)
    for k in range(n):
        lib = os.path.join(p["src"], "libldbnl%d.so" % k)
        if os.path.exists(lib):
            continue
        r = subprocess.run([cc, "-shared", "-fPIC", "-O1", "-DNODEVAL=%d" % k, "-o", lib + ".tmp", c],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            raise LocalError("cannot build %s: %s" % (lib, r.stdout.strip()))
        os.rename(lib + ".tmp", lib)


def setup(work, nodes, bedrsh, env):
    """each node's own tmpfs at WORK/nodelocal with its own libldbnl.so"""
    p = paths(work)
    build(work, len(nodes))
    os.makedirs(p["dir"], exist_ok=True)
    if os.listdir(p["dir"]):
        raise LocalError("%s is not empty in the front end" % p["dir"])
    if os.path.exists(p["out"]):
        os.unlink(p["out"])
    for k, n in enumerate(nodes):
        cmd = ("mount -t tmpfs -o size=4m,mode=0755 ldbnl%d %s && cp %s %s/libldbnl.so && "
               "stat -f -c %%T %s" % (k, p["dir"], os.path.join(p["src"], "libldbnl%d.so" % k),
                                      p["dir"], p["dir"]))
        r = subprocess.run([bedrsh, n["addr"], cmd], env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=60)
        if r.returncode != 0 or "tmpfs" not in r.stdout:
            raise LocalError("node %d: cannot mount its node-local tmpfs: %s" % (k, r.stdout.strip()))
    if os.listdir(p["dir"]):
        raise LocalError("a node's tmpfs at %s reached the front end" % p["dir"])


def env_vars(work, envvars):
    """the drivers' environment: the directory last on LD_LIBRARY_PATH, the preload"""
    p = paths(work)
    out = dict(envvars)
    out["LD_LIBRARY_PATH"] = envvars["LD_LIBRARY_PATH"] + ":" + p["dir"]
    out["LD_PRELOAD"] = "libldbnl.so"
    out["LDBED_NL_OUT"] = p["out"]
    return out


def check(work, driver_pids):
    """every driver reported once, from its node ldbn<k>, the value k"""
    seen = []
    try:
        with open(paths(work)["out"]) as f:
            for line in f:
                w = line.split()
                if len(w) == 3:
                    seen.append((w[0], int(w[1]), int(w[2])))
    except (OSError, ValueError):
        pass
    by_pid = {}
    for host, pid, val in seen:
        by_pid.setdefault(pid, []).append((host, val))
    wrong = []
    for pid in sorted(driver_pids):
        got = by_pid.get(pid, [])
        host = got[0][0] if len(got) == 1 else ""
        if not (host.startswith("ldbn") and host[4:].isdigit() and got[0][1] == int(host[4:])):
            wrong.append((pid, got))
    return {"ok": bool(driver_pids) and not wrong, "drivers": len(driver_pids),
            "reports": len(seen), "wrong": wrong[:8],
            "values": sorted({"%s=%d" % (h, v) for h, _, v in seen})}
