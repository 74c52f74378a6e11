"""The serial reader: every SIONlib 1.7.6 vector against MANIFEST.json
(SHA-256 per task and per key, through every way of reading), metadata, the
file-like task readers, memory maps, and bad input (exceptions, never a crash,
nothing on stderr)."""
import hashlib
import io
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import sheaf
from conftest import pattern

sha = lambda b: hashlib.sha256(bytes(b)).hexdigest()  # noqa: E731


def vectors(manifest, keyval=None):
    for name, vec in sorted(manifest["vectors"].items()):
        if name == "unclosed4":
            continue
        yield name, vec


def test_every_vector_matches_the_manifest(vdir, manifest):
    checked = 0
    for name, vec in vectors(manifest):
        with sheaf.open(os.path.join(vdir, vec["files"][0])) as c:
            assert c.ntasks == vec["ntasks"], name
            assert c.nfiles == vec["nfiles"], name
            assert [os.path.basename(f) for f in c.files] == vec["files"], name
            for t in vec["tasks"]:
                task = t["task"]
                if "sha256" in t:
                    assert int(c.bytes_per_task[task]) == t["bytes"], (name, task)
                    data = c.read_task(task)
                    assert len(data) == t["bytes"] and sha(data) == t["sha256"], (name, task)
                    assert sha(c.task_array(task)) == t["sha256"], (name, task, "task_array")
                    assert sha(c.task_array(task, copy=True)) == t["sha256"], (name, task, "copy")
                    r = c.task(task)
                    assert sha(b"".join(r)) == t["sha256"], (name, task, "blocks")
                    pieces = []
                    while True:
                        p = r.read(70001 if task % 2 else 7)
                        if not p:
                            break
                        pieces.append(p)
                    assert sha(b"".join(pieces)) == t["sha256"], (name, task, "pieces")
                    checked += 1
                for k in t.get("per_key", []):
                    data = c.read_key(task, k["key"])
                    assert len(data) == k["bytes"] and sha(data) == k["sha256"], (name, task, k["key"])
                    assert c.key_stat(task, k["key"])[1] == k["bytes"]
                    checked += 1
                if "per_key" in t:
                    assert c.keys(task) == [k["key"] for k in t["per_key"]]
                    recs = t["records_in_write_order"]
                    assert c.key_stat(task, 1)[0] == sum(1 for r in recs if r["key"] == 1)
    assert checked >= 30


def test_vector_data_follow_the_pattern(vdir, manifest):
    # independent of the manifest: the generator's pattern
    with sheaf.open(os.path.join(vdir, "multi6.sion")) as c:
        for t in range(c.ntasks):
            assert c.read_task(t) == pattern(t, int(c.bytes_per_task[t]))


def test_metadata(vdir):
    with sheaf.open(os.path.join(vdir, "multi6.sion")) as c:
        assert c.bytes_per_task.dtype == np.int64 and c.bytes_per_task.shape == (6,)
        assert list(c.bytes_per_task) == [3000, 6000, 9000, 12000, 15000, 18000]
        assert c.blocksizes.shape == (int(c.blockcount.max()), 6)
        assert (c.blocksizes.sum(axis=0) == c.bytes_per_task).all()
        assert c.mapping.shape == (6, 2)
        assert sorted(set(c.mapping[:, 0])) == [0, 1, 2]
        assert c.keyval == "none" and c.format_version == 5 and c.fsblksize == 4096
        assert len(c) == 6 and "6 tasks" in repr(c)
        with pytest.raises(ValueError):
            c.bytes_per_task[0] = 1  # read-only
    with sheaf.open(os.path.join(vdir, "bigendian2.sion")) as c:
        assert c.endianness == "big" and c.swap_needed
    with sheaf.open(os.path.join(vdir, "keyval3.sion")) as c:
        assert c.keyval == "inline"
        assert c.records(0)[2] == c.read_key(0, 2)


def test_task_reader_is_a_binary_file(vdir):
    with sheaf.open(os.path.join(vdir, "bigblk2.sion")) as c:
        whole = c.read_task(1)
        r = c[1]
        assert r.readable() and r.seekable() and not r.writable()
        assert r.seek(-10, io.SEEK_END) == len(whole) - 10 and r.read() == whole[-10:]
        assert r.read() == b"" and r.tell() == len(whole)
        r.seek(1000)
        buf = np.zeros(5000, np.uint8)
        assert r.readinto(buf) == 5000 and buf.tobytes() == whole[1000:6000]
        r.seek(100, io.SEEK_CUR)
        assert r.read(3) == whole[6100:6103]
        br = io.BufferedReader(c.task(0))
        assert br.read(12345) == c.read_task(0)[:12345]
        blocks = list(c.task(1))
        assert len(blocks) == int(c.blockcount[1]) == 5
        assert [len(b) for b in blocks] == list(c.blocksizes[:5, 1])
        r.close()
        with pytest.raises(sheaf.ClosedError):
            r.read(1)


def test_numpy_views_are_memory_maps_without_copy(vdir, tmp_path):
    with sheaf.open(os.path.join(vdir, "serial5.sion")) as c:
        a = c.task_array(4)
        assert isinstance(a, np.memmap) and not a.flags.writeable
        assert a.tobytes() == c.read_task(4)
        v = c.task_array(1, np.uint32)
        assert v.dtype == np.uint32 and v.size == 1000 and isinstance(v, np.memmap)
        assert c.task_array(2).size == 0
        with pytest.raises(sheaf.ArgumentError, match="multiple of the item size"):
            c.task_array(3, np.float64)  # 50 bytes
    with sheaf.open(os.path.join(vdir, "bigblk2.sion")) as c:
        a = c.task_array(0)  # 5 blocks: read into a new array
        assert not isinstance(a, np.memmap) and a.tobytes() == c.read_task(0)


def test_import_does_not_touch_mpi(vdir):
    code = ("import sys, sheaf; c = sheaf.open(sys.argv[1]); c.read_task(0); "
            "bad = [m for m in sys.modules if m.startswith('mpi4py')]; assert not bad, bad; print('ok')")
    r = subprocess.run([sys.executable, "-c", code, os.path.join(vdir, "par4.sion")], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr
    assert r.stderr == ""


def test_unclosed_container(vdir, capfd):
    p = os.path.join(vdir, "unclosed4.sion")
    with pytest.raises(sheaf.UnclosedError) as e:
        sheaf.open(p)
    assert "never closed" in str(e.value) and p in str(e.value)
    assert e.value.filename == p and e.value.code == -5
    assert isinstance(e.value, sheaf.FormatError) and isinstance(e.value, sheaf.SheafError)
    out, err = capfd.readouterr()
    assert err == "" and out == "", "the library printed to stderr"


def test_missing_and_corrupt_files(vdir, tmp_path, capfd):
    with pytest.raises(sheaf.NotFoundError) as e:
        sheaf.open(tmp_path / "nope.sion")
    assert isinstance(e.value, FileNotFoundError) and "nope.sion" in str(e.value)
    notsion = tmp_path / "text.sion"
    notsion.write_bytes(b"hello world\n" * 1000)
    with pytest.raises(sheaf.FormatError) as e:
        sheaf.open(notsion)
    assert "text.sion" in str(e.value)
    # a real container with damaged metadata: the header's magic, then the tail
    src = os.path.join(vdir, "par4.sion")
    data = bytearray(open(src, "rb").read())
    for i, damage in enumerate([lambda d: d.__setitem__(slice(0, 8), b"\xff" * 8),
                                lambda d: d.__setitem__(slice(len(d) - 64, len(d)), b"\xa5" * 64),
                                lambda d: d.__delitem__(slice(len(d) // 2, len(d)))]):
        bad = bytearray(data)
        damage(bad)
        p = tmp_path / f"bad{i}.sion"
        p.write_bytes(bytes(bad))
        try:
            with sheaf.open(p) as c:  # some damage only shows when reading
                for t in range(c.ntasks):
                    c.read_task(t)
        except sheaf.SheafError as exc:
            assert str(p) in str(exc), exc
        else:
            pytest.fail(f"damage {i} not detected")
    assert capfd.readouterr().err == ""
    # a multi-file set with a member missing
    for f in ("multi6.sion", "multi6.sion.000001"):
        shutil.copy(os.path.join(vdir, f), tmp_path / f)
    with pytest.raises(sheaf.NotFoundError) as e:
        sheaf.open(tmp_path / "multi6.sion")
    assert "multi6.sion.000002" in str(e.value)


def test_closed_handles_and_wrong_types(vdir):
    c = sheaf.open(os.path.join(vdir, "keyval3.sion"))
    r = c.task(0)
    with pytest.raises(sheaf.ArgumentTypeError):
        c.read_task("0")
    with pytest.raises(TypeError):
        c.task(1.5)
    with pytest.raises(sheaf.ArgumentError, match="out of range"):
        c.read_task(3)
    assert c.read_task(-1) == c.read_task(2)
    with pytest.raises(sheaf.ArgumentTypeError, match="read-only"):
        r.readinto(b"immutable")
    with pytest.raises(sheaf.ArgumentTypeError, match="contiguous"):
        r.readinto(np.zeros((10, 10), np.uint8)[:, ::2])
    with pytest.raises(TypeError):
        r.readinto(12)
    with pytest.raises(sheaf.ArgumentTypeError):
        c.read_key(0, "key")
    with pytest.raises(sheaf.ArgumentError):
        c.read_key(0, -1)
    assert c.read_key(0, 424242) == b""
    with pytest.raises(sheaf.ArgumentTypeError):
        sheaf.open(12345)
    with pytest.raises(sheaf.ArgumentError):
        sheaf.open("a\0b")
    c.close()
    c.close()  # idempotent
    for call in (lambda: c.read_task(0), lambda: c.keys(0), lambda: c.task_array(0), lambda: r.read(),
                 lambda: r.seek(0), lambda: c.task(0)):
        with pytest.raises(sheaf.ClosedError, match="closed"):
            call()
    with sheaf.open(os.path.join(vdir, "par4.sion")) as c:
        with pytest.raises(sheaf.ArgumentError, match="not a key-value"):
            c.keys(0)


def test_parallel_calls_refuse_a_non_communicator(vdir):
    with pytest.raises(TypeError):
        sheaf.paropen(os.path.join(vdir, "par4.sion"), "r", comm="not a comm")
