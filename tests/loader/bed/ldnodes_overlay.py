#!/usr/bin/env python3
"""ldnodes_overlay.py - the overlay of load servers started by the bed itself
on its simulated nodes (the "rsh tree for tests" of issue 15), for
ldnodes_run.py --mode overlay-bed and the fault runs:

  * one `sheaf-ld-server --rank k --hosts ADDR:PORT,... --secret F
    --overlay push|pull --socket SOCK --cache-dir CACHE --watch-stdin` per
    node through bed-rsh (every node listens on its own address, same port);
  * the drivers are started with `sheaf-boot --socket SOCK --audit LIB` in
    front of the executable (what sheaf-launch inserts), SOCK at the same
    path on every node (its own RAM disk);
  * counters of each server through its socket (reached from the front end
    through /proc/<holder>/root), RAM-disk use per node while the caches
    still exist, stop by closing the servers' stdin.
Also a peer that speaks the overlay's handshake with a wrong key (refused)."""
import hashlib
import hmac
import os
import socket
import struct
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BEDRSH = os.path.join(HERE, "bed-rsh")
PORT = 7701
SOCKDIR = "sheaf-ld-bed"        # below the node's cache (RAM disk), 0700
SLD_MAGIC = 0x444c4853
SLN_MAGIC = 0x4e4c4853
OP_STATS = 5
COUNTERS = ("requests", "listings", "stats", "reads", "bytes", "realpaths", "hits", "clients",
            "refused", "stripped", "net_refused", "net_gets", "net_served", "net_objs",
            "net_bytes", "net_pushed")


def make_secret(path):
    if os.path.exists(path):
        os.unlink(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    os.write(fd, (os.urandom(32).hex() + "\n").encode())
    os.close(fd)


def recv_exact(s, n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            raise ConnectionError("closed")
        b += c
    return b


class Overlay:
    def __init__(self, nodes, server, work, mode="push", cache="/dev/shm", timeout_ms=20000,
                 extra=(), env=None):
        self.nodes, self.cache = nodes, cache
        self.sock = os.path.join(cache, SOCKDIR, "sock")
        self.secret = os.path.join(work, "nodes-secret")
        make_secret(self.secret)
        self.hosts = ",".join("%s:%d" % (n["addr"], PORT) for n in nodes)
        self.procs, self.errs = [], []
        for k, n in enumerate(nodes):
            cmd = ("mkdir -p -m 700 %s && exec %s --rank %d --hosts %s --secret %s --overlay %s "
                   "--socket %s --cache-dir %s --timeout %d --watch-stdin %s"
                   % (os.path.dirname(self.sock), server, k, self.hosts, self.secret, mode,
                      self.sock, cache, timeout_ms, " ".join(extra)))
            err = open(os.path.join(work, "nodes-server.%d.err" % k), "w+")
            self.procs.append(subprocess.Popen([BEDRSH, n["addr"], cmd], stdin=subprocess.PIPE,
                                               stdout=subprocess.PIPE, stderr=err, text=True,
                                               env=env or dict(os.environ)))
            self.errs.append(err)
        self.ready = []
        for k, p in enumerate(self.procs):
            line = p.stdout.readline()
            if not line.startswith("sheaf-ld ready %d " % k):
                msg = "server %d did not start: %r: %s" % (k, line, self.stderr(k))
                self.stop()
                raise RuntimeError(msg)
            self.ready.append(time.time_ns())

    def stderr(self, k):
        if self.errs[k].closed:
            return ""
        self.errs[k].flush()
        self.errs[k].seek(0)
        return self.errs[k].read()

    def node_path(self, k, path):
        return "/proc/%d/root%s" % (self.nodes[k]["pid"], path)

    def stats(self, k, timeout=10):
        """the counters of node k's server (dict), or None"""
        try:
            s = socket.socket(socket.AF_UNIX)
            s.settimeout(timeout)
            s.connect(self.node_path(k, self.sock))
            p = struct.pack("<II", 0, 0)
            s.sendall(struct.pack("<III", SLD_MAGIC, OP_STATS, len(p)) + p)
            _, _, ln = struct.unpack("<III", recv_exact(s, 12))
            body = recv_exact(s, ln)
            s.close()
        except OSError:
            return None
        vals = struct.unpack_from("<%dQ" % len(COUNTERS), body, 8 + 16 * 8)
        return dict(zip(COUNTERS, vals))

    def alive(self, k):
        return self.procs[k].poll() is None

    def kill(self, k, sig=9):
        os.kill(self.procs[k].pid, sig)

    def stop(self):
        for p in self.procs:
            try:
                p.stdin.close()
            except OSError:
                pass
        for p in self.procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        for e in self.errs:
            e.close()


def boot_words(launch_exe_dir, sock, prefixes, audit):
    """sheaf-boot in front of an executable (as sheaf-launch inserts it)"""
    w = [os.path.join(launch_exe_dir, "sheaf-boot"), "--socket", sock, "--audit", audit]
    if prefixes:
        w += ["--prefixes", ":".join(prefixes)]
    return w + ["--"]


def _frame(typ, payload):
    return struct.pack("<III", SLN_MAGIC, typ, len(payload)) + payload


def _mac(key, role, tree, rank, a, b):
    m = role + struct.pack("<II", tree, rank) + a + b
    return hmac.new(key, m, hashlib.sha512).digest()[:32]


def wrong_key_peer(addr, port=PORT, tree=0, rank=1, timeout=10):
    """a peer that does the overlay's handshake with a key that is not the
    job's: True when the server refused it (no WELCOME, connection closed)"""
    key = os.urandom(32)
    s = socket.create_connection((addr, port), timeout=timeout)
    nonce = os.urandom(32)
    s.sendall(_frame(1, struct.pack("<II", tree, rank) + nonce))
    try:
        _, typ, ln = struct.unpack("<III", recv_exact(s, 12))
        body = recv_exact(s, ln)
    except (OSError, ConnectionError):
        return True
    if typ != 2:
        return True
    s.sendall(_frame(3, _mac(key, b"C", tree, rank, body[:32], nonce)))
    try:
        _, typ, ln = struct.unpack("<III", recv_exact(s, 12))
    except (OSError, ConnectionError):
        return True
    return typ != 4
