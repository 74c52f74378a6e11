#!/usr/bin/python3
"""table.py - the sweep's CSV as a markdown table (doc/scale.md, bench/RESULTS.md).
    table.py scale.csv [phase ...]"""
import csv, sys

rows = list(csv.DictReader(open(sys.argv[1])))
rows = list({(r["P"], r["numfiles"], r["phase"]): r for r in rows}.values())  # tpfN >= P repeats 1 file
phases = sys.argv[2:] or ["write_open", "write_close", "read_open", "read_close"]
def kb(x):
    x = float(x)
    return f"{x / 1e6:.1f} MB" if x >= 1e6 else f"{x / 1e3:.1f} kB" if x >= 1e3 else f"{x:.0f} B"
print("| P | files | tasks/file | phase | calls/task | sent max / mean | recv max / mean | bytes/task, non-master max "
      "| largest buffer: task 0 / other master / other | heap: task 0 / master | CPU task 0 / master [ms] "
      "| CPU all tasks [s] |")
print("|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
for r in sorted(rows, key=lambda r: (int(r["P"]), int(r["numfiles"]), phases.index(r["phase"]) if r["phase"] in phases else 9)):
    if r["phase"] not in phases:
        continue
    calls = r["calls_max"] if r["calls_min"] == r["calls_max"] else f"{r['calls_min']}-{r['calls_max']}"
    print(f"| {int(r['P']):,} | {r['numfiles']} | {r['tasks_per_file']} | {r['phase']} | {calls} "
          f"| {kb(r['sent_max'])} / {float(r['sent_mean']):.0f} B | {kb(r['recv_max'])} / {float(r['recv_mean']):.0f} B "
          f"| {r['bytes_max_other']} B | {kb(r['maxbuf_root'])} / {kb(r['maxbuf_master'])} / {kb(r['maxbuf_other'])} "
          f"| {kb(r['heap_root'])} / {kb(r['heap_master'])} | {float(r['cpu_root_ms']):.1f} / "
          f"{float(r['cpu_master_max_ms']):.1f} | {float(r['phase_cpu_s']):.2f} |")
