/* comm_mpi.c - sheaf's collective layer over MPI (libsheaf_comm_mpi, built
 * only with MPI). The communicator is a private duplicate with
 * MPI_ERRORS_RETURN. reduce: a binomial tree of point-to-point messages of
 * variable length (probe, then receive), each prefixed by one status byte so
 * that a failure below travels up to the root instead of leaving it
 * waiting; bcast: one MPI_Allreduce (bitwise OR) of a fixed buffer that
 * carries the length, "a member has no buffer" and up to 4 KiB of data
 * (longer messages: then an agreement and one MPI_Bcast of the rest; see
 * m_bcast). Uses only the
 * public header: a separate library, as any other implementation would be. */
#include "sheaf_comm_mpi.h"
#include <stdlib.h>
#include <string.h>

#define TAG 7177
#define MAXMSG ((size_t)1 << 30)

static MPI_Comm *C(const sheaf_comm *c) { return c->impl; }
static int m_rank(const sheaf_comm *c)
{
    int r = -1;
    MPI_Comm_rank(*C(c), &r);
    return r;
}
static int m_size(const sheaf_comm *c)
{
    int s = 0;
    MPI_Comm_size(*C(c), &s);
    return s;
}
static int m_barrier(sheaf_comm *c) { return MPI_Barrier(*C(c)) != MPI_SUCCESS; }

/* Messages up to EAGER bytes travel in the first (and only) collective. */
#define EAGER ((size_t)4096)
#define HDR 16 /* u64 length (~0: the root refused), u8 "a member has no buffer", padding */

/* One collective for a message of at most min(maxlen, EAGER) bytes: an
 * MPI_Allreduce with MPI_BOR over a fixed buffer {length, failure byte,
 * data} to which the root contributes the length and the data and every
 * other member zeros and its failure byte (no buffer for the result). A
 * broadcast would deliver the data in the same ceil(log2 P) steps but could
 * not tell the members that one of them failed: the OR does, so a member
 * without memory fails the broadcast on every member. Longer messages: the
 * same first exchange carries the length and the first bytes, then the
 * members agree that all have a buffer for the rest (MPI_Allreduce MIN) and
 * the rest follows in one MPI_Bcast. maxlen must be the same on every member
 * (it sizes the first exchange). */
static int m_bcast(sheaf_comm *c, void **buf, size_t *len, size_t maxlen, int root)
{
    int me = m_rank(c);
    size_t cap = maxlen < EAGER ? maxlen : EAGER;
    unsigned char in[HDR + EAGER], out[HDR + EAGER];
    unsigned long long l = 0;
    unsigned char *p = NULL;
    memset(in, 0, HDR + cap);
    if (me == root) {
        l = (unsigned long long)*len;
        if (l > maxlen || l > MAXMSG)
            l = ~0ull; /* tell the others it failed */
        else
            memcpy(in + HDR, *buf, l < cap ? (size_t)l : cap);
        memcpy(in, &l, sizeof l);
    } else if (!(p = malloc(cap ? cap : 1)))
        in[8] = 1;
    if (MPI_Allreduce(in, out, (int)(HDR + cap), MPI_BYTE, MPI_BOR, *C(c)) != MPI_SUCCESS) {
        free(p);
        return SHEAF_COMM_ECOMM;
    }
    memcpy(&l, out, sizeof l);
    if (l == ~0ull) {
        free(p);
        return SHEAF_COMM_ELIMIT;
    }
    if (out[8]) {
        free(p);
        return SHEAF_COMM_ENOMEM; /* a member had no buffer: every member fails */
    }
    if (l > cap) {
        /* the rest: every member needs the whole buffer before it joins the
         * broadcast tree (one without it would leave those below waiting) */
        if (me != root) {
            unsigned char *big = malloc((size_t)l);
            if (big)
                memcpy(big, out + HDR, cap);
            free(p);
            p = big;
        }
        int ok = me == root || p != NULL, all = 0;
        if (MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, *C(c)) != MPI_SUCCESS || !all) {
            free(p);
            return all || !ok ? SHEAF_COMM_ENOMEM : SHEAF_COMM_ECOMM;
        }
        unsigned char *dst = me == root ? *buf : p;
        if (MPI_Bcast(dst + cap, (int)(l - cap), MPI_BYTE, root, *C(c)) != MPI_SUCCESS) {
            free(p);
            return SHEAF_COMM_ECOMM;
        }
    } else if (me != root && l)
        memcpy(p, out + HDR, (size_t)l);
    if (me != root) {
        *buf = p;
        *len = (size_t)l;
    }
    return 0;
}

static int m_reduce(sheaf_comm *c, const void *in, size_t len, const sheaf_comm_op *op, void **out, size_t *outlen,
                    int root)
{
    int me = m_rank(c), n = m_size(c), vr = (me - root + n) % n, bad = len > op->max_len;
    size_t cap = 1 + op->max_len;
    unsigned char *part = malloc(cap), *recv = malloc(cap), *tmp = malloc(cap);
    size_t plen = 1 + len;
    *out = NULL;
    if (!part || !recv || !tmp)
        bad = 1;
    else {
        part[0] = (unsigned char)bad;
        if (!bad)
            memcpy(part + 1, in, len);
    }
    unsigned char badbyte = 1;
    for (int step = 1; step < n; step <<= 1) {
        if (vr & step) {
            int dst = (vr - step + root) % n;
            const void *s = bad || !part ? &badbyte : part;
            int sl = bad || !part ? 1 : (int)plen;
            if (MPI_Send(s, sl, MPI_BYTE, dst, TAG, *C(c)) != MPI_SUCCESS)
                bad = 1;
            break;
        }
        if (vr + step >= n)
            continue;
        int src = (vr + step + root) % n, cnt = 0;
        MPI_Status st;
        if (MPI_Probe(src, TAG, *C(c), &st) != MPI_SUCCESS || MPI_Get_count(&st, MPI_BYTE, &cnt) != MPI_SUCCESS) {
            bad = 1;
            break; /* the layer itself is broken */
        }
        unsigned char *dst = recv && (size_t)cnt <= cap ? recv : NULL, sink;
        /* a message too large is received truncated (and so consumed) and fails the reduction */
        if (MPI_Recv(dst ? dst : &sink, dst ? cnt : 0, MPI_BYTE, src, TAG, *C(c), MPI_STATUS_IGNORE) != MPI_SUCCESS ||
            !dst) {
            bad = 1;
            continue;
        }
        if (bad || cnt < 1 || recv[0])
            bad = 1;
        else {
            size_t ol = 0;
            if (op->combine(part + 1, plen - 1, recv + 1, (size_t)cnt - 1, tmp + 1, &ol, op->arg) || ol > op->max_len)
                bad = 1;
            else {
                tmp[0] = 0;
                unsigned char *x = part;
                part = tmp, tmp = x, plen = 1 + ol;
            }
        }
    }
    int rc = 0;
    if (me == root) {
        if (bad)
            rc = SHEAF_COMM_ECOMM;
        else if ((*out = malloc(plen - 1 ? plen - 1 : 1))) {
            memcpy(*out, part + 1, plen - 1);
            *outlen = plen - 1;
        } else
            rc = SHEAF_COMM_ENOMEM;
    }
    free(part), free(recv), free(tmp);
    return rc;
}

/* one MPI_Allreduce; the communicator's error handler returns (owned
 * duplicates: MPI_ERRORS_RETURN; borrowed ones: the caller's choice) */
static int m_allmin(sheaf_comm *c, int64_t *v, int n)
{
    int64_t in[64];
    if (n < 1 || n > 64)
        return sheaf_comm_error(SHEAF_COMM_EINVAL, "sheaf_comm_mpi: allmin of %d values", n);
    memcpy(in, v, (size_t)n * sizeof *v);
    int rc = MPI_Allreduce(in, v, n, MPI_INT64_T, MPI_MIN, *C(c));
    if (rc != MPI_SUCCESS) {
        char s[MPI_MAX_ERROR_STRING] = "";
        int l = 0;
        MPI_Error_string(rc, s, &l);
        return sheaf_comm_error(SHEAF_COMM_ECOMM, "sheaf_comm_mpi: MPI_Allreduce failed: %s", s);
    }
    return 0;
}

static const sheaf_comm_ops mpi_ops;

static int wrap(MPI_Comm nc, sheaf_comm *out)
{
    MPI_Comm *p = malloc(sizeof *p);
    if (!p)
        return SHEAF_COMM_ENOMEM;
    *p = nc;
    MPI_Comm_set_errhandler(nc, MPI_ERRORS_RETURN);
    out->ops = &mpi_ops;
    out->impl = p;
    return 0;
}

static int m_split(sheaf_comm *c, int color, int key, sheaf_comm *out)
{
    MPI_Comm nc;
    out->ops = &mpi_ops, out->impl = NULL;
    if (MPI_Comm_split(*C(c), color < 0 ? MPI_UNDEFINED : color, key, &nc) != MPI_SUCCESS)
        return SHEAF_COMM_ECOMM;
    if (nc == MPI_COMM_NULL)
        return 0;
    int rc = wrap(nc, out);
    if (rc)
        MPI_Comm_free(&nc); /* not wrapped: nobody else would free it */
    return rc;
}

static void m_free(sheaf_comm *c)
{
    if (!c || !c->impl)
        return;
    MPI_Comm_free(C(c));
    free(c->impl);
    c->impl = NULL;
}

static const sheaf_comm_ops mpi_ops = {m_rank, m_size, m_barrier, m_bcast, m_reduce, m_split, m_free, m_allmin};

/* a borrowed communicator: the caller's, never freed here */
static void m_nofree(sheaf_comm *c) { c->impl = NULL; }
static const sheaf_comm_ops ref_ops = {m_rank, m_size, m_barrier, m_bcast, m_reduce, m_split, m_nofree, m_allmin};

sheaf_comm *sheaf_comm_mpi_ref(sheaf_comm_mpi_ref_t *r, MPI_Comm comm)
{
    r->mpi = comm;
    r->comm.ops = &ref_ops;
    r->comm.impl = &r->mpi;
    return &r->comm;
}

int sheaf_comm_mpi(MPI_Comm comm, sheaf_comm *out)
{
    if (!out)
        return sheaf_comm_error(SHEAF_COMM_EINVAL, "sheaf_comm_mpi: NULL output");
    MPI_Comm nc;
    if (MPI_Comm_dup(comm, &nc) != MPI_SUCCESS)
        return sheaf_comm_error(SHEAF_COMM_ECOMM, "sheaf_comm_mpi: MPI_Comm_dup failed");
    if (wrap(nc, out)) {
        MPI_Comm_free(&nc);
        return sheaf_comm_error(SHEAF_COMM_ENOMEM, "sheaf_comm_mpi: out of memory");
    }
    return SHEAF_COMM_OK;
}
