/* rbio.c - reduced-blocking I/O: workers hand their data to their group's
 * writer with MPI_Isend (from a double buffer) and return; writers receive
 * straight into field-major order (an hindexed datatype per worker) and write
 * one file each (nf = ng), a file shared by several writers (nf < ng,
 * split-collective among them) or a sheaf container (container=sion). */
#if defined(__GNUC__) && !defined(__clang__)
/* messages are cut at their buffer's size on purpose; MPI_Testall with
 * MPI_STATUSES_IGNORE is not an array access (GCC's false positive) */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
#include "ckpt.h"
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TAG_HDR = 7101, TAG_DATA = 7102 };

/* The typed message a worker sends before its data. */
typedef struct ck_pkg_hdr {
    uint64_t step;
    uint32_t rank, nfields;
    uint64_t *counts, *sums; /* nfields each */
} ck_pkg_hdr;

static size_t pkg_hdr_size(uint32_t nf) { return 16 + 16 * (size_t)nf; }

static void pkg_hdr_pack(const ck_pkg_hdr *h, unsigned char *b)
{
    ckf_put_u64(b, h->step);
    ckf_put_u32(b + 8, h->rank);
    ckf_put_u32(b + 12, h->nfields);
    for (uint32_t f = 0; f < h->nfields; f++) {
        ckf_put_u64(b + 16 + 16 * (size_t)f, h->counts[f]);
        ckf_put_u64(b + 24 + 16 * (size_t)f, h->sums[f]);
    }
}

/* counts/sums point into the caller's arrays (nfields entries) */
static int pkg_hdr_unpack(const unsigned char *b, uint32_t nfields, ck_pkg_hdr *h)
{
    h->step = ckf_get_u64(b);
    h->rank = ckf_get_u32(b + 8);
    h->nfields = ckf_get_u32(b + 12);
    if (h->nfields != nfields)
        return EINVAL;
    for (uint32_t f = 0; f < nfields; f++) {
        h->counts[f] = ckf_get_u64(b + 16 + 16 * (size_t)f);
        h->sums[f] = ckf_get_u64(b + 24 + 16 * (size_t)f);
    }
    return 0;
}

int ck_rbio_setup(sheaf_ckpt_ctx *c)
{
    ck_rbio *rb = &c->rb;
    uint64_t np = (uint64_t)c->np, ng = (uint64_t)c->cfg.ng;
    rb->group = ck_group_of((uint64_t)c->rank, np, ng);
    rb->gfirst = (int)ck_first((uint64_t)rb->group, np, ng);
    rb->gsize = (int)(ck_first((uint64_t)rb->group + 1, np, ng) - (uint64_t)rb->gfirst);
    rb->writer = rb->gfirst;
    int w = c->rank == rb->writer;
    rb->role = !w ? SHEAF_CKPT_WORKER : c->cfg.dedicated ? SHEAF_CKPT_DEDICATED : SHEAF_CKPT_WRITER;
    for (int b = 0; b < 2; b++)
        rb->req[b][0] = rb->req[b][1] = MPI_REQUEST_NULL;
    MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN);
    MPI_Comm_split(c->comm, w ? 0 : MPI_UNDEFINED, c->rank, &rb->wcomm);
    if (w && c->cfg.nf < c->cfg.ng && !c->cfg.sion_container) {
        int k = ck_group_of((uint64_t)rb->group, ng, (uint64_t)c->cfg.nf);
        MPI_Comm_split(rb->wcomm, k, c->rank, &rb->fcomm);
    }
    int rc = ck_shm_setup(c); /* collective; shared window where every group is on one node */
    if (!rc && !rb->shm.on)
        ck_prog_start(c); /* send mode: a progress thread under MPI_THREAD_MULTIPLE (the writers' too:
                           * the step's gather and broadcast pass through them) */
    return rc;
}

void ck_rbio_free(sheaf_ckpt_ctx *c)
{
    ck_rbio *rb = &c->rb;
    ck_prog_stop(c);
    ck_shm_free(c, c->broken);
    for (int b = 0; b < 2; b++) {
        free(rb->pkg[b]);
        free(rb->hdr[b]);
    }
    free(rb->gbuf);
    if (rb->fcomm != MPI_COMM_NULL)
        MPI_Comm_free(&rb->fcomm);
    if (rb->wcomm != MPI_COMM_NULL)
        MPI_Comm_free(&rb->wcomm);
}

int ck_rbio_complete_sends(sheaf_ckpt_ctx *c)
{
    if (c->rb.role != SHEAF_CKPT_WORKER)
        return 0;
    MPI_Request r[4] = {c->rb.req[0][0], c->rb.req[0][1], c->rb.req[1][0], c->rb.req[1][1]};
    int rc = ck_waitall(c, 4, r, "rbio: sending the data to the writer");
    if (!rc)
        for (int b = 0; b < 2; b++)
            c->rb.req[b][0] = c->rb.req[b][1] = MPI_REQUEST_NULL;
    return rc;
}

static int grow(unsigned char **p, uint64_t *cap, uint64_t need)
{
    if (*cap >= need && *p)
        return 0;
    unsigned char *n = realloc(*p, need ? need : 1);
    if (!n)
        return ENOMEM;
    *p = n;
    *cap = need;
    return 0;
}

static int worker_send(sheaf_ckpt_ctx *c, uint64_t step, char *msg, size_t mn)
{
    double t0 = ck_now();
    ck_rbio *rb = &c->rb;
    int b = (int)(c->seq & 1); /* the buffer of two writes ago, whose sends completed */
    /* the buffer's previous sends (two steps ago) are complete after that commit; make sure */
    int rc = ck_waitall(c, 2, rb->req[b], "rbio: an earlier send");
    if (rc)
        return snprintf(msg, mn, "%s", c->err), rc;
    uint32_t nf = (uint32_t)c->nfields;
    uint64_t total = 0, cnt[CKF_MAX_FIELDS], sum[CKF_MAX_FIELDS];
    for (uint32_t f = 0; f < nf; f++)
        total += c->fields[f].count * c->fields[f].es;
    uint64_t cap = rb->pkgcap[b];
    if (total > INT_MAX)
        return snprintf(msg, mn, "rbio: %" PRIu64 " bytes on one rank (limit %d)", total, INT_MAX), EFBIG;
    if (grow(&rb->pkg[b], &cap, total) || (!rb->hdr[b] && !(rb->hdr[b] = malloc(pkg_hdr_size(nf)))))
        return snprintf(msg, mn, "rbio: no memory for the %" PRIu64 "-byte send buffer", total), ENOMEM;
    rb->pkgcap[b] = cap;
    uint64_t o = 0;
    for (uint32_t f = 0; f < nf; f++) {
        uint64_t n = c->fields[f].count * c->fields[f].es;
        if (n)
            memcpy(rb->pkg[b] + o, c->fields[f].data, n);
        ckf_swap_elems(rb->pkg[b] + o, c->fields[f].count, c->fields[f].es);
        cnt[f] = c->fields[f].count;
        sum[f] = ckf_hash(rb->pkg[b] + o, n, CKF_HASH_SEED);
        o += n;
    }
    ck_pkg_hdr h = {step, (uint32_t)c->rank, nf, cnt, sum};
    pkg_hdr_pack(&h, rb->hdr[b]);
    MPI_Isend(rb->hdr[b], (int)pkg_hdr_size(nf), MPI_BYTE, rb->writer, TAG_HDR, c->comm, &rb->req[b][0]);
    MPI_Isend(rb->pkg[b], (int)total, MPI_BYTE, rb->writer, TAG_DATA, c->comm, &rb->req[b][1]);
    ck_prog_kick(c);
    c->st.bytes = total;
    c->st.perceived_s = ck_now() - t0;
    return 0;
}

/* Writer: the group's headers -> counts/sums [f * gsize + i]. */
static int recv_headers(sheaf_ckpt_ctx *c, uint64_t step, uint64_t *counts, uint64_t *sums, char *msg, size_t mn)
{
    ck_rbio *rb = &c->rb;
    uint32_t nf = (uint32_t)c->nfields;
    int nw = rb->gsize - 1;
    size_t hs = pkg_hdr_size(nf);
    unsigned char *hb = malloc(hs * (size_t)(nw + 1));
    MPI_Request *r = malloc(sizeof *r * (size_t)(nw + 1));
    if (!hb || !r) {
        free(hb);
        free(r);
        return snprintf(msg, mn, "rbio: no memory for %d headers", nw), ENOMEM;
    }
    for (int i = 0; i < nw; i++)
        MPI_Irecv(hb + hs * (size_t)i, (int)hs, MPI_BYTE, rb->gfirst + 1 + i, TAG_HDR, c->comm, &r[i]);
    int rc = ck_waitall(c, nw, r, "rbio writer: the workers' headers");
    if (rc)
        snprintf(msg, mn, "%s", c->err);
    for (uint32_t f = 0; f < nf; f++) {
        counts[(size_t)f * rb->gsize] = c->fields[f].count;
        sums[(size_t)f * rb->gsize] = ckf_hash(c->fields[f].data, c->fields[f].count * c->fields[f].es, CKF_HASH_SEED);
    }
    uint64_t cf[CKF_MAX_FIELDS], sf[CKF_MAX_FIELDS];
    for (int i = 0; !rc && i < nw; i++) {
        ck_pkg_hdr h = {0, 0, 0, cf, sf};
        if (pkg_hdr_unpack(hb + hs * (size_t)i, nf, &h) || h.step != step || h.rank != (uint32_t)(rb->gfirst + 1 + i))
            rc = EPROTO, snprintf(msg, mn, "rbio writer: bad header from rank %d", rb->gfirst + 1 + i);
        for (uint32_t f = 0; !rc && f < nf; f++) {
            counts[(size_t)f * rb->gsize + 1 + i] = cf[f];
            sums[(size_t)f * rb->gsize + 1 + i] = sf[f];
        }
    }
    free(hb);
    free(r);
    return rc;
}

/* Writer: receive every worker's package into gbuf, field-major. */
static int recv_data(sheaf_ckpt_ctx *c, const uint64_t *counts, uint64_t *foff, int rc_in, char *msg, size_t mn)
{
    ck_rbio *rb = &c->rb;
    int nf = c->nfields, nw = rb->gsize - 1, rc = rc_in;
    uint64_t total = 0;
    for (int f = 0; f < nf; f++) {
        foff[f] = total;
        for (int i = 0; i < rb->gsize; i++)
            total += counts[(size_t)f * rb->gsize + i] * c->fields[f].es;
    }
    if (!rc && total > c->cfg.buffer)
        rc = ENOMEM,
        snprintf(msg, mn,
                 "rbio writer %d: the group's %" PRIu64 " bytes exceed buffer=%" PRIu64 " (raise buffer or ng)",
                 c->rank, total, c->cfg.buffer);
    if (!rc && grow(&rb->gbuf, &rb->gcap, total))
        rc = ENOMEM, snprintf(msg, mn, "rbio writer: no memory for %" PRIu64 " bytes", total);
    MPI_Request *r = calloc((size_t)nw + 1, sizeof *r);
    int *len = calloc((size_t)nf + 1, sizeof *len);
    MPI_Aint *dsp = calloc((size_t)nf + 1, sizeof *dsp);
    if (!r || !len || !dsp) {
        free(r), free(len), free(dsp);
        return snprintf(msg, mn, "rbio writer: no memory"), ENOMEM; /* the sends time out on the workers */
    }
    uint64_t *pos = calloc((size_t)nf + 1, sizeof *pos);
    for (int f = 0; pos && f < nf; f++) {
        pos[f] = foff[f] + counts[(size_t)f * rb->gsize] * c->fields[f].es;
        if (!rc && counts[(size_t)f * rb->gsize])
            memcpy(rb->gbuf + foff[f], c->fields[f].data, counts[(size_t)f * rb->gsize] * c->fields[f].es);
    }
    for (int i = 0; i < nw; i++) {
        MPI_Datatype t = MPI_BYTE;
        int cnt = 0;
        if (!rc && pos) {
            for (int f = 0; f < nf; f++) {
                uint64_t n = counts[(size_t)f * rb->gsize + 1 + i] * c->fields[f].es;
                len[f] = (int)n;
                dsp[f] = (MPI_Aint)pos[f];
                pos[f] += n;
            }
            MPI_Type_create_hindexed(nf, len, dsp, MPI_BYTE, &t);
            MPI_Type_commit(&t);
            cnt = 1;
        } /* on an error the message is still received (truncated: discarded) so that the sender completes */
        MPI_Irecv(cnt ? rb->gbuf : NULL, cnt, t, rb->gfirst + 1 + i, TAG_DATA, c->comm, &r[i]);
        if (cnt)
            MPI_Type_free(&t);
    }
    c->lenient = rc != 0; /* truncated receives (discarded data) are not an MPI failure here */
    int wrc = ck_waitall(c, nw, r, "rbio writer: the workers' data");
    c->lenient = 0;
    if (wrc && !rc)
        rc = wrc, snprintf(msg, mn, "%s", c->err);
    free(r), free(len), free(dsp), free(pos);
    return rc;
}

static int writer_write(sheaf_ckpt_ctx *c, uint64_t step, char *msg, size_t mn)
{
    ck_rbio *rb = &c->rb;
    uint32_t nf = (uint32_t)c->nfields;
    size_t n = (size_t)nf * (size_t)rb->gsize + 1;
    uint64_t *counts = calloc(n, sizeof *counts), *sums = calloc(n, sizeof *sums), *foff = calloc(nf + 1, 8);
    const unsigned char **data = calloc(nf + 1, sizeof *data);
    int rc = counts && sums && foff && data ? 0 : ENOMEM;
    if (rc)
        snprintf(msg, mn, "rbio writer: no memory");
    char dummy[8];
    if (!msg) /* the directory could not be made: receive and drop the data */
        msg = dummy, mn = sizeof dummy, rc = rc ? rc : ECANCELED;
    if (rb->shm.on && !c->checked) { /* every writer, whatever its code: the same collectives */
        int fr = ck_check_fields(c, rb->wcomm);
        if (fr && !rc)
            rc = fr, snprintf(msg, mn, "%s", c->err);
    }
    if (rb->shm.on && counts && foff) { /* shared window: polled, no MPI */
        int hr = ck_shm_take(c, step, c->seq, counts, sums, foff, rc, msg, mn);
        rc = rc ? rc : hr;
    } else if (!rb->shm.on && (!rc || rc == ECANCELED)) {
        int hr = recv_headers(c, step, counts, sums, msg, mn);
        rc = rc ? rc : hr;
    }
    if (!rc && rb->role == SHEAF_CKPT_DEDICATED)
        for (uint32_t f = 0; f < nf; f++)
            if (c->fields[f].count)
                rc = EINVAL,
                snprintf(msg, mn, "rbio: dedicated writer %d declared data for '%s'", c->rank, c->fields[f].name);
    if (!c->broken && counts && foff && !rb->shm.on)
        rc = recv_data(c, counts, foff, rc, msg, mn);
    /* the writers agree before any collective write */
    int all = rc;
    MPI_Request r;
    if (!c->broken || rb->shm.on) { /* shm: the step's gather follows on the same communicator,
                                      * so a writer that timed out still takes part (no mismatch) */
        int was = c->broken;
        MPI_Iallreduce(&rc, &all, 1, MPI_INT, MPI_MAX, rb->wcomm, &r);
        if (ck_waitall(c, 1, &r, "rbio: agreement among the writers") && !was)
            all = rc = ETIMEDOUT, snprintf(msg, mn, "%s", c->err);
        else if (was)
            all = all ? all : rc;
    }
    if (!all) {
        for (uint32_t f = 0; f < nf; f++)
            data[f] = rb->gbuf + foff[f];
        ck_part p = {nf, (uint32_t)rb->gsize, (uint64_t)rb->gfirst, c->fields, counts, sums, data};
        char tmp[4096], path[4400];
        ck_tmpdir(c, step, tmp, sizeof tmp);
        uint64_t np = (uint64_t)c->np, ng = (uint64_t)c->cfg.ng;
        if (c->cfg.sion_container) {
            snprintf(path, sizeof path, "%s/rbio.sion", tmp);
            rc = ck_write_sion(c, rb->wcomm, step, path, c->cfg.nf, &p, msg, mn);
        } else if (c->cfg.nf == c->cfg.ng) {
            snprintf(path, sizeof path, "%s/rbio-%05d.ckpt", tmp, rb->group);
            rc = ck_write_self(c, step, path, &p, msg, mn);
        } else {
            uint64_t k = (uint64_t)ck_group_of((uint64_t)rb->group, ng, (uint64_t)c->cfg.nf);
            uint64_t g0 = ck_first(k, ng, (uint64_t)c->cfg.nf), g1 = ck_first(k + 1, ng, (uint64_t)c->cfg.nf);
            uint64_t f0 = ck_first(g0, np, ng), f1 = ck_first(g1, np, ng);
            snprintf(path, sizeof path, "%s/rbio-%05d.ckpt", tmp, (int)k);
            rc = ck_write_shared(c, rb->fcomm, step, path, &p, f0, (uint32_t)(f1 - f0), msg, mn);
        }
    } /* else another writer failed: nothing written here; its code and message are the step's
       * (gathered to rank 0 with this writer's 0), not a "failed elsewhere" of a lower rank */
    c->st.bytes = 0;
    for (uint32_t f = 0; f < nf; f++)
        c->st.bytes += c->fields[f].count * c->fields[f].es;
    free(counts), free(sums), free(foff), free((void *)data);
    return rc;
}

int ck_rbio_write(sheaf_ckpt_ctx *c, uint64_t step, char *msg, size_t mn)
{
    if ((uint32_t)c->nfields > CKF_MAX_FIELDS)
        return snprintf(msg, mn, "too many fields"), EINVAL;
    c->st.perceived_s = 0;
    if (c->rb.role != SHEAF_CKPT_WORKER)
        return writer_write(c, step, msg, mn);
    return c->rb.shm.on ? ck_shm_put(c, step, c->seq, msg, mn) : worker_send(c, step, msg, mn);
}
