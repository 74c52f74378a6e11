/* io.c - writing one unit: alone as a stream (POSIX file, MPI_File on
 * MPI_COMM_SELF, a sion task) or shared by a communicator (MPI-IO
 * split-collective writes at offsets from exclusive prefix sums). */
#if defined(__GNUC__) && !defined(__clang__)
/* messages are cut at their buffer's size on purpose; MPI_Testall with
 * MPI_STATUSES_IGNORE is not an array access (GCC's false positive) */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
#include "ckpt.h"
#include "sion.h"
#include "sion_mpi.h"
#include "sheaf.h"
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int ck_part_own(sheaf_ckpt_ctx *c, ck_part *p)
{
    memset(p, 0, sizeof *p);
    uint32_t nf = (uint32_t)c->nfields;
    p->nfields = nf;
    p->nlocal = 1;
    p->first = (uint64_t)c->rank;
    p->decl = c->fields;
    p->counts = calloc(nf + 1, sizeof *p->counts);
    p->sums = calloc(nf + 1, sizeof *p->sums);
    p->data = calloc(nf + 1, sizeof *p->data);
    if (!p->counts || !p->sums || !p->data) {
        ck_part_free(p);
        return ENOMEM;
    }
    for (uint32_t f = 0; f < nf; f++) {
        p->counts[f] = c->fields[f].count;
        p->data[f] = c->fields[f].data;
        p->sums[f] = ckf_hash(p->data[f], p->counts[f] * c->fields[f].es, CKF_HASH_SEED);
    }
    return 0;
}

void ck_part_free(ck_part *p)
{
    free(p->counts);
    free(p->sums);
    free((void *)p->data);
    memset(p, 0, sizeof *p);
}

int ck_header_init(ckf_header *h, const sheaf_ckpt_ctx *c, uint64_t step, uint64_t first, uint32_t nranks)
{
    memset(h, 0, sizeof *h);
    h->step = step;
    h->first_rank = first;
    h->nranks = nranks;
    h->total_ranks = (uint64_t)c->np;
    h->nfields = (uint32_t)c->nfields;
    snprintf(h->app, sizeof h->app, "%s", c->app);
    uint64_t nr = (uint64_t)h->nfields * nranks;
    h->fields = calloc(h->nfields + 1, sizeof *h->fields);
    h->counts = calloc(nr + 1, sizeof *h->counts);
    h->sums = calloc(nr + 1, sizeof *h->sums);
    if (!h->fields || !h->counts || !h->sums) {
        ckf_header_free(h);
        return ENOMEM;
    }
    for (uint32_t f = 0; f < h->nfields; f++) {
        snprintf(h->fields[f].name, sizeof h->fields[f].name, "%s", c->fields[f].name);
        h->fields[f].type = (uint32_t)c->fields[f].type;
        h->fields[f].elemsize = (uint32_t)c->fields[f].es;
    }
    return 0;
}

/* header of a unit written alone by participant p */
static int own_header(sheaf_ckpt_ctx *c, uint64_t step, const ck_part *p, unsigned char **hb, uint64_t *hn,
                      ckf_header *h)
{
    if (ck_header_init(h, c, step, p->first, p->nlocal))
        return ENOMEM;
    memcpy(h->counts, p->counts, (size_t)p->nfields * p->nlocal * sizeof *h->counts);
    memcpy(h->sums, p->sums, (size_t)p->nfields * p->nlocal * sizeof *h->sums);
    ckf_layout(h);
    *hn = h->header_bytes;
    *hb = malloc(*hn);
    if (!*hb) {
        ckf_header_free(h);
        return ENOMEM;
    }
    ckf_encode(h, *hb);
    return 0;
}

static uint64_t part_bytes(const ck_part *p, uint32_t f)
{
    uint64_t n = 0;
    for (uint32_t r = 0; r < p->nlocal; r++)
        n += p->counts[(uint64_t)f * p->nlocal + r];
    return n * p->decl[f].es;
}

int ck_write_stream(sheaf_ckpt_ctx *c, uint64_t step, const ck_part *p, ck_sink sink, void *sctx, char *msg, size_t mn)
{
    unsigned char *hb;
    uint64_t hn;
    ckf_header h;
    if (own_header(c, step, p, &hb, &hn, &h))
        return snprintf(msg, mn, "no memory for the header"), ENOMEM;
    int rc = sink(sctx, hb, hn, msg, mn);
    free(hb);
    ck_fault(c, "kill", step);
    for (uint32_t f = 0; !rc && f < p->nfields; f++) {
        unsigned char bh[CKF_BLOCK_HDR];
        ckf_block_hdr(f, h.fields[f].block_bytes, bh);
        rc = sink(sctx, bh, CKF_BLOCK_HDR, msg, mn);
        if (!rc && h.fields[f].block_bytes)
            rc = sink(sctx, p->data[f], h.fields[f].block_bytes, msg, mn);
    }
    ckf_header_free(&h);
    return rc;
}

typedef struct fd_sink {
    int fd;
    const char *path;
} fd_sink;

static int sink_fd(void *x, const void *buf, uint64_t n, char *msg, size_t mn)
{
    fd_sink *s = x;
    const unsigned char *b = buf;
    while (n) {
        ssize_t w = write(s->fd, b, n > (1u << 30) ? (1u << 30) : (size_t)n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int e = w < 0 ? errno : EIO;
            snprintf(msg, mn, "%s: write: %s", s->path, strerror(e));
            return e;
        }
        b += w;
        n -= (uint64_t)w;
    }
    return 0;
}

int ck_write_posix(sheaf_ckpt_ctx *c, uint64_t step, const char *path, const ck_part *p, char *msg, size_t mn)
{
    double t0 = ck_now();
    fd_sink s = {open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666), path};
    if (s.fd < 0) {
        int e = errno;
        snprintf(msg, mn, "%s: %s", path, strerror(e));
        return e;
    }
    int rc = ck_write_stream(c, step, p, sink_fd, &s, msg, mn);
    if (!rc && c->cfg.durable && fsync(s.fd)) {
        rc = errno;
        snprintf(msg, mn, "%s: fsync: %s", path, strerror(rc));
    }
    if (close(s.fd) && !rc) {
        rc = errno;
        snprintf(msg, mn, "%s: close: %s", path, strerror(rc));
    }
    c->st.io_s = ck_now() - t0;
    return rc;
}

static int mpi_msg(int mrc, const char *path, const char *what, char *msg, size_t mn)
{
    char es[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(mrc, es, &len);
    es[len < (int)sizeof es ? len : (int)sizeof es - 1] = 0;
    snprintf(msg, mn, "%s: %s: %s", path, what, es);
    return EIO;
}

typedef struct mf_sink {
    MPI_File fh;
    MPI_Offset off;
    const char *path;
} mf_sink;

static int sink_mpifile(void *x, const void *buf, uint64_t n, char *msg, size_t mn)
{
    mf_sink *s = x;
    const char *b = buf;
    while (n) {
        int k = n > (1u << 30) ? (1 << 30) : (int)n;
        MPI_Status st;
        int mrc = MPI_File_write_at(s->fh, s->off, b, k, MPI_BYTE, &st);
        int got = 0;
        if (mrc == MPI_SUCCESS)
            MPI_Get_count(&st, MPI_BYTE, &got);
        if (mrc != MPI_SUCCESS)
            return mpi_msg(mrc, s->path, "MPI_File_write_at", msg, mn);
        if (got != k)
            return snprintf(msg, mn, "%s: short write (%d of %d bytes; disk full?)", s->path, got, k), ENOSPC;
        s->off += k;
        b += k;
        n -= (uint64_t)k;
    }
    return 0;
}

static int mpi_open(sheaf_ckpt_ctx *c, MPI_Comm comm, const char *path, MPI_File *fh, char *msg, size_t mn)
{
    int mrc = MPI_File_open(comm, (char *)path, MPI_MODE_WRONLY | MPI_MODE_CREATE | MPI_MODE_EXCL, c->info, fh);
    if (mrc != MPI_SUCCESS)
        return mpi_msg(mrc, path, "MPI_File_open", msg, mn);
    MPI_File_set_errhandler(*fh, MPI_ERRORS_RETURN);
    return 0;
}

/* rc must be the same on every rank of the file's communicator (agreed):
 * a failed file is not synced (Open MPI's OMPIO returns early from a sync
 * after a failed write on that rank, and the others' close never ends) */
static int mpi_close(sheaf_ckpt_ctx *c, MPI_File *fh, const char *path, int rc, char *msg, size_t mn)
{
    if (c->cfg.durable && !rc) {
        int mrc = MPI_File_sync(*fh);
        if (mrc != MPI_SUCCESS && !rc)
            rc = mpi_msg(mrc, path, "MPI_File_sync", msg, mn);
    }
    int mrc = MPI_File_close(fh);
    if (mrc != MPI_SUCCESS && !rc)
        rc = mpi_msg(mrc, path, "MPI_File_close", msg, mn);
    return rc;
}

int ck_write_self(sheaf_ckpt_ctx *c, uint64_t step, const char *path, const ck_part *p, char *msg, size_t mn)
{
    double t0 = ck_now();
    mf_sink s = {MPI_FILE_NULL, 0, path};
    int rc = mpi_open(c, MPI_COMM_SELF, path, &s.fh, msg, mn);
    if (rc)
        return rc;
    rc = ck_write_stream(c, step, p, sink_mpifile, &s, msg, mn);
    rc = mpi_close(c, &s.fh, path, rc, msg, mn);
    c->st.io_s = ck_now() - t0;
    return rc;
}

/* Root of fcomm: gather every participant's counts and sums, encode the
 * header and write it and the block headers (independent writes). */
static int shared_header(sheaf_ckpt_ctx *c, MPI_Comm fcomm, uint64_t step, const ck_part *p, uint64_t unit_first,
                         uint32_t unit_nranks, ckf_header *h, char *msg, size_t mn)
{
    int fr, fn;
    MPI_Comm_rank(fcomm, &fr);
    MPI_Comm_size(fcomm, &fn);
    uint64_t nf = p->nfields, mine = 2 * nf * p->nlocal;
    int *cnt = NULL, *dsp = NULL;
    uint64_t *all = NULL, *send = malloc((mine + 1) * sizeof *send);
    int rc = send ? 0 : ENOMEM;
    int nloc = (int)p->nlocal;
    if (fr == 0) {
        cnt = calloc((size_t)fn, sizeof *cnt);
        dsp = calloc((size_t)fn, sizeof *dsp);
        all = calloc(2 * nf * unit_nranks + 1, sizeof *all);
        rc = rc || !cnt || !dsp || !all || ck_header_init(h, c, step, unit_first, unit_nranks) ? ENOMEM : 0;
    }
    int *nl = fr == 0 ? cnt : NULL;
    MPI_Gather(&nloc, 1, MPI_INT, nl, 1, MPI_INT, 0, fcomm);
    if (fr == 0 && !rc) {
        int o = 0;
        for (int i = 0; i < fn; i++) {
            cnt[i] *= (int)(2 * nf);
            dsp[i] = o;
            o += cnt[i];
        }
    }
    for (uint64_t f = 0; send && f < nf; f++)
        for (uint64_t r = 0; r < p->nlocal; r++) {
            send[2 * (r * nf + f)] = p->counts[f * p->nlocal + r];
            send[2 * (r * nf + f) + 1] = p->sums[f * p->nlocal + r];
        }
    /* rc is agreed below by the caller; a failed allocation sends nothing useful but still takes part */
    MPI_Gatherv(send, send ? (int)mine : 0, MPI_UINT64_T, all, cnt, dsp, MPI_UINT64_T, 0, fcomm);
    if (fr == 0 && !rc) {
        for (uint64_t r = 0; r < unit_nranks; r++)
            for (uint64_t f = 0; f < nf; f++) {
                h->counts[f * unit_nranks + r] = all[2 * (r * nf + f)];
                h->sums[f * unit_nranks + r] = all[2 * (r * nf + f) + 1];
            }
        ckf_layout(h);
    }
    if (rc)
        snprintf(msg, mn, "no memory for the header tables");
    free(send);
    free(cnt);
    free(dsp);
    free(all);
    return rc;
}

static int write_root_headers(const ckf_header *h, MPI_File fh, const char *path, char *msg, size_t mn)
{
    unsigned char *hb = malloc(h->header_bytes);
    if (!hb)
        return snprintf(msg, mn, "no memory"), ENOMEM;
    ckf_encode(h, hb);
    mf_sink s = {fh, 0, path};
    int rc = sink_mpifile(&s, hb, h->header_bytes, msg, mn);
    free(hb);
    for (uint32_t f = 0; !rc && f < h->nfields; f++) {
        unsigned char bh[CKF_BLOCK_HDR];
        ckf_block_hdr(f, h->fields[f].block_bytes, bh);
        s.off = (MPI_Offset)h->fields[f].block_offset;
        rc = sink_mpifile(&s, bh, CKF_BLOCK_HDR, msg, mn);
    }
    return rc;
}

/* ck_write_shared's state: the data movement behind the control protocol
 * (proto.c, ck_proto_shared) over the file's communicator */
typedef struct shared_x {
    sheaf_ckpt_ctx *c;
    MPI_Comm fcomm;
    int fr;
    uint64_t step, unit_first;
    uint32_t unit_nranks, nf;
    const char *path;
    const ck_part *p;
    uint64_t *mine, *pre, *boff;
    ckf_header h;
    MPI_File fh;
} shared_x;

static int sh_sizes(void *v, char *msg, size_t mn)
{
    shared_x *x = v;
    if (!x->mine)
        return snprintf(msg, mn, "%s: no memory for the field sizes", x->path), ENOMEM;
    for (uint32_t f = 0; f < x->nf; f++) {
        x->mine[f] = part_bytes(x->p, f);
        if (x->mine[f] > INT_MAX)
            return snprintf(msg, mn, "%s: field %u: %" PRIu64 " bytes on one rank (limit %d per call)", x->path, f,
                            x->mine[f], INT_MAX),
                   EFBIG;
    }
    return 0;
}

static int sh_plan(void *v, char *msg, size_t mn)
{
    shared_x *x = v;
    /* offsets inside each field block: exclusive prefix sums (one vector Exscan) */
    MPI_Exscan(x->mine, x->pre, (int)x->nf, MPI_UINT64_T, MPI_SUM, x->fcomm);
    if (x->fr == 0)
        memset(x->pre, 0, x->nf * sizeof *x->pre);
    int rc = shared_header(x->c, x->fcomm, x->step, x->p, x->unit_first, x->unit_nranks, &x->h, msg, mn);
    x->boff = calloc(x->nf + 1, sizeof *x->boff);
    if (!x->boff && !rc)
        rc = ENOMEM, snprintf(msg, mn, "%s: no memory for the block offsets", x->path);
    for (uint32_t f = 0; x->fr == 0 && !rc && f < x->nf; f++)
        x->boff[f] = x->h.fields[f].block_offset;
    return rc;
}

static int sh_open(void *v, char *msg, size_t mn)
{
    shared_x *x = v;
    MPI_Bcast(x->boff, (int)x->nf, MPI_UINT64_T, 0, x->fcomm);
    int rc = mpi_open(x->c, x->fcomm, x->path, &x->fh, msg, mn);
    if (!rc)
        ck_fault(x->c, "kill", x->step);
    return rc;
}

static int sh_write_field(void *v, uint32_t f, char *msg, size_t mn)
{
    shared_x *x = v;
    MPI_Status st;
    MPI_Offset off = (MPI_Offset)(x->boff[f] + CKF_BLOCK_HDR + x->pre[f]);
    int mrc = MPI_File_write_at_all_begin(x->fh, off, x->p->data[f], (int)x->mine[f], MPI_BYTE);
    if (mrc == MPI_SUCCESS)
        mrc = MPI_File_write_at_all_end(x->fh, x->p->data[f], &st);
    int got = (int)x->mine[f];
    if (mrc == MPI_SUCCESS && x->mine[f]) /* a 0-byte write's status is not set by every MPI */
        MPI_Get_count(&st, MPI_BYTE, &got);
    if (mrc != MPI_SUCCESS)
        return mpi_msg(mrc, x->path, "MPI_File_write_at_all", msg, mn);
    if (got != (int)x->mine[f])
        return snprintf(msg, mn, "%s: short write of field %u (disk full?)", x->path, f), ENOSPC;
    return 0;
}

static int sh_write_headers(void *v, char *msg, size_t mn)
{
    shared_x *x = v;
    return write_root_headers(&x->h, x->fh, x->path, msg, mn);
}

static int sh_close(void *v, int rc, char *msg, size_t mn)
{
    shared_x *x = v;
    return mpi_close(x->c, &x->fh, x->path, rc, msg, mn);
}

static const ck_shared_ops shared_ops = {sh_sizes, sh_plan, sh_open, sh_write_field, sh_write_headers, sh_close};

int ck_write_shared(sheaf_ckpt_ctx *c, MPI_Comm fcomm, uint64_t step, const char *path, const ck_part *p,
                    uint64_t unit_first, uint32_t unit_nranks, char *msg, size_t mn)
{
    double t0 = ck_now();
    shared_x x;
    memset(&x, 0, sizeof x);
    x.c = c, x.fcomm = fcomm, x.step = step, x.unit_first = unit_first, x.unit_nranks = unit_nranks;
    x.nf = p->nfields, x.path = path, x.p = p, x.fh = MPI_FILE_NULL;
    MPI_Comm_rank(fcomm, &x.fr);
    x.mine = calloc(2 * (size_t)x.nf + 2, sizeof *x.mine);
    x.pre = x.mine ? x.mine + x.nf + 1 : NULL;
    sheaf_comm_mpi_ref_t ref;
    ck_ag a;
    ck_ag_init(&a, sheaf_comm_mpi_ref(&ref, fcomm));
    a.who = c->rank; /* messages name the rank of the checkpoint's communicator */
    int rc = ck_proto_shared(&a, &shared_ops, &x, x.nf, msg, mn);
    ckf_header_free(&x.h);
    free(x.boff);
    free(x.mine);
    c->st.io_s = ck_now() - t0;
    return rc;
}

typedef struct sion_sink {
    int sid;
    const char *path;
} sion_sink;

static int sink_sion(void *x, const void *buf, uint64_t n, char *msg, size_t mn)
{
    sion_sink *s = x;
    if (n && sion_fwrite(buf, 1, (size_t)n, s->sid) != (size_t)n) {
        snprintf(msg, mn, "%s: sion_fwrite: %s", s->path, sheaf_last_error());
        return EIO;
    }
    return 0;
}

int ck_write_sion(sheaf_ckpt_ctx *c, MPI_Comm comm, uint64_t step, const char *path, int nfiles, const ck_part *p,
                  char *msg, size_t mn)
{
    double t0 = ck_now();
    uint64_t total = ckf_header_size((uint32_t)c->nfields, p->nlocal);
    for (uint32_t f = 0; f < p->nfields; f++)
        total += CKF_BLOCK_HDR + part_bytes(p, f);
    sion_int64 chunk = (sion_int64)total;
    sion_int32 fsblk = -1;
    int gr, nf = nfiles > 0 ? nfiles : 1;
    MPI_Comm_rank(comm, &gr);
    FILE *fp = NULL;
    int prev = sheaf_set_error_printing(0);
    sion_sink s = {sion_paropen_mpi(path, "wb,posix", &nf, comm, NULL, &chunk, &fsblk, &gr, &fp, NULL), path};
    sheaf_set_error_printing(prev);
    if (s.sid < 0)
        return snprintf(msg, mn, "%s: sion_paropen_mpi: %s", path, sheaf_last_error()), EIO;
    int rc = ck_write_stream(c, step, p, sink_sion, &s, msg, mn);
    /* durability of the tasks' data; the metadata written at close is
     * fsynced by the commit (every file of the checkpoint) */
    if (!rc && c->cfg.durable && sion_flush(s.sid) != SION_SUCCESS)
        rc = EIO, snprintf(msg, mn, "%s: sion_flush: %s", path, sheaf_last_error());
    prev = sheaf_set_error_printing(0);
    if (sion_parclose_mpi(s.sid) != SION_SUCCESS && !rc)
        rc = EIO, snprintf(msg, mn, "%s: sion_parclose_mpi: %s", path, sheaf_last_error());
    sheaf_set_error_printing(prev);
    c->st.io_s = ck_now() - t0;
    return rc;
}
