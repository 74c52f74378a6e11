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
import os
import threading
from ctypes import POINTER, byref, c_char_p, c_int, c_int32, c_int64, c_void_p
from typing import Any, Dict, List, Optional, Sequence, Union

import numpy as np

from . import _callbacks as _cb
from . import _lib
from .errors import (E_ARG, E_IO, ArgumentError, ArgumentTypeError, ClosedError, CollectiveError, MPIError,
                     SheafError)

PathLike = Union[str, bytes, "os.PathLike[str]"]

_new_group, _groups = _cb.new_group, _cb._groups
_mpi = _cb._mpi
_glock = threading.Lock()


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
        for name, proto, fn, on_error in _cb.CALLBACKS:
            cfn = proto(_cb.wrap(name, fn, on_error))
            _keep.append(cfn)
            reg = getattr(L, f"sion_generic_register_{name}_cb")
            reg.restype = c_int
            reg.argtypes = [c_int, proto]
            if reg(aid, cfn) != _lib.SION_SUCCESS:
                _lib.raise_last(f"cannot register the {name} callback", None, MPIError)
        _api_id = aid
        return aid


# ---- after every collective C call: one agreement that names the cause ------------
def _derived(text: str) -> bool:
    """A message of the generic layer that only points at another task's."""
    return "(see its message)" in text or "a collective callback failed" in text


def _settle(comm: Any, failed: bool, text: str, code: int, path: str, what: str,
            _all_ok: Optional[List[bool]] = None) -> Optional[BaseException]:
    """Collective over ``comm`` after a C call that ran callbacks: None when the
    call succeeded on every rank and no callback raised; else the exception
    this rank is to raise (every rank gets one). One allreduce; on failure one
    bcast of the cause's text from the rank where it was seen first (a
    callback's exception before a failure of the library, the lowest rank)."""
    fails = _cb.take()
    MPI = _mpi()
    rank, size = comm.Get_rank(), comm.Get_size()
    own = [f for f in fails if f.remote is None]
    # 0: an exception here; 1: a cause another rank reported in the coalescing
    # verdict; 2: the library's own failure; 3: the library points elsewhere; 4: fine
    prio = 0 if own else 1 if fails else 2 if failed and not _derived(text) else 3 if failed else 4
    mine = (own or fails)[0].text() if fails else text
    best = prio * size + rank
    try:
        v = np.array([best, 0 if failed else 1], np.int64)
        comm.Allreduce(MPI.IN_PLACE, [v, 2, MPI.INT64_T], op=MPI.MIN)
        best = int(v[0])
        if _all_ok is not None:
            _all_ok[0] = bool(v[1])
        if best >= 4 * size:
            return None
        culprit = best % size
        cause = comm.bcast(mine if rank == culprit else None, root=culprit)
    except BaseException as exc:  # noqa: BLE001 - the communicator itself failed: what this rank knows
        culprit, cause = rank, f"{mine}; the agreement over the communicator failed too: {exc}"
        fails.append(_cb.Failure("agreement", exc, broken=True))
    for f in fails:  # Ctrl-C is not turned into an error: the rank where it came raises it
        if isinstance(f.exc, (KeyboardInterrupt, SystemExit)):
            return f.exc
    if best // size == 2 and not fails:  # the library failed: its error class and message
        if rank == culprit:
            return _lib.error_class(code)(text, code, path)
        return _lib.error_class(code)(f"{text or path + ': ' + what + ' failed'} (rank {culprit}: {cause})", code,
                                      path)
    if rank == culprit:
        msg = f"{path}: {what} failed on rank {rank}: {cause}"
    else:
        msg = f"{path}: {what} failed on rank {culprit}: {cause}"
    err = CollectiveError(msg, code if failed else E_IO, path, culprit, cause)
    first_exc = next((f.exc for f in fails if f.exc is not None), None)
    if first_exc is not None:
        err.__cause__ = first_exc
    return err



def _opened(h: Any, sid: int, gcomm: Any, handle: int, what: str, closer: Any) -> None:
    """After a parallel open: settle it; on failure anywhere leave nothing open
    (an open that succeeded in the library everywhere is closed collectively)
    and raise on every rank."""
    text, code = _lib.last_error(f"{what}: {h.path}: failed") if sid < 0 else ("", 0)
    all_ok = [False]
    err = _settle(gcomm, sid < 0, text, code, h.path, what, all_ok)
    if err is None:
        h._sid, h._handle, h._gcomm = sid, handle, gcomm
        return
    if sid >= 0 and all_ok[0]:  # the library opened it everywhere, a callback raised on some rank
        _cb.begin()
        closer(sid)
        _cb.take()
    # (opened on some ranks only: possible only after MPI itself failed in the
    # library's last agreement; a collective close could not complete, so the
    # handle is left open on those ranks)
    _cb.drop_group(handle)
    try:
        gcomm.Free()
    except BaseException:  # noqa: BLE001 - the error raised below says what happened
        pass
    raise err


def _closed(h: Any, closer: Any, what: str) -> None:
    """A collective close and its settling: raises on every rank if any failed."""
    sid, h._sid = h._sid, -1
    _cb.begin()
    rc = closer(sid)
    text, code = _lib.last_error(f"{what}: {h.path}: failed") if rc != _lib.SION_SUCCESS else ("", 0)
    err = _settle(h._gcomm, rc != _lib.SION_SUCCESS, text, code, h.path, what)
    _cb.drop_group(h._handle)
    try:
        h._gcomm.Free()
    except BaseException as exc:  # noqa: BLE001
        if err is None:
            err = MPIError(f"{h.path}: freeing the communicator failed: {exc}", E_IO, h.path)
    if err is not None:
        raise err


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
    _gcomm: Any

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
        self._lgroup: Optional[int] = None
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
        _cb.begin()
        sid = _lib.lib().sion_generic_paropen(aid, bpath, m.encode(), byref(cs), byref(fsb), handle, self.rank,
                                              self.size, byref(filenr), byref(nf), byref(lrank), byref(lsize),
                                              byref(fp), None)
        self._lgroup = _cb.first_local_group()
        _opened(self, sid, gcomm, handle, "sion_generic_paropen", _lib.lib().sion_generic_parclose)
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
        _closed(self, _lib.lib().sion_generic_parclose, "sion_generic_parclose")

    def coll_write(self, data: Any) -> int:
        """Collective (coalescing) write: every rank of the file calls it (0 bytes
        is fine). Open with ``collective=True`` (and ``collsize=N``) so that
        collector ranks write their group's data as large pieces."""
        sid = self._check()
        self._writable()
        with _lib.Buffer(data, writable=False) as b:
            _cb.begin()
            got = _lib.lib().sion_coll_fwrite(b.address if b.nbytes else None, 1, b.nbytes, sid)
            self._coll_settle(bool(b.nbytes) and got != b.nbytes, "sion_coll_fwrite")
            return b.nbytes

    def coll_readinto(self, buffer: Any) -> int:
        """Collective (coalescing) read into a writable buffer (every rank calls it)."""
        sid = self._check()
        self._readable()
        with _lib.Buffer(buffer, writable=True) as b:
            _cb.begin()
            got = _lib.lib().sion_coll_fread(b.address if b.nbytes else None, 1, b.nbytes, sid)
            self._coll_settle(bool(b.nbytes) and got != b.nbytes, "sion_coll_fread")
            return int(got)

    def _coll_settle(self, failed: bool, what: str) -> None:
        # when the call ran callbacks (a coalescing file: the same on every rank
        # of the file, all of which make the call), settled over the file's
        # ranks: a failure in one collector group fails it on all of them
        if not _cb.calls():  # not coalesced: the library did individual I/O, nothing collective
            _cb.take()
            if failed:
                self._fail(what)
            return
        text, code = _lib.last_error(f"{what}: {self.path}: failed") if failed else ("", 0)
        lc = _groups.get(self._lgroup) if self._lgroup is not None else None
        if lc is None or lc == _mpi().COMM_NULL:
            lc = self._gcomm  # (not reached: every parallel open has its file's group)
        err = _settle(lc, failed, text, code, self.path, what)
        if err is not None:
            raise err

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
                tarr = (c_int * max(ntasks_in, 1))(*tl)
                keep.append(tarr)
                gr = ctypes.cast(tarr, POINTER(c_int))
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
        _cb.begin()
        sid = _lib.lib().sion_generic_paropen_mapped(aid, bpath, m.encode(), byref(nfiles_c), handle, self.rank,
                                                     self.size, byref(nloc), byref(gr), byref(cs), byref(fnr),
                                                     byref(lrk), byref(fsb), byref(fp))
        _opened(self, sid, gcomm, handle, "sion_generic_paropen_mapped", _lib.lib().sion_generic_parclose_mapped)
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
        _closed(self, _lib.lib().sion_generic_parclose_mapped, "sion_generic_parclose_mapped")


def paropen_mapped(path: PathLike, mode: str = "r", *, comm: Any, tasks: Optional[Sequence[int]] = None,
                   chunksizes: Optional[Sequence[int]] = None, numfiles: int = 1, **mode_keys: Any) -> MappedFile:
    """Mapped open: m logical tasks over the n ranks of ``comm``.

    Reading: ``tasks=None`` lets sheaf distribute all tasks in contiguous
    ranges (see :attr:`MappedFile.tasks`); or give this rank's task list.
    Writing: ``tasks`` (global task numbers 0..m-1, each on one rank) and their
    ``chunksizes``; tasks are placed into ``numfiles`` files in contiguous ranges.
    """
    return MappedFile(path, mode, comm, tasks, chunksizes, numfiles, mode_keys)
