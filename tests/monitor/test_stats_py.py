"""sheaf.stats (bindings/python/sheaf/stats.py): the Python reader of monitor logs,
against the known job mon_job.c (exact counts) and on bad logs (ctest monitor.pyreader).
Environment: SHEAF_CLI (the sheaf tool), SHEAF_MON_BINDIR (mon_job), SHEAF_MON_WORK."""
import csv
import io
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import sheaf
import sheaf.stats as stats

MiB = 1 << 20
WRITTEN = [MiB + 10000, 0, MiB, 4 * MiB]
READ = [0, 0, MiB, 0]
FILES = {"part.3": (0, 4 * MiB), "part.2": (MiB, MiB), "part.0": (0, MiB), "small.log": (0, 10000),
         "meta.cfg": (0, 0)}


@pytest.fixture(scope="module")
def log():
    work = os.environ["SHEAF_MON_WORK"]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(work, "data"))
    out = os.path.join(work, "job.mon")
    subprocess.run([os.environ["SHEAF_CLI"], "stats", "run", "-o", out, "--interval-ms", "50", "--",
                    os.path.join(os.environ["SHEAF_MON_BINDIR"], "mon_job"), os.path.join(work, "data")],
                   check=True, capture_output=True)
    return out


def test_numpy_tables(log):
    t = stats.read(log, pandas=False)
    assert isinstance(t.files, np.ndarray) and t.files.dtype["bytes_written"] == np.uint64
    files = {os.path.basename(r["name"]): r for r in t.files}
    assert sorted(files) == sorted(FILES)
    for n, (rd, wr) in FILES.items():
        assert (int(files[n]["bytes_read"]), int(files[n]["bytes_written"])) == (rd, wr), n
    m = files["meta.cfg"]
    assert (int(m["opens"]), int(m["stats"]), int(m["ranks_with_io"]), m["kind"]) == (300, 300, 0, "file")
    assert int(files["small.log"]["write_0_100"]) == 1000 and int(files["small.log"]["file_not_aligned"]) == 999
    assert int(files["part.3"]["write_10K_100K"]) == 64
    assert list(t.ranks["rank"]) == [0, 1, 2, 3]
    assert [int(x) for x in t.ranks["bytes_written"]] == WRITTEN
    assert [int(x) for x in t.ranks["bytes_read"]] == READ
    assert [int(x) for x in t.ranks["ranks_with_io"]] == [1, 0, 1, 1]
    assert len(t.processes) == 4 and all(t.processes["clean_end"])
    assert sorted(int(r) for r in t.processes["rank"]) == [0, 1, 2, 3]
    tot = t.totals
    assert (tot["bytes_read"], tot["bytes_written"], tot["writes"], tot["reads"], tot["opens"], tot["stats"]) == \
        (MiB, sum(WRITTEN), 1096, 16, 305, 300)
    assert (tot["processes_count"], tot["ranks_count"], tot["ranks_with_io"], tot["files_count"],
            tot["folded_opens"]) == (4, 4, 3, 5, 0)
    # storage targets (log version 2): every byte and open of the job lands on one, each named
    # by its FGFS global name (scheme://...), counted by the processes that used it
    tg = t.targets
    assert tg is not None and len(tg) >= 1
    assert sum(int(x) for x in tg["bytes_written"]) == sum(WRITTEN)
    assert sum(int(x) for x in tg["bytes_read"]) == MiB
    assert sum(int(x) for x in tg["opens"]) == 305
    assert all("://" in str(n) for n in tg["target"]) and all(1 <= int(x) <= 4 for x in tg["processes"])


def test_pandas_tables(log):
    pd = pytest.importorskip("pandas")
    t = stats.read(log, pandas=True)
    assert isinstance(t.files, pd.DataFrame) and str(t.files["bytes_written"].dtype) == "uint64"
    assert t.ranks.set_index("rank")["bytes_written"].to_dict() == dict(enumerate(WRITTEN))
    assert int(t.files["bytes_read"].sum() + t.files["bytes_written"].sum()) == sum(WRITTEN) + sum(READ)


def test_counters_match_the_c_tool(log):
    out = subprocess.run([os.environ["SHEAF_CLI"], "stats", "export", "--format", "csv", log], check=True,
                         capture_output=True, text=True).stdout
    head = next(csv.reader(io.StringIO(out)))
    assert tuple(head[7:]) == stats.COUNTERS
    # and the Python export's csv is the C tool's, row for row
    mine = os.path.join(os.environ["SHEAF_MON_WORK"], "py.csv")
    stats.export(log, mine, "csv")
    assert list(csv.reader(open(mine))) == list(csv.reader(io.StringIO(out)))


def _one_log(log):
    return sorted(os.path.join(log, n) for n in os.listdir(log) if n.endswith(".smon"))[0]


def test_single_file(log):
    t = stats.read(_one_log(log), pandas=False)
    assert len(t.processes) == 1


def test_bad_logs(log, tmp_path):
    with pytest.raises(FileNotFoundError):
        stats.read(tmp_path / "nope")
    with pytest.raises(stats.LogError, match="no monitor logs"):
        stats.read(tmp_path)
    raw = open(_one_log(log), "rb").read()
    at = raw.find(b"SMON\x03\x00")
    hostile = tmp_path / "hostile.smon"
    hostile.write_bytes(raw[:at + 8] + b"\xff\xff\xff\x7f" + raw[at + 12:])
    with pytest.raises(stats.LogError, match=r"hostile\.smon: record \d+ \(byte \d+\): file record: id 2147483647"):
        stats.read(hostile)
    cut = tmp_path / "cut.smon"
    cut.write_bytes(raw[:3000])
    with pytest.raises(sheaf.SheafError, match="cut.smon"):
        stats.read(cut)


def test_bad_streams():
    p = stats._Proc(log="mem")
    with pytest.raises(stats.LogError, match="not a whole number of 512-byte records"):
        stats._parse(p, b"\0" * 700)
    with pytest.raises(stats.LogError, match="magic"):
        stats._parse(stats._Proc(log="mem"), b"\0" * 512)
    # a FILE record before any head
    rec = bytearray(512)
    rec[0:6] = b"SMON\x03\x00"
    with pytest.raises(stats.LogError, match="does not start with a head"):
        stats._parse(stats._Proc(log="mem"), bytes(rec))
    # a head with an absurd budget
    head = bytearray(512)
    head[0:6] = b"SMON\x01\x00"
    head[8:12] = (1).to_bytes(4, "little")
    head[16:20] = (1 << 30).to_bytes(4, "little")
    with pytest.raises(stats.LogError, match="budget"):
        stats._parse(stats._Proc(log="mem"), bytes(head))
    # a name segment past its length
    head[16:20] = (4).to_bytes(4, "little")
    name = bytearray(512)
    name[0:6] = b"SMON\x02\x00"
    name[8:24] = b"".join(x.to_bytes(4, "little") for x in (0, 10, 12, 100))
    with pytest.raises(stats.LogError, match="out of bounds"):
        stats._parse(stats._Proc(log="mem"), bytes(head) + bytes(name))


if __name__ == "__main__":
    if os.environ.get("SHEAF_SANITIZE_BUILD") == "1":
        print("SKIP: the interposition library is not used in a sanitizer build")
        sys.exit(77)
    sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", __file__]))
