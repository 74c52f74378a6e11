#!/usr/bin/env python3
"""nodes_table.py RESULTS.jsonl [--all] - the table of the multi-node runs
(ldnodes_run.py --json records) and the same as CSV next to it
(RESULTS.csv): per configuration (driver, mode, launch, latency) and node
count, the operations at the shared file system (metadata in total, OPENs,
OPENDIRs, READ bytes, the most on one node), the most opens of one file and
listings of one directory, each node's RAM-disk peak (largest and mean) and
the times to main / to done of the slowest process. Newest record per point
unless --all."""
import csv
import json
import sys

FIELDS = ("driver", "mode", "launch", "latency_us", "nodes", "ppn", "np", "meta", "lookup",
          "lookup_enoent", "getattr", "open", "opendir", "read_mb", "node_meta_max",
          "files_opened", "max_opens_per_file", "dirs_listed", "max_listings_per_dir",
          "ram_max_mb", "ram_mean_mb", "t_main_max_s", "t_done_max_s", "t_wall_s", "loadavg", "ok")


def row(r):
    c, t = r["counts"], r["counts"]["total"]
    ram = r.get("ramdisk_peak_bytes") or [0]
    mode = r["mode"] + ("-" + r["overlay"] if r.get("overlay") else "")
    return {"driver": r["driver"], "mode": mode, "launch": r["launch"],
            "latency_us": r["latency_us"], "nodes": r["nodes"], "ppn": r["ppn"], "np": r["np"],
            "meta": t["meta"], "lookup": t["lookup"], "lookup_enoent": t["lookup_enoent"],
            "getattr": t["getattr"], "open": t["open"], "opendir": t["opendir"],
            "read_mb": round(t["read_bytes"] / 1e6, 3),
            "node_meta_max": max((n["meta"] for n in c["nodes"]), default=0),
            "files_opened": c.get("files_opened", ""),
            "max_opens_per_file": c.get("max_opens_per_file", ""),
            "dirs_listed": c.get("dirs_listed", ""),
            "max_listings_per_dir": c.get("max_listings_per_dir", ""),
            "ram_max_mb": round(max(ram) / 1e6, 2), "ram_mean_mb": round(sum(ram) / len(ram) / 1e6, 2),
            "t_main_max_s": round(r["t_main_max_s"] or -1, 3),
            "t_done_max_s": round(r["t_done_max_s"] or -1, 3), "t_wall_s": round(r["t_wall_s"], 3),
            "loadavg": round(r.get("loadavg", 0), 1), "ok": "ok" if r["ok"] else "FAIL"}


def load(path, everything=False):
    recs = []
    with open(path) as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                if r.get("bed") == "nodes":
                    recs.append(row(r))
    if not everything:
        newest = {}
        for r in recs:
            newest[(r["driver"], r["mode"], r["launch"], r["latency_us"], r["ppn"], r["nodes"])] = r
        recs = sorted(newest.values(), key=lambda r: (r["latency_us"], r["driver"], r["mode"],
                                                      r["launch"], r["ppn"], r["nodes"]))
    return recs


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 1
    recs = load(sys.argv[1], "--all" in sys.argv)
    out = sys.argv[1].rsplit(".", 1)[0] + ".csv"
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        w.writerows(recs)
    print("drv  mode         launch lat_us  N ppn |   meta   open opendir  readMB nodemax "
          "| opens/f lists/d | ramMB max  mean |  main_s  done_s load ok")
    for r in recs:
        print("%-4s %-12s %-6s %6d %2d %3d | %6d %6d %7d %7.2f %7d | %7s %7s | %8.2f %5.2f | "
              "%7.3f %7.3f %4.1f %s"
              % (r["driver"], r["mode"], r["launch"], r["latency_us"], r["nodes"], r["ppn"],
                 r["meta"], r["open"], r["opendir"], r["read_mb"], r["node_meta_max"],
                 r["max_opens_per_file"], r["max_listings_per_dir"], r["ram_max_mb"],
                 r["ram_mean_mb"], r["t_main_max_s"], r["t_done_max_s"], r["loadavg"], r["ok"]))
    print("nodes_table: wrote %s" % out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
