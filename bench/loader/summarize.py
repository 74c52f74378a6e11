#!/usr/bin/env python3
"""summarize.py RESULTS.jsonl [--all] - a table of the loader-bed runs
(ldbed_run.py --json records): per configuration and process count, the
requests that reached the shared tree in total, of the first driver process
and of each later one (the most), of other processes (launcher, server), the
READ bytes, and the times to main / to done (slowest process, from launch).
Only the newest record of each configuration unless --all."""
import json
import sys

COLS = ("drv launch   wrapper          lat_us  np |   meta  lookups  enoent getattr  open"
        " opendir   readMB | first  rest/p  others |  main_s  done_s ok")


def key(r):
    return (r["driver"], r["launch"], r.get("wrapper", ""), r["latency_us"],
            r["read_latency_us"], r.get("keep_cache"), r.get("env_inherit"), r.get("nodes", 0),
            json.dumps(r["params"], sort_keys=True), r["np"])


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 1
    recs = []
    with open(sys.argv[1]) as f:
        for line in f:
            if line.strip():
                recs.append(json.loads(line))
    if "--all" not in sys.argv:
        newest = {}
        for r in recs:
            newest[key(r)] = r
        recs = sorted(newest.values(), key=key)
    print(COLS)
    for r in recs:
        c, t = r["counts"], r["counts"]["total"]
        first = c["first"]["meta"] if c["first"] else 0
        print("%-3s %-8s %-16.16s %6d %3d | %6d %8d %7d %7d %5d %7d %8.2f | %5d %7d %7d | %7.3f %7.3f %s"
              % (r["driver"], r["launch"], r.get("wrapper", "") or "-", r["latency_us"], r["np"],
                 t["meta"], t["lookup"], t["lookup_enoent"], t["getattr"], t["open"],
                 t["opendir"], t["read_bytes"] / 1e6, first, c["rest_max_meta"],
                 c.get("others_meta", 0), r["t_main_max_s"] or -1, r["t_done_max_s"] or -1,
                 "ok" if r["ok"] else "FAIL"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
