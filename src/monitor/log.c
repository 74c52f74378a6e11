/* log.c - the monitored process's log: one sheaf container (one task) per
 * process in the job's directory, SHEAF_MONITOR, named
 * <host>.<pid>.<start ns>.<n>.smon. A snapshot appends the NAME records of
 * new ids, the FILE records of every record changed since the previous
 * snapshot (cumulative counters) and a SNAP record, then sion_flush makes it
 * durable: a process killed later keeps everything up to that snapshot
 * (`sheaf recover`, or `sheaf stats summary --recover`, closes the log).
 * Snapshots are taken by the monitored operations themselves, at most one
 * per SHEAF_MONITOR_INTERVAL_MS, and a last one at exit, exec and _exit: the
 * monitor has no thread of its own. Nothing here is collective. */
#define _GNU_SOURCE
#include "mon.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sion.h"
#include "sion_serial.h"
#include "sheaf.h"

#define BUFRECS 64
static unsigned char mon_buf[BUFRECS * MON_REC_SIZE];
static int mon_nbuf;

static int rank_from_env(void)
{
    static const char *const vars[] = {"SHEAF_MONITOR_RANK", "PMI_RANK", "PMIX_RANK", "OMPI_COMM_WORLD_RANK",
                                       "SLURM_PROCID"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *s = getenv(vars[i]);
        if (s && *s) {
            char *end;
            long v = strtol(s, &end, 10);
            if (!*end && v >= 0 && v < 0x7fffffff)
                return (int)v;
        }
    }
    return -1;
}

static int flush_buf(void)
{
    if (!mon_nbuf)
        return 0;
    size_t want = (size_t)mon_nbuf * MON_REC_SIZE;
    size_t got = sion_fwrite(mon_buf, 1, want, mon_g.sid);
    mon_nbuf = 0;
    return got == want ? 0 : -1;
}

static int put(const mon_rec *r)
{
    mon_rec_pack(r, mon_buf + (size_t)mon_nbuf * MON_REC_SIZE);
    if (++mon_nbuf == BUFRECS)
        return flush_buf();
    return 0;
}

static void give_up(const char *what)
{
    dprintf(2, "sheaf monitor (pid %ld): %s: %s; monitoring off for this process\n", (long)getpid(), what,
            sheaf_last_error());
    mon_g.on = 0;
}

static int open_log(void)
{
    char host[MON_HOST_MAX] = "";
    gethostname(host, sizeof host - 1);
    for (char *p = host; *p; p++)
        if (*p == '/')
            *p = '_';
    if (mkdir(mon_g.dir, 0777) != 0 && errno != EEXIST) {
        dprintf(2, "sheaf monitor: cannot create the log directory %s: %s; monitoring off\n", mon_g.dir,
                strerror(errno));
        mon_g.on = 0;
        return -1;
    }
    char name[1200];
    snprintf(name, sizeof name, "%s/%s.%ld.%llu.%llu.smon", mon_g.dir, host, (long)getpid(),
             (unsigned long long)mon_g.start_ns, (unsigned long long)mon_g.log_seq);
    int ntasks = 1, nfiles = 1, rank0 = 0, *ranks = &rank0;
    sion_int64 chunk = 64 * 1024, *chunks = &chunk;
    sion_int32 fsblk = -1;
    mon_g.sid = sion_open(name, "wb,posix", &ntasks, &nfiles, &chunks, &fsblk, &ranks, NULL);
    if (mon_g.sid < 0) {
        mon_g.sid = -1;
        give_up(name);
        return -1;
    }
    mon_rec r = {.type = MON_T_HEAD};
    mon_head *h = &r.u.head;
    h->version = MON_VERSION;
    h->rank = rank_from_env();
    h->max_files = mon_g.max_files;
    h->max_dirs = mon_g.max_dirs;
    h->pid = (uint64_t)getpid();
    h->ppid = (uint64_t)getppid();
    h->start_ns = mon_g.start_ns;
    h->interval_ns = mon_g.interval_ns;
    h->align = mon_g.align;
    h->max_targets = mon_g.max_targets;
    memcpy(h->host, host, sizeof host);
    ssize_t n = readlink("/proc/self/exe", h->exe, sizeof h->exe - 1);
    h->exe[n > 0 ? n : 0] = 0;
    return put(&r);
}

static int put_name(const mon_frec *f)
{
    size_t total = strlen(f->name);
    if (total >= MON_NAME_MAX)
        total = MON_NAME_MAX - 1;
    if (total == 0)
        total = 0;
    for (size_t off = 0; off < total; off += MON_NAME_SEG) {
        mon_rec r = {.type = MON_T_NAME};
        r.u.name.id = f->id;
        r.u.name.offset = (uint32_t)off;
        r.u.name.total = (uint32_t)total;
        r.u.name.len = (uint32_t)(total - off < MON_NAME_SEG ? total - off : MON_NAME_SEG);
        memcpy(r.u.name.seg, f->name + off, r.u.name.len);
        if (put(&r))
            return -1;
    }
    return 0;
}

/* the TGT record of a record's target, once per log */
static int put_target(uint32_t t)
{
    mon_target *tg = &mon_g.targets[t];
    if (tg->named)
        return 0;
    mon_rec r = {.type = MON_T_TGT};
    r.u.tgt.id = t;
    r.u.tgt.kind = tg->kind;
    memcpy(r.u.tgt.fstype, tg->fstype, sizeof r.u.tgt.fstype);
    memcpy(r.u.tgt.name, tg->name, sizeof r.u.tgt.name);
    r.u.tgt.fstype[MON_FSTYPE_MAX - 1] = 0;
    r.u.tgt.name[MON_TGT_NAME - 1] = 0;
    tg->named = 1;
    return put(&r);
}

static int any_dirty(size_t nrec)
{
    for (size_t i = 0; i < nrec; i++)
        if (__atomic_load_n(&mon_g.recs[i].dirty, __ATOMIC_RELAXED))
            return 1;
    return 0;
}

void mon_snapshot(int final)
{
    if (!mon_g.on)
        return;
    mon_busy++;
    if (final)
        pthread_mutex_lock(&mon_g.lock);
    else if (pthread_mutex_trylock(&mon_g.lock) != 0)
        goto out;
    uint64_t now = mon_now_ns();
    if (!final && (int64_t)(now - mon_g.last_snap_ns) < (int64_t)mon_g.interval_ns)
        goto unlock;
    mon_g.last_snap_ns = now;
    size_t nrec = mon_nrec();
    if (!any_dirty(nrec) && !(final && mon_g.sid >= 0))
        goto unlock;
    if (mon_g.sid < 0 && open_log() != 0)
        goto unlock;
    uint64_t nfile = 0;
    int err = 0;
    for (size_t i = 0; i < nrec && !err; i++) {
        mon_frec *f = &mon_g.recs[i];
        if (!__atomic_load_n(&f->dirty, __ATOMIC_RELAXED))
            continue;
        __atomic_store_n(&f->dirty, 0, __ATOMIC_RELAXED);
        if (!f->named) {
            if (put_name(f))
                err = 1;
            f->named = 1;
        }
        if (put_target(f->tgt))
            err = 1;
        mon_rec r = {.type = MON_T_FILE};
        r.u.file.id = f->id;
        r.u.file.tgt = f->tgt + 1;
        r.u.file.kind = f->kind;
        r.u.file.snap = mon_g.snap;
        for (int c = 0; c < MC_N; c++)
            r.u.file.c[c] = __atomic_load_n(&f->c[c], __ATOMIC_RELAXED);
        err |= put(&r) != 0;
        nfile++;
    }
    mon_rec s = {.type = MON_T_SNAP};
    s.u.snap.snap = mon_g.snap++;
    s.u.snap.time_ns = now;
    s.u.snap.nfile = nfile;
    s.u.snap.final = (uint64_t) final;
    if (err || put(&s) || flush_buf()) {
        give_up("writing the log failed");
        goto unlock;
    }
    mon_live(now, 1, final);
    if (final) {
        if (sion_close(mon_g.sid) != SION_SUCCESS)
            give_up("closing the log failed");
        mon_g.sid = -1;
        mon_reset();
    } else if (sion_flush(mon_g.sid) != SION_SUCCESS && sheaf_last_error()[0]) {
        give_up("flushing the log failed");
    }
    /* the interval runs from the end of the snapshot (a slow flush does not shorten it) */
    __atomic_store_n(&mon_g.last_snap_ns, mon_now_ns(), __ATOMIC_RELAXED);
unlock:
    pthread_mutex_unlock(&mon_g.lock);
out:
    mon_busy--;
}

void mon_tick(uint64_t now)
{
    if ((int64_t)(now - __atomic_load_n(&mon_g.last_snap_ns, __ATOMIC_RELAXED)) >= (int64_t)mon_g.interval_ns)
        mon_snapshot(0);
    else if (mon_g.live_interval_ns &&
             (int64_t)(now - __atomic_load_n(&mon_g.live_last_ns, __ATOMIC_RELAXED)) >= (int64_t)mon_g.live_interval_ns)
        mon_live(now, 0, 0); /* the online view's file, when its interval has passed */
}
