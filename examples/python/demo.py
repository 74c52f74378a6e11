#!/usr/bin/env python3
"""The Python part of scripts/demo.sh: read the demo's container from Python.

usage: demo.py CONTAINER TASKDIR
CONTAINER is the demo's tasks.sion (64 packed files; task i = the i-th file of
TASKDIR in name order). Prints the metadata, compares every task with its
original file (task 42, 1.2 MiB, through a memory map without a copy), shows a
task as a binary file and an error as an exception, then packs the same files
into a second container with the serial writer (sheaf.open(p, "w", ...), no MPI)
and reads it back."""
import os
import sys

import numpy as np

import sheaf

path, taskdir = sys.argv[1], sys.argv[2]
names = sorted(os.listdir(taskdir))
with sheaf.open(path) as c:
    print(f"   sheaf.open({os.path.basename(path)!r}): {c.ntasks} tasks, {c.nfiles} file, "
          f"fsblksize {c.fsblksize}, {int(c.bytes_per_task.sum())} bytes of data")
    print(f"   bytes_per_task[:6] = {c.bytes_per_task[:6]}  (numpy {c.bytes_per_task.dtype})")
    same = sum(c.read_task(i) == open(os.path.join(taskdir, n), "rb").read() for i, n in enumerate(names))
    a = c.task_array(42)
    mapped = isinstance(a, np.memmap)
    ok42 = a.tobytes() == open(os.path.join(taskdir, names[42]), "rb").read()
    print(f"   read_task(i) == {names[0]} ... {names[-1]}: {same} of {len(names)} identical")
    print(f"   task_array(42): {a.size} bytes, {'a memory map (no copy)' if mapped else 'a copy'}, "
          f"{'identical' if ok42 else 'DIFFERENT'}")
    r = c.task(c.ntasks - 1)
    print(f"   task {c.ntasks - 1} as a file: first line {r.readline().decode().strip()!r}, tell() = {r.tell()}")
datas = [open(os.path.join(taskdir, n), "rb").read() for n in names]
out = path + ".py.sion"
with sheaf.open(out, "w", ntasks=len(datas), chunksize=[max(len(d), 1) for d in datas]) as w:
    for i, d in enumerate(datas):
        w.write(i, d)
with sheaf.open(out) as c2:
    same2 = sum(c2.read_task(i) == d for i, d in enumerate(datas))
print(f"   sheaf.open({os.path.basename(out)!r}, 'w', ntasks={len(datas)}, chunksize=[...]): written "
      f"serially, {same2} of {len(datas)} tasks read back identical")
try:
    sheaf.open(os.path.join(taskdir, names[1]))
except sheaf.SheafError as exc:
    print(f"   sheaf.open(a plain file) -> {type(exc).__name__}: {exc}")
sys.exit(0 if same == len(names) and ok42 and same2 == len(datas) else 1)
