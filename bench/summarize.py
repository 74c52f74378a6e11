#!/usr/bin/env python3
"""summarize.py - Markdown tables (as in RESULTS.md) from the JSON files in
bench/results/json (or the directory given): fio comparisons, many-task
sweep, open/close scaling, bandwidth vs ranks and transfer size."""
import glob, json, os, re, statistics, sys

JD = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), 'results', 'json')


def load(pat):
    out = []
    for f in sorted(glob.glob(os.path.join(JD, pat))):
        try:
            with open(f) as fh:
                out.append((os.path.basename(f), json.load(fh)))
        except ValueError:  # a run still writing it, or one that failed
            print('(skipped %s: not valid JSON)' % f, file=sys.stderr)
    return out


def vs_fio():
    for f, j in load('vs_fio_*.json'):
        print('\n**%s** — %d processes x %d MiB, transfer %d KiB, %s, %d rounds\n' % (
            f, j['np'], j['size'] >> 20, j['bs'] >> 10, 'durable' if j['durable'] else 'cached', j['reps']))
        print('| run | write MiB/s median [min, max] | write vs fio | read MiB/s median [min, max] | read vs fio |')
        print('|---|---|---|---|---|')
        fm = {ph: statistics.median(r['mibs'] for r in j['fio'][ph]) for ph in ('write', 'read')}
        rows = [('fio', j['fio'])] + list(j['bench'].items())
        for m, b in rows:
            cells = []
            for ph in ('write', 'read'):
                v = [r['mibs'] for r in b[ph]]
                cells += ['%.0f [%.0f, %.0f]' % (statistics.median(v), min(v), max(v)),
                          '%.2fx' % (statistics.median(v) / fm[ph])]
            print('| %s | %s |' % (m.replace('@', ' '), ' | '.join(cells)))
        for k, v in j.get('ratios', {}).items():
            if k.startswith('container/'):
                print('\n- %s: %.2fx' % (k, v), end='')
        print()


def manytask():
    rows = {}
    for f, j in load('manytask_*.json'):
        api = 'mapped' if 'mapped' in f else 'hybrid'
        for r in j['runs']:
            pol = 'durable' if r['durable'] else 'cached'
            kind = 'container' if r['name'].endswith('container') else 'files'
            rows.setdefault((api, pol, r['tasks']), {})[kind] = r
    if not rows:
        return
    print('\n| API | policy | tasks | container write s | files write s | files/container | container read s | files read s | files/container |')
    print('|---|---|---|---|---|---|---|---|---|')
    for (api, pol, n), d in sorted(rows.items(), key=lambda x: (x[0][0], x[0][1], x[0][2])):
        if 'container' not in d or 'files' not in d:
            continue
        c, t = d['container'], d['files']
        cw, tw = c['write']['time_s']['median'], t['write']['time_s']['median']
        cr, tr = c['read']['time_s']['median'], t['read']['time_s']['median']
        print('| %s | %s | %d | %.4f | %.4f | %.1fx | %.4f | %.4f | %.1fx |' % (api, pol, n, cw, tw, tw / cw, cr, tr, tr / cr))


def openclose():
    rows = []
    for f, j in load('openclose_np*.json'):
        r = j['runs'][0]
        rows.append((r['ranks'], r['write']['time_s']['median'], r['read']['time_s']['median'], r['coll_pair_s']))
    if not rows:
        return
    print('\n| ranks | write open+close s | read open+close s | one Gather+Bcast s | write / pair | read / pair |')
    print('|---|---|---|---|---|---|')
    for n, w, r, p in sorted(rows):
        print('| %d | %.5f | %.5f | %.6f | %.1f | %.1f |' % (n, w, r, p, w / p, r / p))


def sweeps():
    for pat, key, lab in (('ranks_*.json', 'ranks', 'ranks'), ('xfer_*.json', 'bufsize', 'transfer B')):
        rows = {}
        for f, j in load(pat):
            r = j['runs'][0]
            name = re.match(r'(?:ranks|xfer)_(.*?)_[^_]+\.json', f).group(1)
            rows.setdefault(r[key], {})[name] = (r['write']['mibs']['median'], r['read']['mibs']['median'])
        if not rows:
            continue
        names = sorted({n for v in rows.values() for n in v})
        print('\n| %s | %s |' % (lab, ' | '.join('%s write / read MiB/s' % n for n in names)))
        print('|---|' + '---|' * len(names))
        for k in sorted(rows):
            print('| %s | %s |' % (k, ' | '.join('%.0f / %.0f' % rows[k][n] if n in rows[k] else '-' for n in names)))


if __name__ == '__main__':
    vs_fio()
    manytask()
    openclose()
    sweeps()
