/* test_par_layout.c - sheaf writes the same file as SIONlib 1.7.6 for the
 * same program. Anchor: the SIONlib-written vector coll8 (MANIFEST.json:
 * "sion_paropen_mpi 'bw,collsize=4', 8 ranks, chunksize 700, fsblksize
 * 4096; one sion_coll_fwrite_mpi per rank", task t writes 300 + 50 t bytes
 * of the pattern t*131 + 7 i + i/256). In SIONlib 'collsize=N' alone does
 * not switch coalescing on (only 'collective' or SION_COLLSIZE /
 * SION_COLLNUM do), so sion_coll_fwrite writes individually and the chunks
 * are the plain block-aligned ones. The same program over the generic layer
 * (8 threads) must give a byte-identical file (written under the same
 * name from its directory, since the header keeps the name as given). A second case asks for
 * coalescing ('collective,collsize=4') and checks the layout SIONlib's
 * grouping gives for these chunks: 2 collectors, capacity 4096, groups
 * 0-4 and 5-7 (greedy by size, not 4 + 4), the last chunk of each group
 * padded to the block.
 * Without the vector the coll8 case is skipped out loud: the program exits 77
 * (ctest's SKIP_RETURN_CODE) after the other case, naming the missing file.
 * ctest runs each case as a test of its own (par.layout.coll8, par.layout). */
#include "partest.h"

#define P 8

static int layout_skipped; /* a case could not run: exit 77, not 0 */

typedef struct {
    int aid;
    const char *mode;
    char fname[4200];
} lctx;

static unsigned char pat(int t, int64_t i) { return (unsigned char)(t * 131 + i * 7 + (i >> 8)); }

static void writer(tc_task *t)
{
    lctx *c = t->arg;
    int g = t->grank;
    pt_rank = g;
    int fn = 0, nf = 1, lr = g, ls = P;
    sion_int64 chunk = 700;
    sion_int32 fsblk = 4096;
    FILE *fp = NULL;
    int sid =
        sion_generic_paropen(c->aid, c->fname, c->mode, &chunk, &fsblk, t->world, g, P, &fn, &nf, &lr, &ls, &fp, NULL);
    if (!CHECK(sid >= 0, "open: %s", sheaf_last_error()))
        return;
    size_t n = 300 + 50 * (size_t)g;
    unsigned char b[700];
    for (size_t i = 0; i < n; i++)
        b[i] = pat(g, (int64_t)i);
    CHECK(sion_coll_fwrite(b, 1, n, sid) == n, "coll_fwrite: %s", sheaf_last_error());
    CHECK(sion_generic_parclose(sid) == SION_SUCCESS, "close: %s", sheaf_last_error());
}

static unsigned char *slurp(const char *path, long long *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    *len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)*len + 1);
    if (b && fread(b, 1, (size_t)*len, f) != (size_t)*len) {
        free(b);
        b = NULL;
    }
    fclose(f);
    return b;
}

static void test_coll8_identical(void)
{
    const char *vdir = getenv("SHEAF_VECTORS_DIR");
    char vec[4200];
    snprintf(vec, sizeof vec, "%s/coll8.sion", vdir ? vdir : "../shared/vectors/sionlib-1.7.6");
    if (!pt_exists(vec)) {
        printf("SKIP: no SIONlib vector %s (set SHEAF_VECTORS_DIR to ../shared/vectors/sionlib-1.7.6)\n", vec);
        layout_skipped = 1;
        return;
    }
    const char *dir = pt_mkdtemp();
    lctx c = {tc_create_api("layout"), "bw,collsize=4", "coll8.sion"};
    /* written as "coll8.sion" from its directory, as SIONlib's writer did:
     * the header keeps the name as given (the only other difference) */
    char cwd[4096], out[4300];
    CHECK(getcwd(cwd, sizeof cwd) != NULL && chdir(dir) == 0, "chdir %s", dir);
    tc_run(P, writer, &c);
    CHECK(chdir(cwd) == 0, "chdir back");
    snprintf(out, sizeof out, "%s/coll8.sion", dir);
    long long la = 0, lb = 0;
    unsigned char *a = slurp(out, &la), *b = slurp(vec, &lb);
    CHECK(a && b, "cannot read %s or %s", c.fname, vec);
    if (a && b) {
        CHECK(la == lb, "size %lld, SIONlib's coll8 %lld", la, lb);
        long long at = -1;
        for (long long i = 0; i < la && i < lb && at < 0; i++)
            if (a[i] != b[i])
                at = i;
        CHECK(at < 0, "first byte that differs from SIONlib's coll8: offset %lld (0x%llx)", at, at);
    }
    free(a);
    free(b);
    sion_generic_free_api(c.aid);
    if (!getenv("SHEAF_TEST_KEEP")) /* keep the file to compare it by hand */
        pt_rmtree(dir);
}

/* 'collective,collsize=4' needs a layer with gather_and_execute: with the
 * STD-level threadcomm API sheaf warns and writes individually, but the
 * master still plans the groups; the layout is checked through a layer that
 * has the callbacks: here a trivial one (every task a group of its own is
 * not what we want), so the plan is checked through the stored chunks. */
static int noop_gather_exec(const void *in, sion_int64 *spec, int spec_len, sion_int64 fsblksize, void *group,
                            int collector, int first, int last, int sid, int process(const void *, sion_int64 *, int))
{
    (void)in, (void)spec, (void)spec_len, (void)fsblksize, (void)group, (void)collector, (void)first, (void)last;
    (void)sid, (void)process;
    return 1; /* never called: nothing is written collectively below */
}
static int noop_exec_scatter(void *out, sion_int64 *spec, int spec_len, sion_int64 fsblksize, void *group,
                             int collector, int first, int last, int sid, int process(void *, sion_int64 *, int))
{
    (void)out, (void)spec, (void)spec_len, (void)fsblksize, (void)group, (void)collector, (void)first, (void)last;
    (void)sid, (void)process;
    return 1;
}

static void opener(tc_task *t)
{
    lctx *c = t->arg;
    int g = t->grank;
    pt_rank = g;
    int fn = 0, nf = 1, lr = g, ls = P;
    sion_int64 chunk = 700;
    sion_int32 fsblk = 4096;
    FILE *fp = NULL;
    int sid =
        sion_generic_paropen(c->aid, c->fname, c->mode, &chunk, &fsblk, t->world, g, P, &fn, &nf, &lr, &ls, &fp, NULL);
    if (!CHECK(sid >= 0, "open: %s", sheaf_last_error()))
        return;
    /* *chunksize stays as given (SIONlib 1.7.6 writes nothing back on a write
     * open); the group's last task got the padding in the file (checked below) */
    CHECK(chunk == 700, "task %d: chunk %lld", g, (long long)chunk);
    CHECK(sion_generic_parclose(sid) == SION_SUCCESS, "close: %s", sheaf_last_error());
}

static void test_collective_groups(void)
{
    const char *dir = pt_mkdtemp();
    lctx c = {tc_create_api("layout-full"), "bw,collective,collsize=4", ""};
    CHECK(sion_generic_register_gather_and_execute_cb(c.aid, noop_gather_exec) == SION_SUCCESS &&
              sion_generic_register_execute_and_scatter_cb(c.aid, noop_exec_scatter) == SION_SUCCESS,
          "register");
    snprintf(c.fname, sizeof c.fname, "%s/groups.sion", dir);
    tc_run(P, opener, &c);
    int ntasks = 0, nfiles = 0, *gr = NULL;
    sion_int64 *chunks = NULL;
    sion_int32 fsblk = 0;
    FILE *fp = NULL;
    int sid = sion_open(c.fname, "rb", &ntasks, &nfiles, &chunks, &fsblk, &gr, &fp);
    if (CHECK(sid >= 0 && ntasks == P, "serial open: %s", sheaf_last_error())) {
        int64_t sum = 0;
        for (int t = 0; t < P; t++) {
            CHECK(chunks[t] == (t == 4   ? 1296
                                : t == 7 ? 2696
                                         : 700),
                  "stored chunk of task %d: %lld", t, (long long)chunks[t]);
            sum += chunks[t];
        }
        CHECK(sum == 2 * 4096, "two groups of one block each: %lld bytes", (long long)sum);
        /* data of the two groups: 4096 header block(s) + 2 blocks; as SIONlib */
        sion_close(sid);
    }
    free(chunks);
    free(gr);
    sion_generic_free_api(c.aid);
    pt_rmtree(dir);
}

int main(int argc, char **argv)
{
    static const pt_test tests[] = {{"coll8_byte_identical", test_coll8_identical},
                                    {"collective_groups_as_sionlib", test_collective_groups}};
    int rc = pt_main(tests, 2, argc, argv);
    if (rc == 0 && layout_skipped) {
        printf("test_par_layout: SKIPPED (exit 77): a case lacked its vector\n");
        return 77;
    }
    return rc;
}
