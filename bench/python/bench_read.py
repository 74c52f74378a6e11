#!/usr/bin/env python3
"""bench/python: reading one task of a container into numpy through the Python
reader vs the C API's sion_fread into a buffer of the same size.

usage: bench_read.py [--size-mib 1024] [--reps 5] [--dir DIR] BUILD_DIR

Writes DIR/one_task.sion (one task of SIZE MiB, with c_read write) unless it
exists with that size, then alternates C and Python reps (both from the page
cache after a warm-up read, both into a pre-touched buffer):
  C        c_read read: sion_open "rb,posix", one sion_fread of the whole task
  readinto sheaf.open(path).task(0).readinto(numpy array)  (the same sion_fread)
  memmap   np.copyto(array, c.task_array(0))  (a copy out of the page cache map)
Prints the median wall time of each and its ratio to C, and the median CPU time
of the reading process (user + system: what the read costs, less sensitive to
other processes on a shared machine) and its ratio. Needs numpy; run with the
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
        times = {"C": [], "readinto": [], "memmap": []}
        cpu = {"C": [], "readinto": [], "memmap": []}
        for _ in range(a.reps):
            out = subprocess.run([c_read, "read", path, "0", "1"], check=True, capture_output=True, text=True)
            times["C"].append(float(out.stdout.split()[0]))
            cpu["C"].append(float(out.stdout.split()[1]))
            r.seek(0)
            t0, c0 = time.perf_counter(), time.process_time()
            n = r.readinto(buf)
            times["readinto"].append(time.perf_counter() - t0)
            cpu["readinto"].append(time.process_time() - c0)
            assert n == size
            t0, c0 = time.perf_counter(), time.process_time()
            np.copyto(buf, c.task_array(0))
            times["memmap"].append(time.perf_counter() - t0)
            cpu["memmap"].append(time.process_time() - c0)
    gib = size / (1 << 30)
    med = {k: statistics.median(v) for k, v in times.items()}
    cmed = {k: statistics.median(v) for k, v in cpu.items()}
    print(f"one task of {a.size_mib} MiB, {a.reps} reps, median wall (min..max), median CPU of the process:")
    for k, v in times.items():
        print(f"  {k:9s} {med[k]:.4f} s  {gib / med[k]:6.2f} GiB/s  ({min(v):.4f}..{max(v):.4f} s)  "
              f"ratio to C {med['C'] / med[k]:.3f}   CPU {cmed[k]:.4f} s, ratio to C {cmed['C'] / cmed[k]:.3f}")


if __name__ == "__main__":
    main()
