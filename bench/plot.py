#!/usr/bin/python3
"""plot.py - PNG plots from sheaf-bench / run_vs_fio.py JSON files.

Usage: bench/plot.py (Debian python3-matplotlib: /usr/bin/python3) [JSON_DIR] [PNG_DIR]   (defaults: bench/results/json, bench/results)
Draws whatever the directory holds (file names as written by bench/sweep.sh
and bench/run_vs_fio.py --out):
  openclose.png  container open+close time vs ranks, with the bare
                 MPI_Gather+MPI_Bcast pair measured in the same run
  manytask.png   write+close time (open to close) vs logical tasks, container vs files
  bw_ranks.png   bandwidth vs ranks per mode (sweep ranks)
  bw_xfer.png    bandwidth vs transfer size (sweep xfer)
  vs_fio.png     bandwidth of each mode and of fio (files vs_fio*.json)
"""
import glob, json, os, re, statistics, sys

import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt

HERE = os.path.dirname(os.path.abspath(__file__))
JD = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, 'results', 'json')
PD = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, 'results')


def load(pattern):
    out = []
    for f in sorted(glob.glob(os.path.join(JD, pattern))):
        try:
            with open(f) as fh:
                out.append((os.path.basename(f), json.load(fh)))
        except ValueError:  # a run still writing it, or one that failed
            print('skipped %s: not valid JSON' % f)
    return out


def save(fig, name):
    p = os.path.join(PD, name)
    fig.tight_layout()
    fig.savefig(p, dpi=90)
    plt.close(fig)
    print('wrote', p)


def openclose():
    rows = []
    for _, j in load('openclose_np*.json'):
        r = j['runs'][0]
        rows.append((r['ranks'], r['write']['time_s']['median'], r['read']['time_s']['median'], r['coll_pair_s']))
    if not rows:
        return
    rows.sort()
    fig, ax = plt.subplots(figsize=(6, 4))
    x = [r[0] for r in rows]
    ax.plot(x, [r[1] for r in rows], 'o-', label='container open+close (write)')
    ax.plot(x, [r[2] for r in rows], 's-', label='container open+close (read)')
    ax.plot(x, [r[3] for r in rows], 'k--', label='one MPI_Gather+MPI_Bcast')
    ax.set_xscale('log', base=2)
    ax.set_yscale('log')
    ax.set_xlabel('MPI ranks (2 cores: >2 oversubscribed)')
    ax.set_ylabel('time [s], median')
    ax.legend(fontsize=8)
    ax.set_title('Container open+close vs MPI collectives')
    save(fig, 'openclose.png')


def manytask():
    data = {}
    for _, j in load('manytask_*.json'):
        for r in j['runs']:
            pol = 'durable' if r['durable'] else 'cached'
            data.setdefault((r['name'].replace('manytask-', ''), pol), []).append((r['tasks'], r['write']['time_s']['median'],
                                                          r['read']['time_s']['median']))
    if not data:
        return
    fig, axs = plt.subplots(1, 2, figsize=(11, 4.5))
    for (name, pol), v in sorted(data.items()):
        v.sort()
        for ax, k, ph in ((axs[0], 1, 'write'), (axs[1], 2, 'read')):
            ax.plot([a[0] for a in v], [a[k] for a in v], 'o-' if 'container' in name else 's--',
                    label='%s %s' % (name, pol))
    for ax, ph in zip(axs, ('write (open to close)', 'read (open to close)')):
        ax.set_xscale('log', base=2)
        ax.set_yscale('log')
        ax.set_xlabel('logical tasks (2 ranks x N/2), 4 KiB each')
        ax.set_ylabel('time [s], median')
        ax.set_title(ph)
        ax.legend(fontsize=6)
    save(fig, 'manytask.png')


def bw_ranks():
    data = {}
    for f, j in load('ranks_*.json'):
        r = j['runs'][0]
        data.setdefault(r['mode'], []).append((r['ranks'], r['write']['mibs']['median'], r['read']['mibs']['median']))
    if not data:
        return
    fig, axs = plt.subplots(1, 2, figsize=(10, 4))
    for m, v in sorted(data.items()):
        v.sort()
        for ax, k in ((axs[0], 1), (axs[1], 2)):
            ax.plot([a[0] for a in v], [a[k] for a in v], 'o-', label=m)
    for ax, ph in zip(axs, ('write', 'read')):
        ax.set_xscale('log', base=2)
        ax.set_xlabel('MPI ranks (one task each)')
        ax.set_ylabel('MiB/s, median')
        ax.set_title('%s bandwidth vs ranks (durable)' % ph)
        ax.legend(fontsize=8)
    save(fig, 'bw_ranks.png')


def bw_xfer():
    data = {}
    for f, j in load('xfer_*.json'):
        m = re.match(r'xfer_(.*)_[^_]+\.json', f).group(1)
        r = j['runs'][0]
        data.setdefault(m, []).append((r['bufsize'], r['write']['mibs']['median'], r['read']['mibs']['median']))
    if not data:
        return
    fig, axs = plt.subplots(1, 2, figsize=(10, 4))
    for m, v in sorted(data.items()):
        v.sort()
        for ax, k in ((axs[0], 1), (axs[1], 2)):
            ax.plot([a[0] / 1024 for a in v], [a[k] for a in v], 'o-', label=m)
    for ax, ph in zip(axs, ('write', 'read')):
        ax.set_xscale('log', base=2)
        ax.set_xlabel('transfer size [KiB]')
        ax.set_ylabel('MiB/s, median')
        ax.set_title('%s bandwidth vs transfer size (durable)' % ph)
        ax.legend(fontsize=8)
    save(fig, 'bw_xfer.png')


def vs_fio():
    runs = load('vs_fio*.json')
    if not runs:
        return
    fig, axs = plt.subplots(1, len(runs), figsize=(4.5 * len(runs), 4), squeeze=False)
    for ax, (f, j) in zip(axs[0], runs):
        names, w, r = ['fio'], [], []
        w.append(statistics.median(x['mibs'] for x in j['fio']['write']))
        r.append(statistics.median(x['mibs'] for x in j['fio']['read']))
        for m, b in j['bench'].items():
            names.append(m)
            w.append(statistics.median(x['mibs'] for x in b['write']))
            r.append(statistics.median(x['mibs'] for x in b['read']))
        xs = range(len(names))
        ax.bar([x - 0.2 for x in xs], w, 0.4, label='write')
        ax.bar([x + 0.2 for x in xs], r, 0.4, label='read')
        ax.set_xticks(list(xs))
        ax.set_xticklabels(names, rotation=20, fontsize=8)
        ax.set_ylabel('MiB/s, median')
        ax.set_title('%d x %d MiB, %s%s' % (j['np'], j['size'] >> 20, 'durable' if j['durable'] else 'cached',
                                          ' ' + j['extra'] if j['extra'] else ''), fontsize=9)
        ax.legend(fontsize=8)
    save(fig, 'vs_fio.png')


if __name__ == '__main__':
    os.makedirs(PD, exist_ok=True)
    for fn in (openclose, manytask, bw_ranks, bw_xfer, vs_fio):
        fn()
