/* test_ompi.c - the hybrid layer: every thread of every rank is a task
 * (task = rank * nthreads + thread). Run with mpiexec -n R; nthreads from
 * argv. Writes with numFiles 1 and 2 and with a local communicator, reads
 * back in hybrid mode and (rank 0) with the serial API, compares bytes.
 * Also: ranks (and threads of one rank) that disagree on read/write fail on
 * every task with a message naming it, and so do ranks that disagree on the
 * thread count or numFiles or a rank that fails its own checks (the others
 * name it). With a third argument "single" MPI is
 * initialized with plain MPI_Init (MPI_THREAD_SINGLE), which must work too
 * (SIONlib accepts it; only the master thread calls MPI).
 * Usage: test_ompi DIR NTHREADS [single] */
#include <mpi.h>
#include "sion.h"
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ompcheck.h"

static unsigned char byte_at(int task, size_t i) { return (unsigned char)(task * 37 + i * 11 + (i >> 10)); }
static size_t task_bytes(int task) { return task == 2 ? 0 : (size_t)(1000 + 5237 * task) % 30000 + 1; }

static void run(const char *fname, int numfiles, int use_lcomm, int rank, int size, int nt)
{
    MPI_Comm lcomm = MPI_COMM_NULL;
    if (use_lcomm)
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &lcomm);
#pragma omp parallel num_threads(nt)
    {
        int t = omp_get_thread_num(), nf = use_lcomm ? 0 : numfiles, grank = -1;
        sion_int64 chunk = 2048 + 100 * t;
        sion_int32 fsb = 4096;
        FILE *fp = NULL;
        int sid = sion_paropen_ompi(fname, "bw", &nf, MPI_COMM_WORLD, use_lcomm ? &lcomm : NULL, &chunk, &fsb, &grank,
                                    &fp, NULL);
        CHECK(sid >= 0, "write open (rank %d thread %d)", rank, t);
        CHECK(grank == rank * nt + t, "globalrank %d, expected %d", grank, rank * nt + t);
        size_t n = task_bytes(grank);
        unsigned char *buf = malloc(n + 1);
        for (size_t i = 0; i < n; i++)
            buf[i] = byte_at(grank, i);
        if (sid >= 0) {
            CHECK(sion_fwrite(buf, 1, n, sid) == n || n == 0, "write %zu bytes", n);
            CHECK(sion_parclose_ompi(sid) == SION_SUCCESS, "write close");
        }
        sion_int64 rc = 0;
        sion_int32 rf = 0;
        int rnf = 0, rg = -1;
        int sid2 = sion_paropen_ompi(fname, "br", &rnf, MPI_COMM_WORLD, NULL, &rc, &rf, &rg, &fp, NULL);
        CHECK(sid2 >= 0, "read open");
        if (sid2 >= 0) {
            unsigned char *got = malloc(n + 1);
            size_t have = 0;
            while (!sion_feof(sid2) && have <= n) {
                size_t a = (size_t)sion_bytes_avail_in_block(sid2);
                if (have + a > n)
                    break;
                have += sion_fread(got + have, 1, a, sid2);
            }
            CHECK(have == n && memcmp(got, buf, n) == 0, "task %d: read %zu of %zu bytes or bytes differ", grank, have,
                  n);
            CHECK(sion_parclose_ompi(sid2) == SION_SUCCESS, "read close");
            free(got);
        }
        free(buf);
    }
    if (lcomm != MPI_COMM_NULL)
        MPI_Comm_free(&lcomm);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) { /* the serial API sees size*nt tasks with the right bytes */
        int ntasks = 0, nfiles = 0;
        sion_int32 fsb = 0;
        sion_int64 *chunks = NULL;
        int *granks = NULL;
        FILE *fp = NULL;
        int sid = sion_open((char *)fname, "rb", &ntasks, &nfiles, &chunks, &fsb, &granks, &fp);
        CHECK(sid >= 0 && ntasks == size * nt, "serial open: %d tasks, expected %d", ntasks, size * nt);
        for (int g = 0; sid >= 0 && g < ntasks; g++) {
            size_t n = task_bytes(g), have = 0;
            unsigned char *got = malloc(n + 1);
            sion_seek(sid, g, 0, 0);
            while (!sion_feof(sid) && have < n) {
                size_t a = (size_t)sion_bytes_avail_in_block(sid);
                if (a > n - have)
                    a = n - have;
                have += sion_fread(got + have, 1, a, sid);
            }
            int same = have == n;
            for (size_t i = 0; same && i < n; i++)
                same = got[i] == byte_at(g, i);
            CHECK(same, "serial read of task %d", g);
            free(got);
        }
        if (sid >= 0)
            sion_close(sid);
        free(chunks);
        free(granks);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Coalescing I/O: groups of collsize tasks (0: automatic) that span
 * processes when collsize > threads. Task g writes three calls of
 * s + g % 3 bytes and one of three times that, reads them back collectively;
 * rank 0 checks every task with the serial API. */
static void run_coll(const char *fname, int collsize, size_t s, int rank, int size, int nt)
{
    char wmode[64], rmode[64];
    snprintf(wmode, sizeof wmode, "bw,collective%s%.0d", collsize ? ",collsize=" : "", collsize);
    snprintf(rmode, sizeof rmode, "br,collective%s%.0d", collsize ? ",collsize=" : "", collsize);
#pragma omp parallel num_threads(nt)
    {
        int t = omp_get_thread_num(), nf = 1, g = rank * nt + t, grank = -1;
        size_t st = s + (size_t)g % 3, total = 6 * st, calls[4] = {st, st, st, 3 * st};
        sion_int64 chunk = (sion_int64)(2 * st);
        sion_int32 fsb = 4096;
        FILE *fp = NULL;
        unsigned char *buf = malloc(total), *got = calloc(1, total);
        for (size_t i = 0; i < total; i++)
            buf[i] = byte_at(g, i);
        int sid = sion_paropen_ompi(fname, wmode, &nf, MPI_COMM_WORLD, NULL, &chunk, &fsb, &grank, &fp, NULL);
        CHECK(sid >= 0, "coll write open (%s), task %d", wmode, g);
        size_t off = 0;
        for (int i = 0; i < 4 && sid >= 0; i++) {
            CHECK(sion_coll_fwrite(buf + off, 1, calls[i], sid) == calls[i], "coll write %d, task %d", i, g);
            off += calls[i];
        }
        if (sid >= 0)
            CHECK(sion_parclose_ompi(sid) == SION_SUCCESS, "coll write close");
        sion_int64 rc = 0;
        sion_int32 rf = 0;
        int rnf = 0;
        sid = sion_paropen_ompi(fname, rmode, &rnf, MPI_COMM_WORLD, NULL, &rc, &rf, &grank, &fp, NULL);
        CHECK(sid >= 0, "coll read open, task %d", g);
        off = 0;
        for (int i = 0; i < 4 && sid >= 0; i++) {
            CHECK(sion_coll_fread(got + off, 1, calls[i], sid) == calls[i], "coll read %d, task %d", i, g);
            off += calls[i];
        }
        CHECK(!memcmp(got, buf, total), "collsize %d, %zu bytes: task %d read other bytes", collsize, s, g);
        if (sid >= 0)
            CHECK(sion_parclose_ompi(sid) == SION_SUCCESS, "coll read close");
        free(buf);
        free(got);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        int ntasks = 0, nfiles = 0, *granks = NULL;
        sion_int32 fsb = 0;
        sion_int64 *chunks = NULL;
        FILE *fp = NULL;
        int sid = sion_open((char *)fname, "rb", &ntasks, &nfiles, &chunks, &fsb, &granks, &fp);
        CHECK(sid >= 0 && ntasks == size * nt, "coll serial open: %d tasks", ntasks);
        for (int g = 0; sid >= 0 && g < ntasks; g++) {
            size_t st = s + (size_t)g % 3, total = 6 * st;
            unsigned char *got = malloc(total);
            sion_seek(sid, g, SION_ABSOLUTE_POS, 0);
            size_t have = sion_fread(got, 1, total, sid);
            int same = have == total;
            for (size_t i = 0; same && i < total; i++)
                same = got[i] == byte_at(g, i);
            CHECK(same && sion_feof(sid) == 1, "coll serial read of task %d", g);
            free(got);
        }
        if (sid >= 0)
            sion_close(sid);
        free(chunks);
        free(granks);
        remove(fname);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Task `odd_task` (or every thread of rank odd_rank) opens for reading while
 * the others write: every task must fail, naming the file mode. */
static void disagree(const char *fname, int odd_rank, int odd_thread, int rank, int nt)
{
#pragma omp parallel num_threads(nt)
    {
        int t = omp_get_thread_num();
        int odd = rank == odd_rank && (odd_thread < 0 || t == odd_thread);
        int nf = 1, grank = -1;
        sion_int64 chunk = 100;
        sion_int32 fsblk = 4096;
        FILE *fp = NULL;
        int sid =
            sion_paropen_ompi(fname, odd ? "rb" : "wb", &nf, MPI_COMM_WORLD, NULL, &chunk, &fsblk, &grank, &fp, NULL);
        CHECK(sid < 0, "rank %d thread %d: an open with disagreeing modes succeeded", rank, t);
        if (sid >= 0)
            sion_parclose_ompi(sid);
        else
            CHECK(strstr(sheaf_last_error(), "disagree on the file mode") != NULL, "rank %d thread %d: message %s",
                  rank, t, sheaf_last_error());
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* The binding's agreement over gComm (sheaf_comm_agree; 2+ ranks): rank 1
 * runs one thread more (how = 0), asks for numFiles 2 while the others ask
 * for 1 (how = 1), or writes with numFiles 0 and no lComm (how = 2: a local
 * failure on rank 1 only). Every task of every rank fails with SHEAF_E_ARG
 * and a message naming the file and the cause; with how = 2 the other ranks
 * get rank 1's message, naming it. */
static void agreement(const char *fname, int how, int rank, int nt)
{
    static const char *cause[] = {"different numbers of threads", "disagree on the number of files",
                                  "needs a valid local communicator lComm"};
    int threads = how == 0 && rank == 1 ? nt + 1 : nt;
#pragma omp parallel num_threads(threads)
    {
        int t = omp_get_thread_num(), grank = -1;
        int nf = how == 1 && rank == 1 ? 2 : how == 2 && rank == 1 ? 0 : 1;
        sion_int64 chunk = 100;
        sion_int32 fsblk = 4096;
        FILE *fp = NULL;
        int sid = sion_paropen_ompi(fname, "wb", &nf, MPI_COMM_WORLD, NULL, &chunk, &fsblk, &grank, &fp, NULL);
        CHECK(sid < 0, "agreement case %d, rank %d thread %d: the open succeeded", how, rank, t);
        if (sid >= 0) {
            sion_parclose_ompi(sid);
        } else {
            const char *msg = sheaf_last_error();
            CHECK(sheaf_last_error_code() == SHEAF_E_ARG, "agreement case %d, rank %d thread %d: code %d, expected %d",
                  how, rank, t, sheaf_last_error_code(), SHEAF_E_ARG);
            CHECK(strstr(msg, fname) && strstr(msg, cause[how]), "agreement case %d, rank %d thread %d: message %s",
                  how, rank, t, msg);
            CHECK(how != 2 || rank == 1 || strstr(msg, "(failed on rank 1)"),
                  "agreement case %d, rank %d thread %d: the message does not name rank 1: %s", how, rank, t, msg);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* files=auto is sion_paropen_mpi's key: the hybrid open refuses it on every
 * task, saying so on the task that parsed it. */
static void files_auto(const char *fname, int rank, int nt)
{
#pragma omp parallel num_threads(nt)
    {
        int t = omp_get_thread_num(), nf = 1, grank = -1;
        sion_int64 chunk = 100;
        sion_int32 fsblk = 4096;
        int sid =
            sion_paropen_ompi(fname, "wb,files=auto", &nf, MPI_COMM_WORLD, NULL, &chunk, &fsblk, &grank, NULL, NULL);
        CHECK(sid < 0, "rank %d thread %d: an open with files=auto succeeded", rank, t);
        if (sid >= 0)
            sion_parclose_ompi(sid);
        else
            CHECK(strstr(sheaf_last_error(), "files=auto is taken only by sion_paropen_mpi") != NULL,
                  "rank %d thread %d: message %s", rank, t, sheaf_last_error());
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    int provided = 0, rank = 0, size = 1;
    if (argc == 4 && !strcmp(argv[3], "single"))
        MPI_Init(&argc, &argv);
    else
        MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 3 && argc != 4) {
        if (rank == 0)
            fprintf(stderr, "usage: %s DIR NTHREADS\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    sheaf_set_error_printing(0);
    int nt = atoi(argv[2]);
    char f[512];
    snprintf(f, sizeof f, "%s/hyb1.sion", argv[1]);
    run(f, 1, 0, rank, size, nt);
    if (size >= 2) {
        snprintf(f, sizeof f, "%s/hyb2.sion", argv[1]);
        run(f, 2, 0, rank, size, nt);
        snprintf(f, sizeof f, "%s/hybl.sion", argv[1]);
        run(f, 0, 1, rank, size, nt);
    }
    snprintf(f, sizeof f, "%s/hybd.sion", argv[1]);
    disagree(f, 0, nt > 1 ? 1 : 0, rank, nt); /* one thread of rank 0 */
    if (size >= 2)
        disagree(f, 1, -1, rank, nt); /* all threads of rank 1 */
    for (int how = 0; size >= 2 && how < 3; how++)
        agreement(f, how, rank, nt);
    files_auto(f, rank, nt);
    snprintf(f, sizeof f, "%s/hybc.sion", argv[1]);
    int csizes[] = {0, 3, nt + 1};
    size_t sizes[] = {1, 700, 65536};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            run_coll(f, csizes[i], sizes[j], rank, size, nt);
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        if (all == 0)
            printf("test_ompi: OK (%d ranks x %d threads)\n", size, nt);
        remove(f);
    }
    MPI_Finalize();
    return all ? 1 : 0;
}
