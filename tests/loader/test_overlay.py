#!/usr/bin/env python3
"""test_overlay.py - the loader's overlay across nodes, on loopback.

N sheaf-ld-server processes on 127.0.0.1 (different ports), each with its own
cache directory and socket directory: N simulated nodes. Clients speak the
load server's Unix-socket protocol (src/loader/proto.h) to their node's
server; the file-system operations are the servers' own counters ("reads",
"listings": every read of the original tree is counted where it happens).
Peers speak the overlay's handshake themselves (HMAC-SHA-512-256 =
HMAC-SHA-512 truncated to 32 bytes, what libsodium's crypto_auth computes).

usage: test_overlay.py CASE --server PATH --work DIR [--boot PATH --audit PATH]
cases: pull2 pull4 push4 listing auth replay garbage kill preload roots2 launch
"""
import argparse
import hashlib
import hmac
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time

import overlay_fgfs  # noqa: E402 (the FGFS cases, tests/loader/overlay_fgfs.py)

SLD_MAGIC = 0x444c4853
SLN_MAGIC = 0x4e4c4853
OP_LOOKUP, OP_STAT, OP_LISTDIR, OP_STATS = 1, 2, 4, 5
COUNTERS = ["requests", "listings", "stats", "reads", "bytes", "realpaths", "hits", "clients",
            "refused", "stripped", "net_refused", "net_gets", "net_served", "net_objs",
            "net_bytes", "net_pushed", "passthrough"]


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def free_ports(n):
    """n ports that bind now, outside the kernel's ephemeral range (which other
    tests' outgoing connections draw from); a race is still possible, so the
    overlay is started again on new ports when a server finds its port taken"""
    import random
    ports = []
    while len(ports) < n:
        p = random.randint(20000, 32000)
        s = socket.socket()
        try:
            s.bind(("127.0.0.1", p))
            if p not in ports:
                ports.append(p)
        except OSError:
            pass
        finally:
            s.close()
    return ports


def make_secret(path):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    os.write(fd, (os.urandom(32).hex() + "\n").encode())
    os.close(fd)


def recv_exact(s, n):
    b = b""
    while len(b) < n:
        k = s.recv(n - len(b))
        if not k:
            raise ConnectionError("closed")
        b += k
    return b


def ask(sock, op, path, timeout=20):
    """one request to a node's server: (status, path) or None when it is gone"""
    p = path.encode()
    payload = struct.pack("<II", 0, len(p)) + p
    frame = struct.pack("<III", SLD_MAGIC, op, len(payload)) + payload
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(timeout)
        s.connect(sock)
        s.sendall(frame)
        magic, typ, ln = struct.unpack("<III", recv_exact(s, 12))
        body = recv_exact(s, ln)
        s.close()
    except (OSError, ConnectionError):
        return None
    status, kind = struct.unpack_from("<iI", body, 0)
    off = 8 + 16 * 8
    counters = struct.unpack_from("<%dQ" % len(COUNTERS), body, off)
    off += 8 * len(COUNTERS)
    (n,) = struct.unpack_from("<I", body, off)
    return status, body[off + 4:off + 4 + n].decode(), dict(zip(COUNTERS, counters))


def stats(sock):
    r = ask(sock, OP_STATS, "")
    if r is None:
        fail("no counters from " + sock)
    return r[2], r[1]


class Overlay:
    def __init__(self, args, n, mode="pull", roots=1, secret=None, timeout=4000, extra=(), env_of=None,
                 classify=False):
        # on one host every "node" has the same local disk: the default classification
        # (issue 26) passes it all through; the transport tests force copying
        extra = list(extra) if classify else ["--copy-all"] + list(extra)
        self.args, self.n = args, n
        Overlay.count = getattr(Overlay, "count", 0) + 1
        self.work = os.path.join(args.work, "ov%d.%d" % (n, Overlay.count))
        shutil.rmtree(self.work, ignore_errors=True)
        os.makedirs(self.work)
        self.secret = secret or os.path.join(self.work, "secret")
        if not secret:
            make_secret(self.secret)
        for attempt in range(4):
            if self.start(args, n, mode, roots, timeout, extra, env_of):
                break
            taken = any("Address already in use" in self.stderr(r) for r in range(n))
            self.stop()
            if not taken or attempt == 3:
                fail("the overlay did not start:\n%s" % "\n".join(self.stderr(r) for r in range(n)))
        self.caches = [stats(s)[1] for s in self.socks]

    def start(self, args, n, mode, roots, timeout, extra, env_of):
        self.ports = free_ports(n)
        self.hosts = ",".join("127.0.0.1:%d" % p for p in self.ports)
        self.procs, self.socks, self.caches, self.errs = [], [], [], []
        for r in range(n):
            node = os.path.join(self.work, "node%d" % r)
            shutil.rmtree(node, ignore_errors=True)
            os.makedirs(os.path.join(node, "cache"))
            os.makedirs(os.path.join(node, "run"), mode=0o700)
            sock = os.path.join(node, "run", "sock")
            err = open(os.path.join(node, "stderr"), "w+")
            cmd = [args.server, "--rank", str(r), "--hosts", self.hosts, "--secret", self.secret,
                   "--overlay", mode, "--roots", str(roots), "--socket", sock,
                   "--cache-dir", os.path.join(node, "cache"), "--timeout", str(timeout)]
            env = dict(os.environ, **(env_of(r, self.work) if env_of else {}))
            self.procs.append(subprocess.Popen(cmd + list(extra), stdout=subprocess.PIPE, stderr=err,
                                               text=True, env=env))
            self.socks.append(sock)
            self.errs.append(err)
        for r, p in enumerate(self.procs):
            line = p.stdout.readline()
            if not line.startswith("sheaf-ld ready %d " % r):
                return False
        return True

    def stderr(self, r):
        self.errs[r].flush()
        self.errs[r].seek(0)
        return self.errs[r].read()

    def stop(self):
        for p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def total(self, name):
        return sum(stats(s)[0][name] for s in self.socks)

    def has_copy(self, r, real):
        return os.path.exists(self.caches[r] + "/f" + real)


def make_tree(work, nfiles=3):
    src = os.path.join(work, "shared", "lib")
    os.makedirs(src, exist_ok=True)
    files = []
    for i in range(nfiles):
        p = os.path.join(src, "libx%d.so" % i)
        with open(p, "wb") as f:
            f.write(os.urandom(1000 + 70000 * i))
        files.append(os.path.realpath(p))
    return os.path.realpath(src), files


def same_bytes(a, b):
    with open(a, "rb") as f, open(b, "rb") as g:
        return hashlib.sha256(f.read()).digest() == hashlib.sha256(g.read()).digest()


def case_pull(args, n):
    ov = Overlay(args, n, "pull")
    try:
        d, files = make_tree(ov.work)
        last = n - 1
        r = ask(ov.socks[last], OP_LOOKUP, files[2])
        if not r or r[0] != 0 or not same_bytes(r[1], files[2]):
            fail("pull%d: node %d did not get the file: %r\n%s" % (n, last, r, ov.stderr(last)))
        # 8 clients at once on that node for another file of the listed directory:
        # one network request (the others wait in the server's loop, then hit the cache)
        import threading
        before = stats(ov.socks[last])[0]
        res = []
        ths = [threading.Thread(target=lambda: res.append(ask(ov.socks[last], OP_LOOKUP, files[0])))
               for _ in range(8)]
        for t in ths:
            t.start()
        for t in ths:
            t.join()
        after = stats(ov.socks[last])[0]
        if len(res) != 8 or any(not r or r[0] != 0 or not same_bytes(r[1], files[0]) for r in res):
            fail("pull%d: concurrent clients: %r" % (n, res))
        if after["net_gets"] - before["net_gets"] != 1 or after["requests"] - before["requests"] != 9:
            fail("pull%d: 8 concurrent clients made %d network requests (expected 1)"
                 % (n, after["net_gets"] - before["net_gets"]))
        # many local clients on every node for the same object: still one read
        for k in range(3):
            for node in range(n):
                r = ask(ov.socks[node], OP_LOOKUP, files[2])
                if not r or r[0] != 0 or not same_bytes(r[1], files[2]):
                    fail("pull%d: node %d, client %d: %r" % (n, node, k, r))
        reads, listings = ov.total("reads"), ov.total("listings")
        root = stats(ov.socks[0])[0]
        if reads != 2 or root["reads"] != 2:
            fail("pull%d: 2 files were read %d times (root %d), expected once each" % (n, reads, root["reads"]))
        if listings != 1:
            fail("pull%d: %d listings of %s, expected 1" % (n, listings, d))
        # pull: only the servers that asked (and the relays on their path) hold a copy;
        # a later request elsewhere is a second network request, not a second read
        if n == 4:
            ov2 = Overlay(args, n, "pull")
            try:
                ask(ov2.socks[3], OP_LOOKUP, files[1])
                if not ov2.has_copy(3, files[1]) or ov2.has_copy(1, files[1]):
                    fail("pull4: copy on node 3 %s, on node 1 %s (expected yes, no)"
                         % (ov2.has_copy(3, files[1]), ov2.has_copy(1, files[1])))
            finally:
                ov2.stop()
        if ov.total("reads") != 2:
            fail("pull%d: %d reads for 2 files" % (n, ov.total("reads")))
        print("pull%d: 1 read per file, 1 listing for %d nodes x 4 clients; 8 concurrent clients "
              "made 1 network request; bytes identical" % (n, n))
    finally:
        ov.stop()


def case_push(args):
    n = 4
    ov = Overlay(args, n, "push")
    try:
        d, files = make_tree(ov.work)
        r = ask(ov.socks[3], OP_LOOKUP, files[1])
        if not r or r[0] != 0 or not same_bytes(r[1], files[1]):
            fail("push4: node 3 did not get the file: %r" % (r,))
        deadline = time.time() + 10
        while time.time() < deadline and not all(ov.has_copy(k, files[1]) for k in range(n)):
            time.sleep(0.05)
        for k in range(n):
            if not ov.has_copy(k, files[1]) or not same_bytes(ov.caches[k] + "/f" + files[1], files[1]):
                fail("push4: node %d has no (identical) copy" % k)
        if ov.total("reads") != 1 or ov.total("listings") != 1:
            fail("push4: reads %d listings %d (expected 1, 1)" % (ov.total("reads"), ov.total("listings")))
        # node 1 now answers from its cache without a network request
        before = stats(ov.socks[1])[0]["net_gets"]
        r = ask(ov.socks[1], OP_LOOKUP, files[1])
        if not r or r[0] != 0 or stats(ov.socks[1])[0]["net_gets"] != before:
            fail("push4: node 1 asked the network for a pushed file")
        # all 4 nodes at once for new files (broadcasts cross the replies): every
        # answer is a copy in the asking node's own cache, with the original's bytes
        import threading
        more = []
        d2 = os.path.join(ov.work, "shared", "cross")   # a directory nobody listed yet
        os.makedirs(d2)
        for i in range(6):
            p = os.path.join(d2, "libcross%d.so" % i)
            with open(p, "wb") as f:
                f.write(os.urandom(30000 + 1000 * i))
            more.append(p)
        for f in more:
            res = {}
            ths = [threading.Thread(target=lambda k=k: res.__setitem__(k, ask(ov.socks[k], OP_LOOKUP, f)))
                   for k in range(n)]
            for t in ths:
                t.start()
            for t in ths:
                t.join()
            for k in range(n):
                r = res.get(k)
                if not r or r[0] != 0 or not r[1].startswith(ov.caches[k] + "/") or not same_bytes(r[1], f):
                    fail("push4: concurrent requests: node %d answered %r for %s\n%s" % (k, r, f, "\n".join("node %d: %s" % (j, ov.stderr(j)) for j in range(n))))
        if ov.total("reads") != 1 + len(more):
            fail("push4: %d reads for %d files" % (ov.total("reads"), 1 + len(more)))
        print("push4: a request on node 3 put the file in all 4 caches; 1 read, 1 listing; 6 files asked for on all nodes at once: "
              "each read once, each node answered from its own cache")
    finally:
        ov.stop()


def case_listing(args):
    ov = Overlay(args, 4, "pull")
    try:
        d, files = make_tree(ov.work)
        for node in (3, 1, 2, 3, 0):
            r = ask(ov.socks[node], OP_LISTDIR, d)
            if not r or r[0] != 0 or sorted(os.listdir(r[1])) != sorted(os.path.basename(f) for f in files):
                fail("listing: node %d: %r" % (node, r))
            st = ask(ov.socks[node], OP_LOOKUP, d + "/missing.so")
            if not st or st[0] != 2:
                fail("listing: node %d: a missing name is not ENOENT: %r" % (node, st))
        if ov.total("listings") != 1:
            fail("listing: %d listings, expected 1" % ov.total("listings"))
        print("listing: one listing of the directory for 4 nodes; missing names ENOENT from it")
    finally:
        ov.stop()


# ---- hostile peers ----

def frame(typ, payload):
    return struct.pack("<III", SLN_MAGIC, typ, len(payload)) + payload


def mac(key, role, tree, rank, a, b):
    m = role + struct.pack("<II", tree, rank) + a + b
    return hmac.new(key, m, hashlib.sha512).digest()[:32]


def handshake(port, key, tree, rank, replay=None, check=True):
    """a peer's handshake; returns (socket, accepted, messages sent)"""
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    nonce = os.urandom(32)
    hello = replay[0] if replay else frame(1, struct.pack("<II", tree, rank) + nonce)
    s.sendall(hello)
    try:
        _, typ, ln = struct.unpack("<III", recv_exact(s, 12))
        body = recv_exact(s, ln)
    except (OSError, ConnectionError):
        return s, False, None
    if typ != 2:
        return s, False, None
    pnonce = body[:32]
    if replay:
        proof = replay[1]
    else:
        if check and not hmac.compare_digest(body[32:], mac(key, b"P", tree, rank, nonce, pnonce)):
            fail("the server's challenge does not prove the key")
        proof = frame(3, mac(key, b"C", tree, rank, pnonce, nonce))
    s.sendall(proof)
    try:
        _, typ, ln = struct.unpack("<III", recv_exact(s, 12))
    except (OSError, ConnectionError):
        return s, False, (hello, proof)
    return s, typ == 4, (hello, proof)


def closed(s):
    s.settimeout(10)
    try:
        return s.recv(1) == b""
    except (ConnectionResetError, socket.timeout):
        return True


def case_auth(args):
    ov = Overlay(args, 2, "pull")
    try:
        key = bytes.fromhex(open(ov.secret).read().strip())
        s, ok, _ = handshake(ov.ports[0], os.urandom(32), 0, 0xffffffff, check=False)
        if ok or not closed(s):
            fail("auth: a peer with a wrong secret was accepted")
        s, ok, _ = handshake(ov.ports[0], key, 0, 0xffffffff)
        if not ok:
            fail("auth: the right secret was refused")
        s.close()
        time.sleep(0.2)
        c = stats(ov.socks[0])[0]
        if c["net_refused"] != 1 or "refused peer" not in ov.stderr(0):
            fail("auth: refusals %d, message %r" % (c["net_refused"], ov.stderr(0)))
        # the overlay still works
        d, files = make_tree(ov.work)
        r = ask(ov.socks[1], OP_LOOKUP, files[0])
        if not r or r[0] != 0:
            fail("auth: the overlay stopped working after a refusal")
        print("auth: wrong secret refused (connection closed, counter 1, message); right one accepted")
    finally:
        ov.stop()


def case_replay(args):
    ov = Overlay(args, 2, "pull")
    try:
        key = bytes.fromhex(open(ov.secret).read().strip())
        s, ok, msgs = handshake(ov.ports[0], key, 0, 0xffffffff)
        if not ok:
            fail("replay: the recorded handshake was refused")
        s.close()
        s, ok, _ = handshake(ov.ports[0], key, 0, 0xffffffff, replay=msgs)
        if ok or not closed(s):
            fail("replay: a replayed handshake was accepted")
        time.sleep(0.2)
        if stats(ov.socks[0])[0]["net_refused"] != 1:
            fail("replay: the refusal is not counted")
        print("replay: a recorded HELLO+PROOF replayed on a new connection is refused")
    finally:
        ov.stop()


def case_garbage(args):
    ov = Overlay(args, 2, "pull")
    try:
        key = bytes.fromhex(open(ov.secret).read().strip())
        junk = [os.urandom(64), frame(1, b"\x00" * 3), struct.pack("<III", SLN_MAGIC, 1, 0xffffffff),
                frame(99, b"x" * 100), b"\x00" * 12]
        for j in junk:
            s = socket.create_connection(("127.0.0.1", ov.ports[0]), timeout=10)
            s.sendall(j)
            if not closed(s):
                fail("garbage: %r did not close the connection" % j[:16])
        # after a good handshake: a bad frame from a "child" drops only that link
        s, ok, _ = handshake(ov.ports[0], key, 0, 0xffffffff)
        s.sendall(frame(10, struct.pack("<II", 99, 3) + b"abc"))
        if not closed(s):
            fail("garbage: a bad GET did not close the link")
        s, ok, _ = handshake(ov.ports[0], key, 0, 0xffffffff)
        s.sendall(frame(11, os.urandom(200)))
        if not closed(s):
            fail("garbage: a bad OBJ did not close the link")
        d, files = make_tree(ov.work)
        r = ask(ov.socks[1], OP_LOOKUP, files[0])
        if not r or r[0] != 0 or not same_bytes(r[1], files[0]):
            fail("garbage: the overlay stopped working: %r" % (r,))
        print("garbage: %d malformed frames refused, the overlay still serves" % (len(junk) + 2))
    finally:
        ov.stop()


def case_kill(args):
    ov = Overlay(args, 4, "pull")
    try:
        d, files = make_tree(ov.work)
        for node in range(4):
            if not ask(ov.socks[node], OP_LOOKUP, files[0]):
                fail("kill: node %d does not serve" % node)
        # rank 2 is rank 3's parent: killing it takes 2 and 3 (its subtree) out
        ov.procs[2].kill()
        ov.procs[2].wait()
        t0 = time.time()
        r = ask(ov.socks[3], OP_LOOKUP, files[1], timeout=15)
        if r is not None:
            fail("kill: node 3 still answers %r after its parent died" % (r,))
        if time.time() - t0 > 12:
            fail("kill: node 3 took %.1f s to give up" % (time.time() - t0))
        deadline = time.time() + 10
        while ov.procs[3].poll() is None and time.time() < deadline:
            time.sleep(0.05)
        if ov.procs[3].poll() is None:
            fail("kill: node 3's server did not stop after its parent died")
        if "fall back" not in ov.stderr(3):
            fail("kill: no message on node 3: %r" % ov.stderr(3))
        for node in (0, 1):
            r = ask(ov.socks[node], OP_LOOKUP, files[2])
            if not r or r[0] != 0 or not same_bytes(r[1], files[2]):
                fail("kill: node %d stopped serving: %r" % (node, r))
        took = time.time() - t0
        if args.boot and args.audit:
            # real clients (sheaf-boot + the audit library): node 3's fall back with one
            # message, node 1's are served
            prog = [sys.executable, "-c", "import json, decimal; print('ok', json.dumps(2))"]
            for node, served in ((3, False), (1, True)):
                before = stats(ov.socks[1])[0]["requests"] if served else 0
                p = subprocess.run([args.boot, "--socket", ov.socks[node], "--audit", args.audit,
                                    "--timeout", "3000", "--"] + prog, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, timeout=60)
                msgs = p.stderr.count("does not answer")
                if p.returncode != 0 or p.stdout.strip() != "ok 2":
                    fail("kill: a program on node %d: rc %d %r %r" % (node, p.returncode, p.stdout, p.stderr))
                if served and (msgs or stats(ov.socks[1])[0]["requests"] <= before):
                    fail("kill: node 1's program was not served: %r" % p.stderr)
                if not served and msgs != 1:
                    fail("kill: node 3's program printed %d fallback messages: %r" % (msgs, p.stderr))
            print("kill: a program on node 3 ran from the file system with one message; "
                  "one on node 1 was served")
        print("kill: rank 2 killed; rank 3 stopped with a message (its clients fall back) "
              "within %.1f s; ranks 0, 1 serve on" % took)
    finally:
        ov.stop()


def case_preload(args):
    """the front end's PRELOAD (what sheaf-launch --preload-list sends) puts the
    file in every node's cache, pull mode or not, with one read"""
    ov = Overlay(args, 4, "pull")
    try:
        d, files = make_tree(ov.work)
        key = bytes.fromhex(open(ov.secret).read().strip())
        s, ok, _ = handshake(ov.ports[0], key, 0, 0xffffffff)
        for f in files:
            p = f.encode()
            s.sendall(frame(14, struct.pack("<II", 5, len(p)) + p))
            _, typ, ln = struct.unpack("<III", recv_exact(s, 12))
            recv_exact(s, ln)
            if typ != 13:
                fail("preload: no ACK for %s" % f)
        deadline = time.time() + 10
        want = [(k, f) for k in range(4) for f in files]
        while time.time() < deadline and not all(ov.has_copy(k, f) for k, f in want):
            time.sleep(0.05)
        for k, f in want:
            if not ov.has_copy(k, f) or not same_bytes(ov.caches[k] + "/f" + f, f):
                fail("preload: node %d lacks %s" % (k, f))
        if ov.total("reads") != len(files) or ov.total("listings") != 1:
            fail("preload: reads %d listings %d" % (ov.total("reads"), ov.total("listings")))
        before = [stats(x)[0]["net_gets"] for x in ov.socks]
        for k in range(4):
            r = ask(ov.socks[k], OP_LOOKUP, files[2])
            if not r or r[0] != 0:
                fail("preload: node %d does not serve the preloaded file" % k)
        if [stats(x)[0]["net_gets"] for x in ov.socks] != before:
            fail("preload: a preloaded file was asked for over the network again")
        s.close()
        print("preload: %d files in all 4 caches before any client asked; %d reads, 1 listing"
              % (len(files), len(files)))
    finally:
        ov.stop()


def fnv(path):
    h = 1469598103934665603
    for ch in path.encode():
        h = ((h ^ ch) * 1099511628211) & 0xffffffffffffffff
    return h


def case_roots2(args):
    """a forest: --roots 2, each root owns the paths that hash to it; every
    object is still read once, by its owner"""
    ov = Overlay(args, 4, "pull", roots=2)
    try:
        d, files = make_tree(ov.work, nfiles=6)
        owners = {f: fnv(f) % 2 for f in files}
        if len(set(owners.values())) != 2:
            fail("roots2: the test files all hash to one root (%r)" % owners)
        for node in (3, 2, 1, 0, 3):
            for f in files:
                r = ask(ov.socks[node], OP_LOOKUP, f)
                if not r or r[0] != 0 or not same_bytes(r[1], f):
                    fail("roots2: node %d, %s: %r\n%s" % (node, f, r, ov.stderr(node)))
        reads = [stats(x)[0]["reads"] for x in ov.socks]
        want = [sum(1 for f in files if owners[f] == k) for k in range(4)]
        if reads != want:
            fail("roots2: reads per server %r, expected %r (each file by its owning root)" % (reads, want))
        if ov.total("listings") != 1 or stats(ov.socks[fnv(d) % 2])[0]["listings"] != 1:
            fail("roots2: the listing was not read once by its owner")
        print("roots2: 2 trees; reads per server %r = the owners' shares; 1 listing" % reads)
    finally:
        ov.stop()


def read_stats(path):
    out = {}
    for line in open(path):
        k, v = line.split()
        out[k] = int(v)
    return out


def run_launch(cmd, **kw):
    """sheaf-launch, again on new ports when one was taken meanwhile (see free_ports)"""
    for attempt in range(3):
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
        if "Address already in use" not in p.stderr:
            return p
        new = free_ports(2)
        i = cmd.index("--hosts") + 1
        host = cmd[i].split(",")
        cmd[i] = ",".join("%s:%d" % (h.rsplit(":", 1)[0], q) for h, q in zip(host, new))
    return p


def case_launch(args):
    """sheaf-launch --hosts with an rsh-like command that runs the server here
    (the host name is dropped): 2 simulated nodes, the program's clients on
    node 1 (SHEAF_LD_RANK=1), a preload list; then a host whose server
    cannot start: one message, the job runs anyway."""
    work = os.path.join(args.work, "launch")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    rsh = os.path.join(work, "fakersh")
    with open(rsh, "w") as f:
        f.write('#!/bin/sh\n[ "$1" = badhost ] && { echo "fakersh: $1: no route" >&2; exit 1; }\n'
                'shift\nexec "$@"\n')
    os.chmod(rsh, 0o755)
    d, files = make_tree(work)
    plist = os.path.join(work, "preload.txt")
    with open(plist, "w") as f:
        f.write(files[1] + "\n")
    prog = "import json, decimal; print('ok', json.dumps([1]))"
    for mode in ("pull", "push"):
        p0, p1 = free_ports(2)
        st = os.path.join(work, "stats." + mode)
        env = dict(os.environ, SHEAF_LD_RANK="1")
        cmd = [args.launch, "--hosts", "127.0.0.1:%d,127.0.0.1:%d" % (p0, p1), "--rsh", rsh,
               "--socket", os.path.join(work, mode + "%r", "sock"), "--overlay", mode,
               "--secret-file", os.path.join(work, "secret." + mode), "--preload-list", plist,
               "--stats-file", st, "--timeout", "5000", "--copy-all", "--", sys.executable, "-c", prog]
        p = run_launch(cmd, env=env, timeout=100)
        if p.returncode != 0 or p.stdout.strip() != "ok [1]":
            fail("launch %s: rc %d out %r err %r" % (mode, p.returncode, p.stdout, p.stderr))
        c = read_stats(st)
        # node 1 served the program without touching the file system itself
        if c["reads"] != 0 or c["listings"] != 0 or c["requests"] == 0 or c["net_objs"] == 0:
            fail("launch %s: node 1's counters %r" % (mode, c))
        if os.path.exists(os.path.join(work, "secret." + mode)):
            fail("launch %s: the secret the launcher created was not removed" % mode)
        if os.path.exists(os.path.join(work, mode + "1", "sock")):
            fail("launch %s: node 1's socket is left behind" % mode)
        print("launch %s: 2 nodes via --rsh, node 1 served %d requests with 0 reads of its own, "
              "%d objects from the overlay" % (mode, c["requests"], c["net_objs"]))
    # default options (issue 26): both "nodes" are this host, whose disk the
    # classification finds node-local: node 1 passes the files through (its
    # clients read their own), nothing comes over the overlay
    p0, p1 = free_ports(2)
    st = os.path.join(work, "stats.default")
    cmd = [args.launch, "--hosts", "127.0.0.1:%d,127.0.0.1:%d" % (p0, p1), "--rsh", rsh,
           "--socket", os.path.join(work, "def%r", "sock"), "--secret-file",
           os.path.join(work, "secret.default"), "--stats-file", st, "--timeout", "5000", "--",
           sys.executable, "-c", prog]
    p = run_launch(cmd, env=dict(os.environ, SHEAF_LD_RANK="1"), timeout=100)
    if p.returncode != 0 or p.stdout.strip() != "ok [1]":
        fail("launch default: rc %d out %r err %r" % (p.returncode, p.stdout, p.stderr))
    c = read_stats(st)
    if c["passthrough"] == 0 or c["net_gets"] != 0 or c["net_objs"] != 0 or c["reads"] != 0:
        fail("launch default: node 1 did not pass its node-local files through: %r" % c)
    print("launch default: one host = node-local disk: node 1 passed %d files through, 0 network "
          "requests, 0 copies" % c["passthrough"])
    # the launcher on a host without a load server of its own (a front end:
    # no server answers at its socket): --stats-file gets the root's counters
    # over the overlay link (it was not written at all)
    p0, p1 = free_ports(2)
    st = os.path.join(work, "stats.fe")
    cmd = [args.launch, "--hosts", "127.0.0.1:%d,127.0.0.1:%d" % (p0, p1), "--rsh", rsh,
           "--socket", os.path.join(work, "fe%r", "sock"), "--overlay", "push",
           "--secret-file", os.path.join(work, "secret.fe"), "--preload-list", plist,
           "--stats-file", st, "--timeout", "5000", "--copy-all", "--", sys.executable, "-c", prog]
    p = run_launch(cmd, env=dict(os.environ, SHEAF_LD_RANK="7"), timeout=100)
    if p.returncode != 0 or p.stdout.strip() != "ok [1]":
        fail("launch fe: rc %d out %r err %r" % (p.returncode, p.stdout, p.stderr))
    if not os.path.exists(st):
        fail("launch fe: no stats file (stderr %r)" % p.stderr)
    c = read_stats(st)
    # the root read the preloaded file (1 read of its bytes) and pushed it to node 1
    if (len(c) != 18 or c.get("server_rank") != 0 or c["reads"] != 1 or
            c["bytes"] != os.path.getsize(files[1]) or c["net_pushed"] < 1):
        fail("launch fe: the root's counters %r (stderr %r)" % (c, p.stderr))
    print("launch fe: no server on the launcher's host: the stats file holds the root's counters "
          "(reads %d, bytes %d, net_pushed %d)" % (c["reads"], c["bytes"], c["net_pushed"]))
    p0, p1 = free_ports(2)
    cmd = [args.launch, "--hosts", "127.0.0.1:%d,badhost:%d" % (p0, p1), "--rsh", rsh,
           "--socket", os.path.join(work, "bad%r", "sock"), "--timeout", "3000",
           "--secret-file", os.path.join(work, "secret.bad"), "--", sys.executable, "-c", prog]
    t0 = time.time()
    p = run_launch(cmd, timeout=100)
    if p.returncode != 0 or p.stdout.strip() != "ok [1]":
        fail("launch with a dead host: rc %d out %r err %r" % (p.returncode, p.stdout, p.stderr))
    if p.stderr.count("did not start") != 1 or "badhost" not in p.stderr:
        fail("launch with a dead host: expected one message naming it, got %r" % p.stderr)
    print("launch: a host whose server cannot start: one message, the job ran (%.1f s)"
          % (time.time() - t0))


def case_mpich(args):
    """sheaf-launch --server-launch mpich: the servers started by one
    `mpiexec -n 2 -ppn 1 -hosts localhost,localhost` (rank from PMI_RANK),
    the program's clients on node 1"""
    if not args.mpiexec:
        print("mpich: no MPICH mpiexec given: skipped")
        sys.exit(77)
    work = os.path.join(args.work, "mpich")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    p0, p1 = free_ports(2)
    st = os.path.join(work, "stats")
    prog = "import json, decimal; print('ok', json.dumps([1]))"
    cmd = [args.launch, "--hosts", "localhost:%d,localhost:%d" % (p0, p1), "--server-launch", "mpich",
           "--starter", args.mpiexec, "--socket", os.path.join(work, "n%r", "sock"),
           "--secret-file", os.path.join(work, "secret"), "--stats-file", st, "--timeout", "10000",
           "--copy-all", "--", sys.executable, "-c", prog]
    p = run_launch(cmd, env=dict(os.environ, SHEAF_LD_RANK="1"), timeout=150)
    if p.returncode != 0 or p.stdout.strip() != "ok [1]":
        fail("mpich: rc %d out %r err %r" % (p.returncode, p.stdout, p.stderr))
    c = read_stats(st)
    if c["reads"] != 0 or c["listings"] != 0 or c["requests"] == 0 or c["net_objs"] == 0:
        fail("mpich: node 1's counters %r\n%s" % (c, p.stderr))
    print("mpich: servers started by mpiexec -ppn 1; node 1 served %d requests, 0 reads of its own"
          % c["requests"])


def case_nosodium(args):
    """a build without libsodium (SHEAF_WITH_SODIUM=OFF): every option of the
    overlay makes sheaf-launch fail at once (status 2) with one message naming
    the option and the missing library, before anything starts; the usage
    lists no overlay option; sheaf-ld-server refuses with the same cause"""
    work = os.path.join(args.work, "nosodium")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    marker = os.path.join(work, "ran")
    for opts in (["--overlay", "pull"], ["--hosts", "127.0.0.1:1,127.0.0.1:2"], ["--rsh", "ssh"],
                 ["--fgfs"], ["--copy-all"]):
        p = subprocess.run([args.launch] + opts + ["--", "touch", marker], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=60)
        lines = p.stderr.strip().splitlines()
        if (p.returncode != 2 or len(lines) != 1 or not lines[0].startswith("sheaf-launch: " + opts[0]) or
                "without libsodium" not in lines[0] or os.path.exists(marker)):
            fail("nosodium %s: rc %d err %r (ran: %s)" % (opts[0], p.returncode, p.stderr,
                                                         os.path.exists(marker)))
    h = subprocess.run([args.launch, "--help"], stdout=subprocess.PIPE, text=True, timeout=60).stdout
    if "--hosts" in h or "--overlay" in h or "without libsodium" not in h:
        fail("nosodium: the usage still lists the overlay: %r" % h)
    secret = os.path.join(work, "secret")
    with open(secret, "w") as f:
        f.write("00" * 32 + "\n")
    os.chmod(secret, 0o600)
    (p0,) = free_ports(1)
    p = subprocess.run([args.server, "--rank", "0", "--hosts", "127.0.0.1:%d" % p0, "--secret", secret,
                        "--socket", os.path.join(work, "sock")], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=60)
    if p.returncode == 0 or "without libsodium" not in p.stderr:
        fail("nosodium: sheaf-ld-server rc %d err %r" % (p.returncode, p.stderr))
    print("nosodium: 4 overlay options refused with one message each (status 2, nothing ran); "
          "the server refuses too")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case")
    ap.add_argument("--server", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--launch")
    ap.add_argument("--boot")
    ap.add_argument("--mpiexec")
    ap.add_argument("--audit")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    cases = {"pull2": lambda: case_pull(args, 2), "pull4": lambda: case_pull(args, 4),
             "push4": lambda: case_push(args), "listing": lambda: case_listing(args),
             "auth": lambda: case_auth(args), "replay": lambda: case_replay(args),
             "garbage": lambda: case_garbage(args), "kill": lambda: case_kill(args),
             "launch": lambda: case_launch(args), "preload": lambda: case_preload(args),
             "roots2": lambda: case_roots2(args), "fgfs": lambda: overlay_fgfs.case_fgfs(args, sys.modules[__name__]),
             "mpich": lambda: case_mpich(args), "nosodium": lambda: case_nosodium(args)}
    if args.case not in cases:
        fail("unknown case " + args.case)
    cases[args.case]()


if __name__ == "__main__":
    main()
