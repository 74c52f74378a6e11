#!/usr/bin/python3
"""plot_crossover.py JSON... -o OUT.png - time of init + Q queries, sync vs
async, one panel per fgfs-bench run, with the number of mount points the
async init classified marked."""
import json
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt


def main(argv):
    out = "crossover.png"
    files = []
    it = iter(argv)
    for a in it:
        if a == "-o":
            out = next(it)
        else:
            files.append(a)
    fig, axes = plt.subplots(1, len(files), figsize=(4.2 * len(files), 3.6), squeeze=False)
    for ax, f in zip(axes[0], files):
        rows = [json.loads(l) for l in open(f) if l.strip()]
        q = [r["Q"] for r in rows]
        ax.plot(q, [r["sync_s"] * 1e3 for r in rows], "o-", label="sync (collective per query)")
        ax.plot(q, [r["async_s"] * 1e3 for r in rows], "s-", label="async (classify mounts once)")
        m = rows[0]["mounts"]
        ax.axvline(m, color="grey", ls="--", lw=1)
        ax.text(m, ax.get_ylim()[1] * 0.92, f" {m} mount points", color="grey", fontsize=8)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("queries Q")
        ax.set_ylabel("init + Q queries [ms]")
        ax.set_title(f"{rows[0]['layer']}, P = {rows[0]['P']}", fontsize=10)
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print("wrote", out)


if __name__ == "__main__":
    main(sys.argv[1:])
