/* mpi_comm_agree.c - sheaf_comm_agree over MPI (libsheaf_comm_mpi, linked
 * statically so this program's MPI_Allreduce/MPI_Bcast wrappers count the
 * library's calls): one MPI_Allreduce when all are fine, two when one
 * failed, no MPI_Bcast; the lowest failing rank's code and message on every
 * rank whatever the signs; values reduced in the same call; the same over a
 * private duplicate and over the halves of a split. Any number of ranks
 * >= 2. Exit status 0 only when every rank saw every check hold. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sheaf_comm_mpi.h"

static long n_allreduce, n_bcast;

int MPI_Allreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c)
{
    n_allreduce++;
    return PMPI_Allreduce(s, r, n, t, op, c);
}

int MPI_Bcast(void *b, int n, MPI_Datatype t, int root, MPI_Comm c)
{
    n_bcast++;
    return PMPI_Bcast(b, n, t, root, c);
}

static int failures;
#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            failures++;                                                                                                \
            fprintf(stderr, "rank %d: %s:%d: %s: ", me, __FILE__, __LINE__, #cond);                                    \
            fprintf(stderr, __VA_ARGS__);                                                                              \
            fputc('\n', stderr);                                                                                       \
        }                                                                                                              \
    } while (0)

static int me, np;

/* fail1/fail2: ranks that fail (-1: none) with code1/code2 */
static void agree_case(sheaf_comm *c, const char *what, int fail1, int code1, int fail2, int code2)
{
    int r = sheaf_comm_rank(c), n = sheaf_comm_size(c);
    int code = r == fail1 ? code1 : r == fail2 ? code2 : 0;
    char msg[80];
    snprintf(msg, sizeof msg, "%s: rank %d could not go on", what, r);
    int64_t v[3] = {r, -(int64_t)r, 1000 + r};
    long a0 = n_allreduce, b0 = n_bcast;
    sheaf_comm_agreement a;
    int rc = sheaf_comm_agree(c, code, msg, v, 3, &a);
    int w = fail1 < 0 ? fail2 : fail2 < 0 ? fail1 : (fail1 < fail2 ? fail1 : fail2);
    int wcode = w < 0 ? 0 : w == fail1 ? code1 : code2;
    char want[80] = "";
    if (w >= 0)
        snprintf(want, sizeof want, "%s: rank %d could not go on", what, w);
    CHECK(rc == wcode && a.code == wcode, "%s: returned %d, agreement code %d, want %d", what, rc, a.code, wcode);
    CHECK(a.rank == w, "%s: winner %d, want %d", what, a.rank, w);
    CHECK(strcmp(a.msg, want) == 0, "%s: message '%s', want '%s'", what, a.msg, want);
    CHECK(v[0] == 0 && v[1] == -(int64_t)(n - 1) && v[2] == 1000, "%s: values %lld %lld %lld", what, (long long)v[0],
          (long long)v[1], (long long)v[2]);
    long want_ar = w < 0 ? 1 : 2;
    CHECK(n_allreduce - a0 == want_ar && n_bcast == b0, "%s: %ld MPI_Allreduce and %ld MPI_Bcast, want %ld and 0", what,
          n_allreduce - a0, n_bcast - b0, want_ar);
}

/* the broadcast and the all-reduce: one collective (MPI_Allreduce, no
 * MPI_Bcast) for a message of up to 4 KiB, the bytes exact; a longer one
 * adds an agreement and one MPI_Bcast of the rest */
static int cat_combine(const void *a, size_t alen, const void *b, size_t blen, void *out, size_t *outlen, void *arg)
{
    (void)arg;
    if (alen + blen > 64)
        return 1;
    memcpy(out, a, alen);
    memcpy((char *)out + alen, b, blen);
    *outlen = alen + blen;
    return 0;
}

static void bcast_case(sheaf_comm *c, const char *name, size_t len, size_t maxlen, long want_ar, long want_bc)
{
    int r = sheaf_comm_rank(c), root = sheaf_comm_size(c) - 1;
    void *buf = NULL;
    size_t l = 0;
    if (r == root) {
        buf = malloc(len ? len : 1);
        for (size_t i = 0; i < len; i++)
            ((unsigned char *)buf)[i] = (unsigned char)(i * 7 + 3);
        l = len;
    }
    long a0 = n_allreduce, b0 = n_bcast;
    int rc = sheaf_comm_bcast(c, &buf, &l, maxlen, root);
    CHECK(rc == 0 && l == len, "%s: bcast of %zu bytes: rc %d, %zu bytes", name, len, rc, l);
    int same = rc == 0;
    for (size_t i = 0; same && i < len; i++)
        same = ((unsigned char *)buf)[i] == (unsigned char)(i * 7 + 3);
    CHECK(same, "%s: bcast of %zu bytes: wrong bytes", name, len);
    CHECK(n_allreduce - a0 == want_ar && n_bcast - b0 == want_bc,
          "%s: bcast of %zu bytes: %ld MPI_Allreduce and %ld MPI_Bcast, want %ld and %ld", name, len, n_allreduce - a0,
          n_bcast - b0, want_ar, want_bc);
    free(buf);
}

static void collective_counts(sheaf_comm *c, const char *name)
{
    bcast_case(c, name, 32, 32, 1, 0);
    bcast_case(c, name, 0, 64, 1, 0);
    bcast_case(c, name, 4096, 1 << 20, 1, 0);
    bcast_case(c, name, 100000, 1 << 20, 2, 1);
    /* a root over maxlen: every member fails, in one collective */
    void *buf = NULL;
    size_t l = 0;
    char big[100];
    if (sheaf_comm_rank(c) == 0)
        buf = big, l = sizeof big;
    long a0 = n_allreduce, b0 = n_bcast;
    int rc = sheaf_comm_bcast(c, &buf, &l, 50, 0);
    CHECK(rc == SHEAF_COMM_ELIMIT && n_allreduce - a0 == 1 && n_bcast == b0, "%s: bcast over maxlen: rc %d", name, rc);
    /* all-reduce = the reduce's point-to-point tree + that one collective */
    const sheaf_comm_op op = {"concat", 64, cat_combine, NULL};
    char mine = (char)('a' + sheaf_comm_rank(c));
    void *out = NULL;
    size_t ol = 0;
    a0 = n_allreduce, b0 = n_bcast;
    rc = sheaf_comm_allreduce(c, &mine, 1, &op, &out, &ol);
    int n = sheaf_comm_size(c), ok = rc == 0 && ol == (size_t)n;
    for (int i = 0; ok && i < n; i++)
        ok = ((char *)out)[i] == 'a' + i;
    CHECK(ok, "%s: allreduce: rc %d, %zu bytes", name, rc, ol);
    CHECK(n_allreduce - a0 == 1 && n_bcast == b0, "%s: allreduce: %ld MPI_Allreduce and %ld MPI_Bcast, want 1 and 0",
          name, n_allreduce - a0, n_bcast - b0);
    free(out);
}

static void cases(sheaf_comm *c, const char *name)
{
    int n = sheaf_comm_size(c);
    char what[64];
    snprintf(what, sizeof what, "%s/all fine", name);
    agree_case(c, what, -1, 0, -1, 0);
    snprintf(what, sizeof what, "%s/last fails", name);
    agree_case(c, what, n - 1, -12, -1, 0);
    snprintf(what, sizeof what, "%s/two fail", name);
    agree_case(c, what, n - 1, -3, n > 2 ? 1 : 0, 5); /* positive code of the lower rank wins */
    snprintf(what, sizeof what, "%s/rank 0 fails", name);
    agree_case(c, what, 0, -1, -1, 0);
    collective_counts(c, name);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);

    sheaf_comm_mpi_ref_t ref;
    sheaf_comm *c = sheaf_comm_mpi_ref(&ref, MPI_COMM_WORLD);
    CHECK(sheaf_comm_rank(c) == me && sheaf_comm_size(c) == np, "ref: rank/size");
    cases(c, "ref");
    sheaf_comm_free(c); /* frees nothing: MPI_COMM_WORLD stays usable */

    sheaf_comm dup;
    CHECK(sheaf_comm_mpi(MPI_COMM_WORLD, &dup) == 0, "dup: %s", sheaf_comm_last_error());
    cases(&dup, "dup");
    sheaf_comm half;
    CHECK(sheaf_comm_split(&dup, me % 2, me, &half) == 0, "split: %s", sheaf_comm_last_error());
    CHECK(sheaf_comm_size(&half) == (np + 1 - me % 2) / 2, "split size %d", sheaf_comm_size(&half));
    cases(&half, me % 2 ? "odd" : "even");
    sheaf_comm_free(&half);
    sheaf_comm_free(&dup);

    int all = 0;
    PMPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0)
        printf("mpi_comm_agree: %d ranks, %s\n", np, all ? "FAILED" : "all checks held");
    MPI_Finalize();
    return all ? 1 : 0;
}
