/* mpiio_pfr_test.c - what Persistent File Realms are for (Coloma 2007, ch. 3),
 * shown on one machine with the non-coherent client-cache fixture.
 *
 *   stale DIR    Fig 3.1's sequence under the fixture (sheaf_backend=noncoherent):
 *                read_all of the whole file, interleaved write_all of its first
 *                half, sync-barrier-sync, read_all of the whole file. Stale
 *                bytes (read != last written) are counted over all ranks:
 *                per-call realms > 0, pfr 0, nocache 0; the file on disk is
 *                right in every mode; under pfr the second read comes from
 *                the aggregators' realm caches (no file-system read).
 *   nocache DIR  under sheaf_cache=nocache a collective read sees what another
 *                writer put into the file after the last read, with no sync
 *                in between (the backend's cache is invalidated before every
 *                collective read); pfr returns the old bytes (the control).
 *   audit DIR    every file-system call of a session with changing views
 *                (sliding window, BTIO-like, FLASH-like) logged per rank: under
 *                pfr every byte is touched by exactly one rank, the owner the
 *                realm map predicts; with per-call realms bytes migrate. Every
 *                read is checked against a model of the last write.
 *   rounds DIR   rounds per collective call equal the prediction from the
 *                access range, realm size and cb_buffer_size (exact numbers),
 *                and the aggregators' write calls equal the rounds.
 *   table31 DIR  realm sizes of the sliding window's first call, Table 3.1
 *                scaled down (8x8 tiles of 3 KB), and the paper's own sizes
 *                from the same policy function. */
#include <fcntl.h>
#include <unistd.h>
#include "common.h"
#include "mpiio_impl.h"

static int rank, nprocs;

static unsigned char pat_a(int64_t i) { return (unsigned char)(i * 7 + 1); }
static unsigned char pat_b(int64_t i) { return (unsigned char)(0xA5 ^ (i * 13)); }

static void make_file(const char *p, int64_t size)
{
    if (rank == 0) {
        unsigned char *b = malloc((size_t)size);
        for (int64_t i = 0; i < size; i++)
            b[i] = pat_a(i);
        int fd = open(p, O_CREAT | O_TRUNC | O_WRONLY, 0644);
        CHECK(fd >= 0 && write(fd, b, (size_t)size) == size, "create %s", p);
        if (fd >= 0)
            close(fd);
        free(b);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- stale ---- */
static int64_t stale_run(const char *dir, const char *mode, uint64_t *reads2)
{
    enum { S = 65536, B = 512 };
    char p[512], h[256];
    snprintf(p, sizeof p, "%s/stale-%s", dir, mode);
    make_file(p, S);
    snprintf(h, sizeof h, "sheaf_backend=noncoherent,sheaf_cache=%s,cb_nodes=%d,sheaf_page_size=4096", mode, nprocs);
    MPI_Info info = mkinfo(h);
    sheaf_file fh;
    OK(sheaf_file_open(MPI_COMM_WORLD, p, MPI_MODE_RDWR, info, &fh), fh);
    int64_t q = S / nprocs, half = S / 2, mine = half / nprocs;
    unsigned char *buf = malloc(S), *w = malloc(S);
    OK(sheaf_file_read_at_all(fh, rank * q, buf, (int)q, MPI_BYTE), fh);
    int bad1 = 0;
    for (int64_t i = 0; i < q; i++)
        bad1 += buf[i] != pat_a(rank * q + i);
    CHECK(bad1 == 0, "first read: %d wrong bytes", bad1);
    MPI_Datatype vec, ft;
    MPI_Type_vector((int)(mine / B), B, B * nprocs, MPI_BYTE, &vec);
    MPI_Type_create_resized(vec, 0, (MPI_Aint)half, &ft);
    MPI_Type_commit(&ft);
    OK(sheaf_file_set_view(fh, rank * B, MPI_BYTE, ft), fh);
    for (int64_t k = 0, j = 0; k < mine / B; k++)
        for (int64_t i = 0; i < B; i++, j++)
            w[j] = pat_b(rank * B + k * B * nprocs + i);
    OK(sheaf_file_write_all(fh, w, (int)mine, MPI_BYTE), fh);
    OK(sheaf_file_sync(fh), fh); /* MPI's sync-barrier-sync */
    MPI_Barrier(MPI_COMM_WORLD);
    OK(sheaf_file_sync(fh), fh);
    OK(sheaf_file_set_view(fh, 0, MPI_BYTE, MPI_BYTE), fh);
    sheaf_mpiio_stats s0, s1;
    sheaf_file_stats(fh, &s0);
    OK(sheaf_file_read_at_all(fh, rank * q, buf, (int)q, MPI_BYTE), fh);
    sheaf_file_stats(fh, &s1);
    *reads2 = s1.fs_reads - s0.fs_reads;
    int64_t stale = 0;
    for (int64_t i = 0; i < q; i++) {
        int64_t x = rank * q + i;
        stale += buf[i] != (x < half ? pat_b(x) : pat_a(x));
    }
    OK(sheaf_file_close(&fh), fh);
    int64_t total = 0;
    MPI_Allreduce(&stale, &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        long n;
        unsigned char *f = slurp(p, &n);
        int64_t wrong = 0;
        for (int64_t x = 0; f && x < S; x++)
            wrong += f[x] != (x < half ? pat_b(x) : pat_a(x));
        CHECK(f && n == S && wrong == 0, "%s: file after close: %lld wrong bytes", mode, (long long)wrong);
        free(f);
        unlink(p);
    }
    MPI_Type_free(&vec);
    MPI_Type_free(&ft);
    MPI_Info_free(&info);
    free(buf);
    free(w);
    return total;
}

static int test_stale(const char *dir)
{
    uint64_t r_none, r_pfr, r_nc;
    int64_t none = stale_run(dir, "none", &r_none), pfr = stale_run(dir, "pfr", &r_pfr),
            nc = stale_run(dir, "nocache", &r_nc);
    if (rank == 0)
        printf("stale bytes: per-call realms %lld, pfr %lld, nocache %lld; fs reads in the 2nd read_all on rank 0: "
               "%llu / %llu / %llu\n",
               (long long)none, (long long)pfr, (long long)nc, (unsigned long long)r_none, (unsigned long long)r_pfr,
               (unsigned long long)r_nc);
    CHECK(nprocs < 2 || none > 0, "per-call realms: no stale bytes under the fixture");
    CHECK(pfr == 0, "pfr: %lld stale bytes", (long long)pfr);
    CHECK(nc == 0, "nocache: %lld stale bytes", (long long)nc);
    CHECK(r_pfr == 0, "pfr: second read went to the file system (%llu calls)", (unsigned long long)r_pfr);
    CHECK(nprocs < 2 || r_nc > 0, "nocache: second read made no file-system call");
    return finish_test("stale");
}

/* ---- nocache: the backend's cache is invalidated before every collective read ----
 * Under the fixture every aggregator keeps the pages it read. read_all of the
 * whole file (pattern a), then another writer (rank 0, plain POSIX writes and
 * fsync: not through this handle, no note) replaces the file with pattern b,
 * barrier, read_all again with no sync in between. nocache must return b in
 * every byte (doc/mpiio.md: "invalidated before every collective read"); pfr
 * on the same sequence returns a from its realm cache (the control: the
 * sequence does reach a cached page). Deleting the invalidation in
 * mio_coll_io makes nocache return a too. */
static int64_t external_run(const char *dir, const char *mode)
{
    enum { S = 65536 };
    char p[512], h[256];
    snprintf(p, sizeof p, "%s/external-%s", dir, mode);
    make_file(p, S);
    snprintf(h, sizeof h, "sheaf_backend=noncoherent,sheaf_cache=%s,cb_nodes=%d,sheaf_page_size=4096", mode, nprocs);
    MPI_Info info = mkinfo(h);
    sheaf_file fh;
    OK(sheaf_file_open(MPI_COMM_WORLD, p, MPI_MODE_RDWR, info, &fh), fh);
    int64_t q = S / nprocs;
    unsigned char *buf = malloc(S);
    OK(sheaf_file_read_at_all(fh, rank * q, buf, (int)q, MPI_BYTE), fh);
    int bad1 = 0;
    for (int64_t i = 0; i < q; i++)
        bad1 += buf[i] != pat_a(rank * q + i);
    CHECK(bad1 == 0, "%s: first read: %d wrong bytes", mode, bad1);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) { /* another writer, behind the layer */
        unsigned char *b = malloc(S);
        for (int64_t i = 0; i < S; i++)
            b[i] = pat_b(i);
        int fd = open(p, O_WRONLY);
        CHECK(fd >= 0 && pwrite(fd, b, S, 0) == S && fsync(fd) == 0, "%s: external write of %s", mode, p);
        if (fd >= 0)
            close(fd);
        free(b);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    OK(sheaf_file_read_at_all(fh, rank * q, buf, (int)q, MPI_BYTE), fh);
    int64_t old = 0, other = 0;
    for (int64_t i = 0; i < q; i++) {
        old += buf[i] == pat_a(rank * q + i) && buf[i] != pat_b(rank * q + i);
        other += buf[i] != pat_b(rank * q + i);
    }
    OK(sheaf_file_close(&fh), fh);
    int64_t mine[2] = {old, other}, all[2] = {0, 0};
    MPI_Allreduce(mine, all, 2, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("external write: %s: %lld of %d bytes read after it are the old ones (%lld not the new)\n", mode,
               (long long)all[0], S, (long long)all[1]);
        unlink(p);
    }
    MPI_Info_free(&info);
    free(buf);
    return all[1];
}

static int test_nocache(const char *dir)
{
    int64_t nc = external_run(dir, "nocache"), pfr = external_run(dir, "pfr");
    CHECK(nc == 0,
          "nocache: %lld bytes of the second read_all are not what the other writer wrote "
          "(the backend's cache was not invalidated before the read)",
          (long long)nc);
    CHECK(pfr > 0, "pfr: the realm cache returned the new bytes: the sequence does not reach a cached page");
    return finish_test("nocache");
}

/* ---- audit ---- */
enum { TW = 64, TH = 16, TX = 4, TY = 4, LINE = TW * TX, TILE = TW * TH, WIN = LINE * TH * TY };
static unsigned char tile_pat(int t, int it, int j) { return it < 0 ? 0 : (unsigned char)(t * 31 + it * 17 + j + 1); }

static void tile_type(int t, MPI_Datatype *ty)
{
    int sizes[2] = {TH * TY, LINE}, subs[2] = {TH, TW}, starts[2] = {(t / TX) * TH, (t % TX) * TW};
    MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_BYTE, ty);
    MPI_Type_commit(ty);
}

static int last[TX * TY]; /* iteration of the last write of each tile */
static void sliding_window(sheaf_file fh, int from, int to)
{
    if (from == 0)
        for (int t = 0; t < TX * TY; t++)
            last[t] = -1;
    unsigned char b[TILE];
    for (int it = from; it < to; it++) {
        int t = (rank + it) % (TX * TY);
        MPI_Datatype ty;
        tile_type(t, &ty);
        OK(sheaf_file_set_view(fh, 0, MPI_BYTE, ty), fh);
        OK(sheaf_file_read_at_all(fh, 0, b, TILE, MPI_BYTE), fh);
        int bad = 0;
        for (int j = 0; j < TILE; j++)
            bad += b[j] != tile_pat(t, last[t], j);
        CHECK(bad == 0, "sliding window it %d tile %d: %d bytes differ from the last write (it %d)", it, t, bad,
              last[t]);
        for (int j = 0; j < TILE; j++)
            b[j] = tile_pat(t, it, j);
        OK(sheaf_file_write_at_all(fh, 0, b, TILE, MPI_BYTE), fh);
        for (int r = 0; r < nprocs; r++)
            last[(r + it) % (TX * TY)] = it;
        MPI_Type_free(&ty);
    }
}

/* BTIO-like: an N^3 array of 8-byte cells in a 2x2x2 block grid, each rank
 * owning blocks on a diagonal; one array per time step, appended */
static void btio(sheaf_file fh, int steps)
{
    enum { N = 8, H = N / 2, E = 8 };
    int64_t off[N * N * 2];
    int len[N * N * 2], n = 0;
    for (int c = 0; c < 8; c++) {
        int ci = c & 1, cj = (c >> 1) & 1, ck = c >> 2;
        if (((ci + 2 * ((cj + ck) & 1)) % nprocs) != rank % 4 || rank >= 4)
            continue;
        for (int k = 0; k < H; k++)
            for (int j = 0; j < H; j++) {
                off[n] = (((int64_t)(ck * H + k) * N + (cj * H + j)) * N + ci * H) * E;
                len[n++] = H * E;
            }
    }
    /* sort by offset: a filetype's displacements increase */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && off[j] < off[j - 1]; j--) {
            int64_t t = off[j];
            off[j] = off[j - 1];
            off[j - 1] = t;
            int l = len[j];
            len[j] = len[j - 1];
            len[j - 1] = l;
        }
    MPI_Aint d[N * N * 2];
    for (int i = 0; i < n; i++)
        d[i] = (MPI_Aint)off[i];
    MPI_Datatype hx, ft;
    MPI_Type_create_hindexed(n, len, d, MPI_BYTE, &hx);
    MPI_Type_create_resized(hx, 0, (MPI_Aint)N * N * N * E, &ft);
    MPI_Type_commit(&ft);
    int64_t bytes = (int64_t)n * H * E;
    unsigned char *b = malloc((size_t)bytes + 1), *r = malloc((size_t)bytes + 1);
    for (int s = 0; s < steps; s++) {
        OK(sheaf_file_set_view(fh, WIN + (int64_t)s * N * N * N * E, MPI_BYTE, ft), fh);
        for (int64_t i = 0; i < bytes; i++)
            b[i] = (unsigned char)(s * 7 + rank * 3 + i);
        OK(sheaf_file_write_all(fh, b, (int)bytes, MPI_BYTE), fh);
    }
    for (int s = 0; s < steps; s++) {
        OK(sheaf_file_set_view(fh, WIN + (int64_t)s * N * N * N * E, MPI_BYTE, ft), fh);
        OK(sheaf_file_read_all(fh, r, (int)bytes, MPI_BYTE), fh);
        int bad = 0;
        for (int64_t i = 0; i < bytes; i++)
            bad += r[i] != (unsigned char)(s * 7 + rank * 3 + i);
        CHECK(bad == 0, "btio step %d: %d bytes differ", s, bad);
    }
    free(b);
    free(r);
    MPI_Type_free(&hx);
    MPI_Type_free(&ft);
}

/* FLASH-like: variable-major file, each rank's blocks of every variable;
 * block-major memory (noncontiguous) */
static void flash(sheaf_file fh, int64_t base)
{
    enum { NV = 3, NB = 2, BS = 256 };
    MPI_Datatype fv, ft, mv;
    MPI_Type_vector(NV, NB * BS, nprocs * NB * BS, MPI_BYTE, &fv);
    MPI_Type_create_resized(fv, 0, (MPI_Aint)NV * nprocs * NB * BS, &ft);
    MPI_Type_commit(&ft);
    /* memory: [block][var][BS]: var v of block b at (b*NV+v)*BS; the file wants var-major */
    int bl[NV * NB], dsp[NV * NB];
    for (int v = 0, k = 0; v < NV; v++)
        for (int b = 0; b < NB; b++, k++) {
            bl[k] = BS;
            dsp[k] = (b * NV + v) * BS;
        }
    MPI_Type_indexed(NV * NB, bl, dsp, MPI_BYTE, &mv);
    MPI_Type_commit(&mv);
    unsigned char m[NV * NB * BS], r[NV * NB * BS];
    for (int i = 0; i < NV * NB * BS; i++)
        m[i] = (unsigned char)(rank * 5 + i * 3);
    OK(sheaf_file_set_view(fh, base + rank * NB * BS, MPI_BYTE, ft), fh);
    OK(sheaf_file_write_all(fh, m, 1, mv), fh);
    memset(r, 0, sizeof r);
    OK(sheaf_file_read_at_all(fh, 0, r, 1, mv), fh);
    CHECK(memcmp(r, m, sizeof m) == 0, "flash: read != write");
    MPI_Type_free(&fv);
    MPI_Type_free(&ft);
    MPI_Type_free(&mv);
}

/* reads every rank's log: bytes touched by several ranks, and by a rank
 * other than the realm map's owner (fr > 0: persistent map with base 0) */
static void audit_logs(const char *prefix, int64_t fr, int naggs, const int *aggs, int64_t *multi, int64_t *wrong_owner,
                       int64_t *touched)
{
    int64_t cap = 1 << 20;
    signed char *own = malloc((size_t)cap);
    memset(own, -1, (size_t)cap);
    *multi = *wrong_owner = *touched = 0;
    for (int r = 0; r < nprocs; r++) {
        char p[600];
        snprintf(p, sizeof p, "%s.%d", prefix, r);
        FILE *f = fopen(p, "r");
        CHECK(f != NULL || r != 0, "no audit log %s", p);
        if (!f)
            continue;
        char op;
        long long off, len;
        while (fscanf(f, " %c %lld %lld", &op, &off, &len) == 3)
            for (long long x = off; x < off + len && x < cap; x++) {
                if (own[x] == -1)
                    own[x] = (signed char)r;
                else if (own[x] != r)
                    own[x] = -2;
            }
        fclose(f);
        unlink(p);
    }
    for (int64_t x = 0; x < cap; x++) {
        if (own[x] == -1)
            continue;
        (*touched)++;
        if (own[x] == -2) {
            (*multi)++;
            continue;
        }
        if (fr > 0 && own[x] != aggs[(x / fr) % naggs])
            (*wrong_owner)++;
    }
    free(own);
}

static int test_audit(const char *dir)
{
    /* pfr-evict: a realm cache of 4 pages, so pages are evicted (written back) all along */
    const char *modes[4] = {"none", "pfr", "nocache", "pfr-evict"};
    for (int m = 0; m < 4; m++) {
        char p[512], prefix[512], h[700];
        snprintf(p, sizeof p, "%s/audit-%s", dir, modes[m]);
        snprintf(prefix, sizeof prefix, "%s/audit-%s.log", dir, modes[m]);
        snprintf(h, sizeof h,
                 "sheaf_cache=%s,cb_nodes=%d,cb_buffer_size=2048,sheaf_fr_alignment=256,"
                 "sheaf_page_size=256,sheaf_audit_log=%s%s",
                 m == 3 ? "pfr" : modes[m], nprocs, prefix, m == 3 ? ",sheaf_cache_size=1024" : "");
        if (rank == 0)
            unlink(p);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Info info = mkinfo(h);
        sheaf_file fh;
        OK(sheaf_file_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh), fh);
        sliding_window(fh, 0, 8);
        btio(fh, 3);
        flash(fh, WIN + 3 * 8 * 8 * 8 * 8);
        sliding_window(fh, 8, 11);
        sheaf_mpiio_stats st;
        sheaf_file_stats(fh, &st);
        if (m == 1 || m == 3) { /* before close: only evictions have written anything */
            uint64_t w = st.fs_writes, wall = 0;
            MPI_Allreduce(&w, &wall, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
            if (rank == 0)
                printf("audit %-9s file-system writes before close: %llu\n", modes[m], (unsigned long long)wall);
            if (m == 1)
                CHECK(wall == 0, "pfr with a large cache wrote before sync/close: %llu", (unsigned long long)wall);
            else
                CHECK(wall > 0, "pfr-evict: a 4-page cache evicted nothing");
        }
        int *aggs = malloc(sizeof(int) * (size_t)st.naggs);
        for (int i = 0; i < st.naggs; i++)
            aggs[i] = (int)((int64_t)i * nprocs / st.naggs);
        OK(sheaf_file_close(&fh), fh);
        MPI_Info_free(&info);
        if (rank == 0) {
            int64_t multi, wrong, touched;
            audit_logs(prefix, m == 0 ? 0 : st.realm_size, st.naggs, aggs, &multi, &wrong, &touched);
            printf("audit %-9s realm %lld: %lld bytes touched, %lld by more than one rank, %lld not by their realm's "
                   "owner\n",
                   modes[m], (long long)(m == 0 ? 0 : st.realm_size), (long long)touched, (long long)multi,
                   (long long)wrong);
            CHECK(touched > WIN, "%s: only %lld bytes in the logs", modes[m], (long long)touched);
            if (m == 0)
                CHECK(nprocs < 2 || multi > 0, "per-call realms: no byte migrated between ranks");
            else
                CHECK(multi == 0 && wrong == 0, "%s: %lld shared bytes, %lld off-owner bytes", modes[m],
                      (long long)multi, (long long)wrong);
            unlink(p);
        }
        free(aggs);
    }
    return finish_test("audit");
}

/* ---- rounds ---- */
static int64_t predict(int64_t lo, int64_t hi, int64_t base, int64_t fr, int A, int64_t cb)
{
    int64_t best = 0;
    for (int a = 0; a < A; a++) {
        int64_t n = 0;
        for (int64_t g = 0; base + g * fr < hi; g++) {
            if (g % A != a)
                continue;
            int64_t s = base + g * fr, e = s + fr;
            if (e <= lo)
                continue;
            if (s < lo)
                s = lo;
            if (e > hi)
                e = hi;
            n += (e - s + cb - 1) / cb;
        }
        if (n > best)
            best = n;
    }
    return best;
}

static void rounds_case(const char *dir, const char *hints, int64_t S, int64_t want_fr, int64_t want_rounds,
                        int check_writes)
{
    char p[512], h[512];
    snprintf(p, sizeof p, "%s/rounds", dir);
    snprintf(h, sizeof h, "cb_nodes=%d,%s", nprocs, hints);
    MPI_Info info = mkinfo(h);
    sheaf_file fh;
    OK(sheaf_file_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh), fh);
    int64_t q = S / nprocs;
    unsigned char *b = malloc((size_t)q);
    for (int64_t i = 0; i < q; i++)
        b[i] = pat_a(rank * q + i);
    OK(sheaf_file_write_at_all(fh, rank * q, b, (int)q, MPI_BYTE), fh);
    sheaf_mpiio_stats st;
    sheaf_file_stats(fh, &st);
    int64_t cb = 0;
    const char *c = strstr(h, "cb_buffer_size=");
    if (c)
        cb = atoll(c + 15);
    int64_t base = 0;
    int pfr = strstr(h, "sheaf_cache=") && !strstr(h, "sheaf_cache=none");
    int64_t fr = pfr ? st.realm_size : mio_percall_size(0, S, nprocs, 1, &base);
    int64_t pred = predict(0, S, base, fr, nprocs, cb);
    CHECK(st.realm_size == want_fr, "[%s] realm size %lld, want %lld", hints, (long long)st.realm_size,
          (long long)want_fr);
    CHECK((int64_t)st.rounds_last == want_rounds && pred == want_rounds, "[%s] rounds %llu, predicted %lld, want %lld",
          hints, (unsigned long long)st.rounds_last, (long long)pred, (long long)want_rounds);
    if (check_writes)
        CHECK((int64_t)st.fs_writes <= want_rounds && (rank >= nprocs || st.fs_writes >= 1),
              "[%s] %llu fs writes for %lld rounds", hints, (unsigned long long)st.fs_writes, (long long)want_rounds);
    if (rank == 0)
        printf("rounds [%s]: realm %lld, rounds %llu (predicted %lld), fs writes on rank 0 %llu\n", hints,
               (long long)st.realm_size, (unsigned long long)st.rounds_last, (long long)pred,
               (unsigned long long)st.fs_writes);
    if (pfr) { /* a later call with a small access range keeps the realms */
        OK(sheaf_file_write_at_all(fh, 0, b, rank == 0 ? 1000 : 0, MPI_BYTE), fh);
        sheaf_file_stats(fh, &st);
        CHECK(st.realm_size == want_fr && st.rounds_last == 1, "[%s] second call: realm %lld rounds %llu", hints,
              (long long)st.realm_size, (unsigned long long)st.rounds_last);
    }
    OK(sheaf_file_close(&fh), fh);
    if (rank == 0) {
        long n;
        unsigned char *f = slurp(p, &n);
        int64_t wrong = 0;
        for (int64_t x = 0; f && x < S; x++)
            wrong += f[x] != pat_a(x);
        CHECK(f && n == S && wrong == 0, "[%s] file: %lld wrong bytes", hints, (long long)wrong);
        free(f);
        unlink(p);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Info_free(&info);
    free(b);
}

static int test_rounds(const char *dir)
{
    const int64_t S = 262144;
    if (nprocs != 4) {
        if (rank == 0)
            printf("rounds: the exact numbers are for 4 ranks\n");
        return finish_test("rounds");
    }
    rounds_case(dir, "sheaf_cache=none,cb_buffer_size=16384", S, 65536, 4, 1);
    rounds_case(dir, "sheaf_cache=none,cb_buffer_size=1048576", S, 65536, 1, 1);
    rounds_case(dir, "sheaf_cache=nocache,sheaf_pfr_size=16384,cb_buffer_size=4096", S, 16384, 16, 1);
    rounds_case(dir, "sheaf_cache=nocache,sheaf_pfr_size=16384,cb_buffer_size=1048576", S, 16384, 4, 1);
    rounds_case(dir, "sheaf_cache=nocache,sheaf_pfr_size=25000,sheaf_fr_alignment=4096,cb_buffer_size=1048576", S,
                28672, 3, 1);
    rounds_case(dir, "sheaf_cache=nocache,sheaf_pfr_size=25000,sheaf_fr_alignment=4096,cb_buffer_size=8192", S, 28672,
                12, 1);
    rounds_case(dir, "sheaf_cache=pfr,sheaf_pfr_size=aar,cb_buffer_size=16384", S, 65536, 4, 0);
    return finish_test("rounds");
}

/* ---- Table 3.1 ---- */
static int test_table31(const char *dir)
{
    /* the paper's sizes: 8x8 tiles of 4096 lines x 768 bytes, first call = tiles 0..N-1 */
    const int64_t line = 8 * 768, tile_rows = 4096, KB = 1024;
    int ns[4] = {8, 16, 32, 64};
    for (int i = 0; i < 4; i++) {
        int n = ns[i];
        int64_t rows = (n + 7) / 8,
                hi = (rows - 1) * tile_rows * line + (tile_rows - 1) * line + ((n - 1) % 8 + 1) * 768;
        int64_t aar = mio_pfr_size(MIO_PFR_AAR, 0, 0, hi, 0, n, 1);
        int64_t fs = mio_pfr_size(MIO_PFR_FSIZE, 0, 0, hi, 192 * KB * KB, n, 1);
        if (rank == 0)
            printf("Table 3.1 at %2d nodes: AAR %lld KB, fsize %lld KB\n", n, (long long)(aar / KB),
                   (long long)(fs / KB));
        CHECK(aar == 3072 * KB, "AAR at %d: %lld", n, (long long)aar);
        CHECK(fs == 192 * KB * KB / n, "fsize at %d: %lld", n, (long long)fs);
    }
    /* scaled down and run: 8x8 tiles of 64 lines x 48 bytes (3 KB), file 192 KB */
    enum { W = 48, H = 64, L = 8 * W, F = L * H * 8 };
    char p[512];
    snprintf(p, sizeof p, "%s/table31", dir);
    make_file(p, F);
    const char *pol[2] = {"aar", "fsize"};
    for (int k = 0; k < 2; k++) {
        char h[256];
        snprintf(h, sizeof h, "sheaf_cache=pfr,sheaf_pfr_size=%s,cb_nodes=%d", pol[k], nprocs);
        MPI_Info info = mkinfo(h);
        sheaf_file fh;
        OK(sheaf_file_open(MPI_COMM_WORLD, p, MPI_MODE_RDWR, info, &fh), fh);
        int t = rank % 64, sizes[2] = {H * 8, L}, subs[2] = {H, W}, starts[2] = {(t / 8) * H, (t % 8) * W};
        MPI_Datatype ty;
        MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_BYTE, &ty);
        MPI_Type_commit(&ty);
        OK(sheaf_file_set_view(fh, 0, MPI_BYTE, ty), fh);
        unsigned char b[W * H];
        OK(sheaf_file_read_all(fh, b, W * H, MPI_BYTE), fh);
        sheaf_mpiio_stats st;
        sheaf_file_stats(fh, &st);
        int64_t rows = (nprocs + 7) / 8;
        int64_t hi = (rows - 1) * H * L + (H - 1) * L + ((nprocs - 1) % 8 + 1) * W;
        int64_t want = k == 0 ? (hi + nprocs - 1) / nprocs : (int64_t)F / nprocs;
        if (rank == 0)
            printf("scaled Table 3.1, %d ranks, %s: realm %lld bytes (want %lld)\n", nprocs, pol[k],
                   (long long)st.realm_size, (long long)want);
        CHECK(st.realm_size == want, "%s: realm %lld want %lld", pol[k], (long long)st.realm_size, (long long)want);
        int bad = 0;
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++)
                bad += b[y * W + x] != pat_a((int64_t)(starts[0] + y) * L + starts[1] + x);
        CHECK(bad == 0, "tile read: %d wrong bytes", bad);
        MPI_Type_free(&ty);
        OK(sheaf_file_close(&fh), fh);
        MPI_Info_free(&info);
    }
    if (rank == 0)
        unlink(p);
    return finish_test("table31");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    int rc = 2;
    if (argc >= 3 && !strcmp(argv[1], "stale"))
        rc = test_stale(argv[2]);
    else if (argc >= 3 && !strcmp(argv[1], "audit"))
        rc = test_audit(argv[2]);
    else if (argc >= 3 && !strcmp(argv[1], "nocache"))
        rc = test_nocache(argv[2]);
    else if (argc >= 3 && !strcmp(argv[1], "rounds"))
        rc = test_rounds(argv[2]);
    else if (argc >= 3 && !strcmp(argv[1], "table31"))
        rc = test_table31(argv[2]);
    else if (rank == 0)
        fprintf(stderr, "usage: mpiio_pfr_test stale|nocache|audit|rounds|table31 DIR\n");
    MPI_Finalize();
    return rc;
}
