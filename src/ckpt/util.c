/* util.c - libsheaf_ckpt: the helpers every step file uses (below the
 * dispatching files ctx.c and protocol.c, calls nothing above it): error
 * messages, the clock, bounded waits, group arithmetic, the MPI tests' fault
 * hook (SHEAF_CKPT_FAULT), strategy names and the sign of public codes. */
#if defined(__GNUC__) && !defined(__clang__)
/* messages are cut at their buffer's size on purpose; MPI_Testall with
 * MPI_STATUSES_IGNORE is not an array access (GCC's false positive) */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
#include "ckpt.h"
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

const char *const ck_strategy_names[4] = {"fpp", "coio", "rbio", "sion"};

int ck_pub(int rc) { return rc < 0 ? rc : -rc; }

int ck_fail(sheaf_ckpt_ctx *c, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, sizeof c->err, fmt, ap);
    va_end(ap);
    return code;
}

double ck_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int ck_waitall(sheaf_ckpt_ctx *c, int n, MPI_Request *reqs, const char *what)
{
    double end = ck_now() + c->cfg.timeout;
    struct timespec nap = {0, 50000};
    for (;;) {
        int done = 0;
        int mrc = MPI_Testall(n, reqs, &done, MPI_STATUSES_IGNORE);
        if (mrc == MPI_ERR_IN_STATUS && c->lenient) {
            for (int i = 0; i < n; i++) /* completed with an error: freed, or finish them */
                if (reqs[i] != MPI_REQUEST_NULL)
                    MPI_Test(&reqs[i], &done, MPI_STATUS_IGNORE);
            done = 1;
            for (int i = 0; i < n; i++)
                done = done && reqs[i] == MPI_REQUEST_NULL;
            if (done)
                return 0;
            mrc = MPI_SUCCESS;
        }
        if (mrc != MPI_SUCCESS) {
            c->broken = 1;
            return ck_fail(c, EIO, "%s: MPI error while waiting", what);
        }
        if (done)
            return 0;
        if (ck_now() > end) {
            c->broken = 1;
            return ck_fail(c, ETIMEDOUT,
                           "%s: no answer within %.1f s (a writer or rank died or hangs); "
                           "the checkpoint context is unusable, the job should abort",
                           what, c->cfg.timeout);
        }
        nanosleep(&nap, NULL);
    }
}

uint64_t ck_first(uint64_t g, uint64_t n, uint64_t k) { return g * n / k; }

int ck_group_of(uint64_t r, uint64_t n, uint64_t k)
{
    uint64_t g = r * k / n;
    while (g + 1 < k && ck_first(g + 1, n, k) <= r)
        g++;
    while (g > 0 && ck_first(g, n, k) > r)
        g--;
    return (int)g;
}

int ck_fault(sheaf_ckpt_ctx *c, const char *kind, uint64_t step)
{
    const char *f = getenv("SHEAF_CKPT_FAULT");
    char k[16];
    int rank;
    unsigned long long s, arg = 1;
    if (!f || sscanf(f, "%15[a-z]:%d:%llu:%llu", k, &rank, &s, &arg) < 3)
        return 0;
    if (strcmp(k, kind) || rank != c->rank || s != step)
        return 0;
    if (!strcmp(kind, "kill"))
        raise(SIGKILL);
    if (!strcmp(kind, "fsize")) { /* a full disk: writes past arg bytes fail (EFBIG) */
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl;
        getrlimit(RLIMIT_FSIZE, &rl);
        rl.rlim_cur = (rlim_t)arg; /* the soft limit only: a test can lift it again */
        setrlimit(RLIMIT_FSIZE, &rl);
    }
    if (!strcmp(kind, "stall"))
        sleep((unsigned)arg);
    return (int)arg;
}

const char *sheaf_ckpt_strategy_name(const sheaf_ckpt_ctx *c) { return ck_strategy_names[c->cfg.strategy]; }

uint64_t ck_fields_fp(const sheaf_ckpt_ctx *c)
{
    uint64_t fp = CKF_HASH_SEED + (uint64_t)c->nfields;
    for (int f = 0; f < c->nfields; f++) {
        fp = ckf_hash(c->fields[f].name, strlen(c->fields[f].name), fp);
        fp = ckf_hash(&c->fields[f].type, sizeof c->fields[f].type, fp);
    }
    return fp;
}

int ck_check_fields(sheaf_ckpt_ctx *c, MPI_Comm comm)
{
    uint64_t fp = ck_fields_fp(c);
    int64_t v[2] = {(int64_t)(fp >> 1), -(int64_t)(fp >> 1)}, m[2];
    MPI_Request r;
    MPI_Iallreduce(v, m, 2, MPI_INT64_T, MPI_MAX, comm, &r);
    int rc = ck_waitall(c, 1, &r, "comparing the declared fields");
    if (rc)
        return rc;
    c->checked = 1;
    if (m[0] != -m[1])
        return ck_fail(c, EINVAL, "the ranks declared different fields (names, types or order)");
    return 0;
}
