#!/usr/bin/env python3
"""bench/python: reading one task of a container into numpy through the Python
reader vs the C API's sion_fread into a buffer of the same size.

usage: bench_read.py [--size-mib 1024] [--reps 5] [--dir DIR] BUILD_DIR

Writes DIR/one_task.sion (one task of SIZE MiB, with c_read write) unless it
exists with that size, then alternates C and Python reps (all from the page
cache after a warm-up read), in two pairs of the same kind of buffer:
  C           c_read read: sion_open "rb,posix", one sion_fread of the whole
              task into a pre-touched malloc'd buffer
  readinto    sheaf.open(path).task(0).readinto(numpy array), the array
              pre-touched (the same sion_fread)
  C fresh     c_read read ... fresh: malloc of the task's size, the sion_fread
              into it (its pages faulted in by the read), free
  read_task   c.read_task(0) and dropping the bytes (a new bytes object the
              read fills: the same malloc, faults, sion_fread and free)
  memmap      np.copyto(array, c.task_array(0))  (a copy out of the page cache map)
Prints the median wall time of each and its ratio to its C counterpart (readinto
and memmap to C, read_task to C fresh), and the median CPU time of the reading
process (user + system: what the read costs, less sensitive to other processes
on a shared machine) and its ratio. Needs numpy; run with the
interpreter that has it, PYTHONPATH=bindings/python and SHEAF_LIBRARY set (or
an installed sheaf)."""
import argparse
import os
import statistics
import subprocess
import time

import numpy as np

import sheaf


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--size-mib", type=int, default=1024)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--dir", default=None)
    a = ap.parse_args()
    c_read = os.path.join(a.build, "bench", "python", "bench_pyread_c")
    d = a.dir or os.path.join(a.build, "bench", "python")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "one_task.sion")
    size = a.size_mib << 20
    need = True
    if os.path.exists(path):
        try:
            with sheaf.open(path) as c:
                need = int(c.bytes_per_task[0]) != size
        except sheaf.SheafError:
            pass
    if need:
        subprocess.run([c_read, "write", path, str(a.size_mib)], check=True)
    with sheaf.open(path) as c:
        assert int(c.bytes_per_task[0]) == size
        buf = np.ones(size, np.uint8)  # pre-touched, as the C side's memset
        r = c.task(0)
        r.readinto(buf)  # warm-up: the file into the page cache
        kinds = ["C", "readinto", "C fresh", "read_task", "memmap"]
        ref = {"readinto": "C", "memmap": "C", "read_task": "C fresh", "C": "C", "C fresh": "C fresh"}
        times = {k: [] for k in kinds}
        cpu = {k: [] for k in kinds}

        def c_side(kind, extra):
            out = subprocess.run([c_read, "read", path, "0", "1"] + extra, check=True, capture_output=True,
                                 text=True)
            times[kind].append(float(out.stdout.split()[0]))
            cpu[kind].append(float(out.stdout.split()[1]))

        def timed(kind, fn):
            t0, c0 = time.perf_counter(), time.process_time()
            fn()
            times[kind].append(time.perf_counter() - t0)
            cpu[kind].append(time.process_time() - c0)

        def read_task():
            d = c.read_task(0)
            assert len(d) == size
            del d

        for _ in range(a.reps):
            c_side("C", [])
            r.seek(0)
            timed("readinto", lambda: r.readinto(buf))
            c_side("C fresh", ["fresh"])
            timed("read_task", read_task)
            timed("memmap", lambda: np.copyto(buf, c.task_array(0)))
        assert bytes(buf[:4096]) == c.read_task(0)[:4096]
    gib = size / (1 << 30)
    med = {k: statistics.median(v) for k, v in times.items()}
    cmed = {k: statistics.median(v) for k, v in cpu.items()}
    print(f"one task of {a.size_mib} MiB, {a.reps} reps, median wall (min..max), median CPU of the process:")
    for k in kinds:
        v, rk = times[k], ref[k]
        print(f"  {k:9s} {med[k]:.4f} s  {gib / med[k]:6.2f} GiB/s  ({min(v):.4f}..{max(v):.4f} s)  "
              f"ratio to {rk:7s} {med[rk] / med[k]:.3f}   CPU {cmed[k]:.4f} s, ratio {cmed[rk] / cmed[k]:.3f}")


if __name__ == "__main__":
    main()
