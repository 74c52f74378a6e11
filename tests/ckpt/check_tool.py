#!/usr/bin/env python3
"""check_tool.py SHEAF BASE NP STEP - `sheaf ckpt` on a checkpoint that
ckpt_mpi_test wrote (roundtrip, no dedicated writers): list, info, verify,
extract of every field as raw and as .npy compared byte for byte with the
values the writers stored (the test's formula), the .npy also through numpy
when it is installed; then damage: a flipped data byte of the last unit (a
plain file or a task of a sion container: both are checked, a checksum
skipped for either fails) is found by verify (exit 1) and by extract
(checksum), a FIFO in place of a unit file or of the manifest is refused
without hanging (every command within 20 s), a damaged manifest is not
listed, and usage errors exit 2."""
import os
import shutil
import struct
import subprocess
import sys
import tempfile

sheaf, base, np_, step = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])


def run(*args, expect=0):
    try:
        p = subprocess.run([sheaf, "ckpt", *args], capture_output=True, text=True, timeout=20)
    except subprocess.TimeoutExpired:
        sys.exit(f"FAIL: sheaf ckpt {' '.join(args)}: no answer within 20 s (hangs)")
    if p.returncode != expect:
        sys.exit(f"FAIL: sheaf ckpt {' '.join(args)}: exit {p.returncode}, expected {expect}\n{p.stdout}{p.stderr}")
    return p.stdout


def count_of(f, r):
    return 100 + 37 * r if f == 0 else 10 + (r % 3) * 5 if f == 1 else (r % 2) * 3


def expected(f):
    out = bytearray()
    for r in range(np_):
        for i in range(count_of(f, r)):
            if f == 0:
                out += struct.pack("<d", step * 1e6 + r * 1000.0 + i + 0.5)
            elif f == 1:
                out += struct.pack("<i", step * 100000 + r * 100 + i)
            else:
                out += struct.pack("<B", (step + r + i) & 0xff)
    return bytes(out)


names, descr = ["u", "id", "flag"], ["<f8", "<i4", "|u1"]
d = os.path.join(base, "step-%020d" % step)
lst = run("list", base)
if f"step {step} " not in lst or ".tmp" in lst:
    sys.exit(f"FAIL: list:\n{lst}")
info = run("info", d)
if f"ranks {np_}" not in info:
    sys.exit(f"FAIL: info:\n{info}")
if not run("verify", base).startswith("OK:"):
    sys.exit("FAIL: verify")
tmp = tempfile.mkdtemp()
try:
    checked = 0
    for f, name in enumerate(names):
        want = expected(f)
        raw, npy = os.path.join(tmp, name + ".raw"), os.path.join(tmp, name + ".npy")
        run("extract", "-f", name, "-o", raw, d)
        run("extract", "--step", str(step), "-f", name, "--npy", "-o", npy, base)
        got = open(raw, "rb").read()
        if got != want:
            sys.exit(f"FAIL: raw field {name}: {len(got)} bytes differ from the {len(want)} expected")
        blob = open(npy, "rb").read()
        hl = struct.unpack("<H", blob[8:10])[0]
        hdr = blob[10:10 + hl].decode()
        if blob[:8] != b"\x93NUMPY\x01\x00" or (10 + hl) % 64 or f"'descr': '{descr[f]}'" not in hdr \
                or f"'shape': ({len(want) // [8, 4, 1][f]},)" not in hdr or blob[10 + hl:] != want:
            sys.exit(f"FAIL: npy field {name}: header {hdr!r}")
        try:
            import numpy
            a = numpy.load(npy)
            if a.tobytes() != want or a.dtype.str != descr[f]:
                sys.exit(f"FAIL: numpy.load of {name}")
            checked += 1
        except ImportError:
            pass
        print(f"check_tool: field {name}: {len(want)} bytes identical (raw, npy)")
    print(f"check_tool: numpy.load checked {checked} fields" if checked else "check_tool: numpy not installed")
    # damage a copy: one data byte of the last unit file
    cp = os.path.join(tmp, "copy")
    shutil.copytree(base, cp)
    cd = os.path.join(cp, "step-%020d" % step)
    units = [l.split() for l in open(os.path.join(cd, "manifest")) if l.startswith("unit ")]
    # one data byte of the last unit, plain file or sion task alike: element 5
    # of field u of the unit's first rank, a value found nowhere else (the
    # writers' formula), searched for in every file of the step
    kind, first = units[-1][1], int(units[-1][4])
    if kind not in ("plain", "sion"):
        sys.exit(f"FAIL: unit kind {kind!r} has no damage check")
    needle = struct.pack("<d", step * 1e6 + first * 1000.0 + 5 + 0.5)
    hits = []
    for top, _, files in sorted(os.walk(cd)):  # fpp with subdirs: units in d00000/...
        for fn in sorted(files):
            path = os.path.join(top, fn)
            if path == os.path.join(cd, "manifest"):
                continue
            data = open(path, "rb").read()
            at = data.find(needle)
            while at >= 0:
                hits.append((path, at))
                at = data.find(needle, at + 1)
    if len(hits) != 1:
        sys.exit(f"FAIL: element 5 of field u of rank {first} ({kind} unit) found {len(hits)} times: {hits}")
    victim, at = hits[0][0], hits[0][1] + 3
    with open(victim, "r+b") as fh:
        fh.seek(at)
        b = fh.read(1)
        fh.seek(at)
        fh.write(bytes([b[0] ^ 0x5A]))
    out = run("verify", cd, expect=1)
    if not out.startswith("DAMAGED: ") or " 1 damaged parts" not in out:
        sys.exit(f"FAIL: verify of a copy with a flipped byte in a {kind} unit: {out}")
    run("extract", "-f", "u", "-o", os.path.join(tmp, "x"), cd, expect=1)
    print(f"check_tool: a flipped byte in a {kind} unit ({os.path.relpath(victim, cd)} offset {at}): "
          "verify DAMAGED, extract refused")
    # a FIFO in place of a unit file, then of the manifest: refused at once
    # (not a regular file), never a hang (issue 31: open() waited for a writer)
    fc = os.path.join(tmp, "fifo")
    shutil.copytree(base, fc)
    fd_ = os.path.join(fc, "step-%020d" % step)
    unit0 = [l.split() for l in open(os.path.join(fd_, "manifest")) if l.startswith("unit ")][0][2]
    os.unlink(os.path.join(fd_, unit0))
    os.mkfifo(os.path.join(fd_, unit0))
    for args in (("info", fd_), ("verify", fd_), ("extract", "-f", "u", "-o", os.path.join(tmp, "y"), fd_)):
        try:
            err = subprocess.run([sheaf, "ckpt", *args], capture_output=True, text=True, timeout=20)
        except subprocess.TimeoutExpired:
            sys.exit(f"FAIL: {args[0]} with a FIFO unit: no answer within 20 s (hangs)")
        if err.returncode != 1 or "not a regular file" not in err.stderr:
            sys.exit(f"FAIL: {args[0]} with a FIFO unit: exit {err.returncode}: {err.stderr}")
    os.unlink(os.path.join(fd_, "manifest"))
    os.mkfifo(os.path.join(fd_, "manifest"))
    if f"step {step} " in run("list", fc):
        sys.exit("FAIL: a checkpoint whose manifest is a FIFO is listed")
    run("info", fd_, expect=1)
    run("verify", fd_, expect=1)
    print("check_tool: a FIFO as a unit or manifest: refused, no hang")
    with open(os.path.join(cd, "manifest"), "w") as fh:
        fh.write("sheaf-ckpt-manifest 1\napp x\n")
    if f"step {step} " in run("list", cp):
        sys.exit("FAIL: a checkpoint with a damaged manifest is listed")
    run("list", expect=2)
    run("extract", d, expect=2)
    run("bogus", d, expect=2)
    run("info", os.path.join(tmp, "nonexistent"), expect=1)
    print("check_tool: OK")
finally:
    shutil.rmtree(tmp)
