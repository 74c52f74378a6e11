#!/usr/bin/python3
"""Plots of bench/scale/run_sweep.sh's CSV: per phase, against P, one line per
files setting (1 file, tasks per file fixed): largest buffer on task 0 and on
the other masters, bytes per non-master task, callbacks per task, time.
    plot.py scale.csv out-dir"""
import csv, sys, collections
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

rows = list(csv.DictReader(open(sys.argv[1])))
# one row per (P, numfiles, phase): the last one (tpfN >= P gives 1 file, a repeat)
rows = list({(r["P"], r["numfiles"], r["phase"]): r for r in rows}.values())
out = sys.argv[2]
phases = ["write_open", "write_close", "read_open", "read_close"]

def series(r):
    P, nf, tpf = int(r["P"]), int(r["numfiles"]), int(r["tasks_per_file"])
    return "1 file" if nf == 1 else f"{tpf} tasks/file"

def color(s):
    """the same colour for a series in every panel (a series without points in a panel must not shift them)"""
    if s == "1 file":
        return "C0"
    return {"1024": "C1", "256": "C2"}.get(s.split()[0], "C3")

metrics = [("maxbuf_root", "largest buffer, task 0 [B]"),
           ("maxbuf_master", "largest buffer, other masters [B]"),
           ("bytes_max_other", "bytes per non-master task [B]"),
           ("calls_max", "callbacks per task"),
           ("heap_root", "heap allocated, task 0 [B]"),
           ("cpu_root_ms", "CPU of task 0 [ms]"),
           ("phase_cpu_s", "CPU of the whole simulation [s]")]
fig, axes = plt.subplots(len(metrics), len(phases), figsize=(16, 3.2 * len(metrics)), squeeze=False)
for j, ph in enumerate(phases):
    by = collections.defaultdict(list)
    for r in rows:
        if r["phase"] == ph:
            by[series(r)].append(r)
    for i, (m, label) in enumerate(metrics):
        ax = axes[i][j]
        for s, rs in sorted(by.items()):
            rs.sort(key=lambda r: int(r["P"]))
            pts = [(int(r["P"]), float(r[m])) for r in rs if float(r[m]) > 0]
            if pts:
                ax.plot([x for x, _ in pts], [y for _, y in pts], marker="o", label=s, color=color(s))
        ax.set_xscale("log")
        if m not in ("calls_max",):
            ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.3)
        if i == 0:
            ax.set_title(ph)
        if j == 0:
            ax.set_ylabel(label, fontsize=8)
        if i == len(metrics) - 1:
            ax.set_xlabel("P (simulated tasks)")
axes[0][0].legend(fontsize=8)
fig.tight_layout()
fig.savefig(f"{out}/scale.png", dpi=80)
print(f"wrote {out}/scale.png")
