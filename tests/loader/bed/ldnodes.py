#!/usr/bin/env python3
"""ldnodes.py - simulated nodes on one machine for the loader bed: N nodes,
each a network + mount + UTS namespace with its own host name, its own
address on a bridge, its own RAM-disk (tmpfs) at the same path.

    ldnodes.py up N --state DIR [--cache /dev/shm] [--cache-mb 2048]
    ldnodes.py down --state DIR
    ldnodes.py run N --state DIR [--cache ...] -- COMMAND...   (up, COMMAND, down)
    ldnodes.py check                                            (can nodes be made here?)

How a node is made (doc/loader-bed.md, "Simulated nodes"):
  * a holder process `unshare --net --mount --uts --propagation private`
    sets the host name ldbn<k>, mounts a fresh tmpfs at the cache path
    (default /dev/shm: the node's RAM disk; the loader's default cache dir)
    and bind-mounts the bed's hosts file over /etc/hosts, then sleeps; its
    namespaces are the node;
  * a veth pair joins the node to a bridge in the root namespace: the bridge
    has 10.77.S.254/24 (the front end, where the launcher runs), node k has
    10.77.S.<k+1> on its eth0 (S: the first of 77..99 with no address on
    this machine, so two beds can coexist); lo is up in every node;
  * the hosts file names ldbn<k> (and the front end's host name, as
    10.77.S.254) so that launchers inside the nodes find each other and
    the front end.
Mounts made in the root namespace before `up` (the countfs mount of the
shared tree) are visible in every node; later ones are not (private
propagation): mount the shared file system first.

The state directory holds `nodes` (one line per node: name address holder
pid), `hosts` and `bridge`. bed-rsh (next to this script) reads it through
$LDBED_STATE to run commands in a node. `down` kills every process in a
node's network namespace (not only the holder), deletes the veths and the
bridge and removes the state; `run` always calls it (also on an error or a
signal). Needs root (CAP_SYS_ADMIN, CAP_NET_ADMIN); `check` and every
command exit 77 with the reason when nodes cannot be made here.
"""
import argparse
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SKIP = 77

# the holder: host name, RAM disk, hosts file; "ready" on stdout, then sleep
HOLDER = ('set -e; hostname "$1"; mount -t tmpfs -o "size=$3m,mode=1777" ldbcache "$2"; '
          'mount --bind "$4" /etc/hosts; echo ready; exec sleep 2147483647')


class BedError(Exception):
    pass


def sh(*cmd, check=True):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if check and r.returncode != 0:
        raise BedError("%s: %s" % (" ".join(cmd), r.stderr.strip()))
    return r


def why_not():
    """None when nodes can be made here, else the reason"""
    if os.geteuid() != 0:
        return "not root (namespaces, veth and mounts need CAP_SYS_ADMIN/CAP_NET_ADMIN)"
    for t in ("unshare", "nsenter", "ip", "mount", "hostname"):
        if not any(os.access(os.path.join(d, t), os.X_OK)
                   for d in os.environ.get("PATH", "/usr/bin:/bin").split(":") + ["/usr/sbin", "/sbin"]):
            return "%s not found" % t
    r = subprocess.run(["unshare", "--net", "--mount", "--uts", "true"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        return "cannot make namespaces: %s" % r.stderr.strip()
    name = "ldbchk%d" % (os.getpid() % 100000)
    r = subprocess.run(["ip", "link", "add", name, "type", "bridge"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        return "cannot make a bridge: %s" % r.stderr.strip()
    subprocess.run(["ip", "link", "del", name], stderr=subprocess.DEVNULL)
    return None


def free_subnet():
    used = sh("ip", "-4", "-o", "addr").stdout
    for s in range(77, 100):
        if (" 10.77.%d." % s) not in used and ("inet 10.77.%d." % s) not in used:
            return s
    raise BedError("no free 10.77.S.0/24 subnet (77..99 all in use)")


def read_state(state):
    nodes = []
    try:
        with open(os.path.join(state, "nodes")) as f:
            for line in f:
                w = line.split()
                if len(w) == 3:
                    nodes.append({"name": w[0], "addr": w[1], "pid": int(w[2])})
    except FileNotFoundError:
        pass
    return nodes


def netns_ino(pid):
    try:
        return os.stat("/proc/%d/ns/net" % pid).st_ino
    except OSError:
        return None


def pids_in_netns(ino):
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit() and int(d) != os.getpid():
            try:
                if os.stat("/proc/%s/ns/net" % d).st_ino == ino:
                    out.append(int(d))
            except OSError:
                pass
    return out


def down(state):
    """tear the nodes of state down: every process in their network
    namespaces, the veths, the bridge, the state files. Idempotent."""
    nodes = read_state(state)
    inos = {netns_ino(n["pid"]) for n in nodes} - {None}
    for sig in (signal.SIGTERM, signal.SIGKILL):
        left = [p for i in inos for p in pids_in_netns(i)]
        for p in left:
            try:
                os.kill(p, sig)
            except OSError:
                pass
        end = time.time() + (3 if sig == signal.SIGTERM else 10)
        while left and time.time() < end:
            time.sleep(0.05)
            left = [p for i in inos for p in pids_in_netns(i)]
        if not left:
            break
    try:
        with open(os.path.join(state, "bridge")) as f:
            br = f.read().split()
    except FileNotFoundError:
        br = []
    if br:
        for k in range(len(nodes) or 64):
            sh("ip", "link", "del", "%sv%d" % (br[0], k), check=False)
        sh("ip", "link", "del", br[0], check=False)
    for f in ("nodes", "hosts", "bridge"):
        try:
            os.unlink(os.path.join(state, f))
        except FileNotFoundError:
            pass


def up(n, state, cache="/dev/shm", cache_mb=2048):
    """make n nodes; the state in directory state. Tears down what it made
    when anything fails."""
    if n < 1 or n > 250:
        raise BedError("node count %d not in 1..250" % n)
    reason = why_not()
    if reason:
        raise BedError("SKIP: " + reason)
    os.makedirs(state, exist_ok=True)
    if read_state(state):
        down(state)
    s = free_subnet()
    br = "ldb%d" % (os.getpid() % 100000)   # + "v<k>" stays within 15 characters
    with open(os.path.join(state, "bridge"), "w") as f:
        f.write("%s 10.77.%d.254\n" % (br, s))
    hosts = os.path.join(state, "hosts")
    with open(hosts, "w") as f:
        f.write("127.0.0.1 localhost\n10.77.%d.254 %s ldbfront\n" % (s, os.uname().nodename))
        for k in range(n):
            f.write("10.77.%d.%d ldbn%d\n" % (s, k + 1, k))
    try:
        sh("ip", "link", "add", br, "type", "bridge")
        sh("ip", "addr", "add", "10.77.%d.254/24" % s, "dev", br)
        sh("ip", "link", "set", br, "up")
        holders = []
        with open(os.path.join(state, "nodes"), "w") as f:
            for k in range(n):
                p = subprocess.Popen(["unshare", "--net", "--mount", "--uts", "--propagation",
                                      "private", "sh", "-c", HOLDER, "holder", "ldbn%d" % k,
                                      cache, str(cache_mb), hosts],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     start_new_session=True)
                f.write("ldbn%d 10.77.%d.%d %d\n" % (k, s, k + 1, p.pid))
                f.flush()
                holders.append(p)
        for k, p in enumerate(holders):
            if p.stdout.readline().strip() != "ready":
                raise BedError("node ldbn%d: %s" % (k, p.stderr.read().strip()))
            v = "%sv%d" % (br, k)
            sh("ip", "link", "add", v, "type", "veth", "peer", "name", "eth0", "netns", str(p.pid))
            sh("ip", "link", "set", v, "master", br, "up")
            sh("nsenter", "-t", str(p.pid), "-n", "sh", "-c",
               "ip link set lo up && ip addr add 10.77.%d.%d/24 dev eth0 && ip link set eth0 up"
               % (s, k + 1))
    except BaseException:
        down(state)
        raise
    return read_state(state)


def cache_used(node, cache="/dev/shm"):
    """bytes in use on a node's RAM disk (seen through the holder's root)"""
    st = os.statvfs("/proc/%d/root%s" % (node["pid"], cache))
    return (st.f_blocks - st.f_bfree) * st.f_frsize


class Nodes:
    """context manager: `with Nodes(n, state) as nodes:` - always torn down"""

    def __init__(self, n, state, cache="/dev/shm", cache_mb=2048):
        self.args = (n, os.path.abspath(state), cache, cache_mb)
        self.state = self.args[1]
        self.nodes = []

    def __enter__(self):
        self.old = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP)}
        for s in self.old:
            signal.signal(s, _raise_interrupt)
        self.nodes = up(*self.args)
        return self.nodes

    def __exit__(self, *exc):
        down(self.state)
        for s, h in self.old.items():
            signal.signal(s, h)
        return False


def _raise_interrupt(sig, frame):
    raise KeyboardInterrupt("signal %d" % sig)


def env_for(state):
    """the environment bed-rsh needs: LDBED_STATE and PATH with bed-rsh"""
    env = dict(os.environ)
    env["LDBED_STATE"] = os.path.abspath(state)
    env["PATH"] = HERE + ":" + env.get("PATH", "/usr/bin:/bin")
    return env


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("cmd", choices=("up", "down", "run", "check"))
    p.add_argument("n", nargs="?", type=int, default=0)
    p.add_argument("--state", default="/run/ldbed")
    p.add_argument("--cache", default="/dev/shm")
    p.add_argument("--cache-mb", type=int, default=2048)
    argv = sys.argv[1:]
    command = argv[argv.index("--") + 1:] if "--" in argv else []
    a = p.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    a.command = command
    if a.cmd == "check":
        r = why_not()
        print("ldnodes: %s" % ("simulated nodes can be made here" if r is None else "SKIP: " + r))
        return SKIP if r else 0
    if a.cmd == "down":
        down(a.state)
        return 0
    if a.n < 1:
        p.error("the node count must be >= 1")
    try:
        if a.cmd == "up":
            for nd in up(a.n, a.state, a.cache, a.cache_mb):
                print("%s %s pid %d" % (nd["name"], nd["addr"], nd["pid"]))
            print("export LDBED_STATE=%s PATH=%s:$PATH" % (os.path.abspath(a.state), HERE))
            return 0
        if not a.command:
            p.error("run needs a command after --")
        with Nodes(a.n, a.state, a.cache, a.cache_mb):
            return subprocess.run(a.command, env=env_for(a.state)).returncode
    except BedError as e:
        print("ldnodes: %s" % e, file=sys.stderr)
        return SKIP if str(e).startswith("SKIP") else 1
    except KeyboardInterrupt as e:
        print("ldnodes: interrupted (%s), torn down" % e, file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
