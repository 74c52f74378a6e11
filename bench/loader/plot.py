#!/usr/bin/env python3
"""plot.py RESULTS.jsonl OUT.png - time to main (solid) and to done (dashed:
all libraries called / all modules imported) of the slowest process, from
the launch, against the process count; one colour per configuration
(driver, launch, wrapper, injected latency), from ldbed_run.py --json
records (the newest record per point). Needs matplotlib (Debian:
python3-matplotlib, i.e. /usr/bin/python3)."""
import json
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 1
    series = {}
    with open(sys.argv[1]) as f:
        for line in f:
            if not line.strip():
                continue
            r = json.loads(line)
            if not r["ok"] or r["t_main_max_s"] is None:
                continue
            label = "%s %s%s, %d us/op" % (
                {"c": "C driver", "py": "Python driver"}[r["driver"]], r["launch"],
                " + " + r["wrapper"] if r.get("wrapper") else "", r["latency_us"])
            series.setdefault(label, {})[r["np"]] = (r["t_main_max_s"], r["t_done_max_s"])
    if not series:
        print("plot: no successful records in %s" % sys.argv[1], file=sys.stderr)
        return 1
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for label, pts in sorted(series.items()):
        xs = sorted(pts)
        line, = ax.plot(xs, [pts[x][0] for x in xs], marker="o", label=label + ": main")
        ax.plot(xs, [pts[x][1] for x in xs], marker="x", linestyle="--",
                color=line.get_color(), label=label + ": done")
    ax.set_xlabel("processes")
    ax.set_ylabel("time from launch, slowest process (s)")
    ax.set_xscale("log", base=2)
    ax.set_title("Loader bed: time to main / to done against process count")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)
    print("plot: wrote %s" % sys.argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main())
