"""The serial writer: a whole container written from one process, no MPI.

``sheaf.open(path, "w", ntasks=4, chunksize=1 << 20)`` returns a
:class:`Writer`; ``write(task, data)`` appends to a task (tasks in any order,
as often as needed: a task that outgrows its chunk gets further blocks), and
:meth:`Writer.close` (or leaving the ``with`` block) writes the metadata. The
result is the same container a SIONlib program's serial ``sion_open`` "w"
makes (file number 1 in its header, as SIONlib's), readable by ``sheaf.open``,
``sioncat``, ``sheaf cat`` and SIONlib's tools.
"""
from __future__ import annotations

import ctypes
import io
import os
import threading
from ctypes import byref, c_int, c_int32, c_int64, c_void_p
from typing import Any, List, Optional, Sequence, Union

import numpy as np

from . import _lib
from .errors import E_ARG, ArgumentError, ArgumentTypeError, ClosedError

PathLike = Union[str, bytes, "os.PathLike[str]"]


def _int(name: str, v: Any) -> int:
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        raise ArgumentTypeError(f"{name} must be an int, not {type(v).__name__}", E_ARG)
    return int(v)


def _per_task(name: str, v: Any, n: int) -> List[int]:
    """An int, or a sequence of n ints (one per task)."""
    if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
        return [int(v)] * n
    if isinstance(v, (str, bytes)) or not hasattr(v, "__len__"):
        raise ArgumentTypeError(f"{name} must be an int or a sequence of {n} ints, not {type(v).__name__}", E_ARG)
    if len(v) != n:
        raise ArgumentError(f"{name} has {len(v)} entries for ntasks={n}", E_ARG)
    return [_int(f"{name}[{i}]", x) for i, x in enumerate(v)]


class Writer:
    """A container opened for writing, all tasks from this process.

    Attributes: ``path``, ``ntasks``, ``chunksizes`` and ``globalranks``
    (tuples, as requested), ``fsblksize`` (the block size used: detected
    when -1 was given), ``bytes_written`` (int64 array, per task, read-only
    copy on access). Not for concurrent use by several threads (writes
    serialize on a lock).
    """

    def __init__(self, path: PathLike, ntasks: Any, chunksize: Any, globalranks: Any = None,
                 fsblksize: Any = -1, keys: str = "") -> None:
        self._sid = -1
        self._lock = threading.RLock()
        bpath = _lib.fspath(path)
        self.path: str = os.fsdecode(bpath)
        n = _int("ntasks", ntasks)
        if n < 1:
            raise ArgumentError(f"{self.path}: ntasks must be at least 1, not {n}", E_ARG, self.path)
        chunks = _per_task("chunksize", chunksize, n)
        bad = [i for i, c in enumerate(chunks) if c <= 0]
        if bad:
            raise ArgumentError(f"{self.path}: chunksize of task {bad[0]} is {chunks[bad[0]]} (must be > 0)", E_ARG,
                                self.path)
        ranks = list(range(n)) if globalranks is None else _per_task("globalranks", globalranks, n)
        fsb = _int("fsblksize", fsblksize)
        L = _lib.lib()
        cs = (c_int64 * n)(*chunks)
        gr = (c_int * n)(*ranks)
        pcs, pgr = ctypes.cast(cs, _lib.P64), ctypes.cast(gr, _lib.PI)
        nt, nf, fs, fp = c_int(n), c_int(1), c_int32(fsb), c_void_p()
        mode = "wb,posix" + ("," + keys if keys else "")
        sid = L.sion_open(bpath, mode.encode(), byref(nt), byref(nf), byref(pcs), byref(fs), byref(pgr), byref(fp))
        if sid < 0:
            _lib.raise_last(f"sion_open: {self.path}: cannot open for writing", self.path)
        self._sid = sid
        self.ntasks = n
        self.chunksizes = tuple(chunks)
        self.globalranks = tuple(ranks)
        self.fsblksize = int(fs.value)
        self.keyval = "keyval" in keys.split(",") or any(k.startswith("keyval=") for k in keys.split(","))
        self._written = [0] * n

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"{self.ntasks} tasks, writing"
        return f"<sheaf.Writer {self.path!r}: {state}>"

    @property
    def closed(self) -> bool:
        """True after :meth:`close`."""
        return self._sid < 0

    @property
    def bytes_written(self) -> np.ndarray:
        """Bytes written to each task so far (a new int64 array)."""
        return np.array(self._written, np.int64)

    def _check(self) -> int:
        if self._sid < 0:
            raise ClosedError(f"{self.path}: the container is closed", E_ARG, self.path)
        return self._sid

    def _task(self, task: Any) -> int:
        t = _int("task", task)
        if t < 0:
            t += self.ntasks
        if not 0 <= t < self.ntasks:
            raise ArgumentError(f"{self.path}: task {int(task)} out of range (the container has {self.ntasks} "
                                f"tasks)", E_ARG, self.path)
        return t

    def _select(self, t: int) -> int:
        sid = self._check()
        if _lib.lib().sion_seek(sid, t, _lib.SION_CURRENT_BLK, _lib.SION_CURRENT_POS) != _lib.SION_SUCCESS:
            _lib.raise_last(f"sion_seek: {self.path}: task {t}: cannot select the task", self.path)
        return sid

    def write(self, task: int, data: Any) -> int:
        """Append the bytes of ``data`` (any C-contiguous buffer: bytes,
        bytearray, memoryview, numpy array) to a task; returns the bytes written."""
        t = self._task(task)
        with _lib.Buffer(data, writable=False) as b, self._lock:
            sid = self._select(t)
            if b.nbytes == 0:
                return 0
            got = _lib.lib().sion_fwrite(b.address, 1, b.nbytes, sid)
            if got != b.nbytes:
                _lib.raise_last(f"sion_fwrite: {self.path}: task {t}: wrote {got} of {b.nbytes} bytes", self.path)
            self._written[t] += int(got)
            return int(got)

    def write_key(self, task: int, key: int, data: Any) -> int:
        """Append one record of ``key`` (0 <= key < 2**64) to a task of a
        key-value container (opened with ``keyval=True``)."""
        t = self._task(task)
        k = _int("key", key)
        if not 0 <= k < 2**64:
            raise ArgumentError(f"key {k} is not a uint64", E_ARG, self.path)
        if not self.keyval:
            raise ArgumentError(f"{self.path}: not a key-value container (open it with keyval=True)", E_ARG,
                                self.path)
        with _lib.Buffer(data, writable=False) as b, self._lock:
            sid = self._select(t)
            got = _lib.lib().sion_fwrite_key(b.address, k, 1, b.nbytes, sid)
            if got != b.nbytes:
                _lib.raise_last(f"sion_fwrite_key: {self.path}: task {t}: key {k}: wrote {got} of {b.nbytes} bytes",
                                self.path)
            self._written[t] += int(got)
            return int(got)

    def task(self, task: int) -> "TaskWriter":
        """A binary-file-like writer of one task (see :class:`TaskWriter`)."""
        self._check()
        return TaskWriter(self, self._task(task))

    def close(self) -> None:
        """Write the metadata and close (idempotent)."""
        with self._lock:
            if self._sid >= 0:
                sid, self._sid = self._sid, -1
                if _lib.lib().sion_close(sid) != _lib.SION_SUCCESS:
                    _lib.raise_last(f"sion_close: {self.path}: the metadata could not be written", self.path)

    def __enter__(self) -> "Writer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


class TaskWriter(io.RawIOBase):
    """One task of a :class:`Writer` as a write-only binary file (append only:
    ``write``, ``tell``; no seek)."""

    def __init__(self, writer: Writer, task: int) -> None:
        super().__init__()
        self._w = writer
        self.task = task

    def __repr__(self) -> str:
        return f"<sheaf.TaskWriter task {self.task} of {self._w.path!r}>"

    def writable(self) -> bool:
        return True

    def readable(self) -> bool:
        return False

    def seekable(self) -> bool:
        return False

    def write(self, b: Any) -> int:
        if self.closed:
            raise ClosedError(f"{self._w.path}: task {self.task}: the writer is closed", E_ARG, self._w.path)
        return self._w.write(self.task, b)

    def tell(self) -> int:
        return int(self._w._written[self.task])


def parse_mode(mode: Any, keys: dict) -> tuple:
    """("r" or "w", the mode keys as a comma-separated string) from open()'s
    mode ("r", "rb", "w", "wb", optionally followed by ",key,key=value"; a
    string of keys alone, e.g. "ansi", reads, as before) and its keyword
    mode keys (keyval=True, endianness="big", ...)."""
    if not isinstance(mode, str):
        raise ArgumentTypeError(f"mode must be a str, not {type(mode).__name__}", E_ARG)
    toks = [t.strip() for t in mode.split(",") if t.strip()]
    direction = "r"
    if toks and toks[0] in ("r", "rb", "br", "w", "wb", "bw"):
        direction = "w" if "w" in toks[0] else "r"
        toks = toks[1:]
    for t in toks:
        if t in ("r", "rb", "br", "w", "wb", "bw"):
            raise ArgumentError(f"mode {mode!r}: 'r' or 'w' goes first, once", E_ARG)
    for k, v in keys.items():
        if v is False or v is None:
            continue
        if not k.replace("_", "").isalnum():
            raise ArgumentError(f"invalid mode key {k!r}", E_ARG)
        toks.append(k if v is True else f"{k}={v}")
    return direction, ",".join(toks)


def create(path: PathLike, keys: str, ntasks: Optional[int], chunksize: Any, globalranks: Optional[Sequence[int]],
           fsblksize: int) -> Writer:
    if ntasks is None or chunksize is None:
        missing = " and ".join(n for n, v in (("ntasks", ntasks), ("chunksize", chunksize)) if v is None)
        raise ArgumentError(f"sheaf.open({os.fsdecode(_lib.fspath(path))!r}, 'w') needs {missing}: "
                            f"sheaf.open(path, 'w', ntasks=number of tasks, chunksize=bytes per task's block "
                            f"(an int, or one per task))", E_ARG)
    return Writer(path, ntasks, chunksize, globalranks, fsblksize, keys)
