"""Loading libsheaf with ctypes and declaring the public C API sheaf uses.

Only the public headers are used (sion.h, sheaf.h, sion_generic.h). The library
is looked up, in order: ``$SHEAF_LIBRARY`` (a path), the ``libsheaf.so*`` that
``pip install`` put beside this file, then the system's (``ld.so`` search path).
Loading it does not touch MPI: libsheaf has none. Error printing to stderr is
switched off at load (``sheaf_set_error_printing(0)``); every failure becomes an
exception carrying ``sheaf_last_error()`` instead.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import glob
import os
import threading
from ctypes import POINTER, c_char_p, c_int, c_int32, c_int64, c_size_t, c_uint64, c_void_p
from typing import Any, Optional

from .errors import E_ARG, ArgumentError, ArgumentTypeError, SheafError, error_class

# sion_const.h
SION_SUCCESS = 1
SION_NOT_SUCCESS = 0
SION_CURRENT_RANK = -101
SION_CURRENT_BLK = -102
SION_CURRENT_POS = -103
SION_ABSOLUTE_POS = -104
SION_END_POS = -105
KEYVAL_MODES = {50: "none", 51: "inline", 52: "meta", 53: "hash", 54: "unknown", 55: "notset"}
SION_INT32, SION_INT64, SION_CHAR = 10, 11, 12


class FileInfo(ctypes.Structure):
    """sheaf_file_info of sheaf.h."""
    _fields_ = [("name", c_char_p), ("prefix", c_char_p), ("format_version", c_int), ("lib_version", c_int),
                ("lib_patch", c_int), ("fsblksize", c_int), ("ntasks", c_int), ("nfiles", c_int),
                ("nfiles_open", c_int), ("filenumber", c_int), ("maxchunks", c_int), ("meta_big", c_int),
                ("data_big", c_int), ("keyval", c_int), ("mapping_size", c_int), ("flag1", c_int64),
                ("flag2", c_int64), ("start_of_varheader", c_int64), ("header_size", c_int64),
                ("data_start", c_int64), ("globalskip", c_int64)]


class KeyStat(ctypes.Structure):
    """sion_key_stat_t of sion_common.h."""
    _fields_ = [("key", c_uint64), ("num_blocks", c_int64), ("total_size", c_int64)]


P64 = POINTER(c_int64)
PP64 = POINTER(P64)
PI = POINTER(c_int)
PPI = POINTER(PI)

# name: (restype, argtypes)
_PROTOS = {
    "sheaf_last_error": (c_char_p, []),
    "sheaf_last_error_code": (c_int, []),
    "sheaf_set_error_printing": (c_int, [c_int]),
    "sheaf_get_file_info": (c_int, [c_int, c_int, POINTER(FileInfo)]),
    "sion_open": (c_int, [c_char_p, c_char_p, PI, PI, PP64, POINTER(c_int32), PPI, POINTER(c_void_p)]),
    "sion_close": (c_int, [c_int]),
    "sion_fwrite": (c_size_t, [c_void_p, c_size_t, c_size_t, c_int]),
    "sion_fread": (c_size_t, [c_void_p, c_size_t, c_size_t, c_int]),
    "sion_seek": (c_int, [c_int, c_int, c_int, c_int64]),
    "sion_feof": (c_int, [c_int]),
    "sion_get_position": (c_int64, [c_int]),
    "sion_get_bytes_read": (c_int64, [c_int]),
    "sion_get_bytes_written": (c_int64, [c_int]),
    "sion_get_locations": (c_int, [c_int, PI, PI, P64, P64, PP64, PP64, PP64, PP64]),
    "sion_get_current_location": (c_int, [c_int, PI, P64, PI, PP64]),
    "sion_get_mapping": (c_int, [c_int, PI, POINTER(POINTER(c_int32)), PI]),
    "sion_get_number_of_files": (c_int, [c_int]),
    "sion_get_filenumber": (c_int, [c_int]),
    "sion_get_file_endianness": (c_int, [c_int]),
    "sion_endianness_swap_needed": (c_int, [c_int]),
    "sion_get_keyval_mode": (c_int, [c_int]),
    "sion_fwrite_key": (c_size_t, [c_void_p, c_uint64, c_size_t, c_size_t, c_int]),
    "sion_fread_key": (c_size_t, [c_void_p, c_uint64, c_size_t, c_size_t, c_int]),
    "sion_seek_key": (c_int, [c_int, c_uint64, c_int, c_int64]),
    "sion_key_list_iterator_reset": (c_int, [c_int]),
    "sion_key_list_iterator_next": (c_int, [c_int, POINTER(c_uint64)]),
    "sion_key_get_stat": (c_int, [c_int, c_uint64, POINTER(KeyStat)]),
    "sion_get_version": (c_int, [PI, PI, PI, PI]),
    # generic parallel API (sion_generic.h): registered with Python callbacks over mpi4py
    "sion_generic_create_api": (c_int, [c_char_p]),
    "sion_generic_paropen": (c_int, [c_int, c_char_p, c_char_p, P64, POINTER(c_int32), c_void_p, c_int, c_int,
                                     PI, PI, PI, PI, POINTER(c_void_p), POINTER(c_char_p)]),
    "sion_generic_parclose": (c_int, [c_int]),
    "sion_generic_paropen_mapped": (c_int, [c_int, c_char_p, c_char_p, PI, c_void_p, c_int, c_int, PI, PPI, PP64,
                                            PPI, PPI, POINTER(c_int32), POINTER(c_void_p)]),
    "sion_generic_parclose_mapped": (c_int, [c_int]),
    "sion_coll_fwrite": (c_size_t, [c_void_p, c_size_t, c_size_t, c_int]),
    "sion_coll_fread": (c_size_t, [c_void_p, c_size_t, c_size_t, c_int]),
}

_lock = threading.Lock()
_lib: Optional[ctypes.CDLL] = None
_libc: Optional[ctypes.CDLL] = None


def _candidates() -> list:
    env = os.environ.get("SHEAF_LIBRARY")
    if env:
        return [env]
    here = os.path.dirname(os.path.abspath(__file__))
    found = sorted(glob.glob(os.path.join(here, "libsheaf.so*")), key=len)
    sysname = ctypes.util.find_library("sheaf")
    return found + ([sysname] if sysname else [])


def lib() -> ctypes.CDLL:
    """The loaded libsheaf (loaded on first use), with its prototypes declared."""
    global _lib
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is not None:
            return _lib
        tried = []
        handle = None
        for cand in _candidates():
            try:
                handle = ctypes.CDLL(cand)
                break
            except OSError as exc:
                tried.append(f"{cand}: {exc}")
        if handle is None:
            raise SheafError("cannot load libsheaf (set SHEAF_LIBRARY to its path, or pip install sheaf): "
                             + ("; ".join(tried) if tried else "not found"))
        for name, (res, args) in _PROTOS.items():
            fn = getattr(handle, name)
            fn.restype = res
            fn.argtypes = args
        handle.sheaf_set_error_printing(0)
        _lib = handle
        return handle


def libc_free(ptr: Any) -> None:
    """free() a malloc'd array the library handed out."""
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None)
        _libc.free.argtypes = [c_void_p]
        _libc.free.restype = None
    _libc.free(ctypes.cast(ptr, c_void_p))


def last_error(default: str) -> tuple:
    """(message, code) of the library's last failure in this thread."""
    L = lib()
    msg = L.sheaf_last_error()
    text = msg.decode("utf-8", "replace") if msg else ""
    return (text or default), L.sheaf_last_error_code()


def raise_last(default: str, filename: Optional[str] = None, cls: Optional[type] = None) -> None:
    """Raise the exception for the library's last failure (never returns)."""
    text, code = last_error(default)
    raise (cls or error_class(code))(text, code, filename)


def fspath(path: Any) -> bytes:
    """A path (str, bytes, os.PathLike) as bytes for the C API."""
    try:
        p = os.fsencode(path)
    except TypeError:
        raise ArgumentTypeError(f"path must be str, bytes or os.PathLike, not {type(path).__name__}", E_ARG)
    if b"\0" in p:
        raise ArgumentError(f"path {path!r} contains a NUL byte", E_ARG)
    return p


def new_bytes(n: int) -> tuple:
    """(a new bytes object of n bytes, the address of its data) for the library
    to fill, or (None, 0) where that cannot be done (not CPython, n < 2).

    ``PyBytes_FromStringAndSize(NULL, n)`` returns a bytes object with
    uninitialized contents that its creator may fill in before it hands it out:
    the C idiom of extension modules, here through ctypes.pythonapi, so that a
    read returns its bytes without copying them once more. The object must not
    be shared until filled (callers drop it on any failure). Lengths 0 and 1
    can be interned singletons, hence n >= 2."""
    if n < 2 or _pyapi is None:
        return None, 0
    obj = _pyapi.PyBytes_FromStringAndSize(None, n)
    return obj, _pyapi.PyBytes_AsString(obj)


def _load_pyapi() -> Any:
    import sys
    if sys.implementation.name != "cpython" or not hasattr(ctypes, "pythonapi"):
        return None
    api = ctypes.pythonapi
    api.PyBytes_FromStringAndSize.restype = ctypes.py_object
    api.PyBytes_FromStringAndSize.argtypes = [c_void_p, ctypes.c_ssize_t]
    api.PyBytes_AsString.restype = c_void_p
    api.PyBytes_AsString.argtypes = [ctypes.py_object]
    return api


_pyapi = _load_pyapi()


class Buffer:
    """Address and size of a C-contiguous buffer-protocol object, without a copy.

    Keeps the object exported for as long as this exists (use it in a ``with``)."""

    __slots__ = ("view", "address", "nbytes", "_keep")

    def __init__(self, obj: Any, writable: bool) -> None:
        import numpy as np
        try:
            view = memoryview(obj)
        except TypeError:
            raise ArgumentTypeError(f"a bytes-like object (buffer protocol) is required, not {type(obj).__name__}",
                                    E_ARG)
        if not view.c_contiguous:
            view.release()
            raise ArgumentTypeError("the buffer is not C-contiguous (use numpy.ascontiguousarray)", E_ARG)
        if writable and view.readonly:
            view.release()
            raise ArgumentTypeError(f"the buffer is read-only ({type(obj).__name__}); a writable one is needed",
                                    E_ARG)
        self.view = view
        self.nbytes = view.nbytes
        # PyBUF_SIMPLE export of the whole buffer: any item format, no copy
        arr = np.frombuffer(view, dtype=np.uint8) if view.nbytes else np.empty(1, np.uint8)
        self._keep: Any = arr
        self.address = arr.ctypes.data

    def release(self) -> None:
        self._keep = None
        self.view.release()

    def __enter__(self) -> "Buffer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release()
