"""After mpi_prog.py: the containers mpi4py wrote, read back byte by byte
through the C tool (`sheaf cat`, `sheaf verify`), and through the serial
Python reader. Environment: SHEAF_MPI_WORK, SHEAF_MPI_NP, SHEAF_CLI."""
import os
import subprocess

import pytest

import sheaf
import mpi_patterns as P

WORK = os.environ.get("SHEAF_MPI_WORK", "")
NP = int(os.environ.get("SHEAF_MPI_NP", "0"))


def cat(cli, path, *args):
    r = subprocess.run([cli, "cat", *args, path], capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    return r.stdout


@pytest.mark.parametrize("name", ["plain", "multi", "coll", "mapped", "ck"])
def test_c_tool_reads_what_mpi4py_wrote(cli, name):
    path = os.path.join(WORK, name + ".sion")
    ntasks = 2 * NP if name == "mapped" else NP
    with sheaf.open(path) as c:
        assert c.ntasks == ntasks
        if name == "multi":
            assert c.nfiles == min(2, NP)
    for t in range(ntasks):
        assert cat(cli, path, "-t", str(t)) == P.expected(name, t), (name, t)
    assert cat(cli, path) == b"".join(P.expected(name, t) for t in range(ntasks))
    r = subprocess.run([cli, "verify", path], capture_output=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    if name == "ck":  # the checksum mode key reached the library: the CRCs were verified
        with sheaf.open(path) as c:
            assert c.endianness == "big"
        assert b"crc" in r.stdout.lower() or b"checksum" in r.stdout.lower(), r.stdout


def test_c_tool_reads_the_key_value_container(cli):
    path = os.path.join(WORK, "kv.sion")
    for t in range(NP):
        for key in (1, 2, 2**63 + 5):
            assert cat(cli, path, "-t", str(t), "-k", str(key)) == P.expected_key(t, key), (t, key)
    with sheaf.open(path) as c:
        assert c.keyval == "inline"
        assert c.keys(NP - 1) == [1, 2, 2**63 + 5]


def test_collective_writes_were_coalesced(cli):
    # with collsize 2, pairs of tasks share the collector's blocks: the chunks are
    # packed (each exactly the requested 1024 bytes), not one 4 KiB block per task
    with sheaf.open(os.path.join(WORK, "coll.sion")) as c:
        offs = [c.block_offsets(t)[0] for t in range(c.ntasks)]
        if NP >= 2:
            assert offs[1] - offs[0] == 1024, offs
