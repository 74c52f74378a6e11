/* realm.c - which ranks aggregate, and how big their file realms are.
 *
 * A realm map is (base, fr): byte x belongs to aggregator
 * floor((x - base) / fr) mod naggs. Per-call realms (ROMIO's) take base = the
 * start of the call's aggregate access region (AAR) and fr = AAR / naggs, so
 * each aggregator gets one contiguous piece; Persistent File Realms take
 * base = 0 and a stripe size fixed at the first collective call, cycling over
 * the whole file. Both round fr up to the alignment hint (fs block). */
#include <stdlib.h>
#include <string.h>
#include "mpiio_impl.h"

static int64_t round_up(int64_t x, int64_t a)
{
    if (a <= 1)
        return x;
    return (x + a - 1) / a * a;
}

int64_t mio_pfr_size(int policy, int64_t user, int64_t aar_lo, int64_t aar_hi, int64_t fsize, int naggs, int64_t align)
{
    int64_t fr;
    if (naggs < 1)
        naggs = 1;
    if (policy == MIO_PFR_USER) {
        fr = user;
    } else if (policy == MIO_PFR_FSIZE) {
        int64_t impending = fsize > aar_hi ? fsize : aar_hi;
        fr = (impending + naggs - 1) / naggs;
    } else {
        int64_t aar = aar_hi > aar_lo ? aar_hi - aar_lo : 0;
        fr = (aar + naggs - 1) / naggs;
    }
    if (fr < 1)
        fr = 1;
    return round_up(fr, align);
}

int64_t mio_percall_size(int64_t aar_lo, int64_t aar_hi, int naggs, int64_t align, int64_t *base)
{
    int64_t b = align > 1 ? aar_lo / align * align : aar_lo;
    *base = b;
    int64_t fr = (aar_hi - b + naggs - 1) / naggs;
    if (fr < 1)
        fr = 1;
    return round_up(fr, align);
}

/* cb_nodes > 0: that many, spread evenly over the ranks; otherwise the first
 * rank of every distinct host name (one aggregator per node) */
int mio_pick_aggregators(MPI_Comm comm, int cb_nodes, int **ranks, int *n)
{
    int p, me;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &me);
    int *r = malloc(sizeof(int) * (size_t)p);
    if (!r)
        return SHEAF_MPIIO_ENOMEM;
    int k = 0;
    if (cb_nodes > 0) {
        if (cb_nodes > p)
            cb_nodes = p;
        for (int i = 0; i < cb_nodes; i++)
            r[k++] = (int)((int64_t)i * p / cb_nodes);
    } else {
        char name[MPI_MAX_PROCESSOR_NAME];
        int len = 0;
        memset(name, 0, sizeof name);
        MPI_Get_processor_name(name, &len);
        char *all = malloc((size_t)p * MPI_MAX_PROCESSOR_NAME);
        if (!all) {
            free(r);
            return SHEAF_MPIIO_ENOMEM;
        }
        MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, comm);
        for (int i = 0; i < p; i++) {
            int seen = 0;
            for (int j = 0; j < i && !seen; j++)
                seen = strncmp(all + (size_t)i * MPI_MAX_PROCESSOR_NAME, all + (size_t)j * MPI_MAX_PROCESSOR_NAME,
                               MPI_MAX_PROCESSOR_NAME) == 0;
            if (!seen)
                r[k++] = i;
        }
        free(all);
    }
    *ranks = r;
    *n = k;
    return 0;
}
