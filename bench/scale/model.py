#!/usr/bin/python3
"""model.py - what sheaf's open and close would cost at JUQUEEN scale.

Reads the sweep's CSV (bench/scale/run_sweep.sh) for the numbers sheaf itself
determines (bytes per task through each collective, CPU per task on task 0
and on a master), and combines them with the assumptions below (every one
stated; change them on the command line as NAME=value).
    model.py scale.csv [P=1835008] [NF=495] [ALPHA_US=5] ...
Prints a table per phase: communication, CPU of task 0 and of a master,
file system, total."""
import csv, math, sys

A = dict(
    P=1835008,         # JUQUEEN: 28 racks x 1024 nodes x 64 tasks (dissertation: 1.8 million tasks)
    NF=495,            # physical files: one per I/O-bridge node (dissertation, Fig. 4.3: 495 at full scale)
    ALPHA_US=5.0,      # latency per tree level of a collective [us] (BG/Q ~2.5 us point-to-point, x2 for software)
    BETA_GBS=1.8,      # bandwidth into / out of a root [GB/s] (one BG/Q torus link, 2 GB/s raw)
    CPU_SLOWDOWN=8.0,  # a BG/Q A2 core (1.6 GHz, in-order) vs this host's EPYC core, per task of work
    FS_OPEN_S=3.0,     # SIONlib's measured create + open of the container at 1.8 M tasks, 495 files (Fig. 4.3):
                       # sheaf makes the same file-system calls (masters create + write META1, all tasks open)
    CREATE_RATE=2200,  # file creates per second in one GPFS directory at scale (Fig. 2.4)
    META_WRITE_GBS=1.0,  # one task's write bandwidth to GPFS (the masters' META2, file 0's mapping) [GB/s]
    CLOSE_FS_S=0.5,    # closing P descriptors + the masters' fsync, in parallel (assumption)
)
for a in sys.argv[2:]:
    k, v = a.split("=")
    A[k] = float(v)
P, NF = int(A["P"]), int(A["NF"])
p = math.ceil(P / NF)
LG, LL = math.ceil(math.log2(P)), math.ceil(math.log2(p))
alpha, beta = A["ALPHA_US"] * 1e-6, A["BETA_GBS"] * 1e9

rows = list(csv.DictReader(open(sys.argv[1])))
big = max(int(r["P"]) for r in rows)
def pick(phase):
    """CPU per task of P (task 0) and per task of p (a master): the smallest over the multi-file runs at the
    largest P (CPU times vary 2-3x between runs on a loaded machine: cache and page-fault costs)"""
    rs = [r for r in rows if r["phase"] == phase and int(r["P"]) == big and int(r["numfiles"]) > 1]
    c_root = min(float(r["cpu_root_ms"]) * 1e-3 / big for r in rs)
    c_master = min(float(r["cpu_master_max_ms"]) * 1e-3 / int(r["tasks_per_file"]) for r in rs)
    return rs, c_root, c_master

# bytes per task of each collective (from the protocol table, checked by the simulation's byte counts)
coll = {
    "write_open": [("G", "gather", 112), ("G", "bcast", 0), ("L", "gather", 24), ("L", "scatter", 80),
                   ("G", "gather", 8), ("G", "bcast", 0)],
    "write_close": [("L", "gather", 16), ("L", "gatherv", 8), ("G", "gather", 8), ("G", "gather", 8),
                    ("G", "bcast", 0)],
    "read_open": [("G", "gather", 112), ("G", "bcast", 0), ("G", "scatter", 16), ("L", "scatter", 112),
                  ("L", "scatterv", 8), ("G", "gather", 8), ("G", "bcast", 0)],
    "read_close": [("G", "gather", 8), ("G", "bcast", 0)],
}
print(f"P = {P}, files = {NF}, tasks per file p = {p}, tree depth log2 P = {LG}, log2 p = {LL}")
print("assumptions: " + ", ".join(f"{k}={v}" for k, v in A.items()))
print(f"CPU per task measured at P = {big} (simulation, this host), scaled by CPU_SLOWDOWN\n")
print("| phase | collectives: latency + volume at the root [s] | task 0 CPU [s] | master CPU [s] | file system [s] | total [s] |")
print("|---|---|---|---|---|---|")
for ph, cs in coll.items():
    t_comm = 0.0
    for g, op, m in cs:
        n, depth = (P, LG) if g == "G" else (p, LL)
        t_comm += alpha * depth + (n * m / beta if op != "bcast" else 0)
    r, c_root, c_master = pick(ph)
    t_root = c_root * P * A["CPU_SLOWDOWN"]
    t_master = c_master * p * A["CPU_SLOWDOWN"]
    if ph == "write_open":
        t_fs = A["FS_OPEN_S"]
    elif ph == "read_open":
        t_fs = A["FS_OPEN_S"] - NF / A["CREATE_RATE"]  # no create, the rest as the write open
    elif ph == "write_close":
        t_fs = A["CLOSE_FS_S"] + P * 8 / (A["META_WRITE_GBS"] * 1e9)  # file 0's mapping dominates META2
    else:
        t_fs = A["CLOSE_FS_S"]
    tot = t_comm + t_root + t_master + t_fs
    print(f"| {ph} | {t_comm:.3f} | {t_root:.3f} | {t_master:.4f} | {t_fs:.2f} | {tot:.2f} |")
print(f"\nfor comparison (dissertation): task-local files, create at 1.8 M tasks: ~777 s; "
      f"SIONlib create + open: <= 3 s")
