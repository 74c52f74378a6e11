/* mpi_sid_mapped.c - the sids of a mapped read open and of a sion_dup after
 * it are SIONlib 1.7.6's: task 0 of a mapped read opens file 0 with a sid of
 * its own after taking the sid it returns (and frees it again), so a later
 * sion_dup on task 0 reuses a closed number where the other tasks take a
 * fresh one (SIONlib's test_genapi_2 prints this). The expected numbers were
 * measured with SIONlib 1.7.6 (this program, only SIONlib's API, compiled
 * against SIONlib built from its public source). Run with 2 or more ranks. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include "sion.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *dir = argc > 1 ? argv[1] : ".";
    char fname[4096];
    snprintf(fname, sizeof fname, "%s/sidmapped.sion", dir);
    int nf = 2, nl = 1, *gr = malloc(sizeof *gr), *fnr = malloc(sizeof *fnr), *lr = malloc(sizeof *lr);
    sion_int64 *cs = malloc(sizeof *cs);
    sion_int32 fsb = 100;
    gr[0] = rank;
    cs[0] = 100;
    fnr[0] = rank % 2;
    lr[0] = rank / 2;
    FILE *fp = NULL;
    int sw = sion_paropen_mapped_mpi(fname, "bw", &nf, MPI_COMM_WORLD, &nl, &gr, &cs, &fnr, &lr, &fsb, &fp);
    char b[16] = "0123456789abcdef";
    if (sw >= 0) {
        sion_fwrite(b, 1, sizeof b, sw);
        sion_parclose_mapped_mpi(sw);
    }
    int nl2 = 1, *gr2 = malloc(sizeof *gr2), *fnr2 = NULL, *lr2 = NULL, nf2 = 0;
    sion_int64 *cs2 = NULL;
    sion_int32 fsb2 = 0;
    gr2[0] = rank;
    int sr = sion_paropen_mapped_mpi(fname, "br", &nf2, MPI_COMM_WORLD, &nl2, &gr2, &cs2, &fnr2, &lr2, &fsb2, &fp);
    int d = sr >= 0 ? sion_dup(sr, SION_DUP_ALL, 0, 0) : -1;
    /* SIONlib 1.7.6: write sid 1, read sid 2 on every rank (1 was closed, 2 is
     * fresh); the dup 1 on task 0 (its serial open of file 0 used the last fresh
     * number, 3, so the closed 1 is next) and 3 elsewhere */
    int want_w = 1, want_r = 2, want_d = rank == 0 ? 1 : 3;
    printf("rank %d: write sid %d (SIONlib %d), read sid %d (%d), dup %d (%d)\n", rank, sw, want_w, sr, want_r, d,
           want_d);
    if (sw != want_w || sr != want_r || d != want_d)
        bad = 1;
    if (d >= 0)
        sion_dedup(d);
    if (sr >= 0)
        sion_parclose_mapped_mpi(sr);
    int any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s\n", any ? "FAILED" : "passed");
    free(gr);
    free(fnr);
    free(lr);
    free(cs);
    free(gr2);
    free(cs2);
    free(fnr2);
    free(lr2);
    MPI_Finalize();
    return any;
}
