/* table.c - the monitored process's file records: a table whose size is fixed
 * at start by SHEAF_MONITOR_MAX_FILES and SHEAF_MONITOR_MAX_DIRS, never by the
 * number of files the program touches. Past the budget a file's operations
 * go to the aggregate of its directory (MON_K_DIR), past the directory budget
 * to one MON_K_OTHER record; an aggregate's MC_FILES counts the opens folded
 * into it. Counting takes no lock: plain adds while the process has one
 * thread (__libc_single_threaded), relaxed atomic adds once it has more. */
#define _GNU_SOURCE
#include "mon.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/single_threaded.h>
#include <time.h>
#include <unistd.h>

static uint64_t env_u64(const char *name, uint64_t def, uint64_t lo, uint64_t hi)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return def;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v < lo || v > hi) {
        dprintf(2, "sheaf monitor: %s=%s is not a number in [%llu, %llu]: using %llu\n", name, s,
                (unsigned long long)lo, (unsigned long long)hi, (unsigned long long)def);
        return def;
    }
    return v;
}

static void fork_prepare(void) { pthread_mutex_lock(&mon_g.lock); }
static void fork_parent(void) { pthread_mutex_unlock(&mon_g.lock); }
static void fork_child(void)
{
    pthread_mutex_init(&mon_g.lock, NULL);
    mon_g.sid = -1; /* the parent's log stays the parent's: never written or closed here */
    mon_g.pid = (int)getpid();
    mon_reset();
}

void mon_init(void)
{
    const char *dir = getenv("SHEAF_MONITOR");
    if (!dir || !*dir || strlen(dir) >= sizeof mon_g.dir)
        return;
    strcpy(mon_g.dir, dir);
    mon_g.max_files = (uint32_t)env_u64("SHEAF_MONITOR_MAX_FILES", 4096, 1, MON_IDS_MAX / 2);
    mon_g.max_dirs = (uint32_t)env_u64("SHEAF_MONITOR_MAX_DIRS", 256, 1, MON_IDS_MAX / 4);
    mon_g.interval_ns = env_u64("SHEAF_MONITOR_INTERVAL_MS", 10000, 10, 86400000) * 1000000u;
    mon_g.align = env_u64("SHEAF_MONITOR_ALIGN", 4096, 1, 1u << 30);
    mon_g.align_mask = (mon_g.align & (mon_g.align - 1)) ? 0 : mon_g.align - 1;
    mon_g.max_targets = (uint32_t)env_u64("SHEAF_MONITOR_MAX_TARGETS", 64, 1, MON_TGT_MAX);
    size_t nrec = mon_nrec();
    uint32_t hs = 16;
    while (hs < 2 * nrec)
        hs *= 2;
    mon_g.recs = calloc(nrec, sizeof *mon_g.recs);
    mon_g.hash = calloc(hs, sizeof *mon_g.hash);
    if (!mon_g.recs || !mon_g.hash || mon_targets_init() != 0) {
        dprintf(2, "sheaf monitor: no memory for %zu file records: monitoring off\n", nrec);
        free(mon_g.recs);
        free(mon_g.hash);
        free(mon_g.targets);
        return;
    }
    mon_g.hashsize = hs;
    /* one "(other)" aggregate per storage target (the fold's included) */
    for (uint32_t t = 0; t <= mon_g.max_targets; t++) {
        mon_frec *other = &mon_g.recs[mon_g.max_files + mon_g.max_dirs + t];
        other->id = mon_g.max_files + mon_g.max_dirs + t;
        other->kind = MON_K_OTHER;
        other->tgt = t;
        other->name = "(other)";
    }
    if (!getcwd(mon_g.cwd, sizeof mon_g.cwd))
        mon_g.cwd[0] = 0;
    mon_g.start_ns = mon_g.last_snap_ns = mon_now_ns();
    mon_g.pid = (int)getpid();
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    mon_g.on = 1;
    mon_live_init();
}

void mon_reset(void)
{
    size_t nrec = mon_nrec();
    for (uint32_t t = 0; t <= mon_g.max_targets; t++)
        mon_g.targets[t].named = 0;
    for (size_t i = 0; i < nrec; i++) {
        mon_frec *r = &mon_g.recs[i];
        memset(r->c, 0, sizeof r->c);
        if (r->kind == MON_K_FILE)
            r->c[MC_FILES] = 1;
        r->read_end = r->write_end = 0;
        r->last_rw = r->dirty = r->named = 0;
    }
    mon_g.snap = 0;
    mon_g.log_seq++;
    mon_g.start_ns = mon_g.last_snap_ns = mon_now_ns();
}

static uint32_t hash_name(uint32_t kind, uint32_t tgt, const char *s)
{
    uint32_t h = (2166136261u ^ kind) + tgt * 16777619u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* the record of (kind, name) (a directory aggregate: and target tgt), created when there is
 * room (a file's target resolved then); NULL otherwise. Under the lock. */
static mon_frec *find_or_add(uint32_t kind, uint32_t tgt, const char *name, uint32_t first, uint32_t *used,
                             uint32_t limit)
{
    uint32_t mask = mon_g.hashsize - 1, h = hash_name(kind, tgt, name) & mask;
    for (;; h = (h + 1) & mask) {
        uint32_t e = mon_g.hash[h];
        if (!e)
            break;
        mon_frec *r = &mon_g.recs[e - 1];
        if (r->kind == kind && (kind == MON_K_FILE || r->tgt == tgt) && !strcmp(r->name, name))
            return r;
    }
    if (*used >= limit)
        return NULL;
    if (kind == MON_K_FILE)
        tgt = mon_target_of(name);
    char *copy = strdup(name);
    if (!copy)
        return NULL;
    mon_frec *r = &mon_g.recs[first + *used];
    r->id = first + *used;
    r->kind = kind;
    r->tgt = tgt;
    r->name = copy;
    (*used)++;
    mon_g.hash[h] = r->id + 1;
    return r;
}

mon_frec *mon_lookup(const char *path, int dirfd)
{
    if (!mon_g.on || !path)
        return NULL;
    char full[MON_NAME_MAX];
    int n;
    if (path[0] == '/')
        n = snprintf(full, sizeof full, "%s", path);
    else if (dirfd == AT_FDCWD)
        n = snprintf(full, sizeof full, "%s/%s", mon_g.cwd, path);
    else
        n = snprintf(full, sizeof full, "(dirfd %d)/%s", dirfd, path);
    if (n < 0 || n >= (int)sizeof full)
        full[sizeof full - 1] = 0;
    pthread_mutex_lock(&mon_g.lock);
    mon_busy++;
    /* a file's record: keyed by its name (its target is resolved when it is made) */
    mon_frec *r = find_or_add(MON_K_FILE, 0, full, 0, &mon_g.nfiles, mon_g.max_files);
    if (r) {
        r->c[MC_FILES] = 1;
    } else {
        /* past the budget: the aggregate of (directory, target); the directory's target is
         * cached for the next file folded from the same directory */
        static char last_dir[MON_NAME_MAX];
        static uint32_t last_tgt;
        char *slash = strrchr(full, '/');
        if (slash && slash != full)
            *slash = 0;
        else
            strcpy(full, "/");
        if (strcmp(last_dir, full)) {
            last_tgt = mon_target_of(full);
            strcpy(last_dir, full);
        }
        r = find_or_add(MON_K_DIR, last_tgt, full, mon_g.max_files, &mon_g.ndirs, mon_g.max_dirs);
        if (!r)
            r = &mon_g.recs[mon_g.max_files + mon_g.max_dirs + last_tgt];
    }
    mon_busy--;
    pthread_mutex_unlock(&mon_g.lock);
    return r;
}

void mon_fd_set(int fd, mon_frec *rec, uint64_t pos)
{
    if (fd < 0 || fd >= MON_FD_MAX)
        return;
    __atomic_store_n(&mon_fds[fd].pos, pos, __ATOMIC_RELAXED);
    __atomic_store_n(&mon_fds[fd].rec, rec, __ATOMIC_RELEASE);
}

#define MT (!__libc_single_threaded)

static inline void add(uint64_t *p, uint64_t v)
{
    if (MT)
        __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
    else
        *p += v;
}

static inline void setmax(uint64_t *p, uint64_t v)
{
    uint64_t o = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (v > o && !__atomic_compare_exchange_n(p, &o, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

static inline void setmin(uint64_t *p, uint64_t v)
{
    uint64_t o = __atomic_load_n(p, __ATOMIC_RELAXED);
    while ((o == 0 || v < o) && !__atomic_compare_exchange_n(p, &o, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

void mon_count_add(mon_frec *r, int counter, uint64_t v)
{
    add(&r->c[counter], v);
    __atomic_store_n(&r->dirty, 1, __ATOMIC_RELAXED);
}

void mon_count_meta(mon_frec *r, int counter, uint64_t ns)
{
    if (counter >= 0)
        add(&r->c[counter], 1);
    add(&r->c[MC_META_NS], ns);
    uint64_t now = mon_now_ns();
    setmin(&r->c[MC_FIRST_NS], now - ns);
    setmax(&r->c[MC_LAST_NS], now);
    __atomic_store_n(&r->dirty, 1, __ATOMIC_RELAXED);
}

static void count_rw_mt(mon_frec *r, int write, uint64_t off, uint64_t n, const void *buf, uint64_t ns, uint64_t now,
                        int stdio)
{
    add(&r->c[write ? MC_WRITES : MC_READS], 1);
    add(&r->c[write ? MC_BYTES_WRITTEN : MC_BYTES_READ], n);
    add(&r->c[(write ? MC_HIST_WRITE : MC_HIST_READ) + mon_hist_bucket(n)], 1);
    if (stdio)
        add(&r->c[MC_STDIO_OPS], 1);
    if (ns)
        add(&r->c[write ? MC_WRITE_NS : MC_READ_NS], ns);
    if (now) {
        setmin(&r->c[MC_FIRST_NS], now - ns);
        setmax(&r->c[MC_LAST_NS], now);
    }
    uint64_t *mx = &r->c[write ? MC_MAX_BYTE_WRITTEN : MC_MAX_BYTE_READ];
    if (off + n > __atomic_load_n(mx, __ATOMIC_RELAXED))
        setmax(mx, off + n);
    /* sequential: past the end of the previous access of the same kind; consecutive: right at it
     * (end is kept + 1, 0 = no previous access) */
    uint64_t *end = write ? &r->write_end : &r->read_end;
    uint64_t prev = __atomic_load_n(end, __ATOMIC_RELAXED);
    if (prev && off >= prev - 1) {
        add(&r->c[write ? MC_SEQ_WRITES : MC_SEQ_READS], 1);
        if (off == prev - 1)
            add(&r->c[write ? MC_CONSEC_WRITES : MC_CONSEC_READS], 1);
    }
    __atomic_store_n(end, off + n + 1, __ATOMIC_RELAXED);
    int rw = write ? 2 : 1, last = __atomic_load_n(&r->last_rw, __ATOMIC_RELAXED);
    if (last != rw) {
        if (last)
            add(&r->c[MC_RW_SWITCHES], 1);
        __atomic_store_n(&r->last_rw, rw, __ATOMIC_RELAXED);
    }
    if (mon_g.align_mask ? (off & mon_g.align_mask) : (off % mon_g.align))
        add(&r->c[MC_FILE_NOT_ALIGNED], 1);
    if ((uintptr_t)buf % 8)
        add(&r->c[MC_MEM_NOT_ALIGNED], 1);
    if (!__atomic_load_n(&r->dirty, __ATOMIC_RELAXED))
        __atomic_store_n(&r->dirty, 1, __ATOMIC_RELAXED);
}

void mon_count_rw(mon_frec *r, int write, uint64_t off, uint64_t n, const void *buf, uint64_t ns, uint64_t now,
                  int stdio)
{
    if (!__libc_single_threaded) {
        count_rw_mt(r, write, off, n, buf, ns, now, stdio);
        return;
    }
    /* one thread: plain adds (the same counting as count_rw_mt) */
    uint64_t *c = r->c;
    c[write ? MC_WRITES : MC_READS]++;
    c[write ? MC_BYTES_WRITTEN : MC_BYTES_READ] += n;
    c[(write ? MC_HIST_WRITE : MC_HIST_READ) + (n < 100 ? 0 : mon_hist_bucket(n))]++;
    c[MC_STDIO_OPS] += (uint64_t)stdio;
    if (ns) {
        c[write ? MC_WRITE_NS : MC_READ_NS] += ns;
        if (!c[MC_FIRST_NS] || now - ns < c[MC_FIRST_NS])
            c[MC_FIRST_NS] = now - ns;
        if (now > c[MC_LAST_NS])
            c[MC_LAST_NS] = now;
    }
    uint64_t *mx = &c[write ? MC_MAX_BYTE_WRITTEN : MC_MAX_BYTE_READ];
    if (off + n > *mx)
        *mx = off + n;
    uint64_t *end = write ? &r->write_end : &r->read_end;
    uint64_t prev = *end;
    if (prev && off >= prev - 1) {
        c[write ? MC_SEQ_WRITES : MC_SEQ_READS]++;
        c[write ? MC_CONSEC_WRITES : MC_CONSEC_READS] += off == prev - 1;
    }
    *end = off + n + 1;
    int rw = write ? 2 : 1;
    if (r->last_rw != rw) {
        c[MC_RW_SWITCHES] += r->last_rw != 0;
        r->last_rw = rw;
    }
    c[MC_FILE_NOT_ALIGNED] += (mon_g.align_mask ? (off & mon_g.align_mask) : (off % mon_g.align)) != 0;
    c[MC_MEM_NOT_ALIGNED] += ((uintptr_t)buf & 7) != 0;
    r->dirty = 1;
}

void mon_count_small(mon_frec *r, int write, uint64_t off, uint64_t n)
{
    uint64_t *c = r->c;
    int h = (write ? MC_HIST_WRITE : MC_HIST_READ) + (n < 100 ? 0 : mon_hist_bucket(n));
    uint64_t *mx = &c[write ? MC_MAX_BYTE_WRITTEN : MC_MAX_BYTE_READ];
    if (!__libc_single_threaded) {
        add(&c[write ? MC_WRITES : MC_READS], 1);
        add(&c[write ? MC_BYTES_WRITTEN : MC_BYTES_READ], n);
        add(&c[h], 1);
        add(&c[MC_STDIO_OPS], 1);
        if (off + n > __atomic_load_n(mx, __ATOMIC_RELAXED))
            setmax(mx, off + n);
        if (!__atomic_load_n(&r->dirty, __ATOMIC_RELAXED))
            __atomic_store_n(&r->dirty, 1, __ATOMIC_RELAXED);
        return;
    }
    c[write ? MC_WRITES : MC_READS]++;
    c[write ? MC_BYTES_WRITTEN : MC_BYTES_READ] += n;
    c[h]++;
    c[MC_STDIO_OPS]++;
    if (off + n > *mx)
        *mx = off + n;
    r->dirty = 1;
}
