/* mpi_coll_test.c - coalescing (collective) I/O over MPI, checked byte for byte.
 *
 *   mpi_coll_test dir=<dir> sizes=1,256,4095,65536 [collsize=N] [fsblk=N]
 *                 [merge=1] [nf=N] [env=1] [posix=1] [checksum=1]
 *
 * For each size s, task r writes with sion_coll_fwrite into a container
 * opened "bw,collective[,collsize=N][,cmerge]" (env=1: the mode says only
 * "bw" and SION_COLLSIZE / SION_COLLNUM come from the environment):
 *   three calls of s_r = s + r % 3 bytes (chunk size 2 * s_r, so the third
 *   starts block 1), one call of 3 * s_r (larger than a chunk: that task
 *   writes it itself, across blocks), then an individual sion_fwrite.
 * Then: rank 0 reads every task with the serial API and checks the packed
 * layout against SIONlib 1.7's grouping (sionlib_groups: the chunks of a
 * group are the requested sizes, the group's total is a multiple of the
 * block size; merge: the collector's chunk holds the group); every rank reads its own task individually and collectively
 * (sion_coll_fread with the same call sizes) in parallel opens. A task's
 * stream must equal the pattern of its task number, byte for byte.
 * Merge mode writes two collective calls only and expects, in each
 * collector's stream, each call's data of the group in task order; senders'
 * streams are empty.
 *
 *   mpi_coll_test vector=<container> [collsize=N]
 * reads an existing container (e.g. SIONlib's coll8) with one task per rank,
 * individually and then collectively in pieces of 100 bytes; both must give
 * the same bytes (the vector tests check those against the manifest).
 * Exit 0 only when every check on every rank passed. */
#include <mpi.h>
#include <sion.h> /* after mpi.h: declares the MPI API */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_rank, g_np, g_fail;
static char g_dir[512];
static int g_collsize = 0, g_fsblk = 4096, g_merge = 0, g_nf = 1, g_env = 0, g_posix = 0, g_cksum = 0;

#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "rank %d: %s:%d: ", g_rank, __FILE__, __LINE__);                                           \
            fprintf(stderr, __VA_ARGS__);                                                                              \
            fprintf(stderr, "\n");                                                                                     \
            g_fail++;                                                                                                  \
        }                                                                                                              \
    } while (0)

static unsigned char pat(int task, int64_t off) { return (unsigned char)(task * 131 + off * 7 + (off >> 8)); }

static void fill(unsigned char *b, int task, int64_t off, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        b[i] = pat(task, off + i);
}

static int64_t task_size(int64_t s, int t) { return s + t % 3; }

/* the byte sizes of the calls a task makes (plain mode) */
static int plan(int64_t st, int64_t *calls)
{
    calls[0] = calls[1] = calls[2] = st;
    calls[3] = 3 * st;
    calls[4] = st / 2 + 1; /* individual */
    return 5;
}

static int64_t plan_total(int64_t st)
{
    int64_t c[5];
    int n = plan(st, c);
    int64_t t = 0;
    for (int i = 0; i < n; i++)
        t += c[i];
    return t;
}

static void mode_string(char *m, size_t len, int write)
{
    snprintf(m, len, "%s%s%s%s%s", write ? "bw" : "br", g_env ? "" : ",collective", g_posix ? ",posix" : "",
             g_merge && write ? ",cmerge" : "", g_cksum && write ? ",checksum" : "");
    if (g_collsize > 0 && !g_env) {
        size_t l = strlen(m);
        snprintf(m + l, len - l, ",collsize=%d", g_collsize);
    }
}

static void write_container(const char *fn, int64_t s)
{
    char mode[128];
    mode_string(mode, sizeof mode, 1);
    int64_t st = task_size(s, g_rank);
    sion_int64 chunk = 2 * st;
    sion_int32 fsblk = g_fsblk;
    int nf = g_nf, grank = g_rank;
    FILE *fp = NULL;
    int sid = sion_paropen_mpi(fn, mode, &nf, MPI_COMM_WORLD, NULL, &chunk, &fsblk, &grank, &fp, NULL);
    CHECK(sid >= 0, "open %s for writing failed", fn);
    if (sid < 0)
        return;
    int64_t calls[5], off = 0;
    int n = g_merge ? 2 : plan(st, calls);
    if (g_merge)
        calls[0] = calls[1] = st;
    unsigned char *buf = malloc((size_t)(3 * st));
    for (int i = 0; i < n; i++) {
        fill(buf, g_rank, off, calls[i]);
        size_t got =
            i == 4 ? sion_fwrite(buf, 1, (size_t)calls[i], sid) : sion_coll_fwrite(buf, 1, (size_t)calls[i], sid);
        CHECK(got == (size_t)calls[i], "write call %d of %lld bytes returned %zu", i, (long long)calls[i], got);
        off += calls[i];
    }
    free(buf);
    CHECK(sion_parclose_mpi(sid) == SION_SUCCESS, "close after writing failed");
}

/* SIONlib 1.7's collector groups over the requested chunks 2 s_t of one
 * file of n tasks (written here independently of sheaf's core): collectors
 * = ceil(n / collsize) (collsize <= 0: automatic, at most n, capped at
 * 32/16/8/8/8/4 for >= 512/256/128/64/32/16 tasks), at most
 * ceil(sum / fsblk); capacity floor(sum / collectors) rounded up to fsblk;
 * a task joins the group while the group's chunks fit. first[t]: t's collector. */
static void sionlib_groups(int64_t s, int n, int collsize, int64_t fsblk, int *first)
{
    int64_t sum = 0;
    for (int t = 0; t < n; t++)
        sum += 2 * task_size(s, t);
    int64_t maxc = (sum + fsblk - 1) / fsblk, nc;
    if (collsize > 0) {
        nc = (n + collsize - 1) / collsize;
        if (nc > maxc)
            nc = maxc;
    } else {
        nc = maxc < n ? maxc : n;
        int caps[6][2] = {{512, 32}, {256, 16}, {128, 8}, {64, 8}, {32, 8}, {16, 4}};
        for (int i = 0; i < 6; i++)
            if (n >= caps[i][0]) {
                if (nc > caps[i][1])
                    nc = caps[i][1];
                break;
            }
    }
    if (nc < 1)
        nc = 1;
    int64_t cap = (sum / nc + fsblk - 1) / fsblk * fsblk, cur = 0;
    for (int t = 0, f = 0; t < n; t++) {
        if (t == 0 || cur + 2 * task_size(s, t) > cap) {
            f = t;
            cur = 0;
        }
        cur += 2 * task_size(s, t);
        first[t] = f;
    }
}

/* Expected stream of task t (malloc'd, *len bytes). */
static unsigned char *expected(int t, int64_t s, int64_t *len)
{
    if (!g_merge) {
        int64_t st = task_size(s, t);
        *len = plan_total(st);
        unsigned char *b = malloc((size_t)*len + 1);
        fill(b, t, 0, *len);
        return b;
    }
    int *first = malloc((size_t)g_np * sizeof *first);
    sionlib_groups(s, g_np, g_collsize, g_fsblk > 0 ? g_fsblk : 4096, first);
    if (first[t] != t) { /* a sender: its data went to the collector */
        free(first);
        *len = 0;
        return malloc(1);
    }
    int last = t + 1;
    while (last < g_np && first[last] == t)
        last++;
    free(first);
    int64_t total = 0;
    for (int u = t; u < last; u++)
        total += 2 * task_size(s, u);
    unsigned char *b = malloc((size_t)total + 1), *p = b;
    for (int call = 0; call < 2; call++)
        for (int u = t; u < last; u++) {
            int64_t su = task_size(s, u);
            fill(p, u, call * su, su);
            p += su;
        }
    *len = total;
    return b;
}

static void check_layout(const sion_int64 *chunks, int ntasks, sion_int32 fsblk, int64_t s)
{
    if (g_nf != 1)
        return; /* groups are computed here for one file */
    int *grp = malloc((size_t)ntasks * sizeof *grp);
    sionlib_groups(s, ntasks, g_collsize, fsblk, grp);
    for (int first = 0, last; first < ntasks; first = last) {
        for (last = first + 1; last < ntasks && grp[last] == first;)
            last++;
        int64_t req = 0, got = 0;
        for (int t = first; t < last; t++) {
            req += 2 * task_size(s, t);
            got += chunks[t];
        }
        int64_t want = (req + fsblk - 1) / fsblk * fsblk;
        if (g_merge) {
            CHECK(chunks[first] == want, "merge: collector %d chunk %lld, want %lld", first, (long long)chunks[first],
                  (long long)want);
        } else {
            CHECK(got == want, "group at %d: chunks add up to %lld, want %lld", first, (long long)got, (long long)want);
            for (int t = first; t + 1 < last; t++)
                CHECK(chunks[t] == 2 * task_size(s, t), "task %d: chunk %lld, want packed %lld", t,
                      (long long)chunks[t], (long long)(2 * task_size(s, t)));
        }
    }
    free(grp);
}

static void serial_check(const char *fn, int64_t s)
{
    int ntasks = 0, nfiles = 0, *granks = NULL;
    sion_int64 *chunks = NULL;
    sion_int32 fsblk = 0;
    FILE *fp = NULL;
    int sid = sion_open((char *)fn, "rb", &ntasks, &nfiles, &chunks, &fsblk, &granks, &fp);
    CHECK(sid >= 0, "serial open of %s failed", fn);
    if (sid < 0)
        return;
    CHECK(ntasks == g_np, "serial: %d tasks, want %d", ntasks, g_np);
    check_layout(chunks, ntasks, fsblk, s);
    for (int t = 0; t < ntasks && t < g_np; t++) {
        int64_t len;
        unsigned char *want = expected(t, s, &len), *got = malloc((size_t)len + 1);
        CHECK(sion_seek(sid, t, SION_ABSOLUTE_POS, 0) == SION_SUCCESS, "serial seek to task %d", t);
        size_t n = len ? sion_fread(got, 1, (size_t)len, sid) : 0;
        CHECK(n == (size_t)len && !memcmp(got, want, (size_t)len), "serial: task %d: %zu of %lld bytes, content %s", t,
              n, (long long)len, n == (size_t)len && !memcmp(got, want, (size_t)len) ? "ok" : "differs");
        CHECK(sion_feof(sid) == 1, "serial: task %d holds more than %lld bytes", t, (long long)len);
        free(want);
        free(got);
    }
    CHECK(sion_close(sid) == SION_SUCCESS, "serial close");
}

static void parallel_check(const char *fn, int64_t s, int coll)
{
    char mode[128];
    if (coll)
        mode_string(mode, sizeof mode, 0);
    else
        snprintf(mode, sizeof mode, "br%s", g_posix ? ",posix" : "");
    int nf = 0, grank = 0;
    sion_int64 chunk = 0;
    sion_int32 fsblk = 0;
    FILE *fp = NULL;
    int sid = sion_paropen_mpi(fn, mode, &nf, MPI_COMM_WORLD, NULL, &chunk, &fsblk, &grank, &fp, NULL);
    CHECK(sid >= 0, "parallel open (%s) of %s failed", mode, fn);
    if (sid < 0)
        return;
    int64_t len;
    unsigned char *want = expected(g_rank, s, &len), *got = calloc(1, (size_t)len + 1);
    int64_t calls[5], off = 0;
    int n = g_merge ? 0 : plan(task_size(s, g_rank), calls);
    if (coll && !g_merge) {
        for (int i = 0; i < n; i++) {
            size_t r = sion_coll_fread(got + off, 1, (size_t)calls[i], sid);
            CHECK(r == (size_t)calls[i], "coll read call %d: %zu of %lld bytes", i, r, (long long)calls[i]);
            off += calls[i];
        }
    } else {
        /* individual; in merge mode also through sion_coll_fread (read individually) */
        size_t r = coll  ? sion_coll_fread(got, 1, (size_t)len, sid) /* collective: every task calls */
                   : len ? sion_fread(got, 1, (size_t)len, sid)
                         : 0;
        CHECK(r == (size_t)len, "read: %zu of %lld bytes", r, (long long)len);
    }
    CHECK(!memcmp(got, want, (size_t)len), "parallel %s read: content differs", coll ? "collective" : "individual");
    CHECK(sion_feof(sid) == 1, "parallel read: more than %lld bytes", (long long)len);
    free(want);
    free(got);
    CHECK(sion_parclose_mpi(sid) == SION_SUCCESS, "close after reading failed");
}

/* Read own task completely, individually (coll=0) or collectively in 100-byte calls. */
static unsigned char *read_task(const char *fn, int coll, size_t *len)
{
    char mode[64];
    snprintf(mode, sizeof mode, coll ? "br,collective%s%.0d" : "br", g_collsize > 0 ? ",collsize=" : "", g_collsize);
    int nf = 0, grank = 0;
    sion_int64 chunk = 0;
    sion_int32 fsblk = 0;
    FILE *fp = NULL;
    int sid = sion_paropen_mpi(fn, mode, &nf, MPI_COMM_WORLD, NULL, &chunk, &fsblk, &grank, &fp, NULL);
    CHECK(sid >= 0, "open %s (%s)", fn, mode);
    size_t cap = 1 << 20, have = 0;
    unsigned char *b = calloc(1, cap);
    if (sid < 0)
        return b;
    if (!coll) {
        while (!sion_feof(sid) && have < cap) {
            size_t a = (size_t)sion_bytes_avail_in_block(sid);
            have += sion_fread(b + have, 1, a < cap - have ? a : cap - have, sid);
        }
    } else {
        /* every rank makes the same number of calls: as many as the largest task needs */
        size_t mine = 0;
        while (!sion_feof(sid) && have < cap) { /* size first, then read collectively */
            size_t a = (size_t)sion_bytes_avail_in_block(sid);
            mine += a;
            sion_seek(sid, SION_CURRENT_RANK, SION_CURRENT_BLK, (sion_int64)a);
            have = mine;
        }
        sion_seek(sid, SION_CURRENT_RANK, SION_ABSOLUTE_POS, 0);
        long long calls = (long long)(mine + 99) / 100, most = 0;
        MPI_Allreduce(&calls, &most, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
        have = 0;
        for (long long i = 0; i < most; i++) {
            size_t want = mine - have < 100 ? mine - have : 100;
            size_t got = sion_coll_fread(b + have, 1, want, sid);
            CHECK(got == want, "collective read %lld: %zu of %zu bytes", i, got, want);
            have += got;
        }
    }
    CHECK(sion_parclose_mpi(sid) == SION_SUCCESS, "close %s", fn);
    *len = have;
    return b;
}

static int vector_check(const char *fn)
{
    size_t a = 0, b = 0;
    unsigned char *ind = read_task(fn, 0, &a), *col = read_task(fn, 1, &b);
    CHECK(a == b && !memcmp(ind, col, a), "%s: task %d: individual %zu bytes, collective %zu bytes%s", fn, g_rank, a, b,
          a == b ? " (content differs)" : "");
    free(ind);
    free(col);
    int all = 0;
    MPI_Allreduce(&g_fail, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (g_rank == 0)
        printf("coll vector %s collsize=%d: %s\n", fn, g_collsize, all ? "FAILED" : "ok");
    MPI_Finalize();
    return all ? 1 : 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_np);
    char sizes[256] = "1,256,4095,65536";
    snprintf(g_dir, sizeof g_dir, ".");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strncmp(a, "dir=", 4))
            snprintf(g_dir, sizeof g_dir, "%s", a + 4);
        else if (!strncmp(a, "sizes=", 6))
            snprintf(sizes, sizeof sizes, "%s", a + 6);
        else if (!strncmp(a, "collsize=", 9))
            g_collsize = atoi(a + 9);
        else if (!strncmp(a, "fsblk=", 6))
            g_fsblk = atoi(a + 6);
        else if (!strncmp(a, "merge=", 6))
            g_merge = atoi(a + 6);
        else if (!strncmp(a, "nf=", 3))
            g_nf = atoi(a + 3);
        else if (!strncmp(a, "env=", 4))
            g_env = atoi(a + 4);
        else if (!strncmp(a, "posix=", 6))
            g_posix = atoi(a + 6);
        else if (!strncmp(a, "checksum=", 9))
            g_cksum = atoi(a + 9);
    }
    for (int i = 1; i < argc; i++)
        if (!strncmp(argv[i], "vector=", 7))
            return vector_check(argv[i] + 7);
    if (g_env) { /* the group size the environment implies, for the layout check */
        const char *cs = getenv("SION_COLLSIZE"), *cn = getenv("SION_COLLNUM");
        if (!cs && !cn) { /* SIONlib 1.7.6's names (LSION_...), which sheaf reads too */
            cs = getenv("LSION_COLLSIZE");
            cn = getenv("LSION_COLLNUM");
        }
        if (cs && atoi(cs) > 0)
            g_collsize = atoi(cs) < g_np ? atoi(cs) : g_np;
        else if (cn && atoi(cn) > 0)
            g_collsize = (g_np + atoi(cn) - 1) / atoi(cn);
    }
    char *save = NULL;
    for (char *tok = strtok_r(sizes, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int64_t s = atoll(tok);
        char fn[700];
        snprintf(fn, sizeof fn, "%s/coll_np%d_s%lld_c%d_m%d_nf%d.sion", g_dir, g_np, (long long)s, g_collsize, g_merge,
                 g_nf);
        int before = g_fail;
        write_container(fn, s);
        MPI_Barrier(MPI_COMM_WORLD);
        if (g_rank == 0 && g_nf == 1)
            serial_check(fn, s);
        MPI_Barrier(MPI_COMM_WORLD);
        parallel_check(fn, s, 0);
        parallel_check(fn, s, 1);
        int bad = g_fail - before, all = 0;
        MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (g_rank == 0)
            printf("coll np=%d size=%lld collsize=%d merge=%d nf=%d: %s\n", g_np, (long long)s, g_collsize, g_merge,
                   g_nf, all ? "FAILED" : "ok");
        if (g_rank == 0 && !all) {
            remove(fn);
            for (int k = 1; k < g_nf; k++) {
                char m[720];
                snprintf(m, sizeof m, "%s.%06d", fn, k);
                remove(m);
            }
        }
    }
    int all = 0;
    MPI_Allreduce(&g_fail, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    return all ? 1 : 0;
}
