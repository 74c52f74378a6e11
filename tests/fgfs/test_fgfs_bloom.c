/* test_fgfs_bloom.c - the Bloom cardinality estimate (within 5% of known
 * cardinalities from 1 to 10^6 names at the paper's density), the exact
 * grouping (merge of sorted name lists) against a brute-force grouping on
 * random inputs, and the typed messages (round trips, hostile bytes). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "fgfs.h"

static void estimator(void **state)
{
    static const long ns[] = {1,    2,    3,    5,     10,    20,    50,     100,    200,    500,    1000,
                              1500, 2000, 5000, 10000, 20000, 50000, 100000, 200000, 500000, 1000000};
    double worst = 0;
    printf("%8s %9s %7s %10s %7s\n", "names", "bits", "density", "estimate", "error");
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        long n = ns[i];
        size_t m = fgfs_bloom_bits((uint64_t)n);
        uint8_t *bits = calloc(m / 8, 1);
        char name[96];
        for (long k = 0; k < n; k++) {
            int l = snprintf(name, sizeof name, "nfs://nfs-%ld.su%ld.example.org:/export/apps/lib", k, k % 156);
            fgfs_bloom_add(bits, m, name, (size_t)l);
        }
        size_t t = fgfs_bloom_count(bits, m);
        double est = fgfs_bloom_estimate(t, m), err = fabs(est - (double)n) / (double)n;
        printf("%8ld %9zu %6.1f%% %10.1f %6.2f%%\n", n, m, 100.0 * (double)t / (double)m, est, 100 * err);
        worst = err > worst ? err : worst;
        assert_true(err <= 0.05);
        if (m > FGFS_BLOOM_MIN_BITS) /* the paper's sizing: about half the bits set */
            assert_true(fabs((double)t / (double)m - 0.5) < 0.01);
        free(bits);
    }
    printf("worst relative error %.2f%%\n", 100 * worst);
    assert_true(isinf(fgfs_bloom_estimate(4096, 4096)));
    assert_true(fgfs_bloom_estimate(0, 4096) == 0.0);
}

/* brute force: distinct names, members, lowest rank, sorted */
typedef struct {
    const char *name;
    unsigned members, rep;
} bf_entry;
static int bf_cmp(const void *a, const void *b)
{
    return strcmp(((const bf_entry *)a)->name, ((const bf_entry *)b)->name);
}

static void grouping(void **state)
{
    srand(7);
    char pool[64][48];
    size_t cap = 1 << 20;
    uint8_t *out = malloc(cap);
    for (int trial = 0; trial < 300; trial++) {
        int P = 1 + rand() % 400, G = 1 + rand() % 64;
        for (int g = 0; g < G; g++)
            snprintf(pool[g], sizeof pool[g], "nfs://srv%d:/e/%d", rand() % 1000, g);
        const char **name = malloc((size_t)P * sizeof *name);
        uint8_t **msg = malloc((size_t)P * sizeof *msg);
        size_t *len = malloc((size_t)P * sizeof *len);
        fgfs_status_word ok = {0, 0};
        for (int r = 0; r < P; r++) {
            name[r] = pool[rand() % G];
            assert_int_equal(fgfs_group_pack1(&ok, name[r], (uint32_t)r, &msg[r], &len[r]), 0);
        }
        /* combine adjacent pairs in random order (any tree shape) */
        for (int left = P; left > 1; left--) {
            int i = rand() % (left - 1);
            size_t ol = 0;
            assert_int_equal(fgfs_op_group_merge(msg[i], len[i], msg[i + 1], len[i + 1], out, &ol, &cap), 0);
            free(msg[i]);
            free(msg[i + 1]);
            msg[i] = malloc(ol);
            memcpy(msg[i], out, ol);
            len[i] = ol;
            memmove(&msg[i + 1], &msg[i + 2], (size_t)(left - i - 2) * sizeof *msg);
            memmove(&len[i + 1], &len[i + 2], (size_t)(left - i - 2) * sizeof *len);
        }
        fgfs_group_table t;
        assert_int_equal(fgfs_group_unpack(msg[0], len[0], &t), 0);
        bf_entry *bf = calloc((size_t)P, sizeof *bf);
        int nb = 0;
        for (int r = 0; r < P; r++) {
            int k = 0;
            while (k < nb && strcmp(bf[k].name, name[r]))
                k++;
            if (k == nb)
                bf[nb++] = (bf_entry){name[r], 0, (unsigned)r};
            bf[k].members++;
        }
        qsort(bf, (size_t)nb, sizeof *bf, bf_cmp);
        assert_int_equal(t.n, nb);
        for (int k = 0; k < nb; k++) {
            assert_int_equal(t.e[k].len, strlen(bf[k].name));
            assert_memory_equal(t.e[k].name, bf[k].name, t.e[k].len);
            assert_int_equal(t.e[k].members, bf[k].members);
            assert_int_equal(t.e[k].rep, bf[k].rep);
            assert_int_equal(fgfs_group_find(&t, bf[k].name), k);
        }
        assert_int_equal(fgfs_group_find(&t, "nfs://absent:/x"), -1);
        fgfs_group_table_free(&t);
        free(msg[0]);
        free(bf), free(name), free(msg), free(len);
    }
    printf("300 random groupings equal to brute force\n");
    /* a bound too small: the result says ELIMIT, with no entries */
    uint8_t *a, *b;
    size_t al, bl, ol, small = 30;
    fgfs_status_word ok = {0, 0};
    fgfs_group_pack1(&ok, "nfs://a:/x", 0, &a, &al);
    fgfs_group_pack1(&ok, "nfs://b:/x", 1, &b, &bl);
    assert_int_equal(fgfs_op_group_merge(a, al, b, bl, out, &ol, &small), 0);
    fgfs_group_table t;
    assert_int_equal(fgfs_group_unpack(out, ol, &t), 0);
    assert_int_equal(t.st.code, SHEAF_FGFS_ELIMIT);
    assert_int_equal(t.n, 0);
    fgfs_group_table_free(&t);
    free(a), free(b), free(out);
}

static void messages(void **state)
{
    fgfs_triage_msg x = {{-3, 17}, 1, 0, 5, 9}, y;
    uint8_t buf[64];
    fgfs_triage_pack(&x, buf);
    assert_int_equal(fgfs_triage_unpack(buf, FGFS_TRIAGE_LEN, &y), 0);
    assert_memory_equal(&x, &y, sizeof x);
    assert_int_equal(fgfs_triage_unpack(buf, FGFS_TRIAGE_LEN - 1, &y), -1);
    fgfs_hash_msg h = {{0, 2}, 3, 0, 11, 12}, h2;
    fgfs_hash_pack(&h, buf);
    assert_int_equal(fgfs_hash_unpack(buf, FGFS_HASH_LEN, &h2), 0);
    assert_int_equal(h2.hmax, 12);
    /* status words: the lowest failing rank wins */
    fgfs_status_word s = {0, 0}, f1 = {-3, 9}, f2 = {-1, 4};
    fgfs_sw_merge(&s, &f1);
    fgfs_sw_merge(&s, &f2);
    assert_int_equal(s.rank, 4);
    /* hostile group tables: counts beyond the bytes, unsorted, cut */
    srand(3);
    fgfs_group_table t;
    for (int i = 0; i < 20000; i++) {
        size_t l = (size_t)(rand() % 64);
        for (size_t k = 0; k < l; k++)
            buf[k] = (uint8_t)(rand() % 4 == 0 ? rand() : (rand() % 3));
        if (fgfs_group_unpack(buf, l, &t) == 0)
            fgfs_group_table_free(&t);
        fgfs_bloom_msg bm;
        (void)fgfs_bloom_unpack(buf, l, &bm);
    }
    const uint8_t unsorted[] = {0, 0, 0, 0, 0, 0,   0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0,
                                0, 0, 0, 1, 0, 'b', 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 'a'};
    assert_int_equal(fgfs_group_unpack(unsorted, sizeof unsorted, &t), -1);
}

/* the consistency digest of a directory: sorted entry names and types,
 * independent of the creation order and of the entries' contents; a FIFO is
 * refused at once with its name (never opened for a blocking read) */
static void dir_digest(void **state)
{
    (void)state;
    char a[64] = "/tmp/fgfs-dd-XXXXXX", b[64] = "/tmp/fgfs-dd-XXXXXX", p[200];
    assert_non_null(mkdtemp(a));
    assert_non_null(mkdtemp(b));
    uint64_t ha = 1, hb = 2, h0 = 3;
    assert_int_equal(fgfs_hash_file(a, &h0), 0); /* empty directory */
    const char *names[] = {"x", "y", "sub"};
    for (int i = 0; i < 3; i++) { /* a in one order, b in the other */
        const char *n1 = names[i], *n2 = names[2 - i];
        snprintf(p, sizeof p, "%s/%s", a, n1);
        assert_int_equal(strcmp(n1, "sub") ? close(open(p, O_CREAT | O_WRONLY, 0644)) : mkdir(p, 0755), 0);
        snprintf(p, sizeof p, "%s/%s", b, n2);
        assert_int_equal(strcmp(n2, "sub") ? close(open(p, O_CREAT | O_WRONLY, 0644)) : mkdir(p, 0755), 0);
    }
    snprintf(p, sizeof p, "%s/x", b); /* contents of an entry are not part of the digest */
    FILE *f = fopen(p, "w");
    fputs("other bytes", f);
    fclose(f);
    assert_int_equal(fgfs_hash_file(a, &ha), 0);
    assert_int_equal(fgfs_hash_file(b, &hb), 0);
    assert_true(ha == hb && ha != h0);
    /* same names, one type different: y a directory in b */
    snprintf(p, sizeof p, "%s/y", b);
    assert_int_equal(unlink(p), 0);
    assert_int_equal(mkdir(p, 0755), 0);
    assert_int_equal(fgfs_hash_file(b, &hb), 0);
    assert_true(ha != hb);
    /* one more entry */
    snprintf(p, sizeof p, "%s/y", b);
    assert_int_equal(rmdir(p), 0);
    assert_int_equal(close(open(p, O_CREAT | O_WRONLY, 0644)), 0);
    assert_int_equal(fgfs_hash_file(b, &hb), 0);
    assert_true(ha == hb);
    snprintf(p, sizeof p, "%s/z", b);
    assert_int_equal(mkfifo(p, 0644), 0); /* an entry that is a FIFO is listed, not opened */
    assert_int_equal(fgfs_hash_file(b, &hb), 0);
    assert_true(ha != hb);
    /* a FIFO itself: refused at once, naming it */
    time_t t0 = time(NULL);
    int rc = fgfs_hash_file(p, &hb);
    assert_int_equal(rc, SHEAF_FGFS_EINVAL);
    assert_true(time(NULL) - t0 < 3);
    assert_non_null(strstr(sheaf_fgfs_last_error(), p));
    assert_non_null(strstr(sheaf_fgfs_last_error(), "FIFO"));
    /* a regular file still hashes its bytes, and not like a directory */
    snprintf(p, sizeof p, "%s/x", b);
    assert_int_equal(fgfs_hash_file(p, &hb), 0);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", a, b);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(estimator),
        cmocka_unit_test(grouping),
        cmocka_unit_test(messages),
        cmocka_unit_test(dir_digest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
