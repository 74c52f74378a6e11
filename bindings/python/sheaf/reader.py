"""The serial reader: a whole container opened from one process, no MPI.

``sheaf.open(path)`` returns a :class:`Container` with the metadata as Python
objects and numpy arrays, per-task readers that behave like binary files
(:class:`TaskReader`), whole tasks as bytes or numpy arrays (memory-mapped
when a task's data are contiguous in its file), and the key-value records of
key-value containers.
"""
from __future__ import annotations

import ctypes
import io
import os
import threading
from ctypes import byref, c_int, c_int32, c_int64, c_uint64, c_void_p
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional, Union, overload

if TYPE_CHECKING:
    from typing import Literal

    from .writer import Writer

import numpy as np

from . import _lib
from .errors import E_ARG, ArgumentError, ArgumentTypeError, ClosedError, SheafError, SheafIOError

PathLike = Union[str, bytes, "os.PathLike[str]"]


class Container:
    """A container opened for reading (all tasks, all files of a multi-file set).

    Attributes (read-only, set at open):
        path: the name given to :func:`open` (file 0 of a multi-file set).
        ntasks: number of tasks (logical files).
        nfiles: number of physical files of the set (also when a member file
            of a multi-file set is opened alone: then ``files`` has one name
            and ``ntasks`` counts that file's tasks).
        files: names of the physical files opened, in file order.
        fsblksize: file-system block size the container was written with.
        chunksizes: int64 array (ntasks): each task's chunk size (bytes per block).
        globalranks: int64 array (ntasks): the writer's rank of each task.
        blockcount: int64 array (ntasks): blocks each task uses.
        blocksizes: int64 array (maxblocks, ntasks): bytes in each block of each
            task (0 past a task's last block).
        bytes_per_task: int64 array (ntasks): bytes of data of each task.
        mapping: int32 array (ntasks, 2): (physical file, rank in that file)
            of each task.
        keyval: key-value mode: "none" or "inline".
        endianness: declared byte order of the user data, "little" or "big".
        swap_needed: True when that order differs from this machine's.
        format_version: the file format version (5 for SIONlib 1.7).

    Use as a context manager, or call :meth:`close`. Not for concurrent use by
    several threads (one cursor in the library); readers serialize on a lock.
    """

    def __init__(self, path: PathLike, *, mode: str = "") -> None:
        if not isinstance(mode, str):
            raise ArgumentTypeError(f"mode must be a str, not {type(mode).__name__}", E_ARG)
        L = _lib.lib()
        bpath = _lib.fspath(path)
        self.path: str = os.fsdecode(bpath)
        self._lock = threading.RLock()
        self._sid = -1
        ntasks, nfiles, fsblk = c_int(0), c_int(0), c_int32(0)
        fp = c_void_p()
        m = "rb,posix" + ("," + mode if mode else "")
        sid = L.sion_open(bpath, m.encode(), byref(ntasks), byref(nfiles), None, byref(fsblk), None, byref(fp))
        if sid < 0:
            _lib.raise_last(f"sion_open: {self.path}: cannot open", self.path)
        self._sid = sid
        try:
            self._load(ntasks.value, nfiles.value, fsblk.value)
        except BaseException:
            self.close()
            raise

    # ---- metadata -------------------------------------------------------------
    def _load(self, ntasks: int, nfiles: int, fsblksize: int) -> None:
        L, sid = _lib.lib(), self._sid
        self.ntasks = ntasks
        self.nfiles = nfiles
        self.fsblksize = fsblksize
        nt, maxc = c_int(0), c_int(0)
        gskip, sov = c_int64(0), c_int64(0)
        cs, gr, bc, bs = _lib.P64(), _lib.P64(), _lib.P64(), _lib.P64()
        if L.sion_get_locations(sid, byref(nt), byref(maxc), byref(gskip), byref(sov), byref(cs), byref(gr),
                                byref(bc), byref(bs)) != _lib.SION_SUCCESS:
            _lib.raise_last(f"{self.path}: cannot read the block tables", self.path)
        n, mc = nt.value, max(maxc.value, 0)
        if n != ntasks:
            raise SheafError(f"{self.path}: {n} tasks in the block tables, {ntasks} in the header", 0, self.path)

        def arr(p: Any, count: int) -> np.ndarray:
            if count == 0 or not p:
                return np.zeros(count, np.int64)
            return np.ctypeslib.as_array(p, shape=(count,)).copy()

        self.chunksizes = arr(cs, n)
        self.globalranks = arr(gr, n)
        self.blockcount = arr(bc, n)
        sizes = arr(bs, n * mc).reshape(mc, n) if mc else np.zeros((0, n), np.int64)
        used = np.arange(mc)[:, None] < self.blockcount[None, :]
        self.blocksizes = np.where(used & (sizes > 0), sizes, 0).astype(np.int64)
        self.bytes_per_task = self.blocksizes.sum(axis=0).astype(np.int64)
        for a in (self.chunksizes, self.globalranks, self.blockcount, self.blocksizes, self.bytes_per_task):
            a.flags.writeable = False
        msize, mp, nf = c_int(0), ctypes.POINTER(c_int32)(), c_int(0)
        if L.sion_get_mapping(sid, byref(msize), byref(mp), byref(nf)) == _lib.SION_SUCCESS and msize.value > 0 \
                and mp:
            self.mapping = np.ctypeslib.as_array(mp, shape=(msize.value * 2,)).copy().reshape(msize.value, 2)
        else:
            self.mapping = np.stack([np.zeros(n, np.int32), np.arange(n, dtype=np.int32)], axis=1)
        self.mapping.flags.writeable = False
        self.files: List[str] = []
        info = _lib.FileInfo()
        for f in range(max(nfiles, 1)):
            if L.sheaf_get_file_info(sid, f, byref(info)) != _lib.SION_SUCCESS:
                _lib.raise_last(f"{self.path}: no information on physical file {f}", self.path)
            self.files.append(os.fsdecode(info.name))
            if f == 0:
                self.format_version = info.format_version
                self.keyval = _lib.KEYVAL_MODES.get(info.keyval, "unknown")
                nopen = info.nfiles_open
                # a member file opened alone (x.sion.000001) has its own tasks
                # but belongs to a set of info.nfiles files: report the set's
                if info.nfiles > self.nfiles:
                    self.nfiles = int(info.nfiles)
            if f + 1 >= nopen:
                break
        self.endianness = "big" if L.sion_get_file_endianness(sid) == 1 else "little"
        self.swap_needed = bool(L.sion_endianness_swap_needed(sid) == 1)
        self._offsets: Dict[int, List[int]] = {}

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"{self.ntasks} tasks, {self.nfiles} file(s)"
        return f"<sheaf.Container {self.path!r}: {state}>"

    @property
    def closed(self) -> bool:
        """True after :meth:`close`."""
        return self._sid < 0

    def _check(self) -> int:
        if self._sid < 0:
            raise ClosedError(f"{self.path}: the container is closed", E_ARG, self.path)
        return self._sid

    def _task(self, task: Any) -> int:
        if isinstance(task, (bool, np.bool_)) or not isinstance(task, (int, np.integer)):
            raise ArgumentTypeError(f"task must be an int, not {type(task).__name__}", E_ARG, self.path)
        t = int(task)
        if t < 0:
            t += self.ntasks
        if not 0 <= t < self.ntasks:
            raise ArgumentError(f"{self.path}: task {int(task)} out of range (the container has {self.ntasks} "
                                f"tasks)", E_ARG, self.path)
        return t

    def close(self) -> None:
        """Close the container (idempotent). Readers of it stop working."""
        with self._lock:
            if self._sid >= 0:
                sid, self._sid = self._sid, -1
                if _lib.lib().sion_close(sid) != _lib.SION_SUCCESS:
                    _lib.raise_last(f"sion_close: {self.path}: close failed", self.path)

    def __enter__(self) -> "Container":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def __len__(self) -> int:
        return self.ntasks

    # ---- low-level positioning ---------------------------------------------------
    def _seek(self, t: int, block: int, pos: int) -> None:
        if _lib.lib().sion_seek(self._check(), t, block, pos) != _lib.SION_SUCCESS:
            _lib.raise_last(f"sion_seek: {self.path}: task {t}: cannot seek", self.path)

    def block_offsets(self, task: int) -> List[int]:
        """File offsets (in the task's physical file) of the task's blocks."""
        t = self._task(task)
        with self._lock:
            self._check()
            if t not in self._offsets:
                offs = []
                for b in range(int(self.blockcount[t])):
                    self._seek(t, b, 0)
                    offs.append(int(_lib.lib().sion_get_position(self._sid)))
                self._offsets[t] = offs
            return list(self._offsets[t])

    def task_file(self, task: int) -> str:
        """Name of the physical file holding the task's data."""
        t = self._task(task)
        f = int(self.mapping[t, 0]) if len(self.files) > 1 else 0
        return self.files[f] if f < len(self.files) else self.files[0]

    # ---- data ------------------------------------------------------------------------
    def task(self, task: int) -> "TaskReader":
        """A binary-file-like reader of one task's data (see :class:`TaskReader`)."""
        self._check()
        return TaskReader(self, self._task(task))

    def __getitem__(self, task: int) -> "TaskReader":
        return self.task(task)

    def __iter__(self) -> Iterator["TaskReader"]:
        for t in range(self.ntasks):
            yield self.task(t)

    def read_task(self, task: int) -> bytes:
        """All data of one task as bytes (read through the library, checksums verified).

        The bytes are read straight into the returned object (no copy after
        the library's read; see also :meth:`TaskReader.readinto` for a buffer
        of your own)."""
        t = self._task(task)
        return self._read_bytes(t, 0, int(self.bytes_per_task[t]))

    def _read_bytes(self, t: int, pos: int, size: int) -> bytes:
        """At most size bytes of task t from stream offset pos, as bytes, read
        into the object returned (one copy: the library's, from the file)."""
        size = max(min(size, int(self.bytes_per_task[t]) - pos), 0)
        obj, addr = _lib.new_bytes(size)
        if obj is None:
            buf = bytearray(size)
            n = self._read_at(t, pos, buf)
            return bytes(buf) if n == size else bytes(memoryview(buf)[:n])
        n = self._read_addr(t, pos, addr, size)
        if n != size:  # cannot happen (a short read raises); never hand out unfilled bytes
            raise SheafIOError(f"{self.path}: task {t}: read {n} of {size} bytes", 0, self.path)
        return obj  # type: ignore[no-any-return]

    def _read_at(self, t: int, pos: int, buf: Any) -> int:
        """Read into buf from stream offset pos of task t; bytes read."""
        with _lib.Buffer(buf, writable=True) as b:
            return self._read_addr(t, pos, b.address, b.nbytes)

    def _read_addr(self, t: int, pos: int, address: int, nbytes: int) -> int:
        """Read at most nbytes to address from stream offset pos of task t; bytes read."""
        with self._lock:
            sid = self._check()
            avail = int(self.bytes_per_task[t]) - pos
            want = min(nbytes, max(avail, 0))
            if want == 0:
                return 0
            self._seek(t, _lib.SION_ABSOLUTE_POS, pos)
            got = _lib.lib().sion_fread(address, 1, want, sid)
            if got != want:
                _lib.raise_last(f"sion_fread: {self.path}: task {t}: read {got} of {want} bytes", self.path)
            return int(got)

    def task_array(self, task: int, dtype: Any = np.uint8, *, copy: bool = False) -> np.ndarray:
        """The task's data as a 1-D numpy array of ``dtype``.

        ``copy=False`` (default): always a **read-only** array, whatever the
        layout on disk: a memory map of the file when the data lie in one
        block (contiguous; no copy, and no verification of the "checksum"
        mode's CRCs), else an array read through the library and then marked
        read-only. ``copy=True``: always a new **writeable** array read through
        the library. The task's size must be a multiple of the item size.
        Byte order is the file's as written; see :attr:`swap_needed` (use
        ``dtype=np.dtype('>f8')`` etc. when it is set).
        """
        t = self._task(task)
        dt = np.dtype(dtype)
        nbytes = int(self.bytes_per_task[t])
        if dt.itemsize == 0 or nbytes % dt.itemsize:
            raise ArgumentError(f"{self.path}: task {t} has {nbytes} bytes, not a multiple of the item size "
                                f"{dt.itemsize} of {dt}", E_ARG, self.path)
        count = nbytes // dt.itemsize
        self._check()
        out: np.ndarray
        if nbytes == 0:
            out = np.empty(0, dt)
        elif not copy and int(self.blockcount[t]) == 1:
            off = self.block_offsets(t)[0]
            try:
                return np.memmap(self.task_file(t), dtype=dt, mode="r", offset=off, shape=(count,))
            except (OSError, ValueError):
                out = np.empty(count, dt)  # e.g. a file system without mmap: read instead
                self._read_at(t, 0, out)
        else:
            out = np.empty(count, dt)
            self._read_at(t, 0, out)
        if not copy:
            out.flags.writeable = False
        return out

    # ---- key-value -----------------------------------------------------------------------
    def _kv_task(self, task: int) -> int:
        t = self._task(task)
        if self.keyval == "none":
            raise ArgumentError(f"{self.path}: not a key-value container", E_ARG, self.path)
        self._seek(t, _lib.SION_CURRENT_BLK, _lib.SION_CURRENT_POS)
        return t

    def keys(self, task: int) -> List[int]:
        """The distinct keys of a task of a key-value container, in order of first occurrence."""
        L = _lib.lib()
        with self._lock:
            sid = self._check()
            t = self._kv_task(task)
            if L.sion_key_list_iterator_reset(sid) != _lib.SION_SUCCESS:
                _lib.raise_last(f"{self.path}: task {t}: cannot scan the key-value records", self.path)
            out, k = [], c_uint64(0)
            while L.sion_key_list_iterator_next(sid, byref(k)) == _lib.SION_SUCCESS:
                out.append(int(k.value))
            text, code = _lib.last_error("")
            if code and text:
                raise _lib.error_class(code)(text, code, self.path)
            return out

    def iter_keys(self, task: int) -> Iterator[int]:
        """Iterate over the keys of a task (see :meth:`keys`)."""
        return iter(self.keys(task))

    def key_stat(self, task: int, key: int) -> tuple:
        """(number of records, total payload bytes) of ``key`` in a task."""
        k = self._key(key)
        with self._lock:
            sid = self._check()
            t = self._kv_task(task)
            st = _lib.KeyStat()
            if _lib.lib().sion_key_get_stat(sid, k, byref(st)) != _lib.SION_SUCCESS:
                _lib.raise_last(f"{self.path}: task {t}: key {k}: cannot scan the records", self.path)
            return int(st.num_blocks), int(st.total_size)

    def _key(self, key: Any) -> int:
        if isinstance(key, (bool, np.bool_)) or not isinstance(key, (int, np.integer)):
            raise ArgumentTypeError(f"key must be an int, not {type(key).__name__}", E_ARG, self.path)
        if not 0 <= int(key) < 2**64:
            raise ArgumentError(f"key {int(key)} is not a uint64", E_ARG, self.path)
        return int(key)

    def read_key(self, task: int, key: int) -> bytes:
        """All records of ``key`` in a task, concatenated in file order."""
        nrec, total = self.key_stat(task, key)
        k = self._key(key)
        L = _lib.lib()
        if total == 0:
            return b""
        # read into the bytes returned (see _lib.new_bytes), else a bytearray copied once
        obj, addr = _lib.new_bytes(total)
        out: Any = obj
        if obj is None:
            out = bytearray(total)
        with self._lock, _lib.Buffer(out, writable=obj is None) as b:
            sid = self._check()
            t = self._kv_task(task)
            if L.sion_seek_key(sid, k, 0, 0) != _lib.SION_SUCCESS:
                _lib.raise_last(f"{self.path}: task {t}: key {k}: cannot seek", self.path)
            base = addr if obj is not None else b.address
            done = 0
            while done < total:
                got = L.sion_fread_key(base + done, k, 1, total - done, sid)
                if got == 0:
                    _lib.raise_last(f"{self.path}: task {t}: key {k}: read {done} of {total} bytes", self.path)
                done += int(got)
        return obj if obj is not None else bytes(out)  # type: ignore[no-any-return]

    def records(self, task: int) -> Dict[int, bytes]:
        """Every key of a task with all its data: {key: bytes}."""
        return {k: self.read_key(task, k) for k in self.keys(task)}


class TaskReader(io.RawIOBase):
    """One task's data as a read-only binary file.

    ``read``, ``readinto``, ``seek``, ``tell`` work as on a file opened "rb";
    iterating yields the task's blocks as bytes (one item per block, in order),
    not lines. Reads go through the library (checksums are verified).
    """

    def __init__(self, container: Container, task: int) -> None:
        super().__init__()
        self._c = container
        self.task = task
        self.size = int(container.bytes_per_task[task])
        self._pos = 0

    def __repr__(self) -> str:
        return f"<sheaf.TaskReader task {self.task} of {self._c.path!r}, {self.size} bytes>"

    def _check(self) -> None:
        if self.closed:
            raise ClosedError(f"{self._c.path}: task {self.task}: the reader is closed", E_ARG, self._c.path)
        self._c._check()

    def readable(self) -> bool:
        self._check()
        return True

    def seekable(self) -> bool:
        self._check()
        return True

    def writable(self) -> bool:
        return False

    def tell(self) -> int:
        self._check()
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        self._check()
        if isinstance(offset, bool) or not isinstance(offset, (int, np.integer)):
            raise ArgumentTypeError(f"offset must be an int, not {type(offset).__name__}", E_ARG, self._c.path)
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self.size}.get(whence)
        if base is None:
            raise ArgumentError(f"invalid whence {whence!r}", E_ARG, self._c.path)
        pos = base + int(offset)
        if pos < 0:
            raise ArgumentError(f"{self._c.path}: task {self.task}: negative seek position {pos}", E_ARG,
                                self._c.path)
        self._pos = pos
        return pos

    def readinto(self, buffer: Any) -> int:
        self._check()
        n = self._c._read_at(self.task, self._pos, buffer) if self._pos < self.size else 0
        self._pos += n
        return n

    def read(self, size: Optional[int] = -1) -> bytes:
        self._check()
        if size is None or size < 0:
            size = max(self.size - self._pos, 0)
        if self._pos >= self.size:
            return b""
        data = self._c._read_bytes(self.task, self._pos, int(size))
        self._pos += len(data)
        return data

    def readall(self) -> bytes:
        return self.read(-1)

    def blocks(self) -> Iterator[bytes]:
        """The task's blocks, as bytes, in order (independent of the position)."""
        self._check()
        start = 0
        for size in self._c.blocksizes[: int(self._c.blockcount[self.task]), self.task]:
            data = self._c._read_bytes(self.task, start, int(size))
            start += len(data)
            yield data

    def __iter__(self) -> Iterator[bytes]:  # type: ignore[override]
        return self.blocks()

    def array(self, dtype: Any = np.uint8, *, copy: bool = False) -> np.ndarray:
        """The whole task as a numpy array (see :meth:`Container.task_array`)."""
        self._check()
        return self._c.task_array(self.task, dtype, copy=copy)


@overload
def open(path: PathLike, mode: Literal["r", "rb"] = "r", **mode_keys: Any) -> Container: ...  # noqa: A001,E704


@overload
def open(path: PathLike, mode: Literal["w", "wb"], *, ntasks: int, chunksize: Any,  # noqa: A001,E704
         globalranks: Optional[Any] = None, fsblksize: int = -1, **mode_keys: Any) -> "Writer": ...


@overload
def open(path: PathLike, mode: str = "r", *, ntasks: Optional[int] = None, chunksize: Any = None,  # noqa: A001,E704
         globalranks: Optional[Any] = None, fsblksize: int = -1,
         **mode_keys: Any) -> Union[Container, "Writer"]: ...


def open(path: PathLike, mode: str = "r", *, ntasks: Optional[int] = None, chunksize: Any = None,  # noqa: A001
         globalranks: Optional[Any] = None, fsblksize: int = -1, **mode_keys: Any) -> Union[Container, "Writer"]:
    """Open a container serially (no MPI): for reading, or for writing all its tasks.

    ``sheaf.open(path)`` / ``sheaf.open(path, "r")``: a :class:`Container`
    (file 0 of a multi-file set opens the whole set). Raises
    :class:`sheaf.NotFoundError`, :class:`sheaf.FormatError` (not a container,
    corrupt), :class:`sheaf.UnclosedError` (never closed) or another
    :class:`sheaf.SheafError` with the library's message.

    ``sheaf.open(path, "w", ntasks=N, chunksize=C)``: a
    :class:`sheaf.Writer` of N tasks; C is the bytes per block of each task
    (an int, or a sequence of N), ``globalranks`` the rank recorded for each
    task (default 0..N-1), ``fsblksize`` the file-system block size (-1:
    detected). One file (``nfiles`` 1).

    ``mode`` may carry SIONlib mode keys after the direction (``"r,ansi"``,
    ``"w,keyval"``), or they go as keywords: ``keyval=True``,
    ``endianness="big"``, ``checksum=True``, ``ansi=True``.
    """
    from . import writer
    direction, keys = writer.parse_mode(mode, mode_keys)
    if direction == "w":
        return writer.create(path, keys, ntasks, chunksize, globalranks, fsblksize)
    given = [n for n, v in (("ntasks", ntasks), ("chunksize", chunksize), ("globalranks", globalranks)) if v is not None]
    if given or fsblksize != -1:
        raise ArgumentError(f"{', '.join(given) or 'fsblksize'}: only for writing (mode 'w'); a read takes them "
                            f"from the file", E_ARG)
    return Container(path, mode=keys)
