"""Reads copy at most once (issue 27 item 1): read_task, TaskReader.read,
iteration by blocks and read_key return bytes filled by the library's read
(no bytearray -> slice -> bytes copies); readinto fills the caller's buffer
(bytearray, numpy array) without any allocation of the task's size.
Measured with tracemalloc (which sees bytes, bytearray and numpy data)."""
import ctypes
import tracemalloc

import numpy as np
import pytest

import sheaf
from sheaf import _lib

N = 8 << 20  # 8 MiB: an extra copy shows as +8 MiB of peak


def write_one(path, data, chunk):
    """One task, through the C API's serial writer (independent of sheaf's Python writer)."""
    L = _lib.lib()
    nt, nf = ctypes.c_int(1), ctypes.c_int(1)
    cs = (ctypes.c_int64 * 1)(chunk)
    gr = (ctypes.c_int * 1)(0)
    pcs, pgr = ctypes.cast(cs, _lib.P64), ctypes.cast(gr, _lib.PI)
    fs, fp = ctypes.c_int32(-1), ctypes.c_void_p()
    sid = L.sion_open(str(path).encode(), b"wb,posix", ctypes.byref(nt), ctypes.byref(nf), ctypes.byref(pcs),
                      ctypes.byref(fs), ctypes.byref(pgr), ctypes.byref(fp))
    assert sid >= 0, _lib.last_error("")
    buf = ctypes.create_string_buffer(data, len(data))
    assert L.sion_fwrite(buf, 1, len(data), sid) == len(data)
    assert L.sion_close(sid) == _lib.SION_SUCCESS


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    data = (np.arange(N, dtype=np.uint64) * 7 + 3).astype(np.uint8).tobytes()
    d = tmp_path_factory.mktemp("copies")
    one = d / "one.sion"      # one block
    write_one(one, data, N)
    four = d / "four.sion"    # four blocks of N/4 (chunk smaller than the data)
    write_one(four, data, N // 4)
    return data, one, four


def peak_of(fn):
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        out = fn()
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    return out, peak


SLACK = 1 << 20  # metadata, numpy temporaries of the reader: far below N


@pytest.mark.parametrize("which", ["one", "four"])
def test_read_task_allocates_the_task_once(big, which):
    data, one, four = big
    with sheaf.open(one if which == "one" else four) as c:
        assert int(c.blockcount[0]) == (1 if which == "one" else 4)
        out, peak = peak_of(lambda: c.read_task(0))
        assert type(out) is bytes and out == data
        assert peak < N + SLACK, f"read_task: peak {peak} bytes for a task of {N}"
        r = c.task(0)
        out, peak = peak_of(lambda: r.read())
        assert type(out) is bytes and out == data and r.tell() == N
        assert peak < N + SLACK, f"TaskReader.read(): peak {peak}"
        r.seek(N - 5)
        out, peak = peak_of(lambda: r.read(1 << 30))  # more than is left: only what is left
        assert out == data[-5:] and peak < SLACK
        assert r.read() == b"" and r.read(10) == b""
        r.seek(1000)
        assert r.read(3000) == data[1000:4000] and r.tell() == 4000
        blocks, peak = peak_of(lambda: list(c.task(0)))
        assert b"".join(blocks) == data and all(type(b) is bytes for b in blocks)
        assert peak < N + SLACK, f"blocks: peak {peak}"


def test_readinto_allocates_nothing_of_the_task_size(big):
    data, one, four = big
    for path in (one, four):
        with sheaf.open(path) as c:
            r = c.task(0)
            arr = np.zeros(N, np.uint8)
            n, peak = peak_of(lambda: r.readinto(arr))
            assert n == N and arr.tobytes() == data and peak < SLACK
            r.seek(0)
            ba = bytearray(N // 2)
            n, peak = peak_of(lambda: r.readinto(ba))
            assert n == N // 2 and ba == data[: N // 2] and peak < SLACK
            f8 = np.zeros(N // 8, "f8")  # any item type: the bytes land as they are
            r.seek(0)
            assert r.readinto(f8) == N and f8.tobytes() == data


def test_small_reads_keep_their_type_and_value(big):
    data, one, _ = big
    with sheaf.open(one) as c:
        r = c.task(0)
        for k in (0, 1, 2, 3):  # 0 and 1 bytes: the interned singletons are not written into
            r.seek(10)
            got = r.read(k)
            assert type(got) is bytes and got == data[10:10 + k]
        assert b"\x00" == bytes(1) and b"" == bytes(0)
