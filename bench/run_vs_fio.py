#!/usr/bin/env python3
"""run_vs_fio.py - run sheaf-bench modes side by side with fio (the disk's
limit) on the same number of processes, bytes per process, transfer size and
fsync policy, in the same directory; print bandwidths and ratios, save JSON.

fio: one file per job in DIR, ioengine=psync, direct=0, fallocate=none,
create_on_open=1 (file creation inside the timed run, as in sheaf-bench),
fsync_on_close=1 and invalidate=1 (page cache dropped before the read) when
--durable; invalidate=0 (reads from the page cache) otherwise. --fio-shared
uses one shared file with offset_increment instead. Repetitions are the
outer loop (fio, then each mode once per round, sheaf-bench with --reps 1),
so a drift in load hits all alike; ratios are of medians, "paired" is the
median of the per-round ratios. --wait-idle S waits before each run for the
machine to be quiet (others' jobs); the load seen is recorded in the JSON.

Example:
  bench/run_vs_fio.py -n 8 -s 256M -b 1M --durable --reps 3 \
      --modes container,tasklocal --dir /work/main/build-bench/data \
      --out bench/results/vs_fio_8x256M_durable.json
"""
import argparse, json, os, shutil, statistics, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))


def parse_size(s):
    m = {'k': 1 << 10, 'm': 1 << 20, 'g': 1 << 30, 't': 1 << 40}
    s = s.strip()
    return int(float(s[:-1]) * m[s[-1].lower()]) if s[-1].lower() in m else int(s)


def sh(cmd, **kw):
    print('+ ' + ' '.join(cmd), flush=True)
    return subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True, **kw).stdout


def fio_once(a, rw, d):
    cmd = ['fio', '--name=job', '--rw=' + rw, '--numjobs=%d' % a.np, '--size=%d' % a.size, '--bs=%d' % a.bs,
           '--ioengine=psync', '--direct=0', '--fallocate=none', '--group_reporting', '--output-format=json',
           '--invalidate=%d' % (1 if a.durable else 0)]
    if rw == 'write':
        cmd += ['--create_on_open=1']
        if a.durable:
            cmd += ['--fsync_on_close=1']
    if a.fio_shared:
        cmd += ['--filename=' + os.path.join(d, 'fio.shared'), '--offset_increment=%d' % a.size]
    else:
        cmd += ['--directory=' + d]
    out = sh(cmd)
    j = json.loads(out[out.index('{'):])
    job = j['jobs'][0]
    key = 'write' if rw == 'write' else 'read'
    return {'mibs': job[key]['bw_bytes'] / 1048576.0, 'runtime_s': job[key]['runtime'] / 1000.0,
            'bytes': job[key]['io_bytes']}


def clean(d):
    for f in os.listdir(d):
        if f.startswith('job.') or f == 'fio.shared':
            os.unlink(os.path.join(d, f))


def busy():
    """Runnable tasks in the system besides the reader, and the load average."""
    with open('/proc/stat') as f:
        run = [int(l.split()[1]) for l in f if l.startswith('procs_running')][0]
    with open('/proc/loadavg') as f:
        return run - 1, f.read().split()[0]


def wait_idle(a):
    """With --wait-idle S: wait (at most S seconds) until no other task is
    runnable for 3 s in a row, so that a concurrent job does not skew a rep."""
    t, quiet = 0, 0
    while a.wait_idle and t < a.wait_idle and quiet < 3:
        quiet = quiet + 1 if busy()[0] <= 0 else 0
        time.sleep(1)
        t += 1
    return {'waited_s': t, 'runnable_after': busy()[0], 'loadavg': busy()[1]}


def bench_run(a, spec, d):
    mode, _, opts = spec.partition('@')  # "container@-n 8": mode and extra options
    js = os.path.join(d, 'bench-%s.json' % mode)
    cmd = [a.mpiexec, '-n', str(a.np), a.bench, '--mode=' + mode, '-f', os.path.join(d, 'bench.sion'),
           '-s', str(a.size), '-b', str(a.bs), '--reps', '1', '--json', js, '-X']
    cmd += ['--durable'] if a.durable else ['--cached']
    cmd += a.extra.split() if a.extra else []
    cmd += opts.split()
    env = dict(os.environ, OMP_WAIT_POLICY='passive')
    print(sh(cmd, env=env), end='')
    with open(js) as f:
        j = json.load(f)
    os.unlink(js)
    r = j['runs'][0]
    return {ph: dict(r[ph]['reps'][0], mismatches=r[ph]['mismatches']) for ph in ('write', 'read')}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('-n', '--np', type=int, default=2)
    p.add_argument('-s', '--size', default='64M', help='bytes per process')
    p.add_argument('-b', '--bs', default='1M', help='transfer size')
    p.add_argument('--durable', action='store_true')
    p.add_argument('--reps', type=int, default=3)
    p.add_argument('--modes', default='container,tasklocal',
                   help='comma-separated sheaf-bench modes; MODE@OPTS adds options, e.g. "container@-n 8"')
    p.add_argument('--extra', default='', help='extra sheaf-bench options, e.g. "-L"')
    p.add_argument('--fio-shared', action='store_true')
    p.add_argument('--wait-idle', type=int, default=0, metavar='S',
                   help='before each run wait up to S s for no other runnable task')
    p.add_argument('--dir', default=None, help='scratch directory (default: a new one under /tmp)')
    p.add_argument('--bench', default=os.path.join(HERE, '..', 'build-bench', 'bench', 'sheaf-bench'))
    p.add_argument('--mpiexec', default='mpiexec')
    p.add_argument('--out', default=None, help='JSON file with all numbers')
    a = p.parse_args()
    a.size, a.bs = parse_size(a.size), parse_size(a.bs)
    d = a.dir or tempfile.mkdtemp(prefix='sheaf-vs-fio.')
    os.makedirs(d, exist_ok=True)
    out = {'np': a.np, 'size': a.size, 'bs': a.bs, 'durable': a.durable, 'reps': a.reps, 'dir': d,
           'fio_shared': a.fio_shared, 'extra': a.extra, 'argv': sys.argv, 'load': [],
           'fio': {'write': [], 'read': []}, 'bench': {m: {'write': [], 'read': []} for m in a.modes.split(',')}}
    # repetitions outermost: fio and every mode once per round, so that a
    # drift in the machine's load hits all of them alike
    for rep in range(a.reps):
        out['load'].append(wait_idle(a))
        clean(d)
        out['fio']['write'].append(fio_once(a, 'write', d))
        out['fio']['read'].append(fio_once(a, 'read', d))
        clean(d)
        for m in out['bench']:
            out['load'].append(wait_idle(a))
            r = bench_run(a, m, d)
            for ph in ('write', 'read'):
                out['bench'][m][ph].append(r[ph])
    if not a.dir:
        shutil.rmtree(d, ignore_errors=True)
    rows, med = [], {}
    for ph in ('write', 'read'):
        f = [r['mibs'] for r in out['fio'][ph]]
        med[('fio', ph)] = statistics.median(f)
        rows.append(('fio', ph, med[('fio', ph)], min(f), max(f), 1.0, ''))
        for m, b in out['bench'].items():
            v = [r['mibs'] for r in b[ph]]
            med[(m, ph)] = statistics.median(v)
            paired = statistics.median(x / y for x, y in zip(v, f))
            mism = sum(r['mismatches'] for r in b[ph])
            rows.append((m, ph, med[(m, ph)], min(v), max(v), med[(m, ph)] / med[('fio', ph)],
                         '  paired %.3fx%s' % (paired, ('  MISMATCHES %d' % mism) if mism else '')))
    pol = 'durable' if a.durable else 'cached'
    print('\n%d processes x %s B, transfer %s B, %s, %d reps (MiB/s, median [min max], ratio to fio)'
          % (a.np, a.size, a.bs, pol, a.reps))
    for m, ph, md, mn, mx, ratio, extra in rows:
        print('  %-14s %-5s %9.1f [%9.1f %9.1f]  %.3fx fio%s' % (m, ph, md, mn, mx, ratio, extra))
    ratios = {'%s/fio %s' % (m, ph): med[(m, ph)] / med[('fio', ph)] for m in out['bench'] for ph in ('write', 'read')}
    if 'container' in out['bench'] and 'tasklocal' in out['bench']:
        for ph in ('write', 'read'):
            ratios['container/tasklocal %s' % ph] = med[('container', ph)] / med[('tasklocal', ph)]
            print('  container/tasklocal %-5s %.3fx' % (ph, ratios['container/tasklocal %s' % ph]))
    out['ratios'] = ratios
    if a.out:
        with open(a.out, 'w') as f:
            json.dump(out, f, indent=1)
        print('wrote', a.out)


if __name__ == '__main__':
    main()
