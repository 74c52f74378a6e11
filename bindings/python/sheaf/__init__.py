"""sheaf: read and write SIONlib-compatible task-local containers from Python.

Serial reading and writing need neither MPI nor a compiler::

    import sheaf
    with sheaf.open("out.sion", "w", ntasks=4, chunksize=1 << 20) as w:
        for t in range(4):
            w.write(t, numpy_array_of_task_t)    # any buffer, tasks in any order
    with sheaf.open("out.sion") as c:
        print(c.ntasks, c.bytes_per_task)
        data = c.read_task(3)                    # bytes
        arr = c.task_array(3, "f8")              # numpy, read-only (a map when contiguous)

Parallel writing and reading take an mpi4py communicator (any mpi4py build;
importing sheaf does not import mpi4py nor initialize MPI)::

    with sheaf.paropen("ckpt.sion", "w", comm=MPI.COMM_WORLD, chunksize=1 << 20) as f:
        f.write(numpy_array)

See doc/python.md.
"""
from __future__ import annotations

from typing import Any

from .errors import (ArgumentError, ArgumentTypeError, ClosedError, CollectiveError, FormatError, MPIError,
                     NotFoundError, SheafError, SheafIOError, UnclosedError)
from .reader import Container, TaskReader, open
from .writer import TaskWriter, Writer

__version__ = "0.1.0"

__all__ = ["open", "paropen", "paropen_mapped", "Container", "TaskReader", "Writer", "TaskWriter", "ParFile",
           "MappedFile",
           "SheafError", "ArgumentError", "ArgumentTypeError", "ClosedError", "FormatError", "MPIError",
           "CollectiveError",
           "NotFoundError", "SheafIOError", "UnclosedError", "library_version", "__version__"]


_LAZY = ("paropen", "paropen_mapped", "ParFile", "MappedFile")


def __getattr__(name: str) -> Any:
    # the parallel part is imported on first use (it imports nothing of MPI either
    # until a parallel call is made)
    if name in _LAZY:
        from . import parallel
        return getattr(parallel, name)
    raise AttributeError(f"module 'sheaf' has no attribute {name!r}")


def __dir__() -> list:
    # the lazily imported names too (dir() and tab completion list them)
    return sorted(set(globals()) | set(_LAZY))


def library_version() -> str:
    """Version of the loaded libsheaf's SIONlib API, e.g. "1.7.6 (format 5)"."""
    import ctypes
    from . import _lib
    v = [ctypes.c_int(0) for _ in range(4)]
    _lib.lib().sion_get_version(*[ctypes.byref(x) for x in v])
    return f"{v[0].value}.{v[1].value}.{v[2].value} (format {v[3].value})"
