#!/usr/bin/env python3
"""plot.py CSV PNG - the study's scatter figure from a sheaf-ckpt-bench --csv
file: time blocked in sheaf_ckpt_write per rank (every step of every rep as a
point), one panel per strategy, rbio workers and writers distinguished; rbio
workers' perceived time (until their Isends returned) as well."""
import csv
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

rows = list(csv.reader(open(sys.argv[1])))
# rep,strategy,rank,role,step,blocked_s,perceived_s,io_s ; role 0 rank, 1 worker, 2 writer, 3 dedicated writer
strategies = sorted({r[1] for r in rows}, key=["fpp", "coio", "rbio", "sion"].index)
fig, axes = plt.subplots(1, len(strategies), figsize=(5 * len(strategies), 4), sharey=True, squeeze=False)
for ax, s in zip(axes[0], strategies):
    for role, label, mk in ((0, "rank", "o"), (1, "worker", "o"), (2, "writer", "s"), (3, "dedicated writer", "s")):
        pts = [(int(r[2]), float(r[5])) for r in rows if r[1] == s and int(r[3]) == role]
        if pts:
            ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=12, marker=mk, label=f"{label}: blocked")
    perc = [(int(r[2]), float(r[6])) for r in rows if r[1] == s and int(r[3]) == 1]
    if perc:
        ax.scatter([p[0] for p in perc], [max(p[1], 1e-6) for p in perc], s=8, marker="x",
                   label="worker: copying (data out of the arrays)")
    ax.set_yscale("log")
    ax.set_title(s)
    ax.set_xlabel("rank")
    ax.legend(fontsize=7)
axes[0][0].set_ylabel("seconds per checkpoint call")
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=90)
print("wrote", sys.argv[2])
