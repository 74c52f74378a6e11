"""The mpi4py side of the MPI tests: run at N ranks (1..4) by ctest through the
build's MPI launcher. usage: mpi_prog.py WORKDIR VECTORS_DIR

Writes numpy arrays into containers (plain, multi-file, collective, key-value,
mapped), reads each back in parallel and checks it; reads the container the C
program c_writer wrote (WORKDIR/c.sion, same N ranks, and mapped); reads the
SIONlib vectors with mapped opens; and checks bad input (closed handles, wrong
types, a rank that disagrees, a rank count that does not match the container):
an exception on every rank, no hang. The written containers are then checked
byte by byte through the C tool by test_mpi_check.py. Exit 0 when all passed."""
import hashlib
import json
import os
import sys

import numpy as np
from mpi4py import MPI

import sheaf
import mpi_patterns as P

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
work, vdir = sys.argv[1], sys.argv[2]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print(f"rank {rank}: FAIL: {what}", flush=True)


def expect_error(fn, cls, what, match=None):
    try:
        fn()
    except cls as exc:
        check(match is None or match in str(exc), f"{what}: message {str(exc)!r} lacks {match!r}")
        return exc
    except Exception as exc:  # noqa: BLE001
        check(False, f"{what}: raised {type(exc).__name__}: {exc}")
        return exc
    check(False, f"{what}: no exception")
    return None


def path(name):
    return os.path.join(work, name + ".sion")


# ---- writing ----------------------------------------------------------------------------
with sheaf.paropen(path("plain"), "w", comm=comm, chunksize=4096, fsblksize=4096) as f:
    check(f.write(P.plain(rank)) == P.plain(rank).nbytes, "plain write")  # numpy, no copy
    f.write(P.tail(rank))  # bytes
    check(f.numfiles == 1 and f.filenumber == 0, "plain numfiles")

nf = min(2, size)
with sheaf.paropen(path("multi"), "w", comm=comm, chunksize=4096, fsblksize=4096, numfiles=nf) as f:
    f.write(memoryview(P.plain(rank)))  # any buffer-protocol object
    f.write(bytearray(P.tail(rank)))
    check(f.numfiles == nf, "multi numfiles")
    check(f.filenumber == min(rank // (size // nf), nf - 1), f"multi filenumber {f.filenumber}")

with sheaf.paropen(path("coll"), "w", comm=comm, chunksize=1024, fsblksize=4096, collective=True,
                   collsize=2) as f:
    for part in P.coll_parts(rank):
        check(f.coll_write(part) == part.nbytes, "coll write")

with sheaf.paropen(path("kv"), "w", comm=comm, chunksize=4096, fsblksize=4096, keyval=True) as f:
    for k, payload in P.kv_records(rank):
        f.write_key(k, payload)

with sheaf.paropen(path("ck"), "w", comm=comm, chunksize=4096, fsblksize=4096, checksum=True,
                   endianness="big") as f:
    f.write(P.plain(rank))
    f.write(P.tail(rank))

# mapped write: 2*size logical tasks, rank r holds tasks r and r+size
mine = [rank, rank + size]
with sheaf.paropen_mapped(path("mapped"), "w", comm=comm, tasks=mine, chunksizes=[4096, 4096],
                          numfiles=1) as m:
    for t in mine:
        m.select(t)
        m.write(np.full(500 + t, t, np.uint16))

# ---- reading back in parallel -------------------------------------------------------------
with sheaf.paropen(path("plain"), "r", comm=comm) as f:
    a = np.empty_like(P.plain(rank))
    check(f.readinto(a) == a.nbytes and np.array_equal(a, P.plain(rank)), "plain readinto")
    check(f.read() == P.tail(rank), "plain tail")
    check(f.read() == b"", "plain at end")
with sheaf.paropen(path("multi"), "r", comm=comm) as f:
    check(f.read() == P.expected("multi", rank), "multi read")
    check(f.numfiles == nf, "multi read numfiles")
with sheaf.paropen(path("ck"), "r", comm=comm) as f:
    check(f.read() == P.expected("ck", rank), "checksum container read")
with sheaf.paropen(path("coll"), "r", comm=comm, collective=True, collsize=2) as f:
    for part in P.coll_parts(rank):
        got = np.empty_like(part)
        check(f.coll_readinto(got) == part.nbytes and np.array_equal(got, part), "coll read")
with sheaf.paropen(path("kv"), "r", comm=comm, keyval=True) as f:
    check(f.keys() == [1, 2, 2**63 + 5], f"kv keys {f.keys()}")
    for k in (1, 2, 2**63 + 5):
        check(f.read_key(k) == P.expected_key(rank, k), f"kv key {k}")
with sheaf.paropen_mapped(path("mapped"), "r", comm=comm) as m:
    got = comm.allgather({t: m.read_task(t) for t in m.tasks})
    alltasks = {t: d for g in got for t, d in g.items()}
    check(sorted(alltasks) == list(range(2 * size)), f"mapped read tasks {sorted(alltasks)}")
    check(all(alltasks[t] == P.expected("mapped", t) for t in alltasks), "mapped read data")
# more ranks' data with fewer readers: the plain container read by a mapped open
with sheaf.paropen_mapped(path("plain"), "r", comm=comm) as m:
    for t in m.tasks:
        check(m.read_task(t) == P.expected("plain", t), f"plain mapped task {t}")

# ---- containers written by C programs ---------------------------------------------------------
with sheaf.paropen(path("c"), "r", comm=comm) as f:
    check(f.read() == P.c_pattern(rank, 3000 + 1000 * rank), "C-written container")
with sheaf.paropen_mapped(path("c"), "r", comm=comm, tasks=[size - 1 - rank]) as m:
    t = size - 1 - rank
    check(m.read_task(t) == P.c_pattern(t, 3000 + 1000 * t), "C-written container, mapped, reversed")
manifest = json.load(open(os.path.join(vdir, "MANIFEST.json")))
for name in ("par4", "multi6", "coll8"):
    vec = manifest["vectors"][name]
    with sheaf.paropen_mapped(os.path.join(vdir, vec["files"][0]), "r", comm=comm) as m:
        for t in m.tasks:
            want = vec["tasks"][t]["sha256"]
            check(hashlib.sha256(m.read_task(t)).hexdigest() == want, f"vector {name} task {t} (mapped)")
        n = sum(comm.allgather(len(m.tasks)))
        check(n == vec["ntasks"], f"vector {name}: {n} tasks distributed")
vec = manifest["vectors"]["keyval3"]
with sheaf.paropen_mapped(os.path.join(vdir, "keyval3.sion"), "r", comm=comm) as m:
    check(sum(comm.allgather(len(m.tasks))) == 3, "keyval3 mapped tasks")

# ---- bad input: an exception on every rank, never a hang ---------------------------------------
if size != 4:
    e = expect_error(lambda: sheaf.paropen(os.path.join(vdir, "par4.sion"), "r", comm=comm), sheaf.SheafError,
                     "rank count mismatch", "par4.sion")
    check(e is not None and "4" in str(e), f"rank count message: {e}")
else:
    with sheaf.paropen(os.path.join(vdir, "par4.sion"), "r", comm=comm) as f:
        check(hashlib.sha256(f.read()).hexdigest() == manifest["vectors"]["par4"]["tasks"][rank]["sha256"],
              "par4 at 4 ranks")
f = sheaf.paropen(path("scratch"), "w", comm=comm, chunksize=4096)
expect_error(lambda: f.write(12345), TypeError, "write(int)")
expect_error(lambda: f.write([1, 2, 3]), TypeError, "write(list)")
expect_error(lambda: f.read(), sheaf.ArgumentError, "read on a write handle", "writing")
f.close()
f.close()  # a second close is a no-op
expect_error(lambda: f.write(b"x"), sheaf.ClosedError, "write after close", "closed")
expect_error(lambda: sheaf.paropen(path("x"), "w", comm=comm, chunksize="big"), TypeError, "chunksize type")
expect_error(lambda: sheaf.paropen(path("x"), "w", comm=comm, chunksize=4096, numfiles=size + 1),
             sheaf.ArgumentError, "numfiles > ranks", "numfiles")
expect_error(lambda: sheaf.paropen(path("x"), "w", comm=comm, chunksize=-1 if rank == 0 else 4096),
             sheaf.SheafError, "one rank disagrees")
expect_error(lambda: sheaf.paropen(path("x"), "a", comm=comm), sheaf.ArgumentError, "mode 'a'")
expect_error(lambda: sheaf.paropen(path("nonexistent"), "r", comm=comm), sheaf.SheafError, "missing file",
             "nonexistent")
garbage = path("garbage")
if rank == 0:
    with open(garbage, "wb") as g:
        g.write(os.urandom(3) + b"\0" * 9000)
comm.Barrier()
expect_error(lambda: sheaf.paropen(garbage, "r", comm=comm), sheaf.SheafError, "corrupt file", "garbage")
expect_error(lambda: sheaf.paropen(path("plain"), "r", comm=object()), TypeError, "comm type")
# everything still works after the failures
with sheaf.paropen(path("plain"), "r", comm=comm) as f:
    check(f.read() == P.expected("plain", rank), "read after failures")

nfail = comm.allreduce(len(failures))
if rank == 0:
    print(f"mpi_prog: {size} ranks, {nfail} failures", flush=True)
sys.exit(1 if nfail else 0)
