/* shm.c - rbio's hand-off through an MPI-3 shared window (workers on the
 * node of their writer). At init each group (all on one node) allocates one
 * window with MPI_Win_allocate_shared: every worker owns a slot of
 * min(buffer / workers, 64 MiB) bytes (or slot=, at least 84 KiB). A worker's write copies its fields
 * (little-endian) into its slot with a typed header and publishes the piece
 * with an atomic release store of its piece counter; no MPI call is needed
 * for the writer to see it. Data larger than the slot go in slot-sized
 * pieces (the worker waits for the writer to drain each). The writer polls
 * the slots (acquire loads, nanosleep back-off), copies every piece into its
 * field-major buffer and acknowledges it with a release store; after the
 * step's commit it publishes the result (code, failing rank, message) into
 * each worker's slot, where the worker reads it at its next call. Every wait
 * is bounded by the timeout (ETIMEDOUT: the context is broken). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif
#define _POSIX_C_SOURCE 200809L
#include "ckpt.h"
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* slot layout (bytes): the worker's piece counter, the writer's
 * acknowledgement, two result tags and entries (by sequence parity), the
 * header (step, seq, fields, total, the piece's offset and length, then
 * counts and checksums: 16 bytes a field), then the data area */
enum {
    SL_PUB = 0,
    SL_ACK = 64,
    SL_RTAG = 128, /* 2 x u64 */
    SL_RES = 192,  /* 2 x RES_SZ */
    RES_SZ = 8 + 256,
    SL_HDR = 1024,
    HDR_FIX = 56, /* ... and the fields' fingerprint at 48 */
    SL_DATA = SL_HDR + HDR_FIX + 16 * CKF_MAX_FIELDS + 4096 - ((SL_HDR + HDR_FIX + 16 * CKF_MAX_FIELDS) % 4096),
};
#define SLOT_MAX (64ull << 20)

static _Atomic uint64_t *at(unsigned char *slot, size_t off) { return (_Atomic uint64_t *)(void *)(slot + off); }
static unsigned char *hdr(unsigned char *slot) { return slot + SL_HDR; }

static void nap(long *ns)
{
    struct timespec t = {0, *ns};
    nanosleep(&t, NULL);
    *ns = *ns < 1000000 ? *ns * 2 : 1000000; /* 20 us doubling to 1 ms: no core burnt */
}

/* wait until *a >= v (acquire), at most the timeout */
static int wait_at_least(sheaf_ckpt_ctx *c, _Atomic uint64_t *a, uint64_t v, const char *what)
{
    double end = ck_now() + c->cfg.timeout;
    long ns = 20000;
    while (atomic_load_explicit(a, memory_order_acquire) < v) {
        if (ck_now() > end) {
            c->broken = 1;
            return ck_fail(c, ETIMEDOUT,
                           "%s: no answer within %.1f s (a writer or rank died or hangs); "
                           "the checkpoint context is unusable, the job should abort",
                           what, c->cfg.timeout);
        }
        nap(&ns);
    }
    return 0;
}

int ck_shm_setup(sheaf_ckpt_ctx *c)
{
    ck_rbio *rb = &c->rb;
    ck_shm *s = &rb->shm;
    if (c->cfg.handoff == CK_HANDOFF_SEND)
        return 0;
    /* every group on one node (and lock-free 64-bit atomics), on every rank? */
    MPI_Comm node;
    int local = 0;
    if (MPI_Comm_split_type(c->comm, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
        MPI_Group wg, ng;
        int wr = rb->writer, nr = MPI_UNDEFINED;
        MPI_Comm_group(c->comm, &wg);
        MPI_Comm_group(node, &ng);
        MPI_Group_translate_ranks(wg, 1, &wr, ng, &nr);
        MPI_Group_free(&wg);
        MPI_Group_free(&ng);
        MPI_Comm_free(&node);
        _Atomic uint64_t probe;
        local = nr != MPI_UNDEFINED && atomic_is_lock_free(&probe);
    }
    sheaf_comm_mpi_ref_t ref;
    int64_t v = local;
    if (sheaf_comm_allmin(sheaf_comm_mpi_ref(&ref, c->comm), &v, 1))
        return ck_fail(c, EPROTO, "rbio: the exchange of the ranks' nodes failed");
    if (!v)
        return c->cfg.handoff == CK_HANDOFF_SHM
                   ? ck_fail(c, EINVAL, "handoff=shm: a writer does not share a node with all its workers")
                   : 0;
    int nw = rb->gsize - 1, w = rb->role != SHEAF_CKPT_WORKER;
    uint64_t sz = nw ? c->cfg.buffer / (uint64_t)nw : 0;
    sz = sz > SLOT_MAX ? SLOT_MAX : sz;
    if (c->cfg.slot)
        sz = c->cfg.slot;
    sz = (sz / 4096) * 4096;
    if (sz < SL_DATA + 65536)
        sz = SL_DATA + 65536;
    s->slotsz = sz;
    MPI_Comm_split(c->comm, rb->group, c->rank, &s->gcomm);
    MPI_Comm_set_errhandler(s->gcomm, MPI_ERRORS_RETURN);
    void *base = NULL;
    int mrc = MPI_Win_allocate_shared(w ? 0 : (MPI_Aint)sz, 1, MPI_INFO_NULL, s->gcomm, &base, &s->win);
    int ok = mrc == MPI_SUCCESS, all = ok;
    if (ok && !w)
        memset(base, 0, SL_DATA); /* counters, results, header */
    sheaf_comm_mpi_ref_t gref;    /* also: every slot zeroed before the writer looks */
    int64_t okv = ok;
    if (sheaf_comm_allmin(sheaf_comm_mpi_ref(&gref, s->gcomm), &okv, 1))
        okv = 0;
    all = (int)okv;
    if (!all) {
        if (ok)
            MPI_Win_free(&s->win);
        s->win = MPI_WIN_NULL;
        return ck_fail(c, ENOMEM, "rbio: no shared window of %" PRIu64 " bytes per worker (buffer=)", sz);
    }
    if (!w) {
        s->mine = base;
    } else if (nw) {
        s->slot = calloc((size_t)nw, sizeof *s->slot);
        s->ack = calloc((size_t)nw, sizeof *s->ack);
        if (!s->slot || !s->ack)
            return ck_fail(c, ENOMEM, "rbio: no memory for %d slots", nw);
        for (int i = 0; i < nw; i++) {
            MPI_Aint qs;
            int du;
            void *p;
            MPI_Win_shared_query(s->win, i + 1, &qs, &du, &p);
            s->slot[i] = p;
        }
    }
    s->on = 1;
    return 0;
}

/* MPI_Win_free synchronises the group: it runs only when no rank of the
 * group is broken (a bounded exchange first; otherwise the window is left
 * to MPI_Abort, like the communicators of a broken context) */
void ck_shm_free(sheaf_ckpt_ctx *c, int broken)
{
    ck_shm *s = &c->rb.shm;
    if (s->win != MPI_WIN_NULL) {
        /* on the heap: a request left pending (a peer never came) keeps its buffer, leaked on purpose */
        int *v = malloc(2 * sizeof *v), done = 0;
        MPI_Request r;
        double end = ck_now() + c->cfg.timeout;
        long ns = 20000;
        if (v) {
            v[0] = !broken, v[1] = 0;
            if (MPI_Iallreduce(v, v + 1, 1, MPI_INT, MPI_MIN, s->gcomm, &r) == MPI_SUCCESS)
                while (MPI_Test(&r, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done && ck_now() < end)
                    nap(&ns);
        }
        if (done && v[1] == 1 && !broken) {
            MPI_Win_free(&s->win);
            MPI_Comm_free(&s->gcomm);
        }
        if (done)
            free(v);
        s->win = MPI_WIN_NULL;
        s->gcomm = MPI_COMM_NULL;
    }
    free(s->slot);
    free(s->ack);
    s->slot = NULL;
    s->ack = NULL;
    s->on = 0;
}

/* Worker: wait for the writer to have taken the previous piece, copy this
 * step's fields piece by piece into the slot, publish each. */
int ck_shm_put(sheaf_ckpt_ctx *c, uint64_t step, uint64_t seq, char *msg, size_t mn)
{
    ck_shm *s = &c->rb.shm;
    unsigned char *sl = s->mine, *h = hdr(sl);
    uint32_t nf = (uint32_t)c->nfields;
    double wait = 0, t, t0 = ck_now();
    t = t0;
    int rc = wait_at_least(c, at(sl, SL_ACK), s->wser, "rbio: the writer taking the previous step");
    wait += ck_now() - t;
    if (rc)
        return snprintf(msg, mn, "%s", c->err), rc;
    uint64_t total = 0;
    for (uint32_t f = 0; f < nf; f++) {
        total += c->fields[f].count * c->fields[f].es;
        ckf_put_u64(h + HDR_FIX + 16 * (size_t)f, c->fields[f].count);
    }
    ckf_put_u64(h, step);
    ckf_put_u64(h + 8, seq);
    ckf_put_u64(h + 16, nf);
    ckf_put_u64(h + 24, total);
    ckf_put_u64(h + 48, ck_fields_fp(c));
    c->checked = 1;                                      /* compared by the writer */
    uint64_t room = s->slotsz - SL_DATA, off = 0, x = 0; /* x: bytes of field f done */
    uint32_t f = 0;
    ckf_hstate hs;
    ckf_hash_begin(&hs, CKF_HASH_SEED);
    for (;;) {
        uint64_t len = 0;
        unsigned char *d = sl + SL_DATA;
        while (f < nf) { /* whole elements only: each piece can be swapped in place */
            const ck_fielddecl *fd = &c->fields[f];
            uint64_t n = fd->count * fd->es - x, fit = (room - len) / fd->es * fd->es;
            n = n < fit ? n : fit;
            if (n) {
                memcpy(d + len, (const unsigned char *)fd->data + x, n);
                ckf_swap_elems(d + len, n / fd->es, fd->es);
                ckf_hash_add(&hs, d + len, n);
                len += n;
                x += n;
            }
            if (x < fd->count * fd->es)
                break; /* the slot is full */
            ckf_put_u64(h + HDR_FIX + 16 * (size_t)f + 8, ckf_hash_end(&hs));
            ckf_hash_begin(&hs, CKF_HASH_SEED);
            f++;
            x = 0;
        }
        ckf_put_u64(h + 32, off);
        ckf_put_u64(h + 40, len);
        atomic_store_explicit(at(sl, SL_PUB), ++s->wser, memory_order_release);
        off += len;
        if (off >= total && f >= nf)
            break;
        t = ck_now();
        rc = wait_at_least(c, at(sl, SL_ACK), s->wser, "rbio: the writer draining this worker's slot");
        wait += ck_now() - t;
        if (rc)
            return snprintf(msg, mn, "%s", c->err), rc;
    }
    c->st.bytes = total;
    c->st.perceived_s = ck_now() - t0 - wait; /* copying, without the waits for the writer */
    return 0;
}

/* copy one piece of worker i (stream offset off, len bytes) into the
 * group buffer: pos[f] is where its part of field f starts */
static void place(const sheaf_ckpt_ctx *c, const unsigned char *src, uint64_t off, uint64_t len, const uint64_t *cnt,
                  const uint64_t *pos)
{
    uint64_t start = 0;
    for (int f = 0; f < c->nfields && len; f++) {
        uint64_t n = cnt[f] * c->fields[f].es;
        if (off < start + n) {
            uint64_t in = off - start, k = n - in < len ? n - in : len;
            memcpy(c->rb.gbuf + pos[f] + in, src, k);
            src += k, off += k, len -= k;
        }
        start += n;
    }
}

/* every count known: where each part goes (foff[f], pos[i * nf + f]),
 * the bound, the buffer, the writer's own part copied */
static int layout(sheaf_ckpt_ctx *c, const uint64_t *counts, uint64_t *foff, uint64_t *pos, char *msg, size_t mn)
{
    ck_rbio *rb = &c->rb;
    int nf = c->nfields, G = rb->gsize;
    uint64_t total = 0;
    for (int f = 0; f < nf; f++) {
        foff[f] = total;
        for (int j = 0; j < G; j++) {
            if (j)
                pos[(size_t)(j - 1) * nf + f] = total;
            total += counts[(size_t)f * G + j] * c->fields[f].es;
        }
    }
    if (total > c->cfg.buffer)
        return snprintf(msg, mn,
                        "rbio writer %d: the group's %" PRIu64 " bytes exceed buffer=%" PRIu64 " (raise buffer or ng)",
                        c->rank, total, c->cfg.buffer),
               ENOMEM;
    if (total > rb->gcap || !rb->gbuf) {
        unsigned char *n = realloc(rb->gbuf, total ? total : 1);
        if (!n)
            return snprintf(msg, mn, "rbio writer: no memory for %" PRIu64 " bytes", total), ENOMEM;
        rb->gbuf = n, rb->gcap = total;
    }
    for (int f = 0; f < nf; f++)
        if (counts[(size_t)f * G])
            memcpy(rb->gbuf + foff[f], c->fields[f].data, counts[(size_t)f * G] * c->fields[f].es);
    return 0;
}

/* a worker's first piece: its fields and step those of the writer?
 * 0, EINVAL (other fields) or EPROTO (a header out of sequence) */
static int header_rc(sheaf_ckpt_ctx *c, const unsigned char *h, uint64_t step, uint64_t seq, int wr, char *msg,
                     size_t mn)
{
    if (ckf_get_u64(h) != step || ckf_get_u64(h + 8) != seq || ckf_get_u64(h + 32) != 0)
        return msg ? snprintf(msg, mn, "rbio writer: bad header from rank %d", wr) : 0, EPROTO;
    if (ckf_get_u64(h + 48) != ck_fields_fp(c))
        return msg ? snprintf(msg, mn,
                              "the ranks declared different fields (names, types or order): "
                              "rank %d and its writer %d",
                              wr, c->rank)
                   : 0,
               EINVAL;
    return 0;
}

/* the writer's wait for the first worker not done timed out */
static int take_timeout(sheaf_ckpt_ctx *c, const char *stage, char *msg, size_t mn)
{
    int i = 0, nw = c->rb.gsize - 1;
    while (i < nw - 1 && stage[i] == 2)
        i++;
    c->broken = 1;
    ck_fail(c, ETIMEDOUT,
            "rbio writer: the data of rank %d: no answer within %.1f s (a rank died or hangs); "
            "the checkpoint context is unusable, the job should abort",
            c->rb.gfirst + 1 + i, c->cfg.timeout);
    return snprintf(msg, mn, "%s", c->err), ETIMEDOUT;
}

/* Writer: every worker's first piece (its header), then the group's data
 * into gbuf (field-major; foff[f] where field f starts), each piece
 * acknowledged as soon as it is copied. With rc_in set the pieces are still
 * taken and dropped, so that no worker stays blocked. */
int ck_shm_take(sheaf_ckpt_ctx *c, uint64_t step, uint64_t seq, uint64_t *counts, uint64_t *sums, uint64_t *foff,
                int rc_in, char *msg, size_t mn)
{
    ck_rbio *rb = &c->rb;
    ck_shm *s = &rb->shm;
    int nw = rb->gsize - 1, nf = c->nfields, G = rb->gsize, rc = rc_in, left = nw, hdrs = 0;
    uint64_t *got = calloc((size_t)nw + 1, 8), *tot = calloc((size_t)nw + 1, 8);
    uint64_t *pos = calloc((size_t)nw * (size_t)nf + 1, 8);
    char *stage = calloc((size_t)nw + 1, 1); /* 0 no header, 1 data, 2 done */
    if (!got || !tot || !pos || !stage) {
        free(got), free(tot), free(pos), free(stage);
        return snprintf(msg, mn, "rbio writer: no memory"), ENOMEM; /* the workers time out */
    }
    for (int f = 0; f < nf; f++) {
        counts[(size_t)f * G] = c->fields[f].count;
        sums[(size_t)f * G] = ckf_hash(c->fields[f].data, c->fields[f].count * c->fields[f].es, CKF_HASH_SEED);
    }
    if (!nw && !rc)
        rc = layout(c, counts, foff, pos, msg, mn);
    double end = ck_now() + c->cfg.timeout;
    long ns = 20000;
    while (left && !c->broken) {
        int progress = 0;
        for (int i = 0; i < nw; i++) {
            unsigned char *sl = s->slot[i], *h = hdr(sl);
            uint64_t v = atomic_load_explicit(at(sl, SL_PUB), memory_order_acquire);
            if (stage[i] == 2 || v <= s->ack[i] || (stage[i] == 1 && hdrs < nw))
                continue; /* nothing new, or data before every header is known */
            if (stage[i] == 0) {
                tot[i] = ckf_get_u64(h + 24);
                int hr = header_rc(c, h, step, seq, rb->gfirst + 1 + i, rc ? NULL : msg, mn);
                rc = rc ? rc : hr;
                if (hr == EPROTO)
                    tot[i] = 0;
                for (int f = 0; !rc && f < nf; f++)
                    counts[(size_t)f * G + 1 + i] = ckf_get_u64(h + HDR_FIX + 16 * (size_t)f);
                stage[i] = 1, hdrs++, progress = 1;
                if (hdrs == nw && !rc)
                    rc = layout(c, counts, foff, pos, msg, mn);
                if (hdrs < nw)
                    continue; /* its first piece waits for the other headers */
                i = -1;       /* every header known: take the data from the first worker on */
                continue;
            }
            uint64_t off = ckf_get_u64(h + 32), len = ckf_get_u64(h + 40);
            if (!rc && (off != got[i] || len > s->slotsz - SL_DATA || off + len > tot[i]))
                rc = EPROTO, snprintf(msg, mn, "rbio writer: bad piece from rank %d", rb->gfirst + 1 + i);
            uint64_t cnt[CKF_MAX_FIELDS];
            for (int f = 0; !rc && f < nf; f++)
                cnt[f] = counts[(size_t)f * G + 1 + i];
            if (!rc)
                place(c, sl + SL_DATA, off, len, cnt, pos + (size_t)i * nf);
            got[i] += len;
            if (got[i] >= tot[i] || rc == EPROTO) {
                for (int f = 0; f < nf; f++)
                    sums[(size_t)f * G + 1 + i] = ckf_get_u64(h + HDR_FIX + 16 * (size_t)f + 8);
                stage[i] = 2, left--;
            }
            s->ack[i] = v;
            atomic_store_explicit(at(sl, SL_ACK), v, memory_order_release);
            progress = 1;
        }
        if (progress) {
            end = ck_now() + c->cfg.timeout, ns = 20000;
        } else if (left) {
            if (ck_now() > end) {
                rc = take_timeout(c, stage, msg, mn);
                break;
            }
            nap(&ns);
        }
    }
    free(got), free(tot), free(pos), free(stage);
    return rc;
}

/* Writer: the result of sequence number seq into every worker's slot. */
void ck_shm_publish(sheaf_ckpt_ctx *c, uint64_t seq, int rc, int rank, const char *m)
{
    ck_shm *s = &c->rb.shm;
    for (int i = 0; s->on && s->slot && i < c->rb.gsize - 1; i++) {
        unsigned char *e = s->slot[i] + SL_RES + (seq & 1) * RES_SZ;
        ckf_put_u32(e, (uint32_t)rc);
        ckf_put_u32(e + 4, (uint32_t)rank);
        snprintf((char *)e + 8, 256, "%s", m ? m : "");
        atomic_store_explicit(at(s->slot[i], SL_RTAG + 8 * (seq & 1)), seq + 1, memory_order_release);
    }
}

/* Worker: the result of seq (1 = known, filled in; 0 = not yet). A later
 * step's result in the same entry (a writer that failed before this worker
 * got there) is returned in its place. */
int ck_shm_result(sheaf_ckpt_ctx *c, uint64_t seq, int *rc, int *rank, char *m, size_t mn)
{
    unsigned char *sl = c->rb.shm.mine;
    uint64_t tag = atomic_load_explicit(at(sl, SL_RTAG + 8 * (seq & 1)), memory_order_acquire);
    if (tag < seq + 1)
        return 0;
    const unsigned char *e = sl + SL_RES + (seq & 1) * RES_SZ;
    *rc = (int)ckf_get_u32(e);
    *rank = (int)ckf_get_u32(e + 4);
    snprintf(m, mn, "%.255s", (const char *)e + 8);
    return 1;
}

/* Worker: wait (bounded) for the result of seq. */
int ck_shm_wait_result(sheaf_ckpt_ctx *c, uint64_t seq, int *rc, int *rank, char *m, size_t mn)
{
    int r = wait_at_least(c, at(c->rb.shm.mine, SL_RTAG + 8 * (seq & 1)), seq + 1, "rbio: the checkpoint's commit");
    if (r)
        return r;
    ck_shm_result(c, seq, rc, rank, m, mn);
    return 0;
}
