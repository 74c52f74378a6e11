#!/usr/bin/env python3
"""test_ldguard.py - the load server against hostile clients and peers (issue 26).

confine: no request of a local client and no message of a peer holding the job
  secret creates, replaces or writes a file outside the server's cache.
  Clients: LOOKUP, STAT, LSTAT, LISTDIR, REALPATH with ".." components that
  climb out of the cache (the original tree still resolves them to real
  directories), relative and "//" paths, symlinks planted in the cache.
  A peer acting as the parent of a server (it accepts the server's dial and
  answers its handshake) broadcasts a FILE whose path climbs out of the cache
  onto an existing file, and a DIR whose names are "." / ".." and whose real
  path climbs out; a peer acting as a child sends GETs of every kind and a
  front end a PRELOAD with such paths. Asserted: every file under the test's
  work directory outside the caches is unchanged (names, sizes, SHA-256), the
  victim file keeps its bytes, the attacked server either refused the message
  (link dropped) or answered from inside its cache, and a server whose parent
  did not misbehave still serves.

stall: 50 silent and 50 slow-loris TCP peers change a local lookup by < 50 ms,
  all are refused by their deadline, the refusal log is rate-limited.

forest: --roots 1, 2, 4 on 4 servers under 8 concurrent clients: every answer
  right and within 5 s, each file read once (LDGUARD_ROUNDS rounds, default 3).

usage: test_ldguard.py CASE --server PATH --work DIR
"""
import argparse
import hashlib
import os
import socket
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_overlay as tov  # noqa: E402
from test_overlay import (Overlay, ask, fail, frame, mac, recv_exact, make_secret,  # noqa: E402
                          free_ports, stats)

OP_LOOKUP, OP_STAT, OP_LSTAT, OP_LISTDIR, OP_REALPATH = 1, 2, 3, 4, 7
K_DIR, K_STAT, K_LSTAT, K_REAL, K_FILE = 1, 2, 3, 4, 5


def snapshot(root, skip):
    """every path below root outside the directories in skip: {path: (kind, size, sha256)}"""
    out = {}
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if os.path.join(d, x) not in skip]
        for n in dirs + files:
            p = os.path.join(d, n)
            if os.path.islink(p):
                out[p] = ("link", os.readlink(p))
            elif os.path.isdir(p):
                out[p] = ("dir",)
            else:
                with open(p, "rb") as f:
                    out[p] = ("file", hashlib.sha256(f.read()).hexdigest())
    return out


def diff(before, after):
    return sorted(set(after.items()) ^ set(before.items()))


def depth(p):
    return len([c for c in p.split("/") if c])


def climb(frm, to, rel):
    """a path that, appended to frm, climbs to `to` (an ancestor of frm) and
    goes on to rel; as an original path the '..' stop at '/', so it names
    '/' + rel there"""
    return "/" + "../" * (depth(frm) - depth(to)) + rel.lstrip("/")


def pack_obj(kind, path, real="", status=0, size=0, mode=0o644, names=(), flags=1):
    p, r = path.encode(), real.encode()
    b = struct.pack("<IIi", kind, flags, status) + struct.pack("<I", len(p)) + p
    b += struct.pack("<I", len(r)) + r + b"\0" * (16 * 8) + struct.pack("<QQ", mode, size)
    b += struct.pack("<I", len(names))
    for t, n in names:
        n = n.encode()
        b += bytes([t]) + struct.pack("<I", len(n)) + n
    return frame(11, b)


def start_server(args, work, rank, hosts, secret, tag):
    node = os.path.join(work, tag)
    os.makedirs(os.path.join(node, "cache"))
    os.makedirs(os.path.join(node, "run"), mode=0o700)
    sock = os.path.join(node, "run", "sock")
    err = open(os.path.join(node, "stderr"), "w+")
    cmd = [args.server, "--rank", str(rank), "--hosts", hosts, "--secret", secret, "--overlay", "push",
           "--socket", sock, "--cache-dir", os.path.join(node, "cache"), "--timeout", "4000",
           "--copy-all"]  # one host: the default classification would pass everything through
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True)
    return p, sock, err, os.path.join(node, "cache")


def stop(p):
    if p.poll() is None:
        p.terminate()
    try:
        p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def as_parent(lsock, key):
    """accept the child's dial and answer its handshake as its parent"""
    lsock.settimeout(10)
    c, _ = lsock.accept()
    c.settimeout(10)
    _, typ, ln = struct.unpack("<III", recv_exact(c, 12))
    body = recv_exact(c, ln)
    tree, rank = struct.unpack_from("<II", body)
    cn = body[8:40]
    pn = os.urandom(32)
    c.sendall(frame(2, pn + mac(key, b"P", tree, rank, cn, pn)))
    _, typ, ln = struct.unpack("<III", recv_exact(c, 12))
    recv_exact(c, ln)
    c.sendall(frame(4, b""))
    return c


def child_under_hostile_parent(args, work, secret, key, tag, attack):
    """a server of rank 1 whose parent (rank 0) is this test; attack(conn, cache) sends the frames"""
    port = free_ports(1)[0]
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", port))
    ls.listen(4)
    hosts = "127.0.0.1:%d,127.0.0.1:%d" % (port, free_ports(1)[0])
    p, sock, err, cachebase = start_server(args, work, 1, hosts, secret, tag)
    try:
        c = as_parent(ls, key)
        line = p.stdout.readline()
        if not line.startswith("sheaf-ld ready 1 "):
            fail("%s: the child did not start: %r" % (tag, line))
        cache = stats(sock)[1]
        attack(c, cache, sock)
        c.close()
        return cache
    finally:
        stop(p)
        ls.close()


def case_confine(args):
    work = os.path.realpath(args.work)
    ov = Overlay(args, 1, "pull")
    src = os.path.join(work, "src", "lib")
    os.makedirs(os.path.join(src, "sub"), exist_ok=True)
    for n in ("liba.so", "libb.so"):
        with open(os.path.join(src, n), "wb") as f:
            f.write(os.urandom(5000))
    victim = os.path.join(work, "victim")
    with open(victim, "wb") as f:
        f.write(b"the original bytes\n")
    outside = os.path.join(work, "outside")
    os.makedirs(outside, exist_ok=True)
    caches = [os.path.realpath(ov.caches[0])]
    skip = set(caches) | {os.path.join(ov.work, "node0", "run")}
    try:
        before = snapshot(work, skip | {os.path.join(ov.work, "node0", "stderr")})
        cache, sock = caches[0], ov.socks[0]
        served = 0
        # 1. a local client: every kind with paths climbing out of d/ and f/
        esc = []
        for sub in ("d", "f"):
            base = cache + "/" + sub
            esc += [src + climb(src + "/" + base, work, src),          # .. beyond / in the original
                    climb(base, work, src),                            # climbs from the cache to work/<src>
                    climb(base, work, src) + "/liba.so",
                    climb(base, "/", victim)]
        bad = ["lib/../x", "../../etc", "//" + src.lstrip("/"), src + "/./liba.so", src + "//liba.so",
               src + "/sub/../liba.so", src + "/"]
        for path in esc + bad:
            for op in (OP_LISTDIR, OP_LOOKUP, OP_STAT, OP_LSTAT, OP_REALPATH):
                r = ask(sock, op, path)
                if r is None:
                    fail("confine: the server died on op %d %r" % (op, path))
                if r[0] == 0 and op in (OP_LISTDIR, OP_LOOKUP) and not r[1].startswith(cache + "/"):
                    fail("confine: op %d %r answered outside the cache: %r" % (op, path, r[1]))
                served += r[0] == 0
        # the plain names still work, from inside the cache
        r = ask(sock, OP_LISTDIR, src)
        if not r or r[0] or sorted(os.listdir(r[1])) != ["liba.so", "libb.so", "sub"]:
            fail("confine: the plain listing broke: %r" % (r,))
        # 2. symlinks planted in the cache: components of f/ and d/ point outside
        other = os.path.join(work, "src2")
        for sub in ("f", "d"):
            top = cache + "/" + sub + other
            os.makedirs(os.path.dirname(top), exist_ok=True)
            os.symlink(outside, top)
        os.makedirs(other, exist_ok=True)
        with open(os.path.join(other, "libc2.so"), "wb") as f:
            f.write(b"x" * 100)
        before[other] = ("dir",)
        with open(os.path.join(other, "libc2.so"), "rb") as f:
            before[os.path.join(other, "libc2.so")] = ("file", hashlib.sha256(f.read()).hexdigest())
        for op in (OP_LOOKUP, OP_LISTDIR):
            for path in (other + "/libc2.so", other):
                r = ask(sock, op, path)
                if r is None:
                    fail("confine: the server died on a planted symlink")
                if r[0] == 0 and not os.path.realpath(r[1]).startswith(cache + "/"):
                    fail("confine: op %d %r answered through a planted symlink: %r" % (op, path, r[1]))
        after = snapshot(work, skip | {os.path.join(ov.work, "node0", "stderr")})
        if diff(before, after):
            fail("confine: a client request changed the tree outside the cache: %r" % diff(before, after)[:6])
        print("confine: %d hostile client requests (%d served from the cache), nothing outside the cache changed"
              % (len(esc + bad) * 5 + 4, served))
        # 3. a peer as a child (rank 1 of 2) and as the front end of the root
    finally:
        ov.stop()
    secret = os.path.join(work, "secret2")
    if os.path.exists(secret):
        os.unlink(secret)
    make_secret(secret)
    key = bytes.fromhex(open(secret).read().strip())
    ports = free_ports(2)
    hosts = "127.0.0.1:%d,127.0.0.1:%d" % tuple(ports)
    shutil_rm(os.path.join(work, "root"))
    p, sock, err, cachebase = start_server(args, work, 0, hosts, secret, "root")
    try:
        if not p.stdout.readline().startswith("sheaf-ld ready 0 "):
            fail("confine: the root did not start")
        rcache = stats(sock)[1]
        skip.add(os.path.join(work, "root"))
        before = snapshot(work, skip)
        base_f = rcache + "/f"
        gets = [(K_FILE, climb(base_f, work, src) + "/liba.so"), (K_FILE, climb(base_f, "/", victim)),
                (K_DIR, climb(rcache + "/d", work, src)), (K_STAT, src + "/../../" + victim),
                (K_LSTAT, climb(base_f, "/", victim)), (K_REAL, climb(base_f, work, src) + "/liba.so")]
        refused = 0
        for kind, path in gets:
            for attempt in range(20):   # the previous link's end may not be seen yet
                s, ok, _ = tov.handshake(ports[0], key, 0, 1)
                if ok:
                    break
                s.close()
                time.sleep(0.1)
            if not ok:
                fail("confine: the child's handshake was refused")
            pb = path.encode()
            s.sendall(frame(10, struct.pack("<II", kind, len(pb)) + pb))
            s.settimeout(10)
            try:
                hdr = s.recv(12)
            except OSError:
                hdr = b""
            refused += not hdr
            if kind == K_FILE and hdr:
                fail("confine: the root served GET FILE %r" % path)
            s.close()
            time.sleep(0.05)
        s, ok, _ = tov.handshake(ports[0], key, 0, 0xffffffff)
        pb = climb(base_f, work, src).encode() + b"/libb.so"
        s.sendall(frame(14, struct.pack("<II", K_FILE, len(pb)) + pb))
        s.settimeout(10)
        try:
            recv_exact(s, 12)
        except (OSError, ConnectionError):
            pass
        s.close()
        r = ask(sock, OP_LOOKUP, src + "/liba.so")
        if not r or r[0] or not r[1].startswith(rcache + "/"):
            fail("confine: the root stopped serving after hostile children: %r" % (r,))
        after = snapshot(work, skip)
        if diff(before, after):
            fail("confine: a child's GET changed the tree outside the cache: %r" % diff(before, after)[:6])
        print("confine: %d hostile GETs of a child (%d refused) and a PRELOAD: nothing outside the cache"
              % (len(gets), refused))
    finally:
        stop(p)
    # 4. a peer as the parent: a FILE broadcast onto the victim, a DIR with '..'
    before = snapshot(work, skip)

    def file_attack(c, cache, sock):
        data = b"the peer's bytes!!\n"
        c.sendall(pack_obj(K_FILE, climb(cache + "/f", "/", victim), size=len(data)))
        c.sendall(frame(12, struct.pack("<II", 0, len(data)) + data))
        time.sleep(0.5)

    def dir_attack(c, cache, sock):
        c.sendall(pack_obj(K_DIR, src, real=climb(cache + "/d", work, "outside"),
                           names=[(8, ".."), (8, "x")]))
        c.sendall(pack_obj(K_DIR, src + "/sub", real=climb(cache + "/d", work, "outside"),
                           names=[(8, "y")]))
        time.sleep(0.3)
        for path in (src, src + "/sub"):
            r = ask(sock, OP_LISTDIR, path, timeout=5)
            if r and r[0] == 0 and not r[1].startswith(cache + "/"):
                fail("confine: a listing from the parent went outside the cache: %r" % (r,))

    for i, attack in enumerate((file_attack, dir_attack)):
        tag = "child%d" % i
        skip.add(os.path.join(work, tag))
        shutil_rm(os.path.join(work, tag))
        child_under_hostile_parent(args, work, secret, key, tag, attack)
    after = snapshot(work, skip)
    if open(victim, "rb").read() != b"the original bytes\n":
        fail("confine: the parent's FILE replaced the victim outside the cache")
    if diff(before, after):
        fail("confine: a parent's broadcast changed the tree outside the cache: %r" % diff(before, after)[:6])
    print("confine: a parent's FILE and DIR broadcasts with '..' changed nothing outside the cache")


def case_stall(args):
    """50 silent TCP peers and 50 slow-loris peers (one byte a second of a HELLO)
    on the root's port change a local client's lookup time by < 50 ms (median
    and 90th percentile, on the root and on node 1, whose misses go to the
    root); every one of them is refused by its deadline (counted) and the
    refusal log stays bounded (rate-limited, with a count of what it left out)"""
    import threading
    ov = Overlay(args, 2, "pull", timeout=3000)
    stopper = threading.Event()
    peers = []
    try:
        src = os.path.join(ov.work, "lib")
        os.makedirs(src)
        names = []
        for i in range(400):
            p = os.path.join(src, "libs%03d.so" % i)
            with open(p, "wb") as f:
                f.write(b"%d" % i)
            names.append(os.path.realpath(p))
        ask(ov.socks[1], OP_LISTDIR, os.path.realpath(src))
        it = iter(names)

        def lookups(k):
            out = []
            for i in range(k):
                node = i % 2
                t = time.monotonic()
                r = ask(ov.socks[node], OP_LOOKUP, next(it), timeout=20)
                out.append(time.monotonic() - t)
                if not r or r[0] != 0:
                    fail("stall: a lookup on node %d failed: %r" % (node, r))
                time.sleep(0.02)
            return sorted(out)

        base = lookups(40)
        hello = frame(1, struct.pack("<II", 0, 1) + os.urandom(32))
        for i in range(100):
            c = socket.create_connection(("127.0.0.1", ov.ports[0]), timeout=5)
            peers.append(c)

        def loris():
            k = 0
            while not stopper.is_set() and k < len(hello):
                for c in peers[50:]:
                    try:
                        c.send(hello[k:k + 1])
                    except OSError:
                        pass
                k += 1
                stopper.wait(1.0)
        th = threading.Thread(target=loris, daemon=True)
        th.start()
        time.sleep(0.2)
        during = lookups(60)          # about 2.5 s with the peers connected
        stopper.set()
        th.join()
        med = lambda v: v[len(v) // 2]
        p90 = lambda v: v[int(len(v) * 0.9)]
        print("stall: lookup median %.1f -> %.1f ms, p90 %.1f -> %.1f ms, max %.1f ms with 100 hostile peers"
              % (1e3 * med(base), 1e3 * med(during), 1e3 * p90(base), 1e3 * p90(during), 1e3 * during[-1]))
        if med(during) - med(base) > 0.05 or p90(during) - p90(base) > 0.05:
            fail("stall: the hostile peers delayed local lookups by more than 50 ms")
        # every hostile peer is refused by its handshake deadline (3 s here)
        end = time.monotonic() + 10
        while time.monotonic() < end and stats(ov.socks[0])[0]["net_refused"] < 100:
            time.sleep(0.2)
        refused = stats(ov.socks[0])[0]["net_refused"]
        if refused != 100:
            fail("stall: %d of 100 hostile peers refused" % refused)
        for c in peers:
            c.close()
        ov.stop()
        log = ov.stderr(0).splitlines()
        lines = [x for x in log if ": refused peer " in x]
        more = [x for x in log if "not logged" in x]
        if len(lines) > 10 or not more:
            fail("stall: refusal log not bounded: %d lines, summary %r" % (len(lines), more))
        print("stall: 100 refusals counted, %d logged, then %r" % (len(lines), more[0]))
    finally:
        stopper.set()
        for c in peers:
            c.close()
        ov.stop()


def case_forest(args):
    """--roots K (K = 1, 2, 4) on 4 servers: 2 client threads per node ask at
    once for 12 files (owned by every tree, in a different order per thread),
    ROUNDS rounds each on a new overlay: every answer is a copy with the
    original's bytes within 5 s (before: the servers of a forest waited on each
    other's replies inside their single loops until the 4 s timeout, then
    stopped), and each file is read once in the whole overlay"""
    import random
    import threading
    rounds = int(os.environ.get("LDGUARD_ROUNDS", "3"))
    for k in (1, 2, 4):
        for rnd in range(rounds):
            ov = Overlay(args, 4, os.environ.get("LDGUARD_MODE", "pull"), roots=k, timeout=4000)
            try:
                src = os.path.join(ov.work, "lib")
                os.makedirs(src)
                files = []
                for i in range(12):
                    p = os.path.join(src, "libf%02d.so" % i)
                    with open(p, "wb") as f:
                        f.write(os.urandom(3000 + 500 * i))
                    files.append(os.path.realpath(p))
                if k > 1 and len({tov.fnv(f) % k for f in files}) != k:
                    fail("forest: the files do not cover all %d trees" % k)
                errs, slow = [], []

                def client(node, seed):
                    order = files[:]
                    random.Random(seed).shuffle(order)
                    for f in order:
                        t = time.monotonic()
                        r = ask(ov.socks[node], OP_LOOKUP, f, timeout=10)
                        dt = time.monotonic() - t
                        if dt > 5:
                            slow.append((node, f, dt))
                        if not r or r[0] != 0 or not tov.same_bytes(r[1], f):
                            errs.append((node, f, r))
                ths = [threading.Thread(target=client, args=(n, 100 * rnd + 10 * n + j))
                       for n in range(4) for j in range(2)]
                t0 = time.monotonic()
                for th in ths:
                    th.start()
                for th in ths:
                    th.join()
                took = time.monotonic() - t0
                if errs or slow:
                    fail("forest: roots %d round %d: %d failed, %d slow answers (%r)\n%s" %
                         (k, rnd, len(errs), len(slow), (errs + slow)[:3], ov.stderr(0) + ov.stderr(1)))
                reads = ov.total("reads")
                if reads != len(files):
                    fail("forest: roots %d: %d reads of %d files" % (k, reads, len(files)))
            finally:
                ov.stop()
        print("forest: --roots %d, %d rounds of 8 concurrent clients x 12 files on 4 servers: all "
              "served with the original bytes (last round %.2f s), each file read once" % (k, rounds, took))


def shutil_rm(p):
    import shutil
    shutil.rmtree(p, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case")
    ap.add_argument("--server", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    shutil_rm(args.work)
    os.makedirs(args.work)
    cases = {"confine": case_confine, "stall": case_stall, "forest": case_forest}
    if args.case not in cases:
        fail("unknown case " + args.case)
    cases[args.case](args)


if __name__ == "__main__":
    main()
