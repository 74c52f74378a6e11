/* common.h - helpers of the MPI-IO layer's tests (tests/mpiio). */
#ifndef SHEAF_TESTS_MPIIO_COMMON_H
#define SHEAF_TESTS_MPIIO_COMMON_H
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sheaf_mpiio.h"

static int g_fail = 0;
#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            int r_;                                                                                                    \
            MPI_Comm_rank(MPI_COMM_WORLD, &r_);                                                                        \
            fprintf(stderr, "[rank %d] %s:%d: CHECK(%s) failed: ", r_, __FILE__, __LINE__, #cond);                     \
            fprintf(stderr, __VA_ARGS__);                                                                              \
            fprintf(stderr, "\n");                                                                                     \
            g_fail = 1;                                                                                                \
        }                                                                                                              \
    } while (0)
#define OK(call, fh)                                                                                                   \
    do {                                                                                                               \
        int rc_ = (call);                                                                                              \
        CHECK(rc_ == 0, "%s -> %d: %s", #call, rc_, rc_ ? sheaf_file_errmsg(fh) : "");                                 \
    } while (0)

/* key=value,key=value -> MPI_Info */
static MPI_Info mkinfo(const char *kv)
{
    MPI_Info info;
    MPI_Info_create(&info);
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", kv ? kv : "");
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(t, '=');
        if (!eq)
            continue;
        *eq = 0;
        MPI_Info_set(info, t, eq + 1);
    }
    return info;
}

static int finish_test(const char *name)
{
    int any = 0;
    MPI_Allreduce(&g_fail, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    if (r == 0)
        printf("%s: %s\n", name, any ? "FAILED" : "ok");
    return any;
}

static unsigned char *slurp(const char *path, long *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        *n = -1;
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    *n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)*n + 1);
    if (b && fread(b, 1, (size_t)*n, f) != (size_t)*n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    return b;
}
#endif
