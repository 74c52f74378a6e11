/* dache_win.c - DACHe's windows and the one-sided primitives every cache
 * operation is written in: metadata entries (get, put under the page lock,
 * atomic pin add) and slot bytes (local pointer, remote get/put).
 *
 * Two transports, chosen at creation with the lock set's progress mode:
 *   shm: MPI_Win_allocate_shared on one node; processor atomics (seq_cst) on
 *        the entries and memcpy on the slots - truly passive, no rank has to
 *        be inside MPI for another one's access to complete;
 *   rma: MPI_Win_allocate, one MPI_Win_lock_all epoch per window for the
 *        handle's life; entries with MPI_Get_accumulate(NO_OP) /
 *        MPI_Accumulate(REPLACE/SUM) (element-wise atomic, so a lock-free
 *        unpin never races with a locked update), slots with MPI_Get/MPI_Put,
 *        each completed with MPI_Win_flush. Needs progress at the target:
 *        the library's waits poke MPI, or asynchronous progress. */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include "dache_impl.h"

static int32_t *shm_entry(dache *d, int64_t pg) { return d->meta_peer[pg % d->P] + (pg / d->P) * DM_INTS; }
static MPI_Aint entry_disp(const dache *d, int64_t pg) { return (MPI_Aint)((pg / d->P) * DM_INTS * 4); }

static int mpi_fail(dache *d, const char *what, int mrc)
{
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(mrc, s, &len);
    return mio_set_err(d->fh, SHEAF_MPIIO_EMPI, "%s: DACHe: %s failed: %s", d->fh->path, what, s);
}

static int done(dache *d, int target, MPI_Win w, int mrc, const char *what)
{
    if (mrc == MPI_SUCCESS)
        mrc = MPI_Win_flush(target, w);
    return mrc == MPI_SUCCESS ? 0 : mpi_fail(d, what, mrc);
}

/* shared memory: the words written under the page lock are read and written
 * relaxed - the lock's acquire (seq_cst swap / grant read) and release (seq_cst
 * CAS / grant write) order them, and the quiescent readers (flush, audit)
 * come after a barrier; the pin, changed without the lock, stays seq_cst */
int dm_get(dache *d, int64_t pg, int32_t m[DM_INTS])
{
    if (d->shm) {
        int32_t *e = shm_entry(d, pg);
        for (int i = 0; i < DM_NPUT; i++)
            m[i] = __atomic_load_n(e + i, __ATOMIC_RELAXED);
        for (int i = DM_NPUT; i < DM_INTS; i++)
            m[i] = __atomic_load_n(e + i, __ATOMIC_SEQ_CST);
        return 0;
    }
    int t = (int)(pg % d->P);
    int mrc = MPI_Get_accumulate(NULL, 0, MPI_INT32_T, m, DM_INTS, MPI_INT32_T, t, entry_disp(d, pg), DM_INTS,
                                 MPI_INT32_T, MPI_NO_OP, d->meta_win);
    return done(d, t, d->meta_win, mrc, "MPI_Get_accumulate (metadata)");
}

int dm_put(dache *d, int64_t pg, const int32_t m[DM_INTS])
{
    if (d->shm) {
        int32_t *e = shm_entry(d, pg);
        for (int i = 0; i < DM_NPUT; i++)
            __atomic_store_n(e + i, m[i], __ATOMIC_RELAXED);
        return 0;
    }
    int t = (int)(pg % d->P);
    int mrc =
        MPI_Accumulate(m, DM_NPUT, MPI_INT32_T, t, entry_disp(d, pg), DM_NPUT, MPI_INT32_T, MPI_REPLACE, d->meta_win);
    return done(d, t, d->meta_win, mrc, "MPI_Accumulate (metadata)");
}

int dm_pin(dache *d, int64_t pg, int32_t delta)
{
    if (d->shm) {
        __atomic_fetch_add(shm_entry(d, pg) + DM_PIN, delta, __ATOMIC_SEQ_CST);
        return 0;
    }
    int t = (int)(pg % d->P);
    int mrc =
        MPI_Accumulate(&delta, 1, MPI_INT32_T, t, entry_disp(d, pg) + DM_PIN * 4, 1, MPI_INT32_T, MPI_SUM, d->meta_win);
    return done(d, t, d->meta_win, mrc, "MPI_Accumulate (pin)");
}

char *ds_local(dache *d, int slot) { return d->slot_base + (int64_t)slot * d->page; }

/* the slot window: nslots pages, then int32 lo[nslots], hi[nslots], then int64 hipg */
static int64_t ranges_off(const dache *d) { return (int64_t)d->nslots * d->page; }
static int64_t hipg_off(const dache *d) { return (ranges_off(d) + (int64_t)d->nslots * 8 + 7) & ~(int64_t)7; }
int32_t *ds_ranges(dache *d, int r)
{
    return (int32_t *)(void *)((r == d->rank ? d->slot_base : d->slot_peer[r]) + ranges_off(d));
}
int64_t *ds_hipg(dache *d, int r)
{
    return (int64_t *)(void *)((r == d->rank ? d->slot_base : d->slot_peer[r]) + hipg_off(d));
}
/* then int64 tag[nslots], uint64 freebits[nwords], then (64-aligned) the
 * collectives' area (only rank 0's is used) */
static int64_t tags_off(const dache *d) { return hipg_off(d) + 8; }
static int64_t free_off(const dache *d) { return tags_off(d) + 8 * (int64_t)d->nslots; }
int64_t *ds_tags(dache *d, int r)
{
    return (int64_t *)(void *)((r == d->rank ? d->slot_base : d->slot_peer[r]) + tags_off(d));
}
static int64_t coll_off(const dache *d) { return (free_off(d) + 8 * (int64_t)d->nwords + 63) & ~(int64_t)63; }
uint64_t *ds_free(dache *d, int r)
{
    return (uint64_t *)(void *)((r == d->rank ? d->slot_base : d->slot_peer[r]) + free_off(d));
}

int d_claim(dache *d, int r)
{
    uint64_t *w = ds_free(d, r);
    for (int i = 0; i < d->nwords; i++) {
        uint64_t v = __atomic_load_n(&w[i], __ATOMIC_RELAXED);
        while (v) {
            uint64_t bit = v & (~v + 1);
            if (__atomic_compare_exchange_n(&w[i], &v, v & ~bit, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
                return i * 64 + __builtin_ctzll(bit);
        }
    }
    return -1;
}

void d_unclaim(dache *d, int r, int s)
{
    __atomic_fetch_or(&ds_free(d, r)[s / 64], (uint64_t)1 << (s % 64), __ATOMIC_ACQ_REL);
}

/* local slot memory is about to be read (after remote puts) or was written */
void ds_sync(dache *d)
{
    if (d->shm)
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
    else
        MPI_Win_sync(d->slot_win);
}

int ds_xfer(dache *d, int owner, int slot, int64_t in, int64_t n, char *buf, int is_write)
{
    if (d->shm) {
        /* always under the page's lock in shared memory (remote hit, atomic
     * mode): the lock's acquire and release order the copy */
        char *p = d->slot_peer[owner] + (int64_t)slot * d->page + in;
        if (is_write)
            memcpy(p, buf, (size_t)n);
        else
            memcpy(buf, p, (size_t)n);
        return 0;
    }
    MPI_Aint disp = (MPI_Aint)((int64_t)slot * d->page + in);
    int mrc = is_write ? MPI_Put(buf, (int)n, MPI_BYTE, owner, disp, (int)n, MPI_BYTE, d->slot_win)
                       : MPI_Get(buf, (int)n, MPI_BYTE, owner, disp, (int)n, MPI_BYTE, d->slot_win);
    return done(d, owner, d->slot_win, mrc, is_write ? "MPI_Put (slot)" : "MPI_Get (slot)");
}

void d_relax(dache *d)
{
    int flag = 0;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, d->comm, &flag, MPI_STATUS_IGNORE);
    sheaf_lock_progress(d->locks);
    sched_yield();
}

/* collective; this rank's result (the caller agrees on it): on failure
 * *win is MPI_WIN_NULL and nothing is kept */
static int alloc_win(dache *d, MPI_Aint bytes, char **base, MPI_Win *win, char ***peer)
{
    int mrc;
    if (d->shm) {
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "alloc_shared_noncontig", "true");
        mrc = MPI_Win_allocate_shared(bytes, 1, info, d->comm, base, win);
        MPI_Info_free(&info);
    } else {
        mrc = MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, d->comm, base, win);
    }
    if (mrc != MPI_SUCCESS) {
        *win = MPI_WIN_NULL;
        return mio_set_err(d->fh, SHEAF_MPIIO_EMPI, "%s: DACHe: allocating a window of %lld bytes failed", d->fh->path,
                           (long long)bytes);
    }
    MPI_Win_set_errhandler(*win, MPI_ERRORS_RETURN);
    if (d->shm) {
        *peer = calloc((size_t)d->P, sizeof(char *));
        if (!*peer)
            return mio_set_err(d->fh, SHEAF_MPIIO_ENOMEM, "%s: DACHe: out of memory", d->fh->path);
        for (int r = 0; r < d->P; r++) {
            MPI_Aint sz;
            int du;
            MPI_Win_shared_query(*win, r, &sz, &du, &(*peer)[r]);
        }
    }
    return 0;
}

/* this rank's part of the windows, before anyone uses them: no page cached,
 * every slot free, every entry empty; rank 0 the collectives' area */
static void init_local(dache *d)
{
    d->meta_base = (int32_t *)(void *)d->meta_win_base;
    d->ldlo = ds_ranges(d, d->rank);
    d->ldhi = d->ldlo + d->nslots;
    d->hipg = ds_hipg(d, d->rank);
    memset(d->ldlo, 0, sizeof(int32_t) * 2 * (size_t)d->nslots);
    *d->hipg = 0;
    d->tag = ds_tags(d, d->rank);
    d->freebits = ds_free(d, d->rank);
    for (int s = 0; s < d->nslots; s++)
        d->tag[s] = -1;
    for (int i = 0; i < d->nwords; i++)
        d->freebits[i] = (i + 1) * 64 <= d->nslots ? ~(uint64_t)0 : (((uint64_t)1 << (d->nslots % 64)) - 1);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, d->rank, 0, d->meta_win);
    for (int64_t i = 0; i < d->nmeta; i++) {
        int32_t *e = d->meta_base + i * DM_INTS;
        memset(e, 0, DM_INTS * 4);
        e[DM_OWNER] = DM_NONE;
        e[DM_SLOT] = DM_NONE;
    }
    MPI_Win_unlock(d->rank, d->meta_win);
    if (d->shm && d->rank == 0)
        dc_init(d->slot_peer[0] + coll_off(d));
}

/* collective; on failure every rank returns an error and keeps nothing. One
 * agreement (one MPI_Allreduce) after both windows (each rank's part
 * initialized before it, so it is also the barrier after which any rank may
 * use any part). */
int dwin_create(dache *d)
{
    /* 64-byte multiples: MPICH 4.0.2 misplaces atomics in windows of other sizes (doc/lock.md) */
    MPI_Aint mbytes = (MPI_Aint)(((d->nmeta * DM_INTS * 4) + 63) & ~(int64_t)63);
    d->nwords = (d->nslots + 63) / 64;
    MPI_Aint sbytes = (MPI_Aint)(coll_off(d) + (int64_t)dc_bytes(d->P));
    char **mpeer = NULL;
    int rc = alloc_win(d, mbytes, &d->meta_win_base, &d->meta_win, &mpeer);
    int r2 = alloc_win(d, sbytes, &d->slot_base, &d->slot_win, &d->slot_peer); /* collective: always called */
    if (!rc)
        rc = r2;
    d->meta_peer = (int32_t **)(void *)mpeer;
    if (!rc)
        init_local(d);
    rc = mio_agree(d->fh, rc); /* over MPI */
    if (rc) {
        dwin_free(d);
        return rc;
    }
    if (d->shm) { /* from here on the handle's collectives are DACHe's own (dache_coll.c) */
        d->coll = d->slot_peer[0] + coll_off(d);
        d->fh->coll = dc_comm(d);
    }
    if (!d->shm) {
        MPI_Win_lock_all(MPI_MODE_NOCHECK, d->meta_win);
        MPI_Win_lock_all(MPI_MODE_NOCHECK, d->slot_win);
        d->epochs = 1;
    }
    return 0;
}

void dwin_free(dache *d)
{
    if (d->epochs) {
        MPI_Win_unlock_all(d->meta_win);
        MPI_Win_unlock_all(d->slot_win);
        d->epochs = 0;
    }
    if (d->meta_win != MPI_WIN_NULL)
        MPI_Win_free(&d->meta_win);
    if (d->slot_win != MPI_WIN_NULL)
        MPI_Win_free(&d->slot_win);
    free(d->meta_peer);
    free(d->slot_peer);
    if (d->coll && d->fh->coll == &d->sc)
        mio_coll_mpi(d->fh);
    d->coll = NULL;
    d->meta_peer = NULL;
    d->slot_peer = NULL;
}
