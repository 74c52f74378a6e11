/* dache_test.c - tests of DACHe (sheaf_cache=dache, src/mpiio/dache*.c).
 *
 *   coherence DIR PROGRESS LOCK SLOTS [broken [EPOCHS] | EPOCHS (default 40)]
 *       P ranks run a global schedule every rank derives from one seed:
 *       epochs of random small independent reads and writes (overlapping
 *       earlier epochs' bytes, straddling 64-byte pages, byte-disjoint from
 *       other ranks' accesses of the same epoch, which may share pages),
 *       every fifth epoch a collective strided write (a vector file view) and
 *       a collective read. Tiny cache (SLOTS slots of 64 B), under the
 *       non-coherent client-cache fixture (sheaf_backend=noncoherent, 256-byte
 *       fixture pages: a load that skipped the invalidation, or a write-back
 *       that stayed in the fixture, would read stale bytes). Every read is
 *       compared with a model (the full schedule replayed on every rank): 0
 *       mismatches. After every epoch (a barrier) mio_dache_audit: every page
 *       at most one owner, the entry names the slot holding it, no pins
 *       left; every seventh epoch sheaf_file_sync. After close the file
 *       equals the model. Remote hits, misses and evictions all > 0.
 *       PROGRESS: auto | shared | library | async (async: MPI_THREAD_MULTIPLE,
 *       MPICH with MPIR_CVAR_ASYNC_PROGRESS=1; skipped when not provided).
 *       broken: run with SHEAF_DACHE_BREAK=1 (lookups always miss: the
 *       single-copy logic off); passes only if mismatches or audit
 *       violations are found - the test can see the failure it guards.
 *       direct=N: sheaf_dache_direct_size=N - requests of N bytes or more
 *       bypass the page copies (under their pages' locks), the others go
 *       through the pages: the same model checks, and direct pieces > 0.
 *   atomic DIR   sheaf_dache_atomic=true: every rank writes the same
 *       multi-page range (contiguous, 5 pages, unaligned) at once, 30 rounds;
 *       the range must come entirely from one writer. (Atomic mode does not
 *       insert pages, so this exercises the locked direct path.)
 *   errors DIR   bad hints (0 slots, page size not a power of two, too many
 *       pages, unknown lock/progress) and an access beyond the maximum size:
 *       SHEAF_MPIIO_EARG on every rank with the hint named, no crash. */
#include <stdint.h>
#include "../../src/mpiio/dache.h"
#include "common.h"

#define PAGE 64
#define FSIZE 3000
#define EPOCHS 40
#define KOPS 8

static int me, np;
static long g_direct; /* sheaf_dache_direct_size of the coherence run (0: the default, never reached) */

static uint64_t sm(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static unsigned char pat(int e, int r, int k, int64_t i)
{
    return (unsigned char)(((uint64_t)e * 131 + (uint64_t)r * 31 + (uint64_t)k * 7) * 2654435761u + (uint64_t)i * 13 +
                           1);
}

typedef struct op {
    int64_t lo, len;
    int w;
} op;

/* the epoch's ops, ops[k*np + r]: byte-disjoint across ranks where one writes */
static void gen_epoch(uint64_t *seed, op *ops)
{
    for (int k = 0; k < KOPS; k++)
        for (int r = 0; r < np; r++) {
            op *o = &ops[k * np + r];
            o->len = 0;
            for (int t = 0; t < 20; t++) {
                int64_t len = 1 + (int64_t)(sm(seed) % 150), lo = (int64_t)(sm(seed) % FSIZE);
                int w = (int)(sm(seed) % 2);
                if (lo + len > FSIZE)
                    len = FSIZE - lo;
                int clash = 0;
                for (int j = 0; j < k * np + r && !clash; j++) {
                    const op *p = &ops[j];
                    if (p->len == 0 || j % np == r)
                        continue;
                    if (lo < p->lo + p->len && p->lo < lo + len && (w || p->w))
                        clash = 1;
                }
                if (!clash) {
                    o->lo = lo;
                    o->len = len;
                    o->w = w;
                    break;
                }
            }
        }
}

static int64_t g_bad, g_ioerr;

static void indep_epoch(sheaf_file fh, int e, const op *ops, unsigned char *model, int broken)
{
    unsigned char *mine = malloc(FSIZE), buf[160];
    memcpy(mine, model, FSIZE);
    for (int k = 0; k < KOPS; k++) {
        const op *o = &ops[k * np + me];
        if (o->len == 0)
            continue;
        if (o->w) {
            for (int64_t i = 0; i < o->len; i++)
                buf[i] = pat(e, me, k, o->lo + i);
            memcpy(mine + o->lo, buf, (size_t)o->len);
            int rc = sheaf_file_write_at(fh, o->lo, buf, (int)o->len, MPI_BYTE);
            if (rc) {
                g_ioerr++;
                if (!broken)
                    CHECK(0, "write_at: %s", sheaf_file_errmsg(fh));
            }
        } else {
            memset(buf, 0xEE, sizeof buf);
            int rc = sheaf_file_read_at(fh, o->lo, buf, (int)o->len, MPI_BYTE);
            if (rc) {
                g_ioerr++;
                if (!broken)
                    CHECK(0, "read_at: %s", sheaf_file_errmsg(fh));
            }
            for (int64_t i = 0; i < o->len; i++)
                if (buf[i] != mine[o->lo + i]) {
                    if (g_bad++ < 5 && !broken)
                        fprintf(stderr, "[rank %d] epoch %d op %d: byte %lld is %d, model %d\n", me, e, k,
                                (long long)(o->lo + i), buf[i], mine[o->lo + i]);
                }
        }
    }
    for (int k = 0; k < KOPS; k++) /* every rank's writes, into the model */
        for (int r = 0; r < np; r++) {
            const op *o = &ops[k * np + r];
            if (o->w)
                for (int64_t i = 0; i < o->len; i++)
                    model[o->lo + i] = pat(e, r, k, o->lo + i);
        }
    free(mine);
}

/* collective strided write (element esz, rank-interleaved from base), then a collective read */
static void coll_epoch(sheaf_file fh, int e, uint64_t *seed, unsigned char *model, int broken)
{
    int esz = 3 + (int)(sm(seed) % 40);
    int64_t base = (int64_t)(sm(seed) % 1000);
    int nel = (int)((FSIZE - base) / ((int64_t)esz * np));
    if (nel > 12)
        nel = 12;
    int64_t rlo[64];
    for (int r = 0; r < np; r++)
        rlo[r] = (int64_t)(sm(seed) % (FSIZE - 150));
    MPI_Datatype vec, ft;
    MPI_Type_vector(1, esz, esz * np, MPI_BYTE, &vec);
    MPI_Type_create_resized(vec, 0, (MPI_Aint)esz * np, &ft);
    MPI_Type_commit(&ft);
    unsigned char *buf = malloc((size_t)(nel * esz) + 1), rb[150];
    for (int j = 0; j < nel * esz; j++)
        buf[j] = pat(e, me, 99, j);
    OK(sheaf_file_set_view(fh, base + (int64_t)me * esz, MPI_BYTE, ft), fh);
    int rc = sheaf_file_write_at_all(fh, 0, buf, nel * esz, MPI_BYTE);
    if (rc) {
        g_ioerr++;
        if (!broken)
            CHECK(0, "write_at_all: %s", sheaf_file_errmsg(fh));
    }
    OK(sheaf_file_set_view(fh, 0, MPI_BYTE, MPI_BYTE), fh);
    for (int r = 0; r < np; r++)
        for (int k = 0; k < nel; k++)
            for (int i = 0; i < esz; i++)
                model[base + ((int64_t)k * np + r) * esz + i] = pat(e, r, 99, (int64_t)k * esz + i);
    memset(rb, 0xEE, sizeof rb);
    rc = sheaf_file_read_at_all(fh, rlo[me], rb, 150, MPI_BYTE);
    if (rc) {
        g_ioerr++;
        if (!broken)
            CHECK(0, "read_at_all: %s", sheaf_file_errmsg(fh));
    }
    for (int i = 0; i < 150; i++)
        if (rb[i] != model[rlo[me] + i] && g_bad++ < 5 && !broken)
            fprintf(stderr, "[rank %d] epoch %d read_at_all: byte %lld is %d, model %d\n", me, e,
                    (long long)(rlo[me] + i), rb[i], model[rlo[me] + i]);
    free(buf);
    MPI_Type_free(&vec);
    MPI_Type_free(&ft);
}

static int test_coherence(const char *dir, const char *progress, const char *lock, int slots, int broken, int epochs)
{
    char path[512], hints[512];
    snprintf(path, sizeof path, "%s/dache-coh-%s-%s-%d-%d", dir, progress, lock, np, broken);
    if (me == 0)
        remove(path);
    MPI_Barrier(MPI_COMM_WORLD);
    snprintf(hints, sizeof hints,
             "sheaf_cache=dache,sheaf_backend=noncoherent,sheaf_fixture_page=256,"
             "sheaf_dache_page_size=%d,sheaf_dache_slots=%d,sheaf_dache_max_size=8192,sheaf_dache_progress=%s,"
             "sheaf_dache_lock=%s",
             PAGE, slots, progress, lock);
    if (g_direct > 0)
        snprintf(hints + strlen(hints), sizeof hints - strlen(hints), ",sheaf_dache_direct_size=%ld", g_direct);
    MPI_Info info = mkinfo(hints);
    sheaf_file fh = NULL;
    int rc = sheaf_file_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh);
    MPI_Info_free(&info);
    CHECK(rc == 0, "open: %s", sheaf_mpiio_open_errmsg());
    if (rc)
        return finish_test("coherence");
    unsigned char *model = calloc(FSIZE, 1);
    op ops[KOPS * 64];
    uint64_t seed = 0x5eed0018u;
    int64_t viol = 0;
    for (int e = 0; e < epochs; e++) {
        if (e % 5 == 4)
            coll_epoch(fh, e, &seed, model, broken);
        else {
            gen_epoch(&seed, ops);
            indep_epoch(fh, e, ops, model, broken);
        }
        MPI_Barrier(MPI_COMM_WORLD); /* quiescent point */
        int64_t v = mio_dache_audit(fh);
        CHECK(v >= 0, "audit: %s", sheaf_file_errmsg(fh));
        if (v > 0)
            viol += v;
        if (e % 7 == 6) {
            rc = sheaf_file_sync(fh);
            if (!broken)
                CHECK(rc == 0, "sync: %s", sheaf_file_errmsg(fh));
        }
    }
    mio_dache_stats ds;
    OK(mio_dache_stats_get(fh, &ds), fh);
    uint64_t mine[8] = {ds.remote_hits,  ds.misses,  ds.evictions,  ds.local_hits,
                        ds.home_inserts, ds.adopted, ds.zero_fills, ds.direct},
             sum[8];
    MPI_Allreduce(mine, sum, 8, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    rc = sheaf_file_close(&fh);
    if (!broken)
        CHECK(rc == 0, "close: %s", sheaf_mpiio_open_errmsg());
    int64_t bad = 0, fbad = 0;
    MPI_Allreduce(&g_bad, &bad, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0) {
        long n = 0;
        unsigned char *f = slurp(path, &n);
        int64_t last = 0; /* the model's extent: the end of the last nonzero byte written */
        for (int64_t i = 0; i < FSIZE; i++)
            if (model[i])
                last = i + 1;
        if (!f || n < last)
            fbad = last;
        for (int64_t i = 0; f && i < n && i < FSIZE; i++)
            fbad += f[i] != model[i];
        free(f);
        printf(
            "coherence %s/%s np=%d slots=%d%s: read mismatches %lld, audit violations %lld, file bytes wrong %lld, "
            "remote hits %llu, local hits %llu, misses %llu, evictions %llu, inserts at the home %llu, adopted %llu, "
            "zero-filled %llu, direct pieces %llu\n",
            progress, lock, np, slots, broken ? " (single-copy logic disabled)" : "", (long long)bad, (long long)viol,
            (long long)fbad, (unsigned long long)sum[0], (unsigned long long)sum[3], (unsigned long long)sum[1],
            (unsigned long long)sum[2], (unsigned long long)sum[4], (unsigned long long)sum[5],
            (unsigned long long)sum[6], (unsigned long long)sum[7]);
    }
    MPI_Bcast(&fbad, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
    if (broken) {
        CHECK(bad + viol + fbad > 0, "the single-copy logic was off but nothing went wrong");
    } else {
        CHECK(bad == 0, "%lld read mismatches", (long long)bad);
        CHECK(viol == 0, "%lld audit violations", (long long)viol);
        CHECK(fbad == 0, "%lld file bytes differ from the model", (long long)fbad);
        CHECK(sum[0] > 0 && sum[1] > 0 && sum[2] > 0,
              "remote hits %llu, misses %llu, evictions %llu: not all exercised", (unsigned long long)sum[0],
              (unsigned long long)sum[1], (unsigned long long)sum[2]);
        if (g_direct > 0) /* the mixed run: large requests took the direct path, the small ones the pages */
            CHECK(sum[7] > 0, "direct=%ld: no page piece went the direct path", g_direct);
        else
            CHECK(sum[7] == 0, "%llu direct pieces without the direct path asked for", (unsigned long long)sum[7]);
    }
    free(model);
    if (me == 0)
        remove(path);
    return finish_test("coherence");
}

static int test_atomic(const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/dache-atomic-%d", dir, np);
    MPI_Info info = mkinfo("sheaf_cache=dache,sheaf_backend=noncoherent,sheaf_fixture_page=256,"
                           "sheaf_dache_page_size=64,sheaf_dache_slots=2,sheaf_dache_max_size=4096,"
                           "sheaf_dache_atomic=true");
    sheaf_file fh = NULL;
    int rc = sheaf_file_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh);
    MPI_Info_free(&info);
    CHECK(rc == 0, "open: %s", sheaf_mpiio_open_errmsg());
    if (rc)
        return finish_test("atomic");
    unsigned char buf[400], rb[400];
    int64_t torn = 0;
    for (int round = 0; round < 30; round++) {
        int64_t lo = 10 + round * 37 % 300, len = 250; /* 4-5 pages, not aligned */
        memset(buf, (me + 1 + round * np) & 0xff, sizeof buf);
        /* every rank writes the whole range with its own byte, all at once */
        OK(sheaf_file_write_at(fh, lo, buf, (int)len, MPI_BYTE), fh);
        MPI_Barrier(MPI_COMM_WORLD);
        OK(sheaf_file_read_at(fh, lo, rb, (int)len, MPI_BYTE), fh);
        for (int64_t i = 1; i < len; i++)
            torn += rb[i] != rb[0];
        int from = (int)rb[0] - 1 - round * np;
        CHECK(from >= 0 && from < np, "round %d: byte from no writer (%d)", round, rb[0]);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    int64_t all = 0;
    MPI_Allreduce(&torn, &all, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0)
        printf("atomic: %lld bytes from a second writer in 30 rounds of %d concurrent writers\n", (long long)all, np);
    CHECK(all == 0, "atomic mode: %lld torn bytes", (long long)all);
    OK(sheaf_file_close(&fh), fh);
    if (me == 0)
        remove(path);
    return finish_test("atomic");
}

static void expect_bad(const char *dir, const char *hints, const char *word)
{
    char path[512];
    snprintf(path, sizeof path, "%s/dache-err", dir);
    MPI_Info info = mkinfo(hints);
    sheaf_file fh = NULL;
    int rc = sheaf_file_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh);
    MPI_Info_free(&info);
    CHECK(rc == SHEAF_MPIIO_EARG && fh == NULL, "open with %s -> %d (want EARG)", hints, rc);
    CHECK(strstr(sheaf_mpiio_open_errmsg(), word) != NULL, "message '%s' does not name %s", sheaf_mpiio_open_errmsg(),
          word);
    if (fh)
        sheaf_file_close(&fh);
}

static int test_errors(const char *dir)
{
    expect_bad(dir, "sheaf_cache=dache,sheaf_dache_slots=0", "sheaf_dache_slots");
    expect_bad(dir, "sheaf_cache=dache,sheaf_dache_slots=-3", "sheaf_dache_slots");
    expect_bad(dir, "sheaf_cache=dache,sheaf_dache_page_size=100", "sheaf_dache_page_size");
    expect_bad(dir, "sheaf_cache=dache,sheaf_dache_page_size=0", "sheaf_dache_page_size");
    expect_bad(dir, "sheaf_cache=dache,sheaf_dache_page_size=4x", "sheaf_dache_page_size");
    expect_bad(dir, "sheaf_cache=dache,sheaf_dache_page_size=64,sheaf_dache_max_size=1G", "sheaf_dache_max_size");
    expect_bad(dir, "sheaf_cache=dache,sheaf_dache_lock=ticket", "sheaf_dache_lock");
    expect_bad(dir, "sheaf_cache=dache,sheaf_dache_progress=magic", "sheaf_dache_progress");
    expect_bad(dir, "sheaf_cache=dache,sheaf_dache_atomic=yes", "sheaf_dache_atomic");
    expect_bad(dir, "sheaf_cache=cache", "sheaf_cache");
    /* a good handle: beyond the maximum size is an error, not a crash; 1 slot works */
    char path[512];
    snprintf(path, sizeof path, "%s/dache-err", dir);
    MPI_Info info = mkinfo("sheaf_cache=dache,sheaf_dache_page_size=64,sheaf_dache_slots=1,sheaf_dache_max_size=1000");
    sheaf_file fh = NULL;
    int rc = sheaf_file_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh);
    MPI_Info_free(&info);
    CHECK(rc == 0, "open: %s", sheaf_mpiio_open_errmsg());
    if (rc)
        return finish_test("errors");
    char b[200];
    memset(b, 'a' + me, sizeof b);
    rc = sheaf_file_write_at(fh, 1000, b, 100, MPI_BYTE);
    CHECK(rc == SHEAF_MPIIO_EARG && strstr(sheaf_file_errmsg(fh), "sheaf_dache_max_size"), "write beyond max: %d %s",
          rc, sheaf_file_errmsg(fh));
    rc = sheaf_file_read_at(fh, 990, b, 100, MPI_BYTE);
    CHECK(rc == SHEAF_MPIIO_EARG, "read beyond max: %d", rc);
    rc = sheaf_file_write_at_all(fh, me == 1 ? 1000 : 0, b, 50, MPI_BYTE); /* one rank fails: all do */
    CHECK(rc == (me == 1 ? SHEAF_MPIIO_EARG : SHEAF_MPIIO_EREMOTE) || np == 1, "collective with one bad rank: %d", rc);
    OK(sheaf_file_write_at(fh, 100 * me, b, 100, MPI_BYTE), fh); /* with one slot: evictions, remote hits */
    MPI_Barrier(MPI_COMM_WORLD);
    OK(sheaf_file_read_at(fh, 100 * ((me + 1) % np), b, 100, MPI_BYTE), fh);
    CHECK(b[0] == 'a' + (me + 1) % np && b[99] == 'a' + (me + 1) % np, "1-slot cache read %c", b[0]);
    OK(sheaf_file_close(&fh), fh);
    if (me == 0)
        remove(path);
    return finish_test("errors");
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    const char *progress = argc > 3 ? argv[3] : "auto";
    int provided = MPI_THREAD_SINGLE;
    if (!strcmp(progress, "async"))
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    else
        MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc < 3 || np > 64) {
        if (me == 0)
            fprintf(stderr, "usage: dache_test coherence|atomic|errors DIR [PROGRESS LOCK SLOTS [broken]]\n");
        MPI_Finalize();
        return 2;
    }
    /* coherence ... direct=N (anywhere after SLOTS): requests of N bytes or more
   * take the direct path (mixed with the small ones through the pages) */
    for (int i = 6; i < argc; i++)
        if (!strncmp(argv[i], "direct=", 7)) {
            g_direct = atol(argv[i] + 7);
            for (int j = i; j + 1 < argc; j++)
                argv[j] = argv[j + 1];
            argc--;
            break;
        }
    int rc = 2;
    if (!strcmp(mode, "coherence")) {
        if (!strcmp(progress, "async") && provided < MPI_THREAD_MULTIPLE) {
            if (me == 0)
                printf("SKIP: progress=async needs MPI_THREAD_MULTIPLE (provided %d)\n", provided);
            MPI_Finalize();
            return 77;
        }
        int broken = argc > 6 && !strcmp(argv[6], "broken");
        int epochs = argc > 6 && !broken ? atoi(argv[6]) : argc > 7 ? atoi(argv[7]) : EPOCHS;
        if (broken)
            setenv("SHEAF_DACHE_BREAK", "1", 1);
        if (epochs < 5 || epochs > 1000)
            epochs = EPOCHS;
        rc =
            test_coherence(argv[2], progress, argc > 4 ? argv[4] : "mcs", argc > 5 ? atoi(argv[5]) : 3, broken, epochs);
    } else if (!strcmp(mode, "atomic")) {
        rc = test_atomic(argv[2]);
    } else if (!strcmp(mode, "errors")) {
        rc = test_errors(argv[2]);
    }
    MPI_Finalize();
    return rc;
}
