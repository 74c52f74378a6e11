#!/usr/bin/python3
"""table_big.py - rows of the big runs (bench/scale/run_big.sh) for doc/scale.md: calls per task,
largest buffers, heap per task (task 0 / master / mean), CPU, peak RSS.
    table_big.py scale.csv [more.csv ...]"""
import csv, sys
rows = []
for f in sys.argv[1:]:
    rows += list(csv.DictReader(open(f)))
def b(x):
    x = float(x)
    return f"{x/1e6:.1f} MB" if x >= 1e6 else f"{x/1e3:.1f} kB" if x >= 1e3 else f"{x:.0f} B"
print("| P | files | phase | calls/task | bytes/task, non-master max | largest buffer: task 0 / other master / other | heap: task 0 / master / mean per task | CPU all tasks [s] | RSS peak |")
print("|---:|---:|---|---:|---:|---:|---:|---:|---:|")
for r in rows:
    calls = r["calls_min"] if r["calls_min"] == r["calls_max"] else r["calls_min"] + "-" + r["calls_max"]
    print(f"| {int(r['P']):,} | {r['numfiles']} | {r['phase']} | {calls} | {b(r['bytes_max_other'])} | "
          f"{b(r['maxbuf_root'])} / {b(r['maxbuf_master'])} / {b(r['maxbuf_other'])} | "
          f"{b(r['heap_root'])} / {b(r['heap_master'])} / {b(r['heap_mean'])} | {float(r['phase_cpu_s']):.2f} | "
          f"{float(r['rss_hwm_mb'])/1024:.2f} GiB |")
