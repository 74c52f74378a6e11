"""The serial writer and the smaller points of issue 27 item 5: sheaf.open(p, "w",
ntasks=, chunksize=) makes a container without MPI (read back byte for byte by the
sheaf tool's `cat`, by `sioncat` and by sheaf.open), the mode is positional, a
member file of a multi-file set reports the set's nfiles, dir(sheaf) lists the
lazily imported names, task_array returns the same kind whatever the layout."""
import os
import subprocess

import numpy as np
import pytest

import sheaf


def cat(cli, path, task, name="sheaf"):
    if name == "sioncat":
        exe = os.path.join(os.path.dirname(cli), "sioncat")
        cmd = [exe, "-t", str(task), str(path)]
    else:
        cmd = [cli, "cat", "-t", str(task), str(path)]
    r = subprocess.run(cmd, capture_output=True)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_write_then_cat_every_task(tmp_path, cli):
    p = tmp_path / "w.sion"
    rng = np.random.default_rng(27)
    want = [b"", b"", b"", b""]
    with sheaf.open(p, "w", ntasks=4, chunksize=[1000, 64, 5000, 1], globalranks=[7, 6, 5, 4]) as w:
        assert w.ntasks == 4 and w.fsblksize > 0 and w.chunksizes == (1000, 64, 5000, 1)
        # tasks in any order, several writes each; task 1 outgrows its chunk (several blocks)
        for step in range(5):
            for t in (2, 0, 3, 1):
                data = rng.integers(0, 256, size=(t + 1) * 300 + step, dtype=np.uint8)
                assert w.write(t, data) == data.nbytes
                want[t] += data.tobytes()
        f = w.task(3)
        assert f.write(b"tail") == 4 and f.tell() == len(want[3]) + 4
        want[3] += b"tail"
        assert w.write(0, b"") == 0
        assert w.write(-1, memoryview(b"!")) == 1  # negative task: from the end
        want[3] += b"!"
        assert list(w.bytes_written) == [len(x) for x in want]
    assert w.closed
    for t in range(4):
        assert cat(cli, p, t) == want[t], f"sheaf cat -t {t}"
        assert cat(cli, p, t, "sioncat") == want[t], f"sioncat -t {t}"
    with sheaf.open(p, "r") as c:
        assert c.ntasks == 4 and c.nfiles == 1
        assert list(c.globalranks) == [7, 6, 5, 4]
        assert [c.read_task(t) for t in range(4)] == want
    r = subprocess.run([cli, "verify", str(p)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_write_keyval_and_endianness(tmp_path):
    p = tmp_path / "kv.sion"
    with sheaf.open(p, "w", ntasks=2, chunksize=256, keyval=True) as w:
        w.write_key(0, 5, b"hello ")
        w.write_key(1, 2**64 - 1, np.arange(4, dtype="<u4"))
        w.write_key(0, 5, b"world")
    with sheaf.open(p) as c:
        assert c.keyval == "inline"
        assert c.read_key(0, 5) == b"hello world" and c.key_stat(0, 5) == (2, 11)
        assert c.read_key(1, 2**64 - 1) == np.arange(4, dtype="<u4").tobytes()
    p2 = tmp_path / "big.sion"
    with sheaf.open(p2, "w,endianness=big", ntasks=1, chunksize=16) as w:
        w.write(0, np.arange(3, dtype=">i4"))
    with sheaf.open(p2) as c:
        assert c.endianness == "big" and c.swap_needed == np.little_endian
        assert list(c.task_array(0, ">i4")) == [0, 1, 2]


def test_write_refuses_bad_arguments_naming_python_parameters(tmp_path):
    p = tmp_path / "bad.sion"
    with pytest.raises(sheaf.ArgumentError) as e:
        sheaf.open(p, "w")
    msg = str(e.value)
    assert "ntasks" in msg and "chunksize" in msg and "chunksizes" not in msg and "sion_open" not in msg
    with pytest.raises(sheaf.ArgumentError, match="chunksize"):
        sheaf.open(p, "w", ntasks=2)
    with pytest.raises(sheaf.ArgumentError, match="ntasks must be at least 1"):
        sheaf.open(p, "w", ntasks=0, chunksize=10)
    with pytest.raises(sheaf.ArgumentError, match="chunksize has 3 entries for ntasks=2"):
        sheaf.open(p, "w", ntasks=2, chunksize=[1, 2, 3])
    with pytest.raises(sheaf.ArgumentError, match="chunksize of task 1 is 0"):
        sheaf.open(p, "w", ntasks=2, chunksize=[1, 0])
    with pytest.raises(sheaf.ArgumentTypeError):
        sheaf.open(p, "w", ntasks="2", chunksize=10)
    with pytest.raises(sheaf.ArgumentTypeError):
        sheaf.open(p, "w", ntasks=2, chunksize=10.5)
    with pytest.raises(sheaf.ArgumentError, match="only for writing"):
        sheaf.open(p, "r", ntasks=2)
    with pytest.raises(sheaf.ArgumentError, match="goes first"):
        sheaf.open(p, "r,w", ntasks=2, chunksize=1)
    with pytest.raises(sheaf.ArgumentTypeError):
        sheaf.open(p, 1)
    assert not p.exists()
    with pytest.raises(sheaf.SheafError, match="nodir"):
        sheaf.open(tmp_path / "nodir" / "x.sion", "w", ntasks=1, chunksize=10)
    with sheaf.open(p, "w", ntasks=2, chunksize=10) as w:
        with pytest.raises(sheaf.ArgumentError, match="out of range"):
            w.write(2, b"x")
        with pytest.raises(sheaf.ArgumentError, match="not a key-value container"):
            w.write_key(0, 1, b"x")
        with pytest.raises(sheaf.ArgumentTypeError):
            w.write(0, "text")  # str is not a buffer
        with pytest.raises(sheaf.ArgumentTypeError, match="C-contiguous"):
            w.write(0, np.arange(10)[::2])
    with pytest.raises(sheaf.ClosedError):
        w.write(0, b"x")
    with sheaf.open(p) as c:
        assert list(c.bytes_per_task) == [0, 0]


def test_mode_is_positional_and_keeps_keys(vdir):
    path = os.path.join(vdir, "serial5.sion")
    for args, kw in (((path,), {}), ((path, "r"), {}), ((path, "rb"), {}), ((path, "r,ansi"), {}),
                     ((path, "r"), {"ansi": True}), ((path,), {"mode": "r"}), ((path,), {"mode": "ansi"})):
        with sheaf.open(*args, **kw) as c:
            assert c.ntasks == 5 and len(c.read_task(4)) == int(c.bytes_per_task[4])


def test_member_file_reports_the_sets_nfiles(vdir):
    with sheaf.open(os.path.join(vdir, "multi6.sion.000001")) as c:
        assert c.nfiles == 3 and c.ntasks == 2 and len(c.files) == 1
        with sheaf.open(os.path.join(vdir, "multi6.sion")) as whole:
            # the member's two tasks are global tasks 2 and 3 of the set
            assert c.read_task(0) == whole.read_task(2) and c.read_task(1) == whole.read_task(3)
            assert np.array_equal(c.task_array(1), whole.task_array(3))


def test_dir_lists_the_lazy_names():
    names = dir(sheaf)
    for n in ("paropen", "paropen_mapped", "ParFile", "MappedFile", "open", "Writer", "Container"):
        assert n in names, n
    assert set(sheaf.__all__) <= set(names)


def test_task_array_is_read_only_unless_copied(vdir):
    for name, t in (("serial5.sion", 4), ("bigblk2.sion", 0)):  # one block (a map), several blocks
        with sheaf.open(os.path.join(vdir, name)) as c:
            a = c.task_array(t)
            assert not a.flags.writeable, (name, "view")
            with pytest.raises(ValueError):
                a[0] = 1
            b = c.task_array(t, copy=True)
            assert b.flags.writeable and not isinstance(b, np.memmap) and b.tobytes() == a.tobytes()
            b[0] ^= 0xFF
            assert c.task_array(t).tobytes() == c.read_task(t)
