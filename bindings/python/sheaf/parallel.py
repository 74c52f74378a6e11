"""Parallel opens over an mpi4py communicator, through sheaf's generic API.

sheaf's MPI layer (libsheaf_mpi) is itself a set of callbacks on the generic
parallel API of libsheaf (sion_generic.h). This module registers the same
callbacks written with mpi4py's communicator methods, so:

* the package links no MPI library: any mpi4py build (pip's, Debian's
  python3-mpi4py, built against MPICH, Open MPI, ...) works, with the MPI it
  was built for; nothing has to be compiled against the user's MPI;
* the communicator is used through mpi4py's Python methods, no compile-time
  ``cimport``; importing sheaf neither imports mpi4py nor initializes MPI.

The containers are the same as ``sion_paropen_mpi`` writes: the same layout,
the same split of the tasks into physical files for ``numfiles`` (the ranks
split into ``numfiles`` consecutive groups), the same coalescing groups.
Metadata travel over the communicator (a few gathers/scatters per open and
close); the data go straight from your buffer to the file (sion_fwrite).
"""
from __future__ import annotations

import ctypes
import itertools
import os
import threading
from ctypes import POINTER, byref, c_char_p, c_int, c_int32, c_int64, c_void_p
from typing import Any, Dict, List, Optional, Sequence, Union

import numpy as np

from . import _lib
from .errors import E_ARG, ArgumentError, ArgumentTypeError, ClosedError, MPIError, SheafError

PathLike = Union[str, bytes, "os.PathLike[str]"]

_ITEM = {_lib.SION_INT32: 4, _lib.SION_INT64: 8, _lib.SION_CHAR: 1}
TAG_SPEC, TAG_DATA, TAG_VERDICT = 7301, 7302, 7303

# ---- the communicators the library refers to by an opaque handle -------------------
_groups: Dict[int, Any] = {}
_next_handle = itertools.count(1)
_glock = threading.Lock()


def _new_group(comm: Any) -> int:
    with _glock:
        h = next(_next_handle)
        _groups[h] = comm
        return h


def _comm(group: Optional[int]) -> Any:
    return _groups[group]


def _mem(ptr: Optional[int], nbytes: int) -> Any:
    """A writable buffer over nbytes of C memory (None for a NULL pointer)."""
    if not ptr or nbytes <= 0:
        return None
    return (ctypes.c_char * nbytes).from_address(ptr)


def _mpi() -> Any:
    from mpi4py import MPI  # only here: the caller has a communicator, MPI is up
    return MPI


def _safe(fn: Any) -> Any:
    """A callback never lets an exception through into C: it returns 1 (failure)."""
    def wrapped(*args: Any) -> int:
        try:
            return int(fn(*args) or 0)
        except BaseException:  # noqa: BLE001 - the C caller turns 1 into a failure on every task
            return 1
    return wrapped


def _cb_create_lcg(local_group: Any, global_group: int, grank: int, gsize: int, lrank: int, lsize: int,
                   filenumber: int, numfiles: int) -> int:
    MPI = _mpi()
    g = _comm(global_group)
    lc = g.Split(filenumber if filenumber >= 0 else MPI.UNDEFINED, lrank)
    local_group[0] = _new_group(lc)
    return 0


def _cb_free_lcg(local_group: int) -> int:
    with _glock:
        c = _groups.pop(local_group, None)
    if c is not None and c != _mpi().COMM_NULL:
        c.Free()
    return 0


def _cb_barrier(group: int) -> int:
    _comm(group).Barrier()
    return 0


def _cb_bcast(data: int, group: int, datatype: int, nelem: int, root: int) -> int:
    MPI = _mpi()
    n = nelem * _ITEM[datatype]
    buf = _mem(data, n)
    _comm(group).Bcast([buf, n, MPI.BYTE] if buf is not None else [None, 0, MPI.BYTE], root=root)
    return 0


def _cb_gather(inp: int, out: int, group: int, datatype: int, nelem: int, root: int) -> int:
    MPI = _mpi()
    c = _comm(group)
    n = nelem * _ITEM[datatype]
    recv = [_mem(out, n * c.Get_size()), n, MPI.BYTE] if c.Get_rank() == root else None
    c.Gather([_mem(inp, n), n, MPI.BYTE], recv, root=root)
    return 0


def _displs(c: Any, counts: int, item: int) -> tuple:
    size = c.Get_size()
    cnt = np.ctypeslib.as_array(ctypes.cast(counts, POINTER(c_int)), shape=(size,)).astype(np.int64) * item
    if (cnt < 0).any() or cnt.sum() > 2**31 - 1:
        raise ValueError("counts out of range")
    displs = np.concatenate([[0], np.cumsum(cnt)[:-1]]).astype(np.int64)
    return [int(x) for x in cnt], [int(x) for x in displs], int(cnt.sum())


def _cb_gatherv(inp: int, out: int, group: int, datatype: int, counts: int, nelem: int, root: int) -> int:
    MPI = _mpi()
    c = _comm(group)
    item = _ITEM[datatype]
    recv = None
    if c.Get_rank() == root:
        cnt, displs, total = _displs(c, counts, item)
        recv = [_mem(out, total), (cnt, displs), MPI.BYTE]
    c.Gatherv([_mem(inp, nelem * item), nelem * item, MPI.BYTE], recv, root=root)
    return 0


def _cb_scatter(inp: int, out: int, group: int, datatype: int, nelem: int, root: int) -> int:
    MPI = _mpi()
    c = _comm(group)
    n = nelem * _ITEM[datatype]
    send = [_mem(inp, n * c.Get_size()), n, MPI.BYTE] if c.Get_rank() == root else None
    c.Scatter(send, [_mem(out, n), n, MPI.BYTE], root=root)
    return 0


def _cb_scatterv(inp: int, out: int, group: int, datatype: int, counts: int, nelem: int, root: int) -> int:
    # SIONlib's order: `in` is each task's destination, `out` the root's array
    MPI = _mpi()
    c = _comm(group)
    item = _ITEM[datatype]
    send = None
    if c.Get_rank() == root:
        cnt, displs, total = _displs(c, counts, item)
        send = [_mem(out, total), (cnt, displs), MPI.BYTE]
    c.Scatterv(send, [_mem(inp, nelem * item), nelem * item, MPI.BYTE], root=root)
    return 0


def _piece(fsblksize: int) -> int:
    p = fsblksize if fsblksize > 0 else 65536
    return min(p, 4 << 20)


_PROC_W = ctypes.CFUNCTYPE(c_int, c_void_p, POINTER(c_int64), c_int)


def _coll_exchange(write: bool, data: int, spec: Any, fsblksize: int, group: int, collector: int, first: int,
                   last: int, sid: int, process: int) -> int:
    """Coalescing I/O inside a file's group (as libsheaf_mpi does it): each
    sender sends its spec, then its data in pieces (write) or receives them
    (read); the collector calls `process` per piece, then sends the verdict."""
    MPI = _mpi()
    c = _comm(group)
    me, size = c.Get_rank(), c.Get_size()
    piece = _piece(fsblksize)
    proc = _PROC_W(process)
    if first > last:
        return 0
    if me == collector:
        bad = 0
        buf = bytearray(piece)
        addr = ctypes.addressof((ctypes.c_char * piece).from_buffer(buf))
        sp = np.zeros(2, np.int64)
        for s in range(first, min(last, size - 1) + 1):
            c.Recv([sp, 2, MPI.INT64_T], source=s, tag=TAG_SPEC)
            off, length = int(sp[0]), int(sp[1])
            done = 0
            while length > 0 and done < length:
                n = min(length - done, piece)
                part = (c_int64 * 2)(off + done, n)
                if write:
                    c.Recv([buf, n, MPI.BYTE], source=s, tag=TAG_DATA)
                    if proc(addr, part, sid):
                        bad = 1
                else:
                    if proc(addr, part, sid):
                        bad = 1
                    c.Send([buf, n, MPI.BYTE], dest=s, tag=TAG_DATA)
                done += piece
        if write:
            end = (c_int64 * 2)(-1, 0)
            if proc(None, end, sid):
                bad = 1
        verdict = np.array([bad], np.intc)
        for s in range(first, min(last, size - 1) + 1):
            c.Send([verdict, 1, MPI.INT], dest=s, tag=TAG_VERDICT)
        return bad
    if me < first or me > last:
        return 0
    sp = np.array([spec[0], spec[1]], np.int64)
    c.Send([sp, 2, MPI.INT64_T], dest=collector, tag=TAG_SPEC)
    length = int(spec[1])
    done = 0
    while length > 0 and done < length:
        n = min(length - done, piece)
        b = _mem(data + done, n) if data else None
        if write:
            c.Send([b, n if b is not None else 0, MPI.BYTE], dest=collector, tag=TAG_DATA)
        else:
            c.Recv([b, n if b is not None else 0, MPI.BYTE], source=collector, tag=TAG_DATA)
        done += piece
    verdict = np.ones(1, np.intc)
    c.Recv([verdict, 1, MPI.INT], source=collector, tag=TAG_VERDICT)
    return int(verdict[0] != 0)


def _cb_gather_exec(indata: int, spec: Any, spec_len: int, fsblksize: int, group: int, collector: int, first: int,
                    last: int, sid: int, process: int) -> int:
    if spec_len < 2:
        return 1
    return _coll_exchange(True, indata, spec, fsblksize, group, collector, first, last, sid, process)


def _cb_exec_scatter(outdata: int, spec: Any, spec_len: int, fsblksize: int, group: int, collector: int, first: int,
                     last: int, sid: int, process: int) -> int:
    if spec_len < 2:
        return 1
    return _coll_exchange(False, outdata, spec, fsblksize, group, collector, first, last, sid, process)


def _cb_capability(group: int) -> int:
    return 2  # SION_CAPABILITY_FULL


_CF = ctypes.CFUNCTYPE
_CALLBACKS = [
    ("create_local_commgroup", _CF(c_int, POINTER(c_void_p), c_void_p, c_int, c_int, c_int, c_int, c_int, c_int),
     _cb_create_lcg),
    ("free_local_commgroup", _CF(c_int, c_void_p), _cb_free_lcg),
    ("barrier", _CF(c_int, c_void_p), _cb_barrier),
    ("bcastr", _CF(c_int, c_void_p, c_void_p, c_int, c_int, c_int), _cb_bcast),
    ("gatherr", _CF(c_int, c_void_p, c_void_p, c_void_p, c_int, c_int, c_int), _cb_gather),
    ("gathervr", _CF(c_int, c_void_p, c_void_p, c_void_p, c_int, c_void_p, c_int, c_int), _cb_gatherv),
    ("scatterr", _CF(c_int, c_void_p, c_void_p, c_void_p, c_int, c_int, c_int), _cb_scatter),
    ("scattervr", _CF(c_int, c_void_p, c_void_p, c_void_p, c_int, c_void_p, c_int, c_int), _cb_scatterv),
    ("gather_and_execute", _CF(c_int, c_void_p, POINTER(c_int64), c_int, c_int64, c_void_p, c_int, c_int, c_int,
                               c_int, c_void_p), _cb_gather_exec),
    ("execute_and_scatter", _CF(c_int, c_void_p, POINTER(c_int64), c_int, c_int64, c_void_p, c_int, c_int, c_int,
                                c_int, c_void_p), _cb_exec_scatter),
    ("get_capability", _CF(c_int, c_void_p), _cb_capability),
]
_api_id: Optional[int] = None
_keep: List[Any] = []  # the C function objects must outlive every open


def _api() -> int:
    global _api_id
    with _glock:
        if _api_id is not None:
            return _api_id
        L = _lib.lib()
        aid = L.sion_generic_create_api(b"sheaf_python_mpi4py")
        if aid < 0:
            _lib.raise_last("cannot create the generic API object", None, MPIError)
        for name, proto, fn in _CALLBACKS:
            cfn = proto(_safe(fn))
            _keep.append(cfn)
            reg = getattr(L, f"sion_generic_register_{name}_cb")
            reg.restype = c_int
            reg.argtypes = [c_int, proto]
            if reg(aid, cfn) != _lib.SION_SUCCESS:
                _lib.raise_last(f"cannot register the {name} callback", None, MPIError)
        _api_id = aid
        return aid


# ---- argument checks that every rank agrees on -------------------------------------
def _check_comm(comm: Any) -> Any:
    if not type(comm).__module__.startswith("mpi4py"):
        raise ArgumentTypeError(f"comm must be an mpi4py intracommunicator (MPI.Intracomm), not "
                                f"{type(comm).__name__}", E_ARG)
    try:
        MPI = _mpi()
    except ImportError as exc:
        raise MPIError(f"the parallel calls need mpi4py: {exc}") from None
    if not isinstance(comm, MPI.Intracomm):
        raise ArgumentTypeError(f"comm must be an mpi4py intracommunicator (MPI.Intracomm), not "
                                f"{type(comm).__name__}", E_ARG)
    if comm == MPI.COMM_NULL:
        raise ArgumentError("comm is MPI.COMM_NULL", E_ARG)
    return MPI


def _agree(comm: Any, err: Optional[BaseException], path: str) -> None:
    """Collective: raise on every rank if any rank failed its local checks."""
    MPI = _mpi()
    mine = 1 if err is not None else 0
    if comm.allreduce(mine, op=MPI.SUM):
        if err is not None:
            raise err
        raise MPIError(f"{path}: another rank refused the arguments of the parallel open (see its exception)", E_ARG,
                       path)


def _mode_string(mode: str, keys: Dict[str, Any]) -> str:
    if not isinstance(mode, str):
        raise ArgumentTypeError(f"mode must be a str, not {type(mode).__name__}", E_ARG)
    base = mode.strip()
    if base not in ("r", "rb", "w", "wb"):
        raise ArgumentError(f"mode must be 'r' or 'w' (mode keys go as keyword arguments), not {mode!r}", E_ARG)
    parts = ["wb" if base.startswith("w") else "rb"]
    for k, v in keys.items():
        if v is False or v is None:
            continue
        if not k.replace("_", "").isalnum():
            raise ArgumentError(f"invalid mode key {k!r}", E_ARG)
        parts.append(k if v is True else f"{k}={v}")
    return ",".join(parts)


def _split_by_count(rank: int, size: int, numfiles: int) -> tuple:
    # the same split as sion_paropen_mpi with numFiles > 0
    per = size // numfiles
    f = min(rank // per, numfiles - 1)
    lsize = size - (numfiles - 1) * per if f == numfiles - 1 else per
    return f, rank - f * per, lsize


def _int_arg(name: str, v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise ArgumentTypeError(f"{name} must be an int, not {type(v).__name__}", E_ARG)
    return int(v)


class _ParBase:
    """What both kinds of parallel handle share."""

    _sid: int
    path: str

    def _check(self) -> int:
        if self._sid < 0:
            raise ClosedError(f"{self.path}: the parallel file is closed", E_ARG, self.path)
        return self._sid

    @property
    def closed(self) -> bool:
        return self._sid < 0

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def _fail(self, what: str) -> None:
        _lib.raise_last(f"{what}: {self.path}: failed", self.path)

    def write(self, data: Any) -> int:
        """Write bytes or any C-contiguous buffer (numpy arrays) to this rank's
        current task, without a copy. Returns the number of bytes written."""
        sid = self._check()
        self._writable()
        with _lib.Buffer(data, writable=False) as b:
            if b.nbytes == 0:
                return 0
            if _lib.lib().sion_fwrite(b.address, 1, b.nbytes, sid) != b.nbytes:
                self._fail("sion_fwrite")
            return b.nbytes

    def readinto(self, buffer: Any) -> int:
        """Read into a writable buffer (numpy array, bytearray) from this rank's
        current task; returns the bytes read (fewer at the end of the data)."""
        sid = self._check()
        self._readable()
        with _lib.Buffer(buffer, writable=True) as b:
            if b.nbytes == 0:
                return 0
            got = _lib.lib().sion_fread(b.address, 1, b.nbytes, sid)
            if got == 0 and _lib.lib().sheaf_last_error_code():
                self._fail("sion_fread")
            return int(got)

    def read(self, size: int = -1) -> bytes:
        """Read up to size bytes (all that is left with size < 0)."""
        self._check()
        self._readable()
        if size is None or size < 0:
            size = max(self.bytes_left(), 0)
        buf = bytearray(int(size))
        n = self.readinto(buf)
        return bytes(buf[:n])

    def bytes_left(self) -> int:
        """Bytes not yet read of this rank's current task (read mode)."""
        sid = self._check()
        L = _lib.lib()
        cur_blk, cur_pos, maxc = c_int(0), c_int64(0), c_int(0)
        sizes = _lib.P64()
        if L.sion_get_current_location(sid, byref(cur_blk), byref(cur_pos), byref(maxc), byref(sizes)) != 1:
            self._fail("sion_get_current_location")
        total = sum(int(sizes[i]) for i in range(maxc.value) if sizes[i] > 0)
        return total - int(L.sion_get_bytes_read(sid))

    def write_key(self, key: int, data: Any) -> int:
        """Append one record with ``key`` (key-value mode: ``keyval=True``)."""
        sid = self._check()
        self._writable()
        k = _int_arg("key", key)
        with _lib.Buffer(data, writable=False) as b:
            if b.nbytes == 0:
                return 0
            if _lib.lib().sion_fwrite_key(b.address, k, 1, b.nbytes, sid) != b.nbytes:
                self._fail("sion_fwrite_key")
            return b.nbytes

    def _writable(self) -> None:
        if not self.writing:
            raise ArgumentError(f"{self.path}: opened for reading, not writing", E_ARG, self.path)

    def _readable(self) -> None:
        if self.writing:
            raise ArgumentError(f"{self.path}: opened for writing, not reading", E_ARG, self.path)

    writing: bool = False


class ParFile(_ParBase):
    """A container opened collectively by every rank of a communicator.

    Each rank reads or writes its own task (its rank in ``comm``). Use as a
    context manager: leaving the block closes the container collectively (every
    rank must leave it). Attributes: ``path``, ``rank``, ``size``, ``chunksize``,
    ``fsblksize``, ``numfiles``, ``filenumber``, ``physical_file``, ``writing``.
    """

    def __init__(self, path: PathLike, mode: str, comm: Any, chunksize: int, numfiles: int, fsblksize: int,
                 keys: Dict[str, Any]) -> None:
        self._sid = -1
        MPI = _check_comm(comm)
        self.comm = comm
        self.rank, self.size = comm.Get_rank(), comm.Get_size()
        err: Optional[BaseException] = None
        try:
            bpath = _lib.fspath(path)
            self.path = os.fsdecode(bpath)
            m = _mode_string(mode, keys)
            self.writing = m.startswith("w")
            chunksize = _int_arg("chunksize", chunksize)
            numfiles = _int_arg("numfiles", numfiles)
            fsblksize = _int_arg("fsblksize", fsblksize)
            if self.writing and chunksize < 0:
                raise ArgumentError(f"{self.path}: chunksize must be >= 0 (is {chunksize})", E_ARG, self.path)
            if self.writing and not 1 <= numfiles <= self.size:
                raise ArgumentError(f"{self.path}: numfiles must be 1..{self.size} (the number of ranks), is "
                                    f"{numfiles}", E_ARG, self.path)
            aid = _api()
        except SheafError as exc:
            err = exc
            self.path = getattr(self, "path", str(path))
        _agree(comm, err, self.path)
        # a duplicate, so that sheaf's messages never mix with the application's
        gcomm = comm.Dup()
        handle = _new_group(gcomm)
        cs, fsb = c_int64(chunksize), c_int32(fsblksize)
        if self.writing:
            f, lr, ls = _split_by_count(self.rank, self.size, numfiles)
        else:
            f, lr, ls = 0, 0, 0
        filenr, nf, lrank, lsize = c_int(f), c_int(numfiles), c_int(lr), c_int(ls)
        fp, newname = c_void_p(), c_char_p()
        sid = _lib.lib().sion_generic_paropen(aid, bpath, m.encode(), byref(cs), byref(fsb), handle, self.rank,
                                              self.size, byref(filenr), byref(nf), byref(lrank), byref(lsize),
                                              byref(fp), None)
        if sid < 0:
            text, code = _lib.last_error(f"sion_generic_paropen: {self.path}: failed")
            _groups.pop(handle, None)
            gcomm.Free()
            raise _lib.error_class(code)(text, code, self.path)
        self._sid = sid
        self._handle = handle
        self._gcomm = gcomm
        self.chunksize = int(cs.value)
        self.fsblksize = int(fsb.value)
        self.numfiles = int(nf.value)
        self.filenumber = int(filenr.value)
        self.physical_file = self.path if self.filenumber == 0 else f"{self.path}.{self.filenumber:06d}"

    def __repr__(self) -> str:
        return (f"<sheaf.ParFile {self.path!r} rank {self.rank}/{self.size} "
                f"{'write' if self.writing else 'read'}{' closed' if self.closed else ''}>")

    def close(self) -> None:
        """Close collectively (every rank calls it). Raises on every rank if any failed."""
        if self._sid < 0:
            return
        sid, self._sid = self._sid, -1
        rc = _lib.lib().sion_generic_parclose(sid)
        text, code = _lib.last_error("")
        _groups.pop(self._handle, None)
        self._gcomm.Free()
        if rc != _lib.SION_SUCCESS:
            raise _lib.error_class(code)(text or f"sion_generic_parclose: {self.path}: failed", code, self.path)

    def coll_write(self, data: Any) -> int:
        """Collective (coalescing) write: every rank of the file calls it (0 bytes
        is fine). Open with ``collective=True`` (and ``collsize=N``) so that
        collector ranks write their group's data as large pieces."""
        sid = self._check()
        self._writable()
        with _lib.Buffer(data, writable=False) as b:
            got = _lib.lib().sion_coll_fwrite(b.address if b.nbytes else None, 1, b.nbytes, sid)
            if b.nbytes and got != b.nbytes:
                self._fail("sion_coll_fwrite")
            return b.nbytes

    def coll_readinto(self, buffer: Any) -> int:
        """Collective (coalescing) read into a writable buffer (every rank calls it)."""
        sid = self._check()
        self._readable()
        with _lib.Buffer(buffer, writable=True) as b:
            got = _lib.lib().sion_coll_fread(b.address if b.nbytes else None, 1, b.nbytes, sid)
            if b.nbytes and got != b.nbytes:
                self._fail("sion_coll_fread")
            return int(got)

    def read_key(self, key: int) -> bytes:
        """All data of ``key`` in this rank's task (key-value mode)."""
        sid = self._check()
        self._readable()
        k = _int_arg("key", key)
        L = _lib.lib()
        st = _lib.KeyStat()
        if L.sion_key_get_stat(sid, k, byref(st)) != 1:
            self._fail("sion_key_get_stat")
        out = bytearray(int(st.total_size))
        if not out:
            return b""
        if L.sion_seek_key(sid, k, 0, 0) != 1:
            self._fail("sion_seek_key")
        with _lib.Buffer(out, writable=True) as b:
            done = 0
            while done < len(out):
                got = L.sion_fread_key(b.address + done, k, 1, len(out) - done, sid)
                if got == 0:
                    self._fail("sion_fread_key")
                done += int(got)
        return bytes(out)

    def keys(self) -> List[int]:
        """The distinct keys of this rank's task (key-value mode)."""
        sid = self._check()
        L = _lib.lib()
        if L.sion_key_list_iterator_reset(sid) != 1:
            self._fail("sion_key_list_iterator_reset")
        out, k = [], ctypes.c_uint64(0)
        while L.sion_key_list_iterator_next(sid, byref(k)) == 1:
            out.append(int(k.value))
        return out


def paropen(path: PathLike, mode: str = "r", *, comm: Any, chunksize: int = 0, numfiles: int = 1,
            fsblksize: int = -1, **mode_keys: Any) -> ParFile:
    """Open a container collectively over an mpi4py communicator.

    Args:
        path: the container (file 0 of the set; the others get ``.000001``...).
        mode: "w" to write, "r" to read.
        comm: an mpi4py intracommunicator (every rank calls paropen).
        chunksize: writing: bytes this rank expects to write per block (may
            differ per rank; the file grows by further blocks when exceeded).
        numfiles: writing: number of physical files (ranks split into
            consecutive groups, as ``sion_paropen_mpi``).
        fsblksize: writing: file-system block size, -1 to detect it.
        **mode_keys: mode keys of sion_paropen_mpi, e.g. ``keyval=True``,
            ``collective=True``, ``collsize=4``, ``checksum=True``,
            ``endianness="big"``, ``posix=True``.

    Reading with another number of ranks than wrote fails on every rank (use
    :func:`paropen_mapped`). Errors raise on every rank; nothing is printed.
    """
    return ParFile(path, mode, comm, chunksize, numfiles, fsblksize, mode_keys)


class MappedFile(_ParBase):
    """A mapped open: each rank handles a list of logical tasks (``tasks``).

    Switch between them with :meth:`select`; ``read``/``readinto``/``write``
    work on the selected task. Closed collectively like :class:`ParFile`.
    """

    def __init__(self, path: PathLike, mode: str, comm: Any, tasks: Optional[Sequence[int]],
                 chunksizes: Optional[Sequence[int]], numfiles: int, keys: Dict[str, Any]) -> None:
        self._sid = -1
        _check_comm(comm)
        self.comm = comm
        self.rank, self.size = comm.Get_rank(), comm.Get_size()
        err: Optional[BaseException] = None
        ntasks_in = -1
        gr = POINTER(c_int)()
        cs = _lib.P64()
        fnr, lrk = POINTER(c_int)(), POINTER(c_int)()
        keep: List[Any] = []
        try:
            bpath = _lib.fspath(path)
            self.path = os.fsdecode(bpath)
            m = _mode_string(mode, keys)
            self.writing = m.startswith("w")
            numfiles = _int_arg("numfiles", numfiles)
            if tasks is not None:
                tl = [_int_arg("tasks[i]", t) for t in tasks]
                ntasks_in = len(tl)
                gr = (c_int * max(ntasks_in, 1))(*tl)
                keep.append(gr)
                gr = ctypes.cast(gr, POINTER(c_int))
            if self.writing:
                if tasks is None or chunksizes is None or len(chunksizes) != ntasks_in:
                    raise ArgumentError(f"{self.path}: a mapped write needs tasks and chunksizes of the same length",
                                        E_ARG, self.path)
                arr = (c_int64 * max(ntasks_in, 1))(*[_int_arg("chunksizes[i]", x) for x in chunksizes])
                keep.append(arr)
                cs = ctypes.cast(arr, _lib.P64)
                # logical task t goes to file t * numfiles // N ... decided collectively below
            aid = _api()
        except SheafError as exc:
            err = exc
            self.path = getattr(self, "path", str(path))
        _agree(comm, err, self.path)
        if self.writing:
            MPI = _mpi()
            total = comm.allreduce(ntasks_in, op=MPI.SUM)
            nf = max(1, min(numfiles, total))
            per = -(-total // nf)
            tl = [int(gr[i]) for i in range(ntasks_in)]
            fa = (c_int * max(ntasks_in, 1))(*[t // per for t in tl])
            la = (c_int * max(ntasks_in, 1))(*[t % per for t in tl])
            keep += [fa, la]
            fnr, lrk = ctypes.cast(fa, POINTER(c_int)), ctypes.cast(la, POINTER(c_int))
            numfiles = nf
        gcomm = comm.Dup()
        handle = _new_group(gcomm)
        nloc = c_int(ntasks_in)
        nfiles_c = c_int(numfiles)
        fsb = c_int32(-1)
        fp = c_void_p()
        sid = _lib.lib().sion_generic_paropen_mapped(aid, bpath, m.encode(), byref(nfiles_c), handle, self.rank,
                                                     self.size, byref(nloc), byref(gr), byref(cs), byref(fnr),
                                                     byref(lrk), byref(fsb), byref(fp))
        if sid < 0:
            text, code = _lib.last_error(f"sion_generic_paropen_mapped: {self.path}: failed")
            _groups.pop(handle, None)
            gcomm.Free()
            raise _lib.error_class(code)(text, code, self.path)
        self._sid, self._handle, self._gcomm = sid, handle, gcomm
        n = nloc.value
        self.tasks: List[int] = [int(gr[i]) for i in range(n)]
        self.chunksizes: List[int] = [int(cs[i]) for i in range(n)]
        self.numfiles = int(nfiles_c.value)
        self.fsblksize = int(fsb.value)
        if not self.writing:  # the library allocated these (globalranks only when it distributed)
            for p in ((cs, fnr, lrk) if tasks is not None else (gr, cs, fnr, lrk)):
                if p:
                    _lib.libc_free(p)
        del keep
        self._current = self.tasks[0] if self.tasks else None

    def select(self, task: int) -> None:
        """Make logical task ``task`` (one of :attr:`tasks`) the current one, at its start."""
        sid = self._check()
        t = _int_arg("task", task)
        if t not in self.tasks:
            raise ArgumentError(f"{self.path}: task {t} is not one of this rank's tasks {self.tasks}", E_ARG,
                                self.path)
        if self.writing:
            ok = _lib.lib().sion_seek(sid, t, _lib.SION_CURRENT_BLK, _lib.SION_CURRENT_POS)
        else:
            ok = _lib.lib().sion_seek(sid, t, 0, 0)
        if ok != _lib.SION_SUCCESS:
            self._fail("sion_seek")
        self._current = t

    def read_task(self, task: int) -> bytes:
        """All data of one of this rank's logical tasks."""
        self.select(task)
        return self.read()

    def close(self) -> None:
        """Close collectively (every rank calls it)."""
        if self._sid < 0:
            return
        sid, self._sid = self._sid, -1
        rc = _lib.lib().sion_generic_parclose_mapped(sid)
        text, code = _lib.last_error("")
        _groups.pop(self._handle, None)
        self._gcomm.Free()
        if rc != _lib.SION_SUCCESS:
            raise _lib.error_class(code)(text or f"sion_generic_parclose_mapped: {self.path}: failed", code,
                                         self.path)


def paropen_mapped(path: PathLike, mode: str = "r", *, comm: Any, tasks: Optional[Sequence[int]] = None,
                   chunksizes: Optional[Sequence[int]] = None, numfiles: int = 1, **mode_keys: Any) -> MappedFile:
    """Mapped open: m logical tasks over the n ranks of ``comm``.

    Reading: ``tasks=None`` lets sheaf distribute all tasks in contiguous
    ranges (see :attr:`MappedFile.tasks`); or give this rank's task list.
    Writing: ``tasks`` (global task numbers 0..m-1, each on one rank) and their
    ``chunksizes``; tasks are placed into ``numfiles`` files in contiguous ranges.
    """
    return MappedFile(path, mode, comm, tasks, chunksizes, numfiles, mode_keys)
