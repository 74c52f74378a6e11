/* test_partask.c - the serial building blocks of the parallel layer (partask.h),
 * driven the way a parallel open/close will drive them, but from one process:
 * a file's master creates the file, every task attaches to its chunk (all at
 * the same time, writes interleaved), detaches and hands back its block table,
 * the master writes the metadata tail. The result is read with the public
 * sion_open and, for SIONlib's parallel vectors, compared byte for byte. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include "../helpers/vecpath.h"
#include "sion.h"
#include "sheaf.h"
#include "partask.h"
#include "../helpers/testutil.h"

#define MAXG 48

static core_mode mode_of(const char *s)
{
    core_mode m;
    assert_int_equal(core_mode_parse(s, &m), 0);
    return m;
}

static int64_t fsize(const char *path)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    return (int64_t)st.st_size;
}

/* Copy a read-only vector into dir (the copy is what gets opened). */
static void copy_vector(const char *name, const char *dir)
{
    char src[4096], dst[4200];
    vec_path(name, src, sizeof src);
    size_t len;
    unsigned char *d = tu_read_file(src, &len);
    assert_non_null(d);
    snprintf(dst, sizeof dst, "%s/%s", dir, name);
    assert_int_equal(tu_write_file(dst, d, len), 0);
    free(d);
}

/* ---- random simulated parallel writes ---------------------------------- */

typedef struct {
    int file, lrank;
    int64_t target, written;
    core_container *c;
    int64_t nb, *bs; /* block table handed back by detach */
} sim_task;

static long st_sets, st_tasks, st_blocks, st_big, st_empty;

/* One container set `base` (nfiles physical files, G global tasks), written
 * through the par primitives and read back with sion_open. */
static void run_set(const char *base, int G, int nfiles, int salt)
{
    sim_task tk[MAXG];
    int nk[8] = {0};
    int posix = (int)(tu_rand() & 1);
    core_mode wm = mode_of(posix ? "wb,posix" : "wb"), rm = mode_of(posix ? "rb,posix" : "rb");
    memset(tk, 0, sizeof tk);
    /* which file holds global task g: every file at least one, then shuffled */
    int fileof[MAXG];
    for (int g = 0; g < G; g++)
        fileof[g] = g < nfiles ? g : (int)tu_range(0, nfiles - 1);
    for (int g = G - 1; g > 0; g--) {
        int j = (int)tu_range(0, g), x = fileof[g];
        fileof[g] = fileof[j];
        fileof[j] = x;
    }
    for (int g = 0; g < G; g++) {
        tk[g].file = fileof[g];
        tk[g].lrank = nk[fileof[g]]++;
    }
    /* each file's master: chunk sizes and global ranks of its tasks, create */
    core_meta meta[8];
    int64_t req[MAXG];
    for (int k = 0; k < nfiles; k++) {
        int64_t cs[MAXG], gr[MAXG];
        for (int g = 0; g < G; g++) {
            if (tk[g].file != k)
                continue;
            int kind = (int)tu_range(0, 3);
            req[g] = kind == 0 ? tu_range(1, 600) : kind == 1 ? 4096 * tu_range(1, 3) : tu_range(1, 9000);
            cs[tk[g].lrank] = req[g];
            gr[tk[g].lrank] = 7 + 3 * g;
        }
        int rc = core_par_create_file(base, &wm, nk[k], cs, gr, 4096, k, nfiles, &meta[k]);
        if (rc)
            fail_msg("create file %d: %s", k, sheaf_last_error());
        assert_int_equal(meta[k].filenumber, k);
        assert_int_equal(meta[k].nfiles, nfiles);
        assert_true(meta[k].start_of_varheader == 0);
    }
    /* every task attaches (all at once), then writes interleave at random */
    for (int g = 0; g < G; g++) {
        core_meta *m = &meta[tk[g].file];
        int l = tk[g].lrank;
        assert_true(m->chunksizes[l] >= req[g] && m->chunksizes[l] % 4096 == 0);
        char *path = core_member_name(base, tk[g].file);
        assert_non_null(path);
        if (core_attach_task(&tk[g].c, path, &wm, 1, m->starts[l], m->chunksizes[l], m->globalskip, m->globalranks[l],
                             0, NULL))
            fail_msg("attach task %d: %s", g, sheaf_last_error());
        free(path);
        int kind = (int)tu_range(0, 5);
        tk[g].target = kind == 0 ? 0 : kind == 1 ? tu_range(1, 50) : tu_range(1, 5 * m->chunksizes[l] + 3000);
        st_empty += tk[g].target == 0;
    }
    unsigned char *buf = malloc(3 * 9 * 4096 + 64);
    for (;;) {
        int open_g[MAXG], n = 0;
        for (int g = 0; g < G; g++)
            if (tk[g].written < tk[g].target)
                open_g[n++] = g;
        if (n == 0)
            break;
        int g = open_g[tu_range(0, n - 1)];
        int64_t chunk = tk[g].c->tasks[0].chunksize, left = tk[g].target - tk[g].written;
        int64_t w = tu_rand() % 4 ? tu_range(1, 900) : tu_range(1, 2 * chunk + 7);
        if (w > left)
            w = left;
        st_big += w > chunk;
        tu_fill(buf, g + salt, tk[g].written, (size_t)w);
        if (core_write(tk[g].c, buf, (uint64_t)w))
            fail_msg("task %d: write of %lld bytes: %s", g, (long long)w, sheaf_last_error());
        tk[g].written += w;
        if (tu_rand() % 16 == 0)
            assert_int_equal(core_flush(tk[g].c), 0);
    }
    /* detach in random order */
    int order[MAXG];
    for (int g = 0; g < G; g++)
        order[g] = g;
    for (int g = G - 1; g > 0; g--) {
        int j = (int)tu_range(0, g), x = order[g];
        order[g] = order[j];
        order[j] = x;
    }
    for (int i = 0; i < G; i++) {
        sim_task *t = &tk[order[i]];
        if (core_detach_task(t->c, &t->nb, &t->bs))
            fail_msg("detach task %d: %s", order[i], sheaf_last_error());
        t->c = NULL;
        assert_true(t->nb >= 1);
        int64_t sum = 0;
        for (int64_t b = 0; b < t->nb; b++)
            sum += t->bs[b];
        assert_true(sum == t->written);
        st_blocks += t->nb;
    }
    /* masters: gather (gatherv layout) and write the tails */
    int32_t mapping[2 * MAXG];
    for (int g = 0; g < G; g++) {
        mapping[2 * g] = tk[g].file;
        mapping[2 * g + 1] = tk[g].lrank;
    }
    for (int k = 0; k < nfiles; k++) {
        int64_t bc[MAXG], *flat = NULL, total = 0;
        for (int g = 0; g < G; g++)
            if (tk[g].file == k) {
                bc[tk[g].lrank] = tk[g].nb;
                total += tk[g].nb;
            }
        flat = malloc((size_t)total * 8);
        int64_t at = 0;
        for (int l = 0; l < nk[k]; l++)
            for (int g = 0; g < G; g++)
                if (tk[g].file == k && tk[g].lrank == l) {
                    memcpy(flat + at, tk[g].bs, (size_t)tk[g].nb * 8);
                    at += tk[g].nb;
                }
        int mapped = nfiles > 1 && k == 0;
        if (core_par_write_tail(base, &meta[k], bc, flat, mapped ? mapping : NULL, mapped ? G : 0))
            fail_msg("tail of file %d: %s", k, sheaf_last_error());
        free(flat);
        /* parallel close: nothing after META2 except file 0's mapping */
        char *path = core_member_name(base, k);
        int64_t end = meta[k].start_of_varheader + 8 * (int64_t)nk[k] * (1 + meta[k].maxchunks);
        assert_true(fsize(path) == end + (mapped ? 4 + 8 * (int64_t)G : 0));
        size_t len;
        unsigned char *d = tu_read_file(path, &len);
        assert_int_equal(d[32], k);                                  /* filenumber */
        assert_int_equal(memcmp(d + 52, base, strlen(base) + 1), 0); /* prefix: the set's name */
        free(d);
        free(path);
    }
    /* read back: sion_open on file 0 sees all G tasks in global order */
    int nt = 0, nf = 0, *gr = NULL;
    sion_int32 fbs = 0;
    sion_int64 *cs = NULL;
    int sid = sion_open((char *)base, posix ? "rb,posix" : "rb", &nt, &nf, &cs, &fbs, &gr, NULL);
    if (sid < 0)
        fail_msg("sion_open %s: %s", base, sheaf_last_error());
    assert_int_equal(nt, G);
    assert_int_equal(nf, nfiles);
    assert_int_equal(fbs, 4096);
    unsigned char *rd = malloc(5 * 9 * 4096 + 4096), *exp = malloc(5 * 9 * 4096 + 4096);
    for (int g = 0; g < G; g++) {
        assert_int_equal(gr[g], 7 + 3 * g);
        assert_true(cs[g] == meta[tk[g].file].chunksizes[tk[g].lrank]);
        assert_int_equal(sion_seek(sid, g, SION_CURRENT_BLK, SION_CURRENT_POS), SION_SUCCESS);
        int64_t off = 0;
        while (!sion_feof(sid)) {
            size_t want = (size_t)tu_range(1, 3000);
            size_t got = sion_fread(rd + off, 1, want, sid);
            if (got == 0)
                fail_msg("task %d: fread returned 0 at %lld: %s", g, (long long)off, sheaf_last_error());
            off += (int64_t)got;
            assert_true(off <= tk[g].written);
        }
        assert_true(off == tk[g].written);
        tu_fill(exp, g + salt, 0, (size_t)off);
        if (off && memcmp(rd, exp, (size_t)off) != 0)
            fail_msg("task %d (file %d, local %d): data differs", g, tk[g].file, tk[g].lrank);
    }
    if (nfiles == 1) {
        int ntl = 0, mc = 0;
        sion_int64 gskip, sov, *c2, *g2, *bc, *bsz;
        assert_int_equal(sion_get_locations(sid, &ntl, &mc, &gskip, &sov, &c2, &g2, &bc, &bsz), SION_SUCCESS);
        assert_true(sov == meta[0].start_of_varheader && gskip == meta[0].globalskip);
        for (int g = 0; g < G; g++) {
            assert_true(bc[g] == tk[g].nb);
            for (int64_t b = 0; b < tk[g].nb; b++)
                assert_true(bsz[b * G + g] == tk[g].bs[b]);
        }
    }
    assert_int_equal(sion_close(sid), SION_SUCCESS);
    free(cs);
    free(gr);
    /* the read side of an attached task: its own block table, nothing else */
    for (int g = 0; g < G; g++) {
        core_meta *m = &meta[tk[g].file];
        int l = tk[g].lrank;
        char *path = core_member_name(base, tk[g].file);
        core_container *c;
        if (core_attach_task(&c, path, &rm, 0, m->starts[l], m->chunksizes[l], m->globalskip, m->globalranks[l],
                             tk[g].nb, tk[g].bs))
            fail_msg("attach task %d for reading: %s", g, sheaf_last_error());
        free(path);
        uint64_t got = 0, total = 0;
        while (core_eof(c) == 0) {
            assert_int_equal(core_read(c, rd + total, (uint64_t)tu_range(1, 5000), &got), 0);
            total += got;
        }
        assert_true((int64_t)total == tk[g].written);
        tu_fill(exp, g + salt, 0, (size_t)total);
        assert_true(total == 0 || memcmp(rd, exp, (size_t)total) == 0);
        assert_int_equal(core_detach_task(c, NULL, NULL), 0);
    }
    free(rd);
    free(exp);
    free(buf);
    for (int g = 0; g < G; g++)
        free(tk[g].bs);
    for (int k = 0; k < nfiles; k++)
        core_meta_free(&meta[k]);
    st_sets++;
    st_tasks += G;
}

static void test_random_single_file(void **st)
{
    (void)st;
    tu_seed_from_env("partask single", 20261122);
    char *dir = tu_mkdtemp();
    for (int it = 0; it < 25; it++) {
        char base[4200];
        snprintf(base, sizeof base, "%s/par%d.sion", dir, it);
        run_set(base, (int)tu_range(1, 16), 1, it);
    }
    printf("[ STATS    ] %ld sets, %ld tasks, %ld blocks, %ld writes larger than a chunk, %ld empty tasks\n", st_sets,
           st_tasks, st_blocks, st_big, st_empty);
    assert_true(st_big > 0 && st_empty > 0);
    tu_rmtree(dir);
    free(dir);
}

static void test_random_multi_file(void **st)
{
    (void)st;
    tu_seed_from_env("partask multi", 777);
    char *dir = tu_mkdtemp();
    for (int it = 0; it < 8; it++) {
        char base[4200];
        snprintf(base, sizeof base, "%s/multi%d.sion", dir, it);
        run_set(base, (int)tu_range(3, 20), 3, 100 + it);
    }
    tu_rmtree(dir);
    free(dir);
}

/* ---- SIONlib vectors, rewritten through the par path ---------------------- */

/* Rewrite physical files 0..nfiles-1 of `name` (in cwd) from the container
 * src (a SIONlib file opened with core_open_read), block by block, and
 * compare every file with the vector byte for byte. */
static void rewrite_and_compare(core_container *src, const char *name, const char *srcdir)
{
    core_mode wm = mode_of("wb");
    int32_t nf = src->nfiles;
    core_meta meta[4];
    assert_true(nf <= 4);
    for (int32_t k = 0; k < nf; k++) {
        core_meta *sm = &src->files[k].m;
        if (core_par_create_file(name, &wm, sm->ntasks, sm->chunksizes, sm->globalranks, sm->fsblksize, k, nf,
                                 &meta[k]))
            fail_msg("%s: create file %d: %s", name, k, sheaf_last_error());
    }
    int32_t G = src->ntasks;
    core_container **tc = calloc((size_t)G, sizeof *tc);
    int64_t maxb = 0;
    for (int32_t g = 0; g < G; g++) {
        core_task *st = &src->tasks[g];
        core_meta *m = &meta[st->file];
        char *path = core_member_name(name, st->file);
        if (core_attach_task(&tc[g], path, &wm, 1, m->starts[st->lrank], m->chunksizes[st->lrank], m->globalskip,
                             m->globalranks[st->lrank], 0, NULL))
            fail_msg("%s: attach %d: %s", name, g, sheaf_last_error());
        free(path);
        if (st->nblocks > maxb)
            maxb = st->nblocks;
    }
    unsigned char *buf = malloc(1 << 20);
    /* block rows in the order SIONlib's tasks wrote them */
    for (int64_t b = 0; b < maxb; b++) {
        for (int32_t g = 0; g < G; g++) {
            core_task *st = &src->tasks[g];
            if (b >= st->nblocks)
                continue;
            int64_t n = st->bsize[b];
            assert_true(n <= (1 << 20));
            uint64_t got = 0;
            assert_int_equal(core_seek(src, g, b, 0), 0);
            assert_int_equal(core_read(src, buf, (uint64_t)n, &got), 0);
            assert_true((int64_t)got == n);
            if (b > 0)
                assert_int_equal(core_ensure_space(tc[g], tc[g]->tasks[0].chunksize), 0); /* next block */
            if (n)
                assert_int_equal(core_write(tc[g], buf, (uint64_t)n), 0);
        }
    }
    free(buf);
    int64_t *nb = calloc((size_t)G, 8), **bs = calloc((size_t)G, sizeof *bs);
    for (int32_t g = 0; g < G; g++) {
        assert_int_equal(core_detach_task(tc[g], &nb[g], &bs[g]), 0);
        assert_true(nb[g] == src->tasks[g].nblocks);
    }
    for (int32_t k = 0; k < nf; k++) {
        int32_t n = meta[k].ntasks;
        int64_t *bc = calloc((size_t)n, 8), *flat = calloc((size_t)(G * maxb), 8), at = 0;
        for (int32_t l = 0; l < n; l++)
            for (int32_t g = 0; g < G; g++)
                if (src->tasks[g].file == k && src->tasks[g].lrank == l) {
                    bc[l] = nb[g];
                    memcpy(flat + at, bs[g], (size_t)nb[g] * 8);
                    at += nb[g];
                }
        core_meta *m0 = &src->files[0].m;
        int mapped = nf > 1 && k == 0;
        if (core_par_write_tail(name, &meta[k], bc, flat, mapped ? m0->mapping : NULL, mapped ? m0->mapping_size : 0))
            fail_msg("%s: tail of file %d: %s", name, k, sheaf_last_error());
        free(bc);
        free(flat);
        /* compare with the vector */
        char *mine_p = core_member_name(name, k), vp[4200];
        char *vname = core_member_name(name, k);
        snprintf(vp, sizeof vp, "%s/%s", srcdir, vname);
        size_t mlen, vlen;
        unsigned char *mine = tu_read_file(mine_p, &mlen), *vec = tu_read_file(vp, &vlen);
        assert_non_null(mine);
        assert_non_null(vec);
        if (mlen != vlen)
            fail_msg("%s: %zu bytes, SIONlib's has %zu", mine_p, mlen, vlen);
        if (memcmp(mine, vec, vlen) != 0) {
            size_t i = 0;
            while (mine[i] == vec[i])
                i++;
            fail_msg("%s differs from SIONlib's at byte %zu (ours 0x%02x, SIONlib 0x%02x)", mine_p, i, mine[i], vec[i]);
        }
        free(mine);
        free(vec);
        free(mine_p);
        free(vname);
        core_meta_free(&meta[k]);
    }
    for (int32_t g = 0; g < G; g++)
        free(bs[g]);
    free(bs);
    free(nb);
    free(tc);
}

static void vector_identity(const char *name, int nfiles)
{
    char *srcdir = tu_mkdtemp(), *dir = tu_mkdtemp(), cwd[4096], sp[4200];
    assert_non_null(getcwd(cwd, sizeof cwd));
    for (int k = 0; k < nfiles; k++) {
        char *mn = core_member_name(name, k);
        copy_vector(mn, srcdir);
        free(mn);
    }
    snprintf(sp, sizeof sp, "%s/%s", srcdir, name);
    /* the public API sees the vector as SIONlib wrote it */
    int nt = 0, nf = 0, *gr = NULL;
    sion_int32 bs = 0;
    sion_int64 *cs = NULL;
    int sid = sion_open(sp, "rb", &nt, &nf, &cs, &bs, &gr, NULL);
    if (sid < 0)
        fail_msg("%s: %s", sp, sheaf_last_error());
    assert_int_equal(nf, nfiles);
    assert_int_equal(sion_close(sid), SION_SUCCESS);
    free(cs);
    free(gr);
    core_mode rm = mode_of("rb");
    core_container *src;
    if (core_open_read(&src, sp, &rm))
        fail_msg("%s: %s", sp, sheaf_last_error());
    assert_int_equal(chdir(dir), 0);
    rewrite_and_compare(src, name, srcdir);
    assert_int_equal(chdir(cwd), 0);
    assert_int_equal(core_close(src), 0);
    tu_rmtree(dir);
    tu_rmtree(srcdir);
    free(dir);
    free(srcdir);
}

/* par4 was written by SIONlib's parallel close of a single file: identical,
 * including the missing mapping word after META2 and filenumber 0. */
static void test_vector_par4(void **st)
{
    (void)st;
    vector_identity("par4.sion", 1);
}

/* multi6: 3 files, the mapping in file 0 only; all three identical. */
static void test_vector_multi6(void **st)
{
    (void)st;
    vector_identity("multi6.sion", 3);
}

/* Misuse is reported, not crashed on; nothing is left half-done. */
static void test_errors(void **st)
{
    (void)st;
    char *dir = tu_mkdtemp(), base[4200];
    snprintf(base, sizeof base, "%s/e.sion", dir);
    core_mode wm = mode_of("wb");
    core_meta m;
    int64_t cs[2] = {100, 200};
    assert_true(core_par_create_file(base, &wm, 2, cs, NULL, 0, 0, 1, &m) < 0);    /* fsblksize undecided */
    assert_true(core_par_create_file(base, &wm, 2, cs, NULL, 4096, 3, 3, &m) < 0); /* no such file */
    assert_true(core_par_create_file(base, &wm, 0, cs, NULL, 4096, 0, 1, &m) < 0); /* no tasks */
    core_container *c;
    assert_true(core_attach_task(&c, base, &wm, 1, 4096, 4096, 8192, 0, 0, NULL) < 0); /* file does not exist */
    assert_null(c);
    /* a 2-file set: file 0 needs the mapping, file 1 must not get one */
    core_meta m0, m1;
    assert_int_equal(core_par_create_file(base, &wm, 2, cs, NULL, 4096, 0, 2, &m0), 0);
    assert_int_equal(core_par_create_file(base, &wm, 2, cs, NULL, 4096, 1, 2, &m1), 0);
    int64_t bc[2] = {1, 1}, bsz[2] = {0, 0};
    int32_t map[8] = {0, 0, 0, 1, 1, 0, 1, 1};
    assert_true(core_par_write_tail(base, &m0, bc, bsz, NULL, 0) < 0);
    assert_true(core_par_write_tail(base, &m1, bc, bsz, map, 4) < 0);
    int64_t toobig[2] = {4097, 0};
    assert_true(core_par_write_tail(base, &m1, bc, toobig, NULL, 0) < 0);
    assert_int_equal(core_par_write_tail(base, &m1, bc, bsz, NULL, 0), 0);
    assert_int_equal(core_par_write_tail(base, &m0, bc, bsz, map, 4), 0);
    int nt = 0, nf = 0;
    int sid = sion_open(base, "rb", &nt, &nf, NULL, NULL, NULL, NULL);
    if (sid < 0)
        fail_msg("%s", sheaf_last_error());
    assert_int_equal(nt, 4);
    assert_int_equal(nf, 2);
    assert_int_equal(sion_close(sid), SION_SUCCESS);
    /* an attached writer closed with core_close writes no metadata */
    assert_int_equal(core_attach_task(&c, base, &wm, 1, m1.starts[0], m1.chunksizes[0], m1.globalskip, 0, 0, NULL), 0);
    assert_int_equal(core_write(c, "abc", 3), 0);
    assert_int_equal(core_close(c), 0);
    sid = sion_open(base, "rb", &nt, &nf, NULL, NULL, NULL, NULL);
    assert_true(sid >= 0);
    assert_int_equal(sion_close(sid), SION_SUCCESS);
    core_meta_free(&m0);
    core_meta_free(&m1);
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    sheaf_set_error_printing(0);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_single_file),
        cmocka_unit_test(test_random_multi_file),
        cmocka_unit_test(test_vector_par4),
        cmocka_unit_test(test_vector_multi6),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
