/* test_comm_sim.c - sheaf_comm_agree and allmin on the in-process simulator:
 * every member returns the same value, the lowest failing rank's code and
 * message win whatever the codes' signs, values are reduced in the same
 * exchange, the exchanges are counted (one allmin when all are fine, two
 * when one failed), agreements in a row after failures, the generic allmin
 * (reduce + bcast) of an implementation without one, misuse and mismatches
 * that fail instead of hanging, and 10^5 members (COMM_SIM_MAXP). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "sheaf_comm.h"

#define MAXFAIL 4

typedef struct plan {
    int nfail;
    int fail_rank[MAXFAIL];
    int fail_code[MAXFAIL];
    int rounds;  /* agreements in a row; round r fails ranks fail_rank[] + r */
    int generic; /* run through a table without allmin */
    /* results, written by each member */
    int *ret;      /* [P * rounds] */
    int *winner;   /* [P * rounds] */
    int *msg_ok;   /* [P * rounds] */
    int64_t *vmin; /* [P * 2]: min of rank, max of rank (last round) */
} plan;

static int failing_code(const plan *p, int rank, int round, int nprocs)
{
    for (int i = 0; i < p->nfail; i++)
        if ((p->fail_rank[i] + round) % nprocs == rank)
            return p->fail_code[i];
    return 0;
}

static int expected_winner(const plan *p, int round, int nprocs, int *code)
{
    int best = -1;
    *code = 0;
    for (int i = 0; i < p->nfail; i++) {
        int r = (p->fail_rank[i] + round) % nprocs;
        if (best < 0 || r < best)
            best = r, *code = p->fail_code[i];
    }
    return best;
}

/* a table like the simulator's, without allmin: sheaf_comm_allmin falls
 * back to reduce + bcast */
static sheaf_comm_ops generic_ops;

static int member(sheaf_comm *world, int rank, void *arg)
{
    plan *p = arg;
    int P = sheaf_comm_size(world);
    sheaf_comm gc = *world, *c = world;
    if (p->generic) {
        generic_ops = *world->ops;
        generic_ops.allmin = NULL;
        gc.ops = &generic_ops;
        c = &gc;
    }
    for (int r = 0; r < p->rounds; r++) {
        int code = failing_code(p, rank, r, P);
        char msg[64];
        snprintf(msg, sizeof msg, "round %d: rank %d broke", r, rank);
        int64_t v[2] = {rank, -(int64_t)rank};
        sheaf_comm_agreement a;
        int ret = sheaf_comm_agree(c, code, code ? msg : NULL, v, 2, &a);
        size_t k = (size_t)rank * (size_t)p->rounds + (size_t)r;
        p->ret[k] = ret;
        p->winner[k] = a.rank;
        int wcode;
        int w = expected_winner(p, r, P, &wcode);
        char want[64] = "";
        if (w >= 0)
            snprintf(want, sizeof want, "round %d: rank %d broke", r, w);
        p->msg_ok[k] = strcmp(a.msg, want) == 0 && a.code == ret;
        p->vmin[2 * rank] = v[0];
        p->vmin[2 * rank + 1] = v[1];
    }
    return 0;
}

static void run_plan(plan *p, int P, sheaf_comm_sim_stats *st)
{
    size_t n = (size_t)P * (size_t)p->rounds;
    p->ret = calloc(n, sizeof *p->ret);
    p->winner = calloc(n, sizeof *p->winner);
    p->msg_ok = calloc(n, sizeof *p->msg_ok);
    p->vmin = calloc((size_t)P * 2, sizeof *p->vmin);
    assert_non_null(p->ret);
    assert_non_null(p->winner);
    assert_non_null(p->msg_ok);
    assert_non_null(p->vmin);
    assert_int_equal(sheaf_comm_sim_run(P, 32, member, p, st), 0);
    for (int r = 0; r < p->rounds; r++) {
        int code;
        int w = expected_winner(p, r, P, &code);
        for (int m = 0; m < P; m++) {
            size_t k = (size_t)m * (size_t)p->rounds + (size_t)r;
            if (p->ret[k] != code || p->winner[k] != w || !p->msg_ok[k])
                fail_msg("P %d round %d rank %d: returned %d (want %d), winner %d (want %d), message %s", P, r, m,
                         p->ret[k], code, p->winner[k], w, p->msg_ok[k] ? "right" : "wrong");
        }
    }
    for (int m = 0; m < P; m++) {
        assert_int_equal(p->vmin[2 * m], 0);
        assert_int_equal(p->vmin[2 * m + 1], -(int64_t)(P - 1));
    }
    free(p->ret), free(p->winner), free(p->msg_ok), free(p->vmin);
}

static void all_fine(void **state)
{
    (void)state;
    static const int sizes[] = {1, 2, 3, 7, 64};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        plan p = {.rounds = 3};
        sheaf_comm_sim_stats st;
        run_plan(&p, sizes[i], &st);
        assert_int_equal(st.allmins, 3); /* one exchange per agreement */
        assert_int_equal(st.collectives, 3);
        assert_int_equal(st.bcasts + st.reduces, 0);
    }
}

static void one_fails(void **state)
{
    (void)state;
    static const int sizes[] = {1, 2, 5, 16};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        for (int f = 0; f<sizes[i]; f += sizes[i]> 4 ? 3 : 1) {
            plan p = {.nfail = 1, .fail_rank = {f}, .fail_code = {-17}, .rounds = 1};
            sheaf_comm_sim_stats st;
            run_plan(&p, sizes[i], &st);
            assert_int_equal(st.allmins, 2); /* the status, then the message */
        }
}

/* the lowest failing rank wins, whatever the sign of either code */
static void two_fail_any_sign(void **state)
{
    (void)state;
    plan p = {.nfail = 2, .fail_rank = {5, 2}, .fail_code = {-9, 3}, .rounds = 1};
    sheaf_comm_sim_stats st;
    run_plan(&p, 8, &st);
    plan q = {.nfail = 2, .fail_rank = {1, 6}, .fail_code = {-9, 3}, .rounds = 1};
    run_plan(&q, 8, &st);
    plan big = {.nfail = 2, .fail_rank = {3, 4}, .fail_code = {INT32_MIN, INT32_MAX}, .rounds = 1};
    run_plan(&big, 8, &st);
}

/* failures move from rank to rank in consecutive agreements: every member
 * still makes every exchange */
static void in_a_row(void **state)
{
    (void)state;
    plan p = {.nfail = 2, .fail_rank = {0, 3}, .fail_code = {-4, -5}, .rounds = 6};
    sheaf_comm_sim_stats st;
    run_plan(&p, 6, &st);
    assert_int_equal(st.allmins, 12);
}

static void generic_allmin(void **state)
{
    (void)state;
    plan p = {.nfail = 1, .fail_rank = {2}, .fail_code = {-3}, .rounds = 2, .generic = 1};
    sheaf_comm_sim_stats st;
    run_plan(&p, 5, &st);
    assert_int_equal(st.allmins, 0);
    assert_int_equal(st.reduces, 4); /* 2 agreements x (status + message) */
    assert_int_equal(st.bcasts, 4);
    plan q = {.rounds = 2, .generic = 1};
    run_plan(&q, 4, &st);
    assert_int_equal(st.reduces, 2);
    assert_int_equal(st.bcasts, 2);
}

/* a message longer than the layer carries arrives cut, NUL-terminated */
static int long_message(sheaf_comm *world, int rank, void *arg)
{
    (void)arg;
    char msg[2000];
    memset(msg, 'x', sizeof msg - 1);
    msg[sizeof msg - 1] = '\0';
    sheaf_comm_agreement a;
    int rc = sheaf_comm_agree(world, rank == 1 ? -2 : 0, msg, NULL, 0, &a);
    if (rc != -2 || a.rank != 1 || strlen(a.msg) != SHEAF_COMM_MSGLEN - 1)
        return 1;
    for (size_t i = 0; i < SHEAF_COMM_MSGLEN - 1; i++)
        if (a.msg[i] != 'x')
            return 1;
    /* no message and no out: still the code everywhere */
    rc = sheaf_comm_agree(world, rank == 2 ? 7 : 0, NULL, NULL, 0, NULL);
    return rc == 7 ? 0 : 1;
}

static void messages(void **state)
{
    (void)state;
    assert_int_equal(sheaf_comm_sim_run(3, 32, long_message, NULL, NULL), 0);
}

/* misuse fails locally before any exchange; members that disagree on the
 * number of values fail the exchange instead of hanging */
static int misuse(sheaf_comm *world, int rank, void *arg)
{
    (void)arg;
    int64_t v[70] = {0};
    sheaf_comm_agreement a;
    if (sheaf_comm_agree(world, 0, NULL, v, 63, &a) != SHEAF_COMM_EINVAL || a.code != SHEAF_COMM_EINVAL)
        return 1;
    if (sheaf_comm_agree(world, 0, NULL, NULL, 2, NULL) != SHEAF_COMM_EINVAL)
        return 1;
    if (sheaf_comm_allmin(world, v, 0) != SHEAF_COMM_EINVAL || sheaf_comm_allmin(world, v, 65) != SHEAF_COMM_EINVAL)
        return 1;
    int rc = sheaf_comm_agree(world, 0, NULL, v, rank == 0 ? 1 : 2, &a);
    if (rc != SHEAF_COMM_ECOMM || a.code != SHEAF_COMM_ECOMM)
        return 1;
    /* and the layer still works afterwards */
    return sheaf_comm_agree(world, 0, NULL, v, 2, &a) == 0 ? 0 : 1;
}

static void misuse_and_mismatch(void **state)
{
    (void)state;
    assert_int_equal(sheaf_comm_sim_run(4, 32, misuse, NULL, NULL), 0);
}

/* a member that leaves without agreeing: the others fail, never hang */
static int leaver(sheaf_comm *world, int rank, void *arg)
{
    (void)arg;
    if (rank == 1)
        return 0;
    sheaf_comm_agreement a;
    for (int i = 0; i < 3; i++) { /* the layer's message is said once, not wrapped again each time */
        int rc = sheaf_comm_agree(world, 0, NULL, NULL, 0, &a);
        if (rc != SHEAF_COMM_ECOMM || a.code != SHEAF_COMM_ECOMM || strstr(a.msg, "sheaf_comm_agree:") != a.msg ||
            strstr(a.msg + 1, "sheaf_comm_agree:"))
            return 1;
    }
    return 0;
}

static void member_leaves(void **state)
{
    (void)state;
    assert_int_equal(sheaf_comm_sim_run(3, 32, leaver, NULL, NULL), 0);
}

static void scale(void **state)
{
    (void)state;
    const char *env = getenv("COMM_SIM_MAXP");
    long maxp = env ? atol(env) : 100000;
    for (long P = 1000; P <= maxp; P *= 10) {
        plan p = {.nfail = 2, .fail_rank = {(int)P - 1, (int)P / 2}, .fail_code = {-6, -8}, .rounds = 2};
        sheaf_comm_sim_stats st;
        run_plan(&p, (int)P, &st);
        assert_int_equal(st.allmins, 4);
        int lg = 0;
        while ((1L << lg) < P)
            lg++;
        assert_int_equal(st.rounds, 4L * 2 * lg); /* each allmin: a reduce and a bcast tree */
        assert_true(st.max_msg <= (SHEAF_COMM_MSGLEN / 7) * sizeof(int64_t));
        printf("P %ld: 2 agreements with failures, %ld exchanges, %ld rounds, largest message %zu B\n", P, st.allmins,
               st.rounds, st.max_msg);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(all_fine),
        cmocka_unit_test(one_fails),
        cmocka_unit_test(two_fail_any_sign),
        cmocka_unit_test(in_a_row),
        cmocka_unit_test(generic_allmin),
        cmocka_unit_test(messages),
        cmocka_unit_test(misuse_and_mismatch),
        cmocka_unit_test(member_leaves),
        cmocka_unit_test(scale),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
