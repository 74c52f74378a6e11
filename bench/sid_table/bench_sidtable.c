/* bench_sidtable.c - the table of open sids with many open containers:
 * N serial opens ("rb") of one small container, then N closes, oldest first
 * (the order that made every close move all later entries) or newest first;
 * or ("api") N generic API ids (sion_generic_create_api: the same table of
 * ids, no file), freed oldest first. Prints the seconds of each phase and per
 * close. Public API only.
 * usage: bench_sidtable DIR N [oldest|newest]   (needs N + 16 file descriptors)
 *        bench_sidtable api N */
#include "sion.h"
#include "sion_generic.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_sidtable DIR N [oldest|newest]\n");
        return 2;
    }
    int n = atoi(argv[2]), newest = argc > 3 && !strcmp(argv[3], "newest");
    if (!strcmp(argv[1], "api")) {
        int *ids = malloc((size_t)n * sizeof *ids);
        double a0 = now();
        for (int i = 0; i < n; i++)
            if ((ids[i] = sion_generic_create_api("bench")) < 0)
                return fprintf(stderr, "bench_sidtable: create_api %d failed\n", i), 1;
        double a1 = now();
        for (int i = 0; i < n; i++)
            if (sion_generic_free_api(ids[i]) != SION_SUCCESS)
                return fprintf(stderr, "bench_sidtable: free_api failed\n"), 1;
        double a2 = now();
        printf("bench_sidtable: %d generic api ids: create %.3f s, free (oldest first) %.3f s = %.3f us per free\n", n,
               a1 - a0, a2 - a1, 1e6 * (a2 - a1) / n);
        free(ids);
        return 0;
    }
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)n + 16) {
        rl.rlim_cur = rl.rlim_max < (rlim_t)n + 16 ? rl.rlim_max : (rlim_t)n + 16;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    char fn[4200];
    snprintf(fn, sizeof fn, "%s/sidtable.sion", argv[1]);
    int nt = 1, nf = 1, gr = 0, *grp = &gr;
    sion_int64 cs = 4096, *csp = &cs;
    sion_int32 fsb = -1;
    FILE *fp = NULL;
    int sid = sion_open(fn, "wb", &nt, &nf, &csp, &fsb, &grp, &fp);
    if (sid < 0 || sion_fwrite("x", 1, 1, sid) != 1 || sion_close(sid) != SION_SUCCESS)
        return fprintf(stderr, "bench_sidtable: cannot write %s\n", fn), 1;
    int *sids = malloc((size_t)n * sizeof *sids);
    double t0 = now();
    for (int i = 0; i < n; i++) {
        int ntk = 0, nfl = 0, *g = NULL;
        sion_int64 *c = NULL;
        sion_int32 b = 0;
        FILE *f = NULL;
        sids[i] = sion_open(fn, "rb", &ntk, &nfl, &c, &b, &g, &f);
        free(c);
        free(g);
        if (sids[i] < 0)
            return fprintf(stderr, "bench_sidtable: open %d failed (file descriptors?)\n", i), 1;
    }
    double t1 = now();
    for (int k = 0; k < n; k++)
        if (sion_close(sids[newest ? n - 1 - k : k]) != SION_SUCCESS)
            return fprintf(stderr, "bench_sidtable: close failed\n"), 1;
    double t2 = now();
    printf("bench_sidtable: %d sids open: opens %.3f s, closes (%s first) %.3f s = %.2f us per close\n", n, t1 - t0,
           newest ? "newest" : "oldest", t2 - t1, 1e6 * (t2 - t1) / n);
    free(sids);
    remove(fn);
    return 0;
}
