"""What the MPI test program (mpi_prog.py) writes, so that the check
(test_mpi_check.py, through the C tool) knows every byte to expect."""
import numpy as np


def plain(rank):
    """The numpy array each rank writes (several 4 KiB blocks at chunksize 4096)."""
    return np.arange(700 * (rank + 1) + 3, dtype=np.float64) + rank * 1e6


def tail(rank):
    return b"end of rank %d" % rank


def coll_parts(rank):
    """Two collective writes of small int32 arrays."""
    return [np.arange(50 + 10 * rank, dtype=np.int32) * (rank + 1),
            np.full(7 + rank, rank, dtype=np.int32)]


def kv_records(rank):
    """(key, payload) in write order."""
    a = plain(rank)
    return [(1, a[:100].tobytes()), (2, b"rank%d-" % rank * 5), (1, a[100:200].tobytes()),
            (2**63 + 5, np.full(3, rank, np.int64).tobytes())]


def expected(name, rank):
    """Bytes of task `rank` of container `name`."""
    if name in ("plain", "multi", "ck"):
        return plain(rank).tobytes() + tail(rank)
    if name == "coll":
        return b"".join(p.tobytes() for p in coll_parts(rank))
    if name == "mapped":
        return np.full(500 + rank, rank, np.uint16).tobytes()
    raise KeyError(name)


def expected_key(rank, key):
    return b"".join(p for k, p in kv_records(rank) if k == key)


def c_pattern(task, n):
    """What c_writer.c writes for task t (the vectors' pattern): n = 3000 + 1000*t."""
    i = np.arange(n, dtype=np.int64)
    return ((task * 131 + i * 7 + (i >> 8)) % 256).astype(np.uint8).tobytes()
