/* mpi_genapi_test.c - a generic parallel layer over MPI written the way
 * SIONlib's own test_genapi_*.c programs write theirs: the program registers
 * its own callbacks with SIONlib 1.7's argument order (scatterr: root's
 * array first; scattervr: destination first, root's array second) on an API
 * object of its own, then round-trips a 2-file container through
 * sion_generic_paropen / sion_generic_parclose, reads it back with a mapped
 * open through the same layer (scatter + scatterv) and with sion_paropen_mpi.
 * Only SIONlib names are used. Run with 2 or 4 ranks (even). Prints
 * "genapi: OK" on rank 0 and exits 0 on success. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "sion.h"

typedef struct my_comm {
    MPI_Comm comm;
    int created; /* 1: split by create_lcg, freed by free_lcg */
} my_comm;

static int my_create_lcg(void **local, void *global, int grank, int gsize, int lrank, int lsize, int filenumber,
                         int numfiles)
{
    (void)grank;
    (void)gsize;
    (void)lsize;
    (void)numfiles;
    my_comm *g = global, *l = malloc(sizeof *l);
    if (!l)
        return -1;
    l->created = 1;
    if (MPI_Comm_split(g->comm, filenumber < 0 ? MPI_UNDEFINED : filenumber, lrank, &l->comm) != MPI_SUCCESS) {
        free(l);
        return -1;
    }
    *local = l;
    return 0;
}
static int my_free_lcg(void *local)
{
    my_comm *l = local;
    if (l->created && l->comm != MPI_COMM_NULL)
        MPI_Comm_free(&l->comm);
    free(l);
    return 0;
}
static MPI_Datatype my_type(int dtype)
{
    return dtype == _SION_INT32 ? MPI_INT : dtype == _SION_CHAR ? MPI_CHAR : MPI_LONG_LONG;
}
static int my_barrier(void *c) { return MPI_Barrier(((my_comm *)c)->comm); }
static int my_bcast(void *data, void *c, int dtype, int nelem, int root)
{
    return MPI_Bcast(data, nelem, my_type(dtype), root, ((my_comm *)c)->comm);
}
static int my_gather(void *in, void *out, void *c, int dtype, int nelem, int root)
{
    return MPI_Gather(in, nelem, my_type(dtype), out, nelem, my_type(dtype), root, ((my_comm *)c)->comm);
}
/* SIONlib: indata is the root's array, outdata each task's part */
static int my_scatter(void *in, void *out, void *c, int dtype, int nelem, int root)
{
    return MPI_Scatter(in, nelem, my_type(dtype), out, nelem, my_type(dtype), root, ((my_comm *)c)->comm);
}
static int *my_displs(MPI_Comm comm, int root, const int *counts)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (rank != root)
        return NULL;
    int *d = malloc((size_t)size * sizeof *d);
    for (int i = 0, off = 0; d && i < size; i++) {
        d[i] = off;
        off += counts[i];
    }
    return d;
}
static int my_gatherv(void *in, void *out, void *c, int dtype, int *counts, int nelem, int root)
{
    MPI_Comm comm = ((my_comm *)c)->comm;
    int *d = my_displs(comm, root, counts);
    int rc = MPI_Gatherv(in, nelem, my_type(dtype), out, counts, d, my_type(dtype), root, comm);
    free(d);
    return rc;
}
/* SIONlib: indata is each task's part, outdata the root's array */
static int my_scatterv(void *in, void *out, void *c, int dtype, int *counts, int nelem, int root)
{
    MPI_Comm comm = ((my_comm *)c)->comm;
    int *d = my_displs(comm, root, counts);
    int rc = MPI_Scatterv(out, counts, d, my_type(dtype), in, nelem, my_type(dtype), root, comm);
    free(d);
    return rc;
}

static int rank, size, failures;
#define CHECK(c, ...)                                                                                                  \
    do {                                                                                                               \
        if (!(c)) {                                                                                                    \
            fprintf(stderr, "FAIL rank %d line %d (%s): ", rank, __LINE__, #c);                                        \
            fprintf(stderr, __VA_ARGS__);                                                                              \
            fprintf(stderr, "\n");                                                                                     \
            failures++;                                                                                                \
        }                                                                                                              \
    } while (0)

static void pattern(char *b, size_t n, int task)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (char)('A' + (task * 7 + (int)i) % 26);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char dir[] = "genapi.XXXXXX", fname[64];
    if (rank == 0 && !mkdtemp(dir))
        dir[0] = 0;
    MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    snprintf(fname, sizeof fname, "%s/testC.out", dir);

    int aid = sion_generic_create_api("SampleAPI");
    CHECK(aid >= 0, "create_api");
    sion_generic_register_create_local_commgroup_cb(aid, &my_create_lcg);
    sion_generic_register_free_local_commgroup_cb(aid, &my_free_lcg);
    sion_generic_register_barrier_cb(aid, &my_barrier);
    sion_generic_register_bcastr_cb(aid, &my_bcast);
    sion_generic_register_gatherr_cb(aid, &my_gather);
    sion_generic_register_scatterr_cb(aid, &my_scatter);
    sion_generic_register_gathervr_cb(aid, &my_gatherv);
    sion_generic_register_scattervr_cb(aid, &my_scatterv);
    my_comm gcomm = {MPI_COMM_WORLD, 0};

    /* write: 2 files, file = rank % 2, lrank = rank / 2 (as test_genapi_1) */
    enum { CHUNK = 100, N1 = 100, N2 = 50 };
    char buf[N1 + N2], rbuf[N1 + N2];
    pattern(buf, sizeof buf, rank);
    {
        sion_int64 chunksize = CHUNK;
        sion_int32 fsblksize = 10;
        int filenumber = rank % 2, numfiles = 2, lrank = rank / 2, lsize = size / 2;
        FILE *fp = NULL;
        int sid = sion_generic_paropen(aid, fname, "bw", &chunksize, &fsblksize, &gcomm, rank, size, &filenumber,
                                       &numfiles, &lrank, &lsize, &fp, NULL);
        CHECK(sid >= 0, "write open: %d", sid);
        if (sid >= 0) {
            CHECK(chunksize == CHUNK, "chunk size %lld", (long long)chunksize);
            CHECK(sion_fwrite(buf, 1, N1, sid) == N1, "fwrite 1");
            CHECK(sion_fwrite(buf + N1, 1, N2, sid) == N2, "fwrite 2"); /* a second block */
            CHECK(sion_generic_parclose(sid) == SION_SUCCESS, "close");
        }
    }
    /* read back through the same layer */
    {
        sion_int64 chunksize = 0;
        sion_int32 fsblksize = 0;
        int filenumber = -1, numfiles = -1, lrank = -1, lsize = -1;
        FILE *fp = NULL;
        int sid = sion_generic_paropen(aid, fname, "br", &chunksize, &fsblksize, &gcomm, rank, size, &filenumber,
                                       &numfiles, &lrank, &lsize, &fp, NULL);
        CHECK(sid >= 0, "read open: %d", sid);
        if (sid >= 0) {
            CHECK(numfiles == 2 && filenumber == rank % 2 && lrank == rank / 2 && lsize == size / 2,
                  "read split: file %d of %d, lrank %d of %d", filenumber, numfiles, lrank, lsize);
            CHECK(fsblksize == 10, "fsblksize %d", fsblksize);
            memset(rbuf, 0, sizeof rbuf);
            size_t got = 0;
            while (!sion_feof(sid) && got < sizeof rbuf) {
                size_t n = sion_fread(rbuf + got, 1, sizeof rbuf - got, sid);
                if (!n)
                    break;
                got += n;
            }
            CHECK(got == sizeof rbuf && !memcmp(rbuf, buf, sizeof buf), "data read back (%zu bytes)", got);
            CHECK(sion_generic_parclose(sid) == SION_SUCCESS, "read close");
        }
    }
    /* mapped read through the same layer: sheaf distributes all tasks */
    {
        int nlocal = -1, *granks = NULL, *fnrs = NULL, *lranks = NULL, numfiles = 0;
        sion_int64 *chunks = NULL;
        sion_int32 fsblksize = 0;
        FILE *fp = NULL;
        int sid = sion_generic_paropen_mapped(aid, fname, "br", &numfiles, &gcomm, rank, size, &nlocal, &granks,
                                              &chunks, &fnrs, &lranks, &fsblksize, &fp);
        CHECK(sid >= 0, "mapped read open: %d", sid);
        if (sid >= 0) {
            CHECK(numfiles == 2 && nlocal >= 1, "mapped: %d files, %d tasks", numfiles, nlocal);
            for (int i = 0; i < nlocal; i++) {
                char exp[N1 + N2];
                pattern(exp, sizeof exp, granks[i]);
                CHECK(fnrs[i] == granks[i] % 2 && lranks[i] == granks[i] / 2, "mapping of task %d", granks[i]);
                CHECK(sion_seek(sid, granks[i], 0, 0) == SION_SUCCESS, "seek");
                size_t got = 0;
                while (!sion_feof(sid) && got < sizeof rbuf) {
                    size_t n = sion_fread(rbuf + got, 1, sizeof rbuf - got, sid);
                    if (!n)
                        break;
                    got += n;
                }
                CHECK(got == sizeof rbuf && !memcmp(rbuf, exp, sizeof exp), "mapped data of task %d", granks[i]);
            }
            CHECK(sion_generic_parclose_mapped(sid) == SION_SUCCESS, "mapped close");
        }
        free(granks);
        free(fnrs);
        free(lranks);
        free(chunks);
    }
    /* and with sheaf's own MPI layer: the same container */
    {
        int numfiles = 0, grank = rank;
        sion_int64 chunksize = 0;
        sion_int32 fsblksize = 0;
        FILE *fp = NULL;
        int sid =
            sion_paropen_mpi(fname, "br", &numfiles, MPI_COMM_WORLD, NULL, &chunksize, &fsblksize, &grank, &fp, NULL);
        CHECK(sid >= 0, "paropen_mpi read: %d", sid);
        if (sid >= 0) {
            size_t got = 0;
            while (!sion_feof(sid) && got < sizeof rbuf) {
                size_t n = sion_fread(rbuf + got, 1, sizeof rbuf - got, sid);
                if (!n)
                    break;
                got += n;
            }
            CHECK(got == sizeof rbuf && !memcmp(rbuf, buf, sizeof buf), "mpi read back");
            CHECK(sion_parclose_mpi(sid) == SION_SUCCESS, "mpi close");
        }
    }
    sion_generic_free_api(aid);
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        if (system(cmd)) {
        }
        printf(all ? "genapi: FAILED (%d)\n" : "genapi: OK\n", all);
    }
    MPI_Finalize();
    return all ? 1 : 0;
}
