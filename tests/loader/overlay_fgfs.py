"""overlay_fgfs.py - the loader overlay's global-file-status cases for
test_overlay.py (`loader_overlay_fgfs`): the classification the servers make
by default (issue 26), over the overlay, on loopback servers that each get a
host name and a mount table of their own. `h` is test_overlay's module (its
Overlay, requests and checks)."""
import os

MOUNTINFO = """21 1 0:19 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
22 21 0:20 / /proc rw,nosuid shared:2 - proc proc rw
40 21 0:45 / {nfs} rw,relatime shared:20 - nfs4 {server}:/export rw,vers=4.1
"""


def case_fgfs(args, h):
    """default options (issue 26; --fgfs before): the servers classify paths
    with the global file status, made
    once at start-up over the overlay (its reduce/bcast). Each simulated node
    has its own host name and a mount table (SHEAF_FGFS_MOUNTINFO) where / is
    a local disk and <work>/nfs an NFS export: a file below / is node-local
    everywhere -> passed through (the client gets the original path, no
    network request, no copy); a file below nfs from one server for all ->
    unique -> read once by the root and sent down; from two servers (nodes
    0-1: srvA, 2-3: srvB) -> poorly distributed -> read once per group, by
    the group's representative (ranks 0 and 2), and sent to its members."""
    for poorly in (False, True):
        def env_of(r, work, poorly=poorly):
            mi = os.path.join(work, "mountinfo%d" % r)
            with open(mi, "w") as f:
                srv = ("srvA" if r < 2 else "srvB") if poorly else "srvA"
                f.write(MOUNTINFO.format(nfs=os.path.join(work, "nfs"), server=srv))
            return {"SHEAF_FGFS_MOUNTINFO": mi, "SHEAF_FGFS_HOST": "node%d" % r}
        ov = h.Overlay(args, 4, "pull", env_of=env_of, classify=True)  # the default: no option
        try:
            if "not available" in "".join(ov.stderr(r) for r in range(4)):
                h.fail("fgfs: the classification failed: %s" % ov.stderr(0))
            _, local_files = h.make_tree(ov.work, nfiles=2)
            nfs = os.path.join(ov.work, "nfs")
            os.makedirs(nfs)
            shared = os.path.join(nfs, "libshared.so")
            with open(shared, "wb") as f:
                f.write(os.urandom(50000))
            r = h.ask(ov.socks[3], h.OP_LOOKUP, local_files[1])
            c3 = h.stats(ov.socks[3])[0]
            if not r or r[0] != 0 or r[1] != local_files[1] or c3["passthrough"] != 1 or c3["net_gets"]:
                h.fail("fgfs: a node-local file was not passed through: %r %r" % (r, c3))
            for node in (3, 1, 2):
                r = h.ask(ov.socks[node], h.OP_LOOKUP, shared)
                if not r or r[0] != 0 or r[1] == shared or not h.same_bytes(r[1], shared):
                    h.fail("fgfs: node %d, the NFS file: %r" % (node, r))
            reads = [h.stats(x)[0]["reads"] for x in ov.socks]
            # unique: the root reads it; poorly distributed: each group's representative
            # (groups {0,1} and {2,3}: ranks 0 and 2), for the members that ask
            want = [1, 0, 1, 0] if poorly else [1, 0, 0, 0]
            if reads != want:
                h.fail("fgfs: the NFS file was read %r times per server (expected %r)" % (reads, want))
            if poorly and (h.stats(ov.socks[3])[0]["net_gets"] == 0 or
                           h.stats(ov.socks[2])[0]["net_gets"] != 0):
                h.fail("fgfs: node 3 did not get the file from its representative (node 2)")
            print("fgfs (%s): node-local file passed through (original path, no network request); "
                  "NFS file read %s"
                  % ("poorly distributed NFS" if poorly else "unique NFS",
                     "once per group, by its representative (ranks 0 and 2)" if poorly
                     else "once, by the root, for 3 nodes"))
        finally:
            ov.stop()
    # the classification fails (node 2 cannot read its mount table): with default
    # options no node may get another's copy, so each server reads every path
    # itself and asks no one (before issue 26 --fgfs fell back to the root's copy)
    def env_bad(r, work):
        return {"SHEAF_FGFS_MOUNTINFO": os.path.join(work, "no-such-mountinfo")} if r == 2 else {}
    ov = h.Overlay(args, 4, "pull", env_of=env_bad, classify=True)
    try:
        if "reads every path itself" not in ov.stderr(3):
            h.fail("fgfs failed: no message on node 3: %r" % ov.stderr(3))
        _, files = h.make_tree(ov.work, nfiles=1)
        for node in (3, 1):
            r = h.ask(ov.socks[node], h.OP_LOOKUP, files[0])
            if (not r or r[0] != 0 or not r[1].startswith(ov.caches[node]) or
                    not h.same_bytes(r[1], files[0])):
                h.fail("fgfs failed: node %d did not read its own copy: %r" % (node, r))
        c = [h.stats(x)[0] for x in ov.socks]
        if [x["reads"] for x in c] != [0, 1, 0, 1] or any(x["net_gets"] for x in c):
            h.fail("fgfs failed: reads %r net_gets %r (expected each asking node its own read, "
                 "no network request)" % ([x["reads"] for x in c], [x["net_gets"] for x in c]))
        print("fgfs failed (node 2 without a mount table): node 3 said so; nodes 3 and 1 "
              "each read their own copy, no network request")
    finally:
        ov.stop()
