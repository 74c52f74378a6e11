/* test_par_coll.c - coalescing I/O through the generic API, every task a
 * thread. The test registers its own gather_and_execute / execute_and_scatter
 * (shared address space: the group exchanges buffer pointers and specs with
 * the layer's gather + bcast, the collector processes its senders' buffers
 * in pieces of at most fsblksize, then the verdicts travel the same way), so
 * the generic contract is exercised without MPI:
 *   roundtrip   2..16 tasks, 1 B - 64 KiB, automatic and fixed groups, merge:
 *               packed layout, bytes read back collectively and serially
 *   std_level   an API without the callbacks: warning, individual I/O, aligned chunks
 *   hostile     a layer that hands the collector a spec outside the group's
 *               chunks (the header, the next group's chunks): refused, the call fails on
 *               the whole group, the header stays intact
 *   reinit      sion_generic_parreinit of a coalescing container, written again
 *   dup         collective calls on a sion_dup copy are refused */
#include "partest.h"
#include <stdatomic.h>
#include <stdint.h>

enum { HOSTILE_NONE, HOSTILE_HEADER, HOSTILE_OTHER_GROUP };
static atomic_int g_hostile;

typedef struct {
    int64_t ptr, off, len;
} slot;

static int x_exchange(int write, void *data, sion_int64 *spec, sion_int64 fsblksize, void *group, int collector,
                      int first, int last, int sid, int (*pw)(const void *, sion_int64 *, int),
                      int (*pr)(void *, sion_int64 *, int))
{
    int n = tc_group_size(group), me = tc_group_rank(group), bad = 0;
    slot mine = {(int64_t)(intptr_t)data, spec[0], spec[1]}, *all = calloc((size_t)n, sizeof *all);
    int *verdict = calloc((size_t)n, sizeof *verdict);
    if (!all || !verdict)
        abort();
    if (tc_gather(&mine, all, group, _SION_INT64, 3, 0) || tc_bcast(all, group, _SION_INT64, 3 * n, 0))
        bad = 1;
    if (me == collector && !bad) {
        int64_t piece = fsblksize > 0 ? fsblksize : 4096;
        for (int s = first; s <= last && s < n; s++) {
            slot *x = &all[s];
            if (atomic_load(&g_hostile) == HOSTILE_HEADER && x->len > 0)
                x->off = 0;
            else if (atomic_load(&g_hostile) == HOSTILE_OTHER_GROUP && x->len > 0)
                x->off += 8192; /* into the other group's chunks (hostile_task: 2 groups of 2 x 4096) */
            char *d = (char *)(intptr_t)x->ptr;
            for (int64_t done = 0; x->len > 0 && done < x->len && !bad; done += piece) {
                sion_int64 part[2] = {x->off + done, x->len - done < piece ? x->len - done : piece};
                bad = write ? pw(d + done, part, sid) != 0 : pr(d + done, part, sid) != 0;
            }
        }
        for (int s = first; s <= last && s < n; s++)
            verdict[s] = bad;
        verdict[me] = bad;
    }
    /* everyone learns the verdicts: gather each task's view, the max wins */
    int *views = calloc((size_t)n * (size_t)n, sizeof *views);
    if (!views || tc_gather(verdict, views, group, _SION_INT32, n, 0))
        abort();
    if (me == 0)
        for (int r = 0; r < n; r++)
            for (int s = 0; s < n; s++)
                verdict[s] |= views[r * n + s];
    tc_bcast(verdict, group, _SION_INT32, n, 0);
    int rc = verdict[me];
    free(views);
    free(all);
    free(verdict);
    return rc;
}

static int x_gather_exec(const void *indata, sion_int64 *spec, int spec_len, sion_int64 fsblksize, void *group,
                         int collector, int first, int last, int sid, int process(const void *, sion_int64 *, int))
{
    return spec_len < 2 ||
           x_exchange(1, (void *)indata, spec, fsblksize, group, collector, first, last, sid, process, NULL);
}

static int x_exec_scatter(void *outdata, sion_int64 *spec, int spec_len, sion_int64 fsblksize, void *group,
                          int collector, int first, int last, int sid, int process(void *, sion_int64 *, int))
{
    return spec_len < 2 || x_exchange(0, outdata, spec, fsblksize, group, collector, first, last, sid, NULL, process);
}

static int full_api(void)
{
    int aid = tc_create_api("threadcomm-full");
    if (aid < 0 || sion_generic_register_gather_and_execute_cb(aid, x_gather_exec) != SION_SUCCESS ||
        sion_generic_register_execute_and_scatter_cb(aid, x_exec_scatter) != SION_SUCCESS) {
        fprintf(stderr, "cannot create the FULL-level test API\n");
        exit(2);
    }
    return aid;
}

typedef struct cfg {
    int aid, collsize, merge;
    int64_t size;
    char fname[4200];
    int expect_packed; /* small sizes: the packed layout must use less than a block per task */
    int coalescing;    /* the API has the callbacks (else: aligned chunks, individual I/O) */
    int fsblk;         /* 0: 4096 */
} cfg;

static int64_t tsize(const cfg *c, int t) { return c->size + t % 3; }

static int open_w(cfg *c, tc_task *t, const char *extra, sion_int64 chunk)
{
    char mode[128];
    snprintf(mode, sizeof mode, "bw,collective%s%s", c->merge ? ",cmerge" : "", extra);
    if (c->collsize > 0) {
        size_t l = strlen(mode);
        snprintf(mode + l, sizeof mode - l, ",collsize=%d", c->collsize);
    }
    sion_int32 fsblk = c->fsblk > 0 ? c->fsblk : 4096;
    int fn = 0, nf = 1, lr = t->grank, ls = t->gsize;
    FILE *fp = NULL;
    return sion_generic_paropen(c->aid, c->fname, mode, &chunk, &fsblk, t->world, t->grank, t->gsize, &fn, &nf, &lr,
                                &ls, &fp, NULL);
}

static int open_r(cfg *c, tc_task *t, const char *mode)
{
    sion_int64 chunk = 0;
    sion_int32 fsblk = 0;
    int fn = 0, nf = 0, lr = 0, ls = 0;
    FILE *fp = NULL;
    return sion_generic_paropen(c->aid, c->fname, mode, &chunk, &fsblk, t->world, t->grank, t->gsize, &fn, &nf, &lr,
                                &ls, &fp, NULL);
}

/* Plain: three calls of s_t (chunk 2 s_t), one of 3 s_t (more than a chunk),
 * one individual sion_fwrite of s_t / 2 + 1. Merge: two calls of s_t. */
static int calls_of(const cfg *c, int64_t st, int64_t *calls)
{
    if (c->merge) {
        calls[0] = calls[1] = st;
        return 2;
    }
    calls[0] = calls[1] = calls[2] = st;
    calls[3] = 3 * st;
    calls[4] = st / 2 + 1;
    return 5;
}

static void rt_task(tc_task *t)
{
    cfg *c = t->arg;
    pt_rank = t->grank;
    int64_t st = tsize(c, t->grank), calls[5], off = 0;
    int n = calls_of(c, st, calls);
    unsigned char *buf = malloc((size_t)(8 * st)), *got = calloc(1, (size_t)(8 * st));
    pt_fill(buf, 7, t->grank, 0, (size_t)(8 * st));
    int sid = open_w(c, t, "", 2 * st);
    if (!CHECK(sid >= 0, "write open: %s", sheaf_last_error()))
        goto out;
    for (int i = 0; i < n; i++) {
        size_t w = i == 4 ? sion_fwrite(buf + off, 1, (size_t)calls[i], sid)
                          : sion_coll_fwrite(buf + off, 1, (size_t)calls[i], sid);
        CHECK(w == (size_t)calls[i], "write %d: %zu of %lld: %s", i, w, (long long)calls[i], sheaf_last_error());
        off += calls[i];
    }
    CHECK(sion_generic_parclose(sid) == SION_SUCCESS, "close: %s", sheaf_last_error());
    if (c->merge)
        goto out; /* merged streams are checked serially */
    sid = open_r(c, t, c->collsize == 2 ? "br,collective,collsize=2" : "br,collective");
    if (!CHECK(sid >= 0, "read open: %s", sheaf_last_error()))
        goto out;
    off = 0;
    for (int i = 0; i < n; i++) {
        size_t r = sion_coll_fread(got + off, 1, (size_t)calls[i], sid);
        CHECK(r == (size_t)calls[i], "coll read %d: %zu of %lld: %s", i, r, (long long)calls[i], sheaf_last_error());
        off += calls[i];
    }
    CHECK(pt_mismatch(got, 7, t->grank, 0, (size_t)off) < 0, "collective read: bytes differ at %lld",
          (long long)pt_mismatch(got, 7, t->grank, 0, (size_t)off));
    CHECK(sion_feof(sid) == 1, "more data than written");
    CHECK(sion_generic_parclose(sid) == SION_SUCCESS, "read close: %s", sheaf_last_error());
out:
    free(buf);
    free(got);
}

/* SIONlib 1.7's grouping for collsize cs over the chunks 2 s_t requested
 * here (independent of core_coll_layout): ceil(P / cs) collectors, at most
 * ceil(sum / 4096); capacity floor(sum / collectors) rounded up to 4096; a
 * task joins the group while its chunks fit. last[t]: end of t's group. */
static void sionlib_groups(const cfg *c, int P, int cs, int *first)
{
    int64_t sum = 0;
    for (int t = 0; t < P; t++)
        sum += 2 * tsize(c, t);
    int64_t n = (P + cs - 1) / cs, maxn = (sum + 4095) / 4096;
    if (n > maxn)
        n = maxn;
    if (n < 1)
        n = 1;
    int64_t cap = (sum / n + 4095) / 4096 * 4096, cur = 0;
    for (int t = 0, f = 0; t < P; t++) {
        if (t == 0 || cur + 2 * tsize(c, t) > cap) {
            f = t;
            cur = 0;
        }
        cur += 2 * tsize(c, t);
        first[t] = f;
    }
}

/* serial check: every task's stream, and the layout */
static void serial_check(cfg *c, int P)
{
    int ntasks = 0, nfiles = 0, *gr = NULL;
    sion_int64 *chunks = NULL;
    sion_int32 fsblk = 0;
    FILE *fp = NULL;
    int sid = sion_open(c->fname, "rb", &ntasks, &nfiles, &chunks, &fsblk, &gr, &fp);
    if (!CHECK(sid >= 0 && ntasks == P, "serial open: %s", sheaf_last_error()))
        return;
    int64_t sum = 0, aligned = 0;
    for (int t = 0; t < P; t++) {
        sum += chunks[t];
        aligned += (2 * tsize(c, t) + 4095) / 4096 * 4096;
    }
    CHECK(sum % 4096 == 0, "chunks add up to %lld, not block-aligned", (long long)sum);
    if (c->coalescing && c->expect_packed && !c->merge)
        CHECK(sum < aligned, "chunks not packed: %lld bytes, one block per task would be %lld", (long long)sum,
              (long long)aligned);
    if (!c->coalescing)
        for (int t = 0; t < P; t++)
            CHECK(chunks[t] % 4096 == 0, "task %d: chunk %lld not block-aligned without coalescing", t,
                  (long long)chunks[t]);
    int first[64];
    sionlib_groups(c, P, c->collsize > 0 ? c->collsize : P, first);
    for (int t = 0; t < P; t++) {
        int64_t want = 0, calls[5];
        unsigned char *exp = NULL;
        if (!c->merge) {
            int n = calls_of(c, tsize(c, t), calls);
            for (int i = 0; i < n; i++)
                want += calls[i];
            exp = malloc((size_t)want + 1);
            pt_fill(exp, 7, t, 0, (size_t)want);
        } else if (first[t] == t) { /* collector: each call's data of the group in task order */
            int last = t + 1;
            while (last < P && first[last] == t)
                last++;
            for (int u = t; u < last; u++)
                want += 2 * tsize(c, u);
            exp = malloc((size_t)want + 1);
            unsigned char *p = exp;
            for (int call = 0; call < 2; call++)
                for (int u = t; u < last; u++) {
                    pt_fill(p, 7, u, call * tsize(c, u), (size_t)tsize(c, u));
                    p += tsize(c, u);
                }
        } else {
            exp = malloc(1);
        }
        unsigned char *got = malloc((size_t)want + 1);
        CHECK(sion_seek(sid, t, SION_ABSOLUTE_POS, 0) == SION_SUCCESS, "seek task %d", t);
        size_t r = want ? sion_fread(got, 1, (size_t)want, sid) : 0;
        int64_t at = -1;
        for (int64_t k = 0; k < (int64_t)r && at < 0; k++)
            if (got[k] != exp[k])
                at = k;
        CHECK(r == (size_t)want && at < 0, "serial: task %d: %zu of %lld bytes, first difference at %lld", t, r,
              (long long)want, (long long)at);
        CHECK(sion_feof(sid) == 1, "serial: task %d holds more than %lld bytes", t, (long long)want);
        free(exp);
        free(got);
    }
    sion_close(sid);
    free(chunks);
    free(gr);
}

static void test_roundtrip(void)
{
    const char *dir = pt_mkdtemp();
    int aid = full_api();
    int Ps[] = {2, 3, 7, 16};
    int64_t sizes[] = {1, 256, 4095, 65536};
    int csz[] = {0, 2, 5};
    for (int pi = 0; pi < 4; pi++)
        for (int si = 0; si < 4; si++)
            for (int ci = 0; ci < 3; ci++)
                for (int merge = 0; merge < 2; merge++) {
                    if (merge && ci == 0)
                        continue; /* merge needs known groups for the serial check */
                    cfg c = {aid, csz[ci], merge, sizes[si], "", sizes[si] < 2048, 1, 0};
                    snprintf(c.fname, sizeof c.fname, "%s/rt_%d_%lld_%d_%d.sion", dir, Ps[pi], (long long)sizes[si],
                             csz[ci], merge);
                    tc_run(Ps[pi], rt_task, &c);
                    serial_check(&c, Ps[pi]);
                }
    sion_generic_free_api(aid);
    pt_rmtree(dir);
}

static void test_std_level(void)
{
    const char *dir = pt_mkdtemp();
    int aid = tc_create_api("threadcomm-std");
    cfg c = {aid, 2, 0, 300, "", 0, 0, 0};
    snprintf(c.fname, sizeof c.fname, "%s/std.sion", dir);
    tc_run(4, rt_task, &c);
    serial_check(&c, 4);
    sion_generic_free_api(aid);
    pt_rmtree(dir);
}

static void hostile_task(tc_task *t)
{
    cfg *c = t->arg;
    pt_rank = t->grank;
    unsigned char buf[512];
    memset(buf, 0xEE, sizeof buf);
    /* chunks of 4096 with collsize 2: 2 collectors, capacity 8192, groups {0,1} {2,3} */
    int sid = open_w(c, t, "", 4096);
    if (!CHECK(sid >= 0, "open: %s", sheaf_last_error()))
        return;
    size_t w = sion_coll_fwrite(buf, 1, sizeof buf, sid);
    int group_of_one = t->gsize == 1;
    CHECK(w == 0 || group_of_one, "a collective write with a hostile spec returned %zu", w);
    if (w == 0)
        CHECK(strstr(sheaf_last_error(), "collector") != NULL, "message: %s", sheaf_last_error());
    CHECK(sion_generic_parclose(sid) == SION_SUCCESS, "close: %s", sheaf_last_error());
}

static void test_hostile(void)
{
    const char *dir = pt_mkdtemp();
    int aid = full_api();
    for (int h = HOSTILE_HEADER; h <= HOSTILE_OTHER_GROUP; h++) {
        atomic_store(&g_hostile, h);
        cfg c = {aid, 2, 0, 512, "", 1, 1, 0};
        snprintf(c.fname, sizeof c.fname, "%s/hostile%d.sion", dir, h);
        tc_run(4, hostile_task, &c);
        atomic_store(&g_hostile, HOSTILE_NONE);
        /* the header is intact: the container opens and has its 4 tasks; nothing beyond the data was written */
        int ntasks = 0, nfiles = 0, *gr = NULL;
        sion_int64 *chunks = NULL;
        sion_int32 fsblk = 0;
        FILE *fp = NULL;
        int sid = sion_open(c.fname, "rb", &ntasks, &nfiles, &chunks, &fsblk, &gr, &fp);
        CHECK(sid >= 0 && ntasks == 4, "hostile %d: container unreadable: %s", h, sheaf_last_error());
        if (sid >= 0)
            sion_close(sid);
        free(chunks);
        free(gr);
        CHECK(pt_fsize(c.fname) < (1LL << 30), "hostile %d: file grew to %lld bytes", h, pt_fsize(c.fname));
    }
    sion_generic_free_api(aid);
    pt_rmtree(dir);
}

static void reinit_task(tc_task *t)
{
    cfg *c = t->arg;
    pt_rank = t->grank;
    int64_t st = tsize(c, t->grank);
    unsigned char *buf = malloc((size_t)(8 * st));
    pt_fill(buf, 7, t->grank, 0, (size_t)(8 * st));
    int sid = open_w(c, t, "", 10);
    if (!CHECK(sid >= 0, "open: %s", sheaf_last_error()))
        return;
    CHECK(sion_coll_fwrite(buf, 1, 5, sid) == 5, "write before reinit: %s", sheaf_last_error());
    CHECK(sion_generic_parreinit(sid, 2 * st) == SION_SUCCESS, "reinit: %s", sheaf_last_error());
    int64_t calls[5], off = 0;
    int n = calls_of(c, st, calls);
    for (int i = 0; i < n; i++) {
        size_t w = i == 4 ? sion_fwrite(buf + off, 1, (size_t)calls[i], sid)
                          : sion_coll_fwrite(buf + off, 1, (size_t)calls[i], sid);
        CHECK(w == (size_t)calls[i], "write %d after reinit: %s", i, sheaf_last_error());
        off += calls[i];
    }
    CHECK(sion_generic_parclose(sid) == SION_SUCCESS, "close: %s", sheaf_last_error());
    free(buf);
}

static void test_reinit(void)
{
    const char *dir = pt_mkdtemp();
    int aid = full_api();
    cfg c = {aid, 3, 0, 200, "", 1, 1, 0};
    snprintf(c.fname, sizeof c.fname, "%s/reinit.sion", dir);
    tc_run(5, reinit_task, &c);
    serial_check(&c, 5);
    sion_generic_free_api(aid);
    pt_rmtree(dir);
}

static void dup_task(tc_task *t)
{
    cfg *c = t->arg;
    pt_rank = t->grank;
    unsigned char b[16] = {0};
    int sid = open_w(c, t, "", 64);
    if (sid >= 0) {
        sion_coll_fwrite(b, 1, sizeof b, sid);
        sion_generic_parclose(sid);
    }
    sid = open_r(c, t, "br,collective");
    if (!CHECK(sid >= 0, "read open: %s", sheaf_last_error()))
        return;
    int d = sion_dup(sid, SION_DUP_ALL, 0, 0);
    CHECK(d >= 0, "dup: %s", sheaf_last_error());
    if (d >= 0) {
        CHECK(sion_coll_fread(b, 1, 4, d) == 0 && strstr(sheaf_last_error(), "sion_dup"), "coll read on a copy: %s",
              sheaf_last_error());
        sion_dedup(d);
    }
    CHECK(sion_coll_fread(b, 1, sizeof b, sid) == sizeof b, "coll read on the original: %s", sheaf_last_error());
    CHECK(sion_generic_parclose(sid) == SION_SUCCESS, "close: %s", sheaf_last_error());
}

static void test_dup(void)
{
    const char *dir = pt_mkdtemp();
    int aid = full_api();
    cfg c = {aid, 0, 0, 16, "", 1, 1, 0};
    snprintf(c.fname, sizeof c.fname, "%s/dup.sion", dir);
    tc_run(3, dup_task, &c);
    sion_generic_free_api(aid);
    pt_rmtree(dir);
}

/* SIONlib's test_ompimrg1 / test_ompicol2 shape over threadcomm: 8 tasks
 * as 2 "processes" of 4 "threads" (capability: task % 4 == 0 collects, the
 * others only send, as SIONlib's OpenMP/hybrid layers say), chunk 100,
 * fsblksize 16, collsize 2. SIONlib groups whole processes (a task that can
 * only send always joins): 2 groups of 4, no padding since 400 % 16 == 0
 * (without capabilities: 4 groups of 2 padded to 208). Merge mode: the
 * collector's stream gets each sender's data as one piece (the layer hands
 * it over in pieces of fsblksize), so the blocks are SIONlib's
 * [400, 400, 380, 300] for coll 100, coll 50, coll 100, own 80, coll 100. */
static int cap_by_four(void *group)
{
    return tc_group_rank(group) % 4 == 0 ? SION_CAPABILITY_FULL : SION_CAPABILITY_ONLY_SENDER;
}

static void hyb_task(tc_task *t)
{
    cfg *c = t->arg;
    pt_rank = t->grank;
    unsigned char b[100];
    int sid = open_w(c, t, "", 100);
    if (!CHECK(sid >= 0, "open: %s", sheaf_last_error()))
        return;
    size_t calls[5] = {100, 50, 100, 80, 100};
    for (int i = 0; i < 5; i++) {
        memset(b, 'A' + t->grank * 3 + i, sizeof b);
        size_t w = i == 3 ? sion_fwrite(b, 1, calls[i], sid) : sion_coll_fwrite(b, 1, calls[i], sid);
        CHECK(w == calls[i], "call %d: %zu of %zu: %s", i, w, calls[i], sheaf_last_error());
    }
    CHECK(sion_generic_parclose(sid) == SION_SUCCESS, "close: %s", sheaf_last_error());
}

static void test_capability_merge(void)
{
    const char *dir = pt_mkdtemp();
    int aid = full_api();
    CHECK(sion_generic_register_get_capability_cb(aid, cap_by_four) == SION_SUCCESS, "register capability");
    for (int merge = 0; merge < 2; merge++) {
        cfg c = {aid, 2, merge, 100, "", 0, 1, 16};
        snprintf(c.fname, sizeof c.fname, "%s/hyb%d.sion", dir, merge);
        tc_run(8, hyb_task, &c);
        int ntasks = 0, nfiles = 0, *gr = NULL;
        sion_int64 *chunks = NULL;
        sion_int32 fsblk = 0;
        FILE *fp = NULL;
        int sid = sion_open(c.fname, "rb", &ntasks, &nfiles, &chunks, &fsblk, &gr, &fp);
        if (!CHECK(sid >= 0 && ntasks == 8, "serial open: %s", sheaf_last_error()))
            continue;
        int nt = 0, maxb = 0;
        sion_int64 gskip = 0, vh = 0, *cs = NULL, *grs = NULL, *bc = NULL, *bs = NULL;
        CHECK(sion_get_locations(sid, &nt, &maxb, &gskip, &vh, &cs, &grs, &bc, &bs) == SION_SUCCESS, "locations");
        for (int t = 0; t < 8 && cs; t++) {
            int coll = t % 4 == 0;
            if (!merge) { /* groups of 4 tasks of 100 B: nothing to pad */
                CHECK(cs[t] == 100, "plain: task %d chunk %lld (want 100: groups are whole processes)", t,
                      (long long)cs[t]);
            } else if (coll) {
                CHECK(cs[t] == 400 && bc[t] == 4, "merge: collector %d chunk %lld, %lld blocks", t, (long long)cs[t],
                      (long long)bc[t]);
                sion_int64 want[4] = {400, 400, 380, 300};
                for (int k = 0; k < 4 && bc[t] == 4; k++)
                    CHECK(bs[8 * k + t] == want[k], "merge: collector %d block %d holds %lld, SIONlib %lld", t, k,
                          (long long)bs[8 * k + t], (long long)want[k]);
            } else {
                CHECK(cs[t] == 112 && bc[t] == 1 && bs[t] == 80, "merge: sender %d chunk %lld, %lld blocks, %lld B", t,
                      (long long)cs[t], (long long)bc[t], (long long)bs[t]);
            }
        }
        sion_close(sid);
        free(chunks);
        free(gr);
    }
    sion_generic_free_api(aid);
    pt_rmtree(dir);
}

int main(int argc, char **argv)
{
    static const pt_test tests[] = {{"roundtrip_2_to_16_tasks", test_roundtrip},
                                    {"std_level_falls_back", test_std_level},
                                    {"hostile_spec_refused", test_hostile},
                                    {"reinit", test_reinit},
                                    {"dup_refused", test_dup},
                                    {"capability_and_merge_blocks_as_sionlib", test_capability_merge}};
    return pt_main(tests, 6, argc, argv);
}
