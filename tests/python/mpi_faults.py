"""Failures inside the mpi4py callbacks: run at N ranks (2..4) by ctest through
the build's MPI launcher. usage: mpi_faults.py WORKDIR [STRIDE]

For each operation (a write, a read, a coalescing write, a mapped write) and
for n = 1, 1 + STRIDE, ... (STRIDE 1 by default: every point) the test hook of sheaf._callbacks raises at the n-th point
of the callbacks (each callback's start and end, each step of the coalescing
exchange) on rank n % N, until n passes the last point. The kinds of fault
cycle over a Python exception, a MemoryError, an error of an MPI call, a
KeyboardInterrupt and a real SIGINT. Asserted for each run:
* every rank gets an exception: a sheaf.SheafError (CollectiveError) whose
  message names the cause from the failing rank (the injected text), and on
  the failing rank a KeyboardInterrupt for the interrupts (not swallowed);
* no rank hangs: each run is under a watchdog (faulthandler, 60 s) and the
  communicator works after it (a barrier and, at the end, a clean round trip);
* the file left is complete (every task's data as written, or empty when the
  open itself failed, or a prefix of the coalescing parts) or cleanly refused
  (the serial reader raises a SheafError).
Exit 0 when all passed."""
import faulthandler
import os
import signal
import sys

import numpy as np
from mpi4py import MPI

import sheaf
from sheaf import _callbacks

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
work = sys.argv[1]
stride = int(sys.argv[2]) if len(sys.argv) > 2 else 1
failures = []
KINDS = ["exc", "memory", "mpi", "exc", "kbd", "exc", "sigint"]


def check(cond, what):
    if not cond:
        failures.append(what)
        print(f"rank {rank}: FAIL: {what}", flush=True)


class Injected(Exception):
    pass


class Hook:
    """Raises at the n-th hook point on rank `target`."""

    def __init__(self, n, target, kind):
        self.n, self.target, self.kind, self.count, self.where = n, target, kind, 0, None

    def __call__(self, name, point):
        if rank != self.target:
            return
        self.count += 1
        if self.count != self.n:
            return
        self.where = f"{name}/{point}"
        if self.kind == "exc":
            raise Injected(f"injected fault at {self.where}")
        if self.kind == "memory":
            raise MemoryError(f"injected: no memory at {self.where}")
        if self.kind == "mpi":  # a real error of an MPI call (an invalid rank)
            MPI.COMM_SELF.Send([b"", 0, MPI.BYTE], dest=7, tag=1)
        if self.kind == "kbd":
            raise KeyboardInterrupt
        if self.kind == "sigint":
            os.kill(os.getpid(), signal.SIGINT)  # Python raises KeyboardInterrupt at the next bytecode
            for _ in range(1000):
                pass


def data(t, n=3000):
    return ((np.arange(n, dtype=np.int64) * 7 + t * 131) % 256).astype(np.uint8).tobytes()


PARTS = [700, 300]


def coll_part(t, i):
    return ((np.arange(PARTS[i], dtype=np.int64) * 3 + t * 17 + i) % 251).astype(np.uint8)


def path(op):
    return os.path.join(work, f"fault-{op}.sion")


def op_write(p):
    with sheaf.paropen(p, "w", comm=comm, chunksize=4096, fsblksize=4096) as f:
        f.write(data(rank))


def op_read(p):
    with sheaf.paropen(p, "r", comm=comm) as f:
        got = f.read()
    check(got == data(rank), "read: wrong data after a successful read")


def op_coll(p):
    with sheaf.paropen(p, "w", comm=comm, chunksize=1024, fsblksize=4096, collective=True, collsize=2) as f:
        for i in range(len(PARTS)):
            f.coll_write(coll_part(rank, i))


def op_mapped(p):
    with sheaf.paropen_mapped(p, "w", comm=comm, tasks=[rank, rank + size], chunksizes=[4096, 4096]) as m:
        for t in (rank, rank + size):
            m.select(t)
            m.write(data(t, 1000))


def check_file(op, p, fired):
    """On rank 0: the file is complete or cleanly refused."""
    try:
        c = sheaf.open(p)
    except sheaf.SheafError:
        return "refused"
    except Exception as exc:  # noqa: BLE001
        check(False, f"{op}: the serial reader raised {type(exc).__name__}: {exc}")
        return "bad"
    with c:
        n = 2 * size if op == "mapped" else size
        check(c.ntasks == n, f"{op}: {c.ntasks} tasks")
        for t in range(min(c.ntasks, n)):
            got = c.read_task(t)
            if op == "coll":
                whole = b"".join(coll_part(t, i).tobytes() for i in range(len(PARTS)))
                ok = got in (b"", whole[:PARTS[0]], whole)
            else:
                ok = got in (b"", data(t, 1000 if op == "mapped" else 3000))
            check(ok, f"{op}: task {t} holds {len(got)} bytes that are neither complete nor empty (fired {fired})")
    return "complete"


def run(op, fn, n, kind):
    target = n % size
    hook = Hook(n, target, kind)
    p = path(op)
    if op != "read":
        if rank == 0 and os.path.exists(p):
            os.unlink(p)
        comm.Barrier()
    faulthandler.dump_traceback_later(60, exit=True)
    _callbacks.test_hook = hook
    err = None
    try:
        fn(p)
    except BaseException as exc:  # noqa: BLE001 - what we look at
        err = exc
    _callbacks.test_hook = None
    comm.Barrier()  # the communicator still works
    faulthandler.cancel_dump_traceback_later()
    fired = comm.bcast(hook.where, root=target)
    if fired is None:
        check(err is None, f"{op}: an exception without a fault: {err!r}")
        return False
    what = f"{op} n={n} {kind} on rank {target} at {fired}"
    if rank == target and kind in ("kbd", "sigint"):
        check(isinstance(err, KeyboardInterrupt), f"{what}: the interrupt became {err!r}")
    else:
        check(isinstance(err, sheaf.SheafError), f"{what}: got {err!r}, not a SheafError")
        word = {"exc": "Injected", "memory": "MemoryError", "mpi": "Exception", "kbd": "KeyboardInterrupt",
                "sigint": "KeyboardInterrupt"}[kind]
        check(err is not None and word in str(err) and f"rank {target}" in str(err),
              f"{what}: message {str(err)!r} does not name the cause ({word} on rank {target})")
    state = check_file(op, p, fired) if rank == 0 else None
    return comm.bcast(state, root=0)


def main():
    # a good container for the read runs
    op_write(path("read"))
    total = 0
    for op, fn in (("write", op_write), ("read", op_read), ("coll", op_coll), ("mapped", op_mapped)):
        n, runs, states = 1, 0, {}
        while True:
            st = run(op, fn, n, KINDS[n % len(KINDS)])
            if st is False:
                break
            states[st] = states.get(st, 0) + 1
            n += stride
            runs += 1
            if n > 400:
                check(False, f"{op}: more than 400 hook points?")
                break
        total += runs
        if rank == 0:
            print(f"mpi_faults: {op}: {runs} faults injected (of {n - 1} points), files {states}", flush=True)
        check(n > 10, f"{op}: only {n - 1} hook points")
    # coll_write on a file without coalescing is individual I/O: ranks may call it
    # unevenly (no agreement is made, so nothing waits)
    faulthandler.dump_traceback_later(60, exit=True)
    with sheaf.paropen(path("uneven"), "w", comm=comm, chunksize=4096, fsblksize=4096) as f:
        for _ in range(1 + (rank == 0)):
            f.coll_write(coll_part(rank, 0))
    faulthandler.cancel_dump_traceback_later()
    if rank == 0:
        with sheaf.open(path("uneven")) as c:
            check(c.read_task(0) == coll_part(0, 0).tobytes() * 2, "uneven coll_write: task 0")
    # after all that, a clean round trip
    op_write(path("final"))
    op_read(path("final"))
    nfail = comm.allreduce(len(failures))
    if rank == 0:
        print(f"mpi_faults: {size} ranks, {total} runs, {nfail} failures", flush=True)
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
