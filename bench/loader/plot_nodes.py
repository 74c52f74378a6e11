#!/usr/bin/env python3
"""plot_nodes.py RESULTS.jsonl PREFIX - two plots of the multi-node runs
(ldnodes_run.py --json records, newest per point):
  PREFIX-time.png  time to main (solid) and to done (dashed) of the slowest
                   process against the node count, one colour per
                   configuration (driver, mode, injected latency)
  PREFIX-ops.png   metadata operations at the shared file system against
                   the node count (log-log), runs without injected latency
Needs matplotlib (Debian: python3-matplotlib, i.e. /usr/bin/python3)."""
import os
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nodes_table  # noqa: E402


def series(recs, pick, key):
    out = {}
    for r in recs:
        if r["ok"] != "ok" or not pick(r):
            continue
        label = "%s %s (%s), %d x %d us/op" % (
            {"c": "C", "py": "Python", "mpmd": "MPMD"}[r["driver"]], r["mode"], r["launch"],
            r["ppn"], r["latency_us"])
        out.setdefault(label, {})[r["nodes"]] = key(r)
    return out


def plot(pts, path, ylabel, title, dashed=None, logy=False):
    if not pts:
        print("plot_nodes: nothing for %s" % path)
        return
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    for label, p in sorted(pts.items()):
        xs = sorted(p)
        line, = ax.plot(xs, [p[x][0] for x in xs], marker="o", label=label)
        if dashed:
            ax.plot(xs, [p[x][1] for x in xs], marker="x", linestyle="--",
                    color=line.get_color())
    ax.set_xlabel("simulated nodes (N)")
    ax.set_ylabel(ylabel)
    ax.set_xscale("log", base=2)
    if logy:
        ax.set_yscale("log")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print("plot_nodes: wrote %s" % path)


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 1
    recs = nodes_table.load(sys.argv[1])
    t = series(recs, lambda r: r["latency_us"] > 0 and r["driver"] != "mpmd",
               lambda r: (r["t_main_max_s"], r["t_done_max_s"]))
    plot(t, sys.argv[2] + "-time.png", "time from launch, slowest process (s)",
         "Time to main (solid) / done (dashed) vs nodes, injected latency", dashed=True)
    o = series(recs, lambda r: r["latency_us"] == 0 and r["driver"] != "mpmd",
               lambda r: (max(r["meta"], 1),))
    plot(o, sys.argv[2] + "-ops.png", "metadata operations at the shared FS",
         "Shared file system operations vs nodes (no latency)", logy=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
