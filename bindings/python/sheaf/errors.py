"""The exceptions of the sheaf package: one small hierarchy.

Every error raised by sheaf is a :class:`SheafError`. It carries the message of
the C library (which names the file and the cause), the library's error class
(``code``, one of the ``SHEAF_E_*`` values of ``sheaf.h``) and the file name the
call was given. The subclasses also derive from the matching built-in
exception, so ``except OSError`` or ``except ValueError`` catch them too.
"""
from __future__ import annotations

from typing import Optional

# SHEAF_E_* of include/sheaf.h
E_OK = 0
E_ARG = -1
E_IO = -2
E_FORMAT = -3
E_NOMEM = -4
E_UNCLOSED = -5
E_NOTFOUND = -6


class SheafError(Exception):
    """Base class of every error raised by sheaf.

    Attributes:
        message: the library's message (names the file and the cause).
        code: the library's error class (``SHEAF_E_*``), 0 when the error was
            found by the Python layer itself.
        filename: the container the call was about, if any.
    """

    def __init__(self, message: str, code: int = 0, filename: Optional[str] = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.filename = filename

    def __str__(self) -> str:
        # OSError's own format ("[Errno ...] ...") would hide the library's message
        return self.message


class ArgumentError(SheafError, ValueError):
    """An invalid argument or a misuse of the API (``SHEAF_E_ARG``)."""


class ArgumentTypeError(ArgumentError, TypeError):
    """An argument of the wrong type (e.g. a non-contiguous or read-only buffer)."""


class ClosedError(ArgumentError):
    """An operation on a container or task reader that was already closed."""


class SheafIOError(SheafError, OSError):
    """The operating system reported an error (``SHEAF_E_IO``)."""


class NotFoundError(SheafIOError, FileNotFoundError):
    """The container, or a member file of a multi-file set, is missing."""


class FormatError(SheafError):
    """Not a container, or corrupt metadata or records (``SHEAF_E_FORMAT``)."""


class UnclosedError(FormatError):
    """The container was never closed (its writers crashed); see ``sheaf recover``."""


class MPIError(SheafError):
    """A parallel call failed (on every rank), or mpi4py is missing or unusable."""


class CollectiveError(MPIError):
    """A collective call failed because of an exception on some rank (in one of
    the communication callbacks, e.g. a MemoryError, a failing communicator
    method, a KeyboardInterrupt) or a failure of the library on some rank.
    Raised on every rank of the call.

    Attributes (besides SheafError's): ``rank``: the rank of the call's
    communicator where the cause was seen first (-1 if unknown); ``cause``: its
    text, e.g. "the gatherr callback raised MemoryError: ...". On the failing
    rank, ``__cause__`` is the original exception.
    """

    def __init__(self, message: str, code: int = 0, filename: Optional[str] = None, rank: int = -1,
                 cause: str = "") -> None:
        super().__init__(message, code, filename)
        self.rank = rank
        self.cause = cause


def error_class(code: int) -> type:
    """The exception class for a ``SHEAF_E_*`` code."""
    return {
        E_ARG: ArgumentError,
        E_IO: SheafIOError,
        E_FORMAT: FormatError,
        E_NOMEM: SheafError,
        E_UNCLOSED: UnclosedError,
        E_NOTFOUND: NotFoundError,
    }.get(code, SheafError)
