"""The generic-API callbacks written with mpi4py, and how they fail.

The rule of the library: a failure on one rank of a collective call is a
failure on all ranks, never a hang. A Python callback can fail in ways a C
callback cannot: any exception (a MemoryError building a buffer, a user's
communicator subclass that raises, a KeyboardInterrupt from Ctrl-C) can come
out of any line. So every callback is run by :func:`_guard`:

* every exception is caught and recorded (per thread, see :func:`begin` /
  :func:`take`), never let through into C;
* the callback's exchange over the communicator still happens exactly once:
  each MPI operation goes through ``st.mpi``, which counts the operations
  completed; when an exception came out before an operation was entered (the
  Python work around it failed), the callback is run again from where it
  stopped, with the test hook off and in "drain" mode (the C buffers as they
  are, a failure marker where the protocol carries one), so the other ranks are never left waiting;
* it returns the failure marker of the generic API (1), so that the generic
  layer agrees on the failure (doc/parallel.md, "Errors");
* an exception raised *by MPI itself* (mpi4py's ``MPI.Exception``: the
  operation was entered and MPI returned an error) marks the exchange broken:
  it is not repeated (repeating a collective that may have matched on the
  other ranks would mismatch every later one); the callback returns 1 and
  the generic layer's agreement decides. Nothing here calls ``Abort``.

parallel.py then settles every open and close with one more agreement over
the communicator (:func:`parallel._settle`), which carries the cause (the
exception's type and message) from the failing rank to all ranks.
"""
from __future__ import annotations

import ctypes
import itertools
import threading
from ctypes import POINTER, c_int, c_int64
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from . import _lib

_ITEM = {_lib.SION_INT32: 4, _lib.SION_INT64: 8, _lib.SION_CHAR: 1}
TAG_SPEC, TAG_DATA, TAG_VERDICT, TAG_TRAILER = 7301, 7302, 7303, 7304

# ---- the communicators the library refers to by an opaque handle -------------------
_groups: Dict[int, Any] = {}
_next_handle = itertools.count(1)
_glock = threading.Lock()


def new_group(comm: Any) -> int:
    with _glock:
        h = next(_next_handle)
        _groups[h] = comm
        return h


def drop_group(handle: int) -> None:
    with _glock:
        _groups.pop(handle, None)


def _comm(group: Optional[int]) -> Any:
    if group is None:
        raise KeyError("no communicator group")
    return _groups[group]


def _mem(ptr: Optional[int], nbytes: int) -> Any:
    """A writable buffer over nbytes of C memory (None for a NULL pointer)."""
    if not ptr or nbytes <= 0:
        return None
    return (ctypes.c_char * nbytes).from_address(ptr)


def _mpi() -> Any:
    from mpi4py import MPI  # only here: the caller has a communicator, MPI is up
    return MPI


# ---- what went wrong in this thread's current call ----------------------------------
class Failure:
    """One exception caught in a callback (``remote``: the cause another rank
    reported through the coalescing protocol's verdict)."""

    def __init__(self, callback: str, exc: Optional[BaseException], broken: bool = False,
                 remote: Optional[str] = None) -> None:
        self.callback, self.exc, self.broken, self.remote = callback, exc, broken, remote

    def text(self) -> str:
        if self.remote is not None:
            return self.remote
        what = f"{type(self.exc).__name__}: {self.exc}" if str(self.exc) else type(self.exc).__name__
        return f"the {self.callback} callback raised {what}" + (" (MPI reported the error)" if self.broken else "")


_tls = threading.local()


def begin() -> None:
    """Start recording the failures of one collective C call in this thread."""
    _tls.failures = []
    _tls.first_group = None
    _tls.ncalls = 0


def calls() -> int:
    """How many callbacks ran since :func:`begin` in this thread."""
    return getattr(_tls, "ncalls", 0)


def take() -> List[Failure]:
    """The failures recorded since :func:`begin` (and forget them)."""
    f = getattr(_tls, "failures", None) or []
    _tls.failures = []
    return f


def _record(f: Failure) -> None:
    if getattr(_tls, "failures", None) is None:
        _tls.failures = []
    _tls.failures.append(f)


# The test hook: tests set this to a callable(callback_name, point) that may raise
# (tests/python/mpi_faults.py). point: "before"/"after" the exchange, or a step of
# the coalescing exchange ("spec", "piece", "trailer", "verdict").
test_hook: Optional[Callable[[str, str], None]] = None


_LOST = object()  # the result of an operation that completed, interrupted before it was stored
_COLL_NAMES = ("gather_and_execute", "execute_and_scatter")


class _Step:
    """Progress of one callback's exchange: the results of the MPI operations
    completed so far (a run again skips them and gets their results back),
    whether one is in flight, and drain mode after a failure."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.results: List[Any] = []
        self.pos = 0
        self.inside = False
        self.drain = False
        self.cause: Optional[str] = None  # drain mode: the text of this rank's failure
        self.coll: Optional[Dict[str, Any]] = None  # the collector's verdict so far

    def hook(self, point: str) -> None:
        h = test_hook
        if h is not None and not self.drain:
            h(self.name, point)

    def mpi(self, fn: Callable[..., Any], *a: Any, **k: Any) -> Any:
        """Run one MPI operation unless an earlier run of this callback did."""
        i = self.pos
        self.pos += 1
        if i < len(self.results):
            return self.results[i]
        self.inside = True
        r = fn(*a, **k)
        self.results.append(r)
        self.inside = False
        return r


def _entered_mpi(exc: BaseException) -> bool:
    """Whether an exception that came out while an MPI operation was in flight
    means that MPI was entered: MPI's own error, or a KeyboardInterrupt (Python
    raises it only when the blocking call has returned); anything else comes
    from mpi4py's argument handling, before MPI."""
    try:
        if isinstance(exc, _mpi().Exception):
            return True
    except ImportError:
        pass
    return not isinstance(exc, Exception)


_ATTEMPTS = 4


def _guard(name: str, fn: Callable[..., int], on_error: int = 1) -> Callable[..., int]:
    """Wrap a callback fn(st, *args): never raises into C, always makes its exchange."""
    def wrapped(*args: Any) -> int:
        _tls.ncalls = getattr(_tls, "ncalls", 0) + 1
        st = _Step(name)
        for _ in range(_ATTEMPTS):
            try:
                st.pos, st.inside = 0, False
                st.hook("before")
                rc = fn(st, *args)
                if st.drain:
                    # the exchange is complete, made with the C buffers as they are:
                    # the generic layer goes on in step on every rank, and the
                    # failure recorded here is agreed on after the call
                    # (parallel._settle); the coalescing exchange carries it in
                    # its verdict
                    return rc if name in _COLL_NAMES else 0 if on_error == 1 else rc
                if name not in _COLL_NAMES:  # the coalescing exchange ends with its verdict
                    st.hook("after")
                return rc
            except BaseException as exc:  # noqa: BLE001 - recorded, reported after the C call
                if st.inside:
                    st.inside = False
                    if _entered_mpi(exc):
                        if not isinstance(exc, (KeyboardInterrupt, SystemExit)):
                            # MPI said no: never repeat an operation it may have matched
                            _record(Failure(name, exc, broken=True))
                            return on_error
                        st.results.append(_LOST)  # the blocking call had returned
                f = Failure(name, exc)
                _record(f)
                if not st.drain:
                    st.cause = f.text()
                st.drain = True  # run again: the operations not yet made, with failure markers
        _record(Failure(name, None, broken=True, remote=f"the {name} callback gave up after repeated exceptions"))
        return on_error
    return wrapped


# ---- the callbacks (SIONlib 1.7's signatures, see doc/parallel.md) -----------------
def _cb_create_lcg(st: _Step, local_group: Any, global_group: int, grank: int, gsize: int, lrank: int,
                   lsize: int, filenumber: int, numfiles: int) -> int:
    MPI = _mpi()
    lc = st.mpi(_comm(global_group).Split, filenumber if filenumber >= 0 else MPI.UNDEFINED, lrank)
    if lc is not _LOST:
        local_group[0] = new_group(lc)
        if getattr(_tls, "first_group", None) is None:
            _tls.first_group = local_group[0]
    return 0


def first_local_group() -> Optional[int]:
    """The handle of the first local group a create_local_commgroup made since
    :func:`begin` in this thread: a parallel open's file group (buddy copies
    make theirs after it)."""
    return getattr(_tls, "first_group", None)


def _cb_free_lcg(st: _Step, local_group: int) -> int:
    c = _groups.get(local_group)
    if c is not None and c != _mpi().COMM_NULL:
        st.mpi(c.Free)
    drop_group(local_group)
    return 0


def _cb_barrier(st: _Step, group: int) -> int:
    st.mpi(_comm(group).Barrier)
    return 0


def _cb_bcast(st: _Step, data: int, group: int, datatype: int, nelem: int, root: int) -> int:
    MPI = _mpi()
    n = nelem * _ITEM[datatype]
    buf = _mem(data, n)
    st.mpi(_comm(group).Bcast, [buf, n, MPI.BYTE] if buf is not None else [None, 0, MPI.BYTE], root=root)
    return 0


def _cb_gather(st: _Step, inp: int, out: int, group: int, datatype: int, nelem: int, root: int) -> int:
    MPI = _mpi()
    c = _comm(group)
    n = nelem * _ITEM[datatype]
    recv = [_mem(out, n * c.Get_size()), n, MPI.BYTE] if c.Get_rank() == root else None
    st.mpi(c.Gather, [_mem(inp, n), n, MPI.BYTE], recv, root=root)
    return 0


def _displs(c: Any, counts: int, item: int) -> tuple:
    size = c.Get_size()
    cnt = np.ctypeslib.as_array(ctypes.cast(counts, POINTER(c_int)), shape=(size,)).astype(np.int64) * item
    if (cnt < 0).any() or cnt.sum() > 2**31 - 1:
        raise ValueError("counts out of range")
    displs = np.concatenate([[0], np.cumsum(cnt)[:-1]]).astype(np.int64)
    return [int(x) for x in cnt], [int(x) for x in displs], int(cnt.sum())


def _cb_gatherv(st: _Step, inp: int, out: int, group: int, datatype: int, counts: int, nelem: int,
                root: int) -> int:
    MPI = _mpi()
    c = _comm(group)
    item = _ITEM[datatype]
    recv = None
    if c.Get_rank() == root:
        cnt, displs, total = _displs(c, counts, item)
        recv = [_mem(out, total), (cnt, displs), MPI.BYTE]
    st.mpi(c.Gatherv, [_mem(inp, nelem * item), nelem * item, MPI.BYTE], recv, root=root)
    return 0


def _cb_scatter(st: _Step, inp: int, out: int, group: int, datatype: int, nelem: int, root: int) -> int:
    MPI = _mpi()
    c = _comm(group)
    n = nelem * _ITEM[datatype]
    send = [_mem(inp, n * c.Get_size()), n, MPI.BYTE] if c.Get_rank() == root else None
    st.mpi(c.Scatter, send, [_mem(out, n), n, MPI.BYTE], root=root)
    return 0


def _cb_scatterv(st: _Step, inp: int, out: int, group: int, datatype: int, counts: int, nelem: int,
                 root: int) -> int:
    # SIONlib's order: `in` is each task's destination, `out` the root's array
    MPI = _mpi()
    c = _comm(group)
    item = _ITEM[datatype]
    send = None
    if c.Get_rank() == root:
        cnt, displs, total = _displs(c, counts, item)
        send = [_mem(out, total), (cnt, displs), MPI.BYTE]
    st.mpi(c.Scatterv, send, [_mem(inp, nelem * item), nelem * item, MPI.BYTE], root=root)
    return 0


def _piece(fsblksize: int) -> int:
    p = fsblksize if fsblksize > 0 else 65536
    return min(p, 4 << 20)


_PROC_W = ctypes.CFUNCTYPE(c_int, ctypes.c_void_p, POINTER(c_int64), c_int)


def _coll_exchange(st: _Step, write: bool, data: int, spec: Any, fsblksize: int, group: int, collector: int,
                   first: int, last: int, sid: int, process: int) -> int:
    """Coalescing I/O inside a file's group, as libsheaf_mpi does it, plus
    failure markers: each sender sends its spec (offset, length, status), then
    its data in pieces (write) or receives them (read), then a trailer (status,
    cause); the collector calls `process` per piece, then sends every sender
    the verdict (failed, culprit, cause). In drain mode a task makes the rest
    of its operations (and the I/O) with a failure status."""
    MPI = _mpi()
    c = _comm(group)
    me, size = c.Get_rank(), c.Get_size()
    piece = _piece(fsblksize)
    if first > last or (me != collector and (me < first or me > last)):
        return 0
    if me == collector:
        return _collector(st, write, c, piece, first, min(last, size - 1), sid, process, MPI)
    st.hook("spec")
    st.mpi(c.send, (int(spec[0]), int(spec[1]), 1 if st.drain else 0), dest=collector, tag=TAG_SPEC)
    length, done = int(spec[1]), 0
    while length > 0 and done < length:
        n = min(length - done, piece)
        b = _mem(data + done, n) if data else None
        st.hook("piece")
        if write:
            st.mpi(c.Send, [b, n if b is not None else 0, MPI.BYTE], dest=collector, tag=TAG_DATA)
        else:
            st.mpi(c.Recv, [b, n if b is not None else 0, MPI.BYTE], source=collector, tag=TAG_DATA)
        done += piece
    st.hook("trailer")
    st.mpi(c.send, (1, st.cause) if st.drain else (0, None), dest=collector, tag=TAG_TRAILER)
    st.hook("verdict")
    v = st.mpi(c.recv, source=collector, tag=TAG_VERDICT)
    bad, culprit, cause = v if v is not _LOST else (1, -1, "the verdict was lost (interrupted)")
    if bad and cause and not st.drain:
        _record(Failure(st.name, None, remote=f"local rank {culprit}: {cause}"))
    return int(bad != 0)


def _collector(st: _Step, write: bool, c: Any, piece: int, first: int, last: int, sid: int, process: int,
               MPI: Any) -> int:
    proc = _PROC_W(process)
    if st.coll is None:  # kept across a run again: the verdict so far, the buffer, the I/O done
        buf = bytearray(piece)
        st.coll = {"bad": 0, "culprit": -1, "cause": None, "buf": buf, "io": 0, "ended": False,
                   "addr": ctypes.addressof((ctypes.c_char * piece).from_buffer(buf))}
    v = st.coll
    me = c.Get_rank()
    buf, addr = v["buf"], v["addr"]
    k = [0]

    def fail(culprit: int, cause: Optional[str]) -> None:
        if not v["bad"]:
            v["bad"], v["culprit"], v["cause"] = 1, culprit, cause

    def io(part: Any, what: str) -> None:
        # each piece's I/O once, also in a run again (the data are the senders'
        # own: the group's bytes reach the file even when the call fails)
        k[0] += 1
        if k[0] <= v["io"]:
            return
        v["io"] = k[0]
        if proc(addr, part, sid):
            fail(me, f"the collector's {what} failed (see its message)")
    for s in range(first, last + 1):
        st.hook("spec")
        sp = st.mpi(c.recv, source=s, tag=TAG_SPEC)
        off, length, status = sp if sp is not _LOST else (0, 0, 1)
        if status:
            fail(s, None)
        done = 0
        while length > 0 and done < length:
            n = min(length - done, piece)
            part = (c_int64 * 2)(off + done, n)
            st.hook("piece")
            if write:
                st.mpi(c.Recv, [buf, n, MPI.BYTE], source=s, tag=TAG_DATA)
                io(part, "write")
            else:
                io(part, "read")
                st.mpi(c.Send, [buf, n, MPI.BYTE], dest=s, tag=TAG_DATA)
            done += piece
        st.hook("trailer")
        t = st.mpi(c.recv, source=s, tag=TAG_TRAILER)
        if t is _LOST or t[0]:
            fail(s, None if t is _LOST else t[1])
    if write and not v["ended"]:
        v["ended"] = True
        if proc(None, (c_int64 * 2)(-1, 0), sid):
            fail(me, "the collector's write failed (see its message)")
    if st.drain:
        fail(me, st.cause)
    verdict = (v["bad"], v["culprit"], v["cause"])
    for s in range(first, last + 1):
        st.hook("verdict")
        st.mpi(c.send, verdict, dest=s, tag=TAG_VERDICT)
    return int(v["bad"])


def _cb_gather_exec(st: _Step, indata: int, spec: Any, spec_len: int, fsblksize: int, group: int, collector: int,
                    first: int, last: int, sid: int, process: int) -> int:
    return _coll_exchange(st, True, indata, spec, fsblksize, group, collector, first, last, sid, process)


def _cb_exec_scatter(st: _Step, outdata: int, spec: Any, spec_len: int, fsblksize: int, group: int,
                     collector: int, first: int, last: int, sid: int, process: int) -> int:
    return _coll_exchange(st, False, outdata, spec, fsblksize, group, collector, first, last, sid, process)


def _cb_capability(st: _Step, group: int) -> int:
    return 2  # SION_CAPABILITY_FULL


_CF = ctypes.CFUNCTYPE
_P = ctypes.c_void_p
_COLL = _CF(c_int, _P, POINTER(c_int64), c_int, c_int64, _P, c_int, c_int, c_int, c_int, _P)
# (name, prototype, function, value returned after a failure)
CALLBACKS: List[Tuple[str, Any, Callable[..., int], int]] = [
    ("create_local_commgroup", _CF(c_int, POINTER(_P), _P, c_int, c_int, c_int, c_int, c_int, c_int),
     _cb_create_lcg, 1),
    ("free_local_commgroup", _CF(c_int, _P), _cb_free_lcg, 1),
    ("barrier", _CF(c_int, _P), _cb_barrier, 1),
    ("bcastr", _CF(c_int, _P, _P, c_int, c_int, c_int), _cb_bcast, 1),
    ("gatherr", _CF(c_int, _P, _P, _P, c_int, c_int, c_int), _cb_gather, 1),
    ("gathervr", _CF(c_int, _P, _P, _P, c_int, _P, c_int, c_int), _cb_gatherv, 1),
    ("scatterr", _CF(c_int, _P, _P, _P, c_int, c_int, c_int), _cb_scatter, 1),
    ("scattervr", _CF(c_int, _P, _P, _P, c_int, _P, c_int, c_int), _cb_scatterv, 1),
    ("gather_and_execute", _COLL, _cb_gather_exec, 1),
    ("execute_and_scatter", _COLL, _cb_exec_scatter, 1),
    ("get_capability", _CF(c_int, _P), _cb_capability, 2),  # a failure: FULL, and settled after the call
]


def wrap(name: str, fn: Callable[..., int], on_error: int) -> Callable[..., int]:
    return _guard(name, fn, on_error)
