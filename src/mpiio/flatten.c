/* flatten.c - an MPI datatype as a list of (offset, length) byte segments in
 * typemap order, decoded once from its envelope and contents (the file view
 * keeps the result for the life of the view). Adjacent segments are merged;
 * the list is bounded (MIO_FLAT_MAX_SEGS), so a hostile datatype fails with
 * SHEAF_MPIIO_ENOMEM instead of exhausting memory. Combiners without a
 * decoder here (darray, Fortran parameterised types) are flattened by
 * packing a probe buffer when their extent is small enough. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mpiio_impl.h"

#define PROBE_MAX_EXTENT ((int64_t)64 << 20)

void mio_flat_free(mio_flat *f)
{
    free(f->seg);
    memset(f, 0, sizeof *f);
}

int mio_flat_push(mio_flat *f, int64_t off, int64_t len)
{
    if (len <= 0)
        return 0;
    if (f->n > 0 && f->seg[f->n - 1].off + f->seg[f->n - 1].len == off) {
        f->seg[f->n - 1].len += len;
        return 0;
    }
    if (f->n == f->cap) {
        if (f->cap >= MIO_FLAT_MAX_SEGS)
            return SHEAF_MPIIO_ENOMEM;
        size_t nc = f->cap ? f->cap * 2 : 16;
        mio_seg *s = realloc(f->seg, nc * sizeof *s);
        if (!s)
            return SHEAF_MPIIO_ENOMEM;
        f->seg = s;
        f->cap = nc;
    }
    f->seg[f->n].off = off;
    f->seg[f->n].len = len;
    f->n++;
    return 0;
}

static int is_dense(const mio_flat *c) { return c->n == 1 && c->seg[0].off == 0 && c->seg[0].len == c->extent; }

/* `k` consecutive copies of child c starting at byte d */
static int put_copies(mio_flat *out, const mio_flat *c, int64_t d, int64_t k)
{
    if (k <= 0)
        return 0;
    if (is_dense(c))
        return mio_flat_push(out, d, k * c->extent);
    for (int64_t i = 0; i < k; i++)
        for (size_t s = 0; s < c->n; s++) {
            int rc = mio_flat_push(out, d + i * c->extent + c->seg[s].off, c->seg[s].len);
            if (rc)
                return rc;
        }
    return 0;
}

static int flatten_rec(MPI_Datatype t, mio_flat *out, int depth, char *err, size_t errlen);

static int child_flat(MPI_Datatype t, mio_flat *c, int depth, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    return flatten_rec(t, c, depth + 1, err, errlen);
}

static void free_types(MPI_Datatype *types, int n)
{
    for (int i = 0; i < n; i++) {
        int ni, na, nd, comb;
        MPI_Type_get_envelope(types[i], &ni, &na, &nd, &comb);
        if (comb != MPI_COMBINER_NAMED)
            MPI_Type_free(&types[i]);
    }
}

/* flattening by packing: the byte offsets of every data byte (extent bounded) */
static int flatten_probe(MPI_Datatype t, mio_flat *out, char *err, size_t errlen)
{
    MPI_Aint lb, ext, tlb, text;
    int size;
    MPI_Type_get_extent(t, &lb, &ext);
    MPI_Type_get_true_extent(t, &tlb, &text);
    MPI_Type_size(t, &size);
    if (text > PROBE_MAX_EXTENT || text < 0) {
        snprintf(err, errlen, "datatype: no decoder for this combiner and its extent %lld is beyond %lld",
                 (long long)text, (long long)PROBE_MAX_EXTENT);
        return SHEAF_MPIIO_ENOMEM;
    }
    unsigned char *mem = malloc((size_t)text + 1), *pk = malloc((size_t)size + 1);
    int64_t *pos = calloc((size_t)size + 1, sizeof *pos);
    int rc = 0;
    if (!mem || !pk || !pos)
        rc = SHEAF_MPIIO_ENOMEM;
    for (int byte = 0; rc == 0 && byte < 4; byte++) {
        for (int64_t i = 0; i < text; i++)
            mem[i] = (unsigned char)((i >> (8 * byte)) & 0xff);
        int p = 0;
        if (MPI_Pack(mem - tlb, 1, t, pk, size, &p, MPI_COMM_SELF) != MPI_SUCCESS || p != size) {
            snprintf(err, errlen, "datatype: packing the probe failed");
            rc = SHEAF_MPIIO_EMPI;
            break;
        }
        for (int i = 0; i < size; i++)
            pos[i] |= (int64_t)pk[i] << (8 * byte);
    }
    for (int i = 0; rc == 0 && i < size; i++)
        rc = mio_flat_push(out, pos[i] + tlb, 1);
    free(mem);
    free(pk);
    free(pos);
    return rc;
}

static int flatten_subarray(const int *ints, MPI_Datatype old, mio_flat *out, int depth, char *err, size_t errlen)
{
    int nd = ints[0];
    const int *sizes = ints + 1, *subs = ints + 1 + nd, *starts = ints + 1 + 2 * nd;
    int order = ints[1 + 3 * nd];
    mio_flat c;
    int rc = child_flat(old, &c, depth, err, errlen);
    if (rc) {
        mio_flat_free(&c);
        return rc;
    }
    /* dimension index from slowest to fastest */
    int64_t stride[32], idx[32];
    if (nd < 1 || nd > 32) {
        mio_flat_free(&c);
        return SHEAF_MPIIO_EARG;
    }
    for (int k = 0; k < nd; k++) {
        int d = order == MPI_ORDER_C ? k : nd - 1 - k; /* k-th slowest dimension */
        int64_t s = c.extent;
        for (int j = k + 1; j < nd; j++)
            s *= sizes[order == MPI_ORDER_C ? j : nd - 1 - j];
        stride[k] = s;
        idx[k] = 0;
        (void)d;
    }
    int fast = order == MPI_ORDER_C ? nd - 1 : 0;
    for (;;) {
        int64_t o = 0;
        for (int k = 0; k < nd; k++) {
            int d = order == MPI_ORDER_C ? k : nd - 1 - k;
            o += (starts[d] + idx[k]) * stride[k];
        }
        rc = put_copies(out, &c, o, subs[fast]);
        if (rc)
            break;
        int k = nd - 2;
        while (k >= 0) {
            int d = order == MPI_ORDER_C ? k : nd - 1 - k;
            if (++idx[k] < subs[d])
                break;
            idx[k] = 0;
            k--;
        }
        if (k < 0)
            break;
    }
    mio_flat_free(&c);
    return rc;
}

/* one level of a derived datatype, from its envelope's contents: one case
 * per MPI type combiner (others through flatten_probe) */
static int flatten_contents(MPI_Datatype t, int comb, const int *ints, const MPI_Aint *aints, const MPI_Datatype *types,
                            mio_flat *out, int depth, char *err, size_t errlen)
{
    int rc = 0;
    mio_flat c;
    memset(&c, 0, sizeof c);
    switch (comb) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED:
        if (!(rc = child_flat(types[0], &c, depth, err, errlen)))
            rc = put_copies(out, &c, 0, 1);
        break;
    case MPI_COMBINER_CONTIGUOUS:
        if (!(rc = child_flat(types[0], &c, depth, err, errlen)))
            rc = put_copies(out, &c, 0, ints[0]);
        break;
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR:
        if (!(rc = child_flat(types[0], &c, depth, err, errlen)))
            for (int i = 0; rc == 0 && i < ints[0]; i++) {
                int64_t d = comb == MPI_COMBINER_VECTOR ? (int64_t)i * ints[2] * c.extent : (int64_t)i * aints[0];
                rc = put_copies(out, &c, d, ints[1]);
            }
        break;
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
        if (!(rc = child_flat(types[0], &c, depth, err, errlen)))
            for (int i = 0; rc == 0 && i < ints[0]; i++) {
                int64_t d =
                    comb == MPI_COMBINER_INDEXED ? (int64_t)ints[1 + ints[0] + i] * c.extent : (int64_t)aints[i];
                rc = put_copies(out, &c, d, ints[1 + i]);
            }
        break;
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK:
        if (!(rc = child_flat(types[0], &c, depth, err, errlen)))
            for (int i = 0; rc == 0 && i < ints[0]; i++) {
                int64_t d = comb == MPI_COMBINER_INDEXED_BLOCK ? (int64_t)ints[2 + i] * c.extent : (int64_t)aints[i];
                rc = put_copies(out, &c, d, ints[1]);
            }
        break;
    case MPI_COMBINER_STRUCT:
        for (int i = 0; rc == 0 && i < ints[0]; i++) {
            if (!(rc = child_flat(types[i], &c, depth, err, errlen)))
                rc = put_copies(out, &c, aints[i], ints[1 + i]);
            mio_flat_free(&c);
        }
        break;
    case MPI_COMBINER_SUBARRAY:
        rc = flatten_subarray(ints, types[0], out, depth, err, errlen);
        break;
    default:
        rc = flatten_probe(t, out, err, errlen);
        break;
    }
    mio_flat_free(&c);
    return rc;
}

static int flatten_rec(MPI_Datatype t, mio_flat *out, int depth, char *err, size_t errlen)
{
    int ni, na, nd, comb, rc = 0;
    MPI_Aint lb, ext;
    if (depth > 64) {
        snprintf(err, errlen, "datatype: nested too deep");
        return SHEAF_MPIIO_EARG;
    }
    if (MPI_Type_get_envelope(t, &ni, &na, &nd, &comb) != MPI_SUCCESS) {
        snprintf(err, errlen, "datatype: not a valid datatype");
        return SHEAF_MPIIO_EARG;
    }
    MPI_Type_get_extent(t, &lb, &ext);
    out->extent = ext;
    out->lb = lb;
    int sz;
    MPI_Type_size(t, &sz);
    out->size = sz;
    if (comb == MPI_COMBINER_NAMED)
        return mio_flat_push(out, 0, sz);
    int *ints = malloc(sizeof(int) * (size_t)(ni + 1));
    MPI_Aint *aints = malloc(sizeof(MPI_Aint) * (size_t)(na + 1));
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * (size_t)(nd + 1));
    if (!ints || !aints || !types) {
        free(ints);
        free(aints);
        free(types);
        return SHEAF_MPIIO_ENOMEM;
    }
    MPI_Type_get_contents(t, ni, na, nd, ints, aints, types);
    rc = flatten_contents(t, comb, ints, aints, types, out, depth, err, errlen);
    free_types(types, nd);
    free(ints);
    free(aints);
    free(types);
    out->extent = ext;
    out->lb = lb;
    out->size = sz;
    if (rc == SHEAF_MPIIO_ENOMEM && !err[0])
        snprintf(err, errlen, "datatype: more than %zu segments or out of memory", (size_t)MIO_FLAT_MAX_SEGS);
    return rc;
}

int mio_flatten(MPI_Datatype t, mio_flat *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    err[0] = 0;
    if (t == MPI_DATATYPE_NULL) {
        snprintf(err, errlen, "datatype: MPI_DATATYPE_NULL");
        return SHEAF_MPIIO_EARG;
    }
    int rc = flatten_rec(t, out, 0, err, errlen);
    if (rc)
        mio_flat_free(out);
    return rc;
}
