/* mpi_sion_test - MPI integration tests of the parallel API (sion_mpi.h).
 *
 * usage: mpiexec -n N mpi_sion_test COMMAND [key=value ...]
 *   common keys: base=DIR  directory in which a fresh temporary directory is
 *                          made for the test's files (default $TMPDIR or /tmp)
 *                keep=DIR  write into DIR itself and leave the files there
 *                          (used by the ctest scripts and fixtures)
 *   roundtrip seed=S nf=F fsblk=B [posix=1] [colors=C] [bigtask=T]
 *        every rank writes pseudo-random data (seeded by S and its rank) in
 *        random pieces; nf > 0: numFiles = nf; nf = 0: user local
 *        communicators from MPI_Comm_split(color = rank % C); reads back in
 *        parallel and (rank 0) with the serial API. With keep=DIR it also
 *        writes DIR/expect.<task> and DIR/expect.json for check_cli.py.
 *        bigtask=T: task T uses 110..130 blocks (more than SIONlib's initial
 *        block table of 100), the others 3..4.
 *   vector vecdir=DIR name=NAME [mapped=1] [expect=unclosed]
 *        reads SIONlib-written vector NAME (MANIFEST.json in DIR) in parallel,
 *        one task per rank (mapped=1: sion_paropen_mapped_mpi, automatic;
 *        expect=unclosed: the open must fail on every rank)
 *   wrongcount vecdir=DIR   opening 4-task par4 with != 4 ranks must fail
 *   mapped-w8 keep=DIR       (8 ranks) writes DIR/par8.sion, numFiles 2
 *   mapped-w3 keep=DIR       mapped write of 8 logical tasks (DIR/map1.sion,
 *                            map2.sion) from any number of ranks, serial read back
 *   mapped-r keep=DIR [zero=1]  mapped reads of par8, map1, map2 (any rank
 *                            count); zero=1: also a mapped write (map3) in which
 *                            one rank has no task, over an existing container
 *   reinit | dup | misuse | compat   see the functions below
 * Exit status 0 when every check passed on every rank. Failures print
 * "[rank r] FAIL file:line: check: detail (last error: ...)" to stderr. */
#include <mpi.h>
#include <sion.h>
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <sys/stat.h>
#include "testutil.h"

#include "mpicheck.h"

/* ---- small helpers -------------------------------------------------------- */

typedef struct {
    uint64_t s;
} rng_t;
static uint64_t rng_next(rng_t *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static int64_t rng_range(rng_t *r, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rng_next(r) % (uint64_t)(hi - lo + 1));
}

/* 1 if every rank passes the same value */
static int all_same(long long v)
{
    long long mn, mx;
    MPI_Allreduce(&v, &mn, 1, MPI_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&v, &mx, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    return mn == mx;
}

/* A parallel call must succeed or fail on all ranks; if not, later collective
 * calls would hang, so stop the job. Returns 1 if all succeeded. */
static int agree_ok(int ok, const char *what)
{
    int n = 0, mine = ok ? 1 : 0;
    MPI_Allreduce(&mine, &n, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (n != 0 && n != g_size) {
        fprintf(stderr, "[rank %d] FAIL: %s succeeded on %d of %d ranks (here: %s; last error: \"%s\"); aborting\n",
                g_rank, what, n, g_size, ok ? "ok" : "failed", sheaf_last_error());
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    return n == g_size;
}

/* Name of physical file f of a set with base name `base` (SIONlib convention). */
static void physname(char *out, size_t n, const char *base, int f)
{
    if (f == 0)
        snprintf(out, n, "%s", base);
    else
        snprintf(out, n, "%s.%06d", base, f);
}

static long long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

/* 1 if msg contains the number n as a whole number (not part of "par4" or "14"). */
static int has_number(const char *msg, int n)
{
    char num[16];
    snprintf(num, sizeof num, "%d", n);
    size_t k = strlen(num);
    for (const char *p = msg ? strstr(msg, num) : NULL; p; p = strstr(p + 1, num)) {
        int before = p > msg && (isalnum((unsigned char)p[-1]) || p[-1] == '.' || p[-1] == '/');
        int after = isdigit((unsigned char)p[k]) || (p[k] == '.' && isdigit((unsigned char)p[k + 1]));
        if (!before && !after)
            return 1;
    }
    return 0;
}

static void sha_hex(const void *data, size_t n, char out[65]) { tu_sha256_hex(data, n, out); }

/* ---- deterministic task data ---------------------------------------------- */

typedef struct {
    sion_int64 chunk_req; /* requested chunk size */
    size_t len;           /* bytes the task writes */
    unsigned char *data;
} taskdata;

static sion_int64 round_up(sion_int64 v, sion_int64 b) { return (v + b - 1) / b * b; }

/* Task t of a run with `seed`: chunk request 200..5000; with the chunk that
 * request becomes at file system block size blk, the length is 2..3 chunks
 * plus up to 4000 bytes (so several blocks are used; for blk > 64 KiB just
 * up to about 27000 bytes). Task (7 seed + 3) % ntasks is empty when allow_empty and
 * ntasks > 1. */
static int g_bigtask = -1; /* this task gets 110..130 chunks (block tables > MAXCHUNKS) */
static void gen_task(uint64_t seed, int t, int ntasks, int allow_empty, sion_int64 blk, taskdata *td)
{
    rng_t r = {seed * 0x100000001B3ull ^ ((uint64_t)t + 1) * 0xD6E8FEB86659FD93ull};
    td->chunk_req = rng_range(&r, 200, 5000);
    sion_int64 chunk = round_up(td->chunk_req, blk);
    int empty = allow_empty && ntasks > 1 && t == (int)((seed * 7 + 3) % (uint64_t)ntasks);
    if (empty)
        td->len = 0;
    else if (t == g_bigtask && chunk <= 8192)
        td->len = (size_t)rng_range(&r, 110 * chunk, 130 * chunk);
    else if (chunk <= 65536)
        td->len = (size_t)rng_range(&r, 2 * chunk + 1, 3 * chunk + 4000);
    else
        td->len = (size_t)rng_range(&r, 1, 3 * td->chunk_req + 12000);
    td->data = malloc(td->len ? td->len : 1);
    for (size_t i = 0; i < td->len; i++)
        td->data[i] = (unsigned char)(rng_next(&r) >> 56);
}

/* Write td through sid in random pieces: mostly small writes (1..64 bytes),
 * sometimes one larger than the chunk (spanning blocks). Returns the number
 * of writes larger than the chunk, or -1 if a write failed. */
static int write_pieces(int sid, const taskdata *td, sion_int64 chunk, uint64_t seed)
{
    rng_t r = {seed ^ 0xABCDEF12345ull};
    size_t off = 0;
    int bad = 0, big = 0;
    while (off < td->len) {
        size_t n;
        int force = !big && off >= td->len / 4 && td->len - off > (size_t)chunk;
        if (force || rng_range(&r, 0, 9) == 0)
            n = (size_t)(chunk + rng_range(&r, 1, chunk / 2 + 1));
        else
            n = (size_t)rng_range(&r, 1, 64);
        if (n > td->len - off)
            n = td->len - off;
        size_t got = sion_fwrite(td->data + off, 1, n, sid);
        if (got != n) {
            CHECK(got == n, "sion_fwrite(%zu bytes at offset %zu) returned %zu", n, off, got);
            bad = 1;
            break;
        }
        big += (sion_int64)n > chunk;
        off += n;
    }
    return bad ? -1 : big;
}

/* Read the current task to its end with the SIONlib loop (sion_feof,
 * sion_bytes_avail_in_block, sion_fread of random pieces within the block).
 * Returns a malloc'd buffer, *len = bytes read; NULL (and a failed check) on error. */
static unsigned char *read_task_loop(int sid, size_t cap, size_t *len, uint64_t seed, const char *what)
{
    rng_t r = {seed ^ 0x5151ull};
    unsigned char *buf = malloc(cap + 1);
    size_t off = 0;
    int guard = 0;
    *len = 0;
    while (!sion_feof(sid)) {
        sion_int64 avail = sion_bytes_avail_in_block(sid);
        if (avail <= 0) {
            CHECK(avail > 0, "%s: sion_bytes_avail_in_block = %lld with sion_feof = 0 at offset %zu", what,
                  (long long)avail, off);
            free(buf);
            return NULL;
        }
        if (off + (size_t)avail > cap) {
            CHECK(off + (size_t)avail <= cap, "%s: more data than written: offset %zu + avail %lld > %zu", what, off,
                  (long long)avail, cap);
            free(buf);
            return NULL;
        }
        while (avail > 0) {
            size_t n = (size_t)rng_range(&r, 1, avail < 200 ? avail : 200);
            if (rng_range(&r, 0, 3) == 0)
                n = (size_t)avail;
            size_t got = sion_fread(buf + off, 1, n, sid);
            if (got != n) {
                CHECK(got == n, "%s: sion_fread(%zu) in block with %lld bytes left returned %zu", what, n,
                      (long long)avail, got);
                free(buf);
                return NULL;
            }
            off += n;
            avail -= (sion_int64)n;
        }
        if (++guard > 1000000) {
            CHECK(0, "%s: sion_feof never becomes 1", what);
            free(buf);
            return NULL;
        }
    }
    *len = off;
    return buf;
}

/* Compare read bytes with the expected task data: length, bytes, sha256. */
static void compare_data(const unsigned char *got, size_t glen, const taskdata *td, const char *what)
{
    char h1[65], h2[65];
    CHECK(glen == td->len, "%s: read %zu bytes, wrote %zu", what, glen, td->len);
    size_t n = glen < td->len ? glen : td->len;
    size_t i = 0;
    while (i < n && got[i] == td->data[i])
        i++;
    CHECK(i == n, "%s: first differing byte at offset %zu: read 0x%02x, wrote 0x%02x", what, i, i < n ? got[i] : 0,
          i < n ? td->data[i] : 0);
    sha_hex(got, glen, h1);
    sha_hex(td->data, td->len, h2);
    CHECK(strcmp(h1, h2) == 0, "%s: sha256 of read data %s != written %s", what, h1, h2);
}

/* ---- arguments and test directory ------------------------------------------- */

static int g_argc;
static char **g_argv;
static const char *arg_str(const char *key, const char *dflt)
{
    size_t k = strlen(key);
    for (int i = 2; i < g_argc; i++)
        if (!strncmp(g_argv[i], key, k) && g_argv[i][k] == '=')
            return g_argv[i] + k + 1;
    return dflt;
}
static long long arg_int(const char *key, long long dflt)
{
    const char *s = arg_str(key, NULL);
    return s ? strtoll(s, NULL, 0) : dflt;
}

static char g_dir[2048];
static int g_keep;

/* Make the test directory on rank 0 (mkdtemp in base=, or keep= as is) and
 * broadcast its name. */
static void setup_dir(void)
{
    const char *keep = arg_str("keep", NULL);
    if (g_rank == 0) {
        if (keep) {
            snprintf(g_dir, sizeof g_dir, "%s", keep);
            mkdir(g_dir, 0755);
        } else {
            const char *base = arg_str("base", getenv("TMPDIR"));
            snprintf(g_dir, sizeof g_dir, "%s/mpitest-XXXXXX", base && *base ? base : "/tmp");
            if (!mkdtemp(g_dir)) {
                fprintf(stderr, "mkdtemp %s: %s\n", g_dir, strerror(errno));
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
        }
    }
    g_keep = keep != NULL;
    MPI_Bcast(g_dir, sizeof g_dir, MPI_CHAR, 0, MPI_COMM_WORLD);
}

/* Remove dir and everything below it (tests may leave subdirectories). */
static void rm_rf(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char p[4096];
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            snprintf(p, sizeof p, "%.2000s/%.1000s", dir, e->d_name);
            struct stat st;
            if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
                rm_rf(p);
            else
                unlink(p);
        }
        closedir(d);
    }
    rmdir(dir);
}

static void cleanup_dir(void)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (g_rank == 0 && !g_keep)
        rm_rf(g_dir);
}

/* ---- serial read-back of a whole container (rank 0 or any single process) --- */

/* expected[t] for all ntasks; exp_chunk[t] the stored chunk sizes (or NULL). */
static void serial_verify(const char *fname, int ntasks, int nfiles, sion_int32 fsblk, const taskdata *expected,
                          const sion_int64 *exp_chunk, const char *what)
{
    int nt = -1, nf = -1;
    sion_int32 bs = -1;
    sion_int64 *chunks = NULL;
    int *granks = NULL;
    FILE *fp = NULL;
    char w[256];
    int sid = sion_open((char *)fname, "rb", &nt, &nf, &chunks, &bs, &granks, &fp);
    CHECK(sid >= 0, "%s: serial sion_open(%s, rb) = %d", what, fname, sid);
    if (sid < 0)
        return;
    CHECK(nt == ntasks, "%s: serial open: ntasks %d, expected %d", what, nt, ntasks);
    CHECK(nf == nfiles, "%s: serial open: nfiles %d, expected %d", what, nf, nfiles);
    if (fsblk > 0)
        CHECK(bs == fsblk, "%s: serial open: fsblksize %d, expected %d", what, bs, fsblk);
    CHECK(fp != NULL, "%s: serial open in ansi mode returned fileptr NULL", what);
    if (nt == ntasks) {
        for (int t = 0; t < ntasks; t++) {
            CHECK(granks && granks[t] == t, "%s: serial open: globalranks[%d] = %d", what, t, granks ? granks[t] : -1);
            if (exp_chunk)
                CHECK(chunks && chunks[t] == exp_chunk[t], "%s: serial open: chunksizes[%d] = %lld, expected %lld",
                      what, t, chunks ? (long long)chunks[t] : -1LL, (long long)exp_chunk[t]);
        }
        /* tasks in a scrambled order: seek to block 0, read everything at once
         * (sheaf reads span blocks), then check sion_feof */
        for (int k = 0; k < ntasks; k++) {
            int t = (k * 5 + 3) % ntasks;
            if (ntasks % 5 == 0)
                t = ntasks - 1 - k;
            snprintf(w, sizeof w, "%s: serial task %d", what, t);
            int rc = sion_seek(sid, t, 0, 0);
            CHECK(rc == SION_SUCCESS, "%s: sion_seek(sid, %d, 0, 0) = %d", w, t, rc);
            if (rc != SION_SUCCESS)
                continue;
            unsigned char *buf = malloc(expected[t].len + 17);
            size_t got = sion_fread(buf, 1, expected[t].len + 17, sid);
            compare_data(buf, got, &expected[t], w);
            CHECK(sion_feof(sid) == 1, "%s: sion_feof after reading everything = %d", w, sion_feof(sid));
            free(buf);
        }
    }
    CHECK(sion_close(sid) == SION_SUCCESS, "%s: sion_close", what);
    free(chunks);
    free(granks);
}

/* ---- 1. round trip ------------------------------------------------------------ */

static int test_roundtrip(void)
{
    uint64_t seed = (uint64_t)arg_int("seed", 1);
    int nf_req = (int)arg_int("nf", 1);
    int fsblk_req = (int)arg_int("fsblk", -1);
    int posix = (int)arg_int("posix", 0);
    int colors = (int)arg_int("colors", 2);
    g_bigtask = (int)arg_int("bigtask", -1);
    const char *wmode = posix ? "bw,posix" : "bw";
    const char *rmode = posix ? "br,posix" : "br";
    char fname[2300], expname[2400], w[128];
    setup_dir();
    snprintf(fname, sizeof fname, "%s/rt.sion", g_dir);

    taskdata *all = calloc((size_t)g_size, sizeof *all);
    for (int t = 0; t < g_size; t++)
        gen_task(seed, t, g_size, 1, fsblk_req > 0 ? fsblk_req : 4096, &all[t]);
    taskdata *mine = &all[g_rank];

    /* expected file layout */
    int nfiles, myfile, mylrank;
    MPI_Comm lcomm = MPI_COMM_NULL;
    if (nf_req > 0) {
        int per = g_size / nf_req;
        nfiles = nf_req;
        myfile = g_rank / per < nf_req ? g_rank / per : nf_req - 1;
        mylrank = g_rank - myfile * per;
    } else {
        nfiles = colors < g_size ? colors : g_size;
        myfile = g_rank % colors; /* rank c (< colors) is the first of color c */
        mylrank = g_rank / colors;
        MPI_Comm_split(MPI_COMM_WORLD, g_rank % colors, g_rank, &lcomm);
    }

    /* ---- write ---- */
    int numFiles = nf_req, grank = -77;
    sion_int64 chunk = mine->chunk_req;
    sion_int32 fsblk = fsblk_req;
    FILE *fp = NULL;
    char *newf = NULL;
    int sid = sion_paropen_mpi(fname, wmode, &numFiles, MPI_COMM_WORLD, &lcomm, &chunk, &fsblk, &grank, &fp, &newf);
    CHECK(sid >= 0, "sion_paropen_mpi(%s, %s, numFiles=%d) = %d", fname, wmode, nf_req, sid);
    if (!agree_ok(sid >= 0, "write open"))
        goto out;
    /* the process's first open: SIONlib's MPI layer takes id 0 for its API, the sid is 1 */
    CHECK(sid == 1, "first sid of the MPI program = %d, SIONlib gives 1", sid);
    CHECK(grank == g_rank, "write open: *globalrank = %d, expected %d", grank, g_rank);
    CHECK(numFiles == nfiles, "write open: *numFiles = %d, expected %d", numFiles, nfiles);
    if (fsblk_req > 0)
        CHECK(fsblk == fsblk_req, "write open: *fsblksize = %d, expected %d", fsblk, fsblk_req);
    else
        CHECK(fsblk > 0, "write open: *fsblksize = %d after automatic detection", fsblk);
    CHECK(all_same(fsblk), "write open: *fsblksize %d differs between ranks", fsblk);
    if (fsblk > 0 && fsblk != (fsblk_req > 0 ? fsblk_req : 4096)) {
        /* lengths depend on the real block size (the chunk requests do not) */
        for (int t = 0; t < g_size; t++) {
            free(all[t].data);
            gen_task(seed, t, g_size, 1, fsblk, &all[t]);
        }
    }
    /* SIONlib leaves *chunksize as given on a write open; the container holds it rounded up */
    CHECK(chunk == mine->chunk_req, "write open: *chunksize = %lld, expected %lld (unchanged)", (long long)chunk,
          (long long)mine->chunk_req);
    chunk = round_up(chunk, fsblk);
    CHECK(posix ? fp == NULL : fp != NULL, "write open: fileptr %p in %s mode", (void *)fp, wmode);
    physname(expname, sizeof expname, fname, myfile);
    CHECK(newf && !strcmp(newf, expname), "write open: *newfname = %s, expected %s", newf ? newf : "(null)", expname);
    free(newf);
    newf = NULL;
    int nbig = write_pieces(sid, mine, chunk, seed * 31 + (uint64_t)g_rank), allbig = 0;
    MPI_Allreduce(&nbig, &allbig, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (g_rank == 0)
        CHECK(allbig > 0, "test data: no write was larger than a chunk (sum over ranks %d)", allbig);
    CHECK(sion_get_bytes_written(sid) == (sion_int64)mine->len, "sion_get_bytes_written = %lld, wrote %zu",
          (long long)sion_get_bytes_written(sid), mine->len);
    {
        int rc = sion_parclose_mpi(sid);
        CHECK(rc == SION_SUCCESS, "sion_parclose_mpi (write) = %d", rc);
        if (!agree_ok(rc == SION_SUCCESS, "write close"))
            goto out;
    }
    if (g_rank < nfiles) {
        physname(expname, sizeof expname, fname, g_rank);
        CHECK(file_size(expname) > 0, "physical file %s missing after close", expname);
    }
    if (g_rank == 0) {
        physname(expname, sizeof expname, fname, nfiles);
        CHECK(file_size(expname) < 0, "unexpected physical file %s (only %d files)", expname, nfiles);
    }

    /* ---- parallel read ---- */
    sion_int64 rchunk = -5;
    sion_int32 rfsblk = -5;
    int rnf = -5;
    grank = -77;
    fp = NULL;
    sid = sion_paropen_mpi(fname, rmode, &rnf, MPI_COMM_WORLD, &lcomm, &rchunk, &rfsblk, &grank, &fp, &newf);
    CHECK(sid >= 0, "sion_paropen_mpi(%s, %s) = %d", fname, rmode, sid);
    if (!agree_ok(sid >= 0, "read open"))
        goto out;
    /* the numbers SIONlib gives (as in its test_simple_2): task 0 opened file 0 serially first */
    CHECK(sid == (g_rank == 0 ? 3 : 2), "read sid %d, SIONlib gives %d", sid, g_rank == 0 ? 3 : 2);
    CHECK(rnf == nfiles, "read open: *numFiles = %d, expected %d", rnf, nfiles);
    CHECK(rchunk == chunk, "read open: *chunksize = %lld, expected %lld", (long long)rchunk, (long long)chunk);
    CHECK(rfsblk == fsblk, "read open: *fsblksize = %d, expected %d", rfsblk, fsblk);
    CHECK(grank == g_rank, "read open: *globalrank = %d, expected %d", grank, g_rank);
    CHECK(posix ? fp == NULL : fp != NULL, "read open: fileptr %p in %s mode", (void *)fp, rmode);
    physname(expname, sizeof expname, fname, myfile);
    CHECK(newf && !strcmp(newf, expname), "read open: *newfname = %s, expected %s", newf ? newf : "(null)", expname);
    free(newf);
    newf = NULL;
    CHECK(sion_get_filenumber(sid) == myfile, "sion_get_filenumber = %d, expected %d", sion_get_filenumber(sid),
          myfile);
    CHECK(sion_get_number_of_files(sid) == nfiles, "sion_get_number_of_files = %d, expected %d",
          sion_get_number_of_files(sid), nfiles);
    {
        size_t got = 0;
        snprintf(w, sizeof w, "parallel read task %d", g_rank);
        unsigned char *buf = read_task_loop(sid, mine->len, &got, seed + (uint64_t)g_rank, w);
        if (buf)
            compare_data(buf, got, mine, w);
        free(buf);
        CHECK(sion_get_bytes_read(sid) == (sion_int64)mine->len, "sion_get_bytes_read = %lld, expected %zu",
              (long long)sion_get_bytes_read(sid), mine->len);
        /* the data must use several blocks somewhere (else the test is too weak) */
        int cblk = -1, nblk = -1, maxblk = 0;
        sion_int64 cpos = -1, *bsizes = NULL;
        int lrc = sion_get_current_location(sid, &cblk, &cpos, &nblk, &bsizes);
        CHECK(lrc == SION_SUCCESS, "sion_get_current_location = %d", lrc);
        if (lrc == SION_SUCCESS && bsizes) {
            sion_int64 sum = 0;
            for (int b = 0; b < nblk; b++)
                sum += bsizes[b];
            CHECK(sum == (sion_int64)mine->len, "block sizes of task %d add up to %lld, wrote %zu", g_rank,
                  (long long)sum, mine->len);
            CHECK(nblk >= (int)((mine->len + (size_t)chunk - 1) / (size_t)chunk),
                  "task %d: %d blocks for %zu bytes in chunks of %lld", g_rank, nblk, mine->len, (long long)chunk);
        }
        MPI_Allreduce(&nblk, &maxblk, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (g_rank == 0)
            CHECK(maxblk >= 3, "test data: no task used 3 or more blocks (max %d)", maxblk);
        /* second pass: rewind to the task's start and read all at once */
        /* the rank of a parallel handle is the task's rank in its file (SIONlib) */
        int rc = sion_seek(sid, mylrank, 0, 0);
        CHECK(rc == SION_SUCCESS, "sion_seek(sid, own file rank %d, 0, 0) = %d", mylrank, rc);
        if (mylrank != g_rank) {
            int prev = sheaf_set_error_printing(0);
            rc = sion_seek(sid, g_rank, 0, 0);
            sheaf_set_error_printing(prev);
            CHECK(rc == SION_NOT_SUCCESS, "sion_seek(sid, global rank %d, 0, 0) on file rank %d = %d", g_rank, mylrank,
                  rc);
        }
        rc = sion_seek(sid, SION_CURRENT_RANK, 0, 0);
        CHECK(rc == SION_SUCCESS, "sion_seek(sid, SION_CURRENT_RANK, 0, 0) = %d", rc);
        buf = malloc(mine->len + 100);
        got = sion_fread(buf, 1, mine->len + 100, sid);
        snprintf(w, sizeof w, "parallel re-read task %d in one sion_fread", g_rank);
        compare_data(buf, got, mine, w);
        /* a position in the middle: SION_ABSOLUTE_POS */
        if (mine->len > 10) {
            size_t p = mine->len / 3;
            rc = sion_seek(sid, SION_CURRENT_RANK, SION_ABSOLUTE_POS, (sion_int64)p);
            CHECK(rc == SION_SUCCESS, "sion_seek(ABSOLUTE_POS %zu) = %d", p, rc);
            got = sion_fread(buf, 1, 10, sid);
            CHECK(got == 10 && !memcmp(buf, mine->data + p, 10), "read 10 bytes at absolute %zu: got %zu / mismatch", p,
                  got);
        }
        free(buf);
    }
    {
        int rc = sion_parclose_mpi(sid);
        CHECK(rc == SION_SUCCESS, "sion_parclose_mpi (read) = %d", rc);
        if (!agree_ok(rc == SION_SUCCESS, "read close"))
            goto out;
    }

    /* ---- serial read of the whole set on rank 0 ---- */
    if (g_rank == 0) {
        sion_int64 *ec = malloc((size_t)g_size * sizeof *ec);
        for (int t = 0; t < g_size; t++)
            ec[t] = round_up(all[t].chunk_req, fsblk);
        serial_verify(fname, g_size, nfiles, fsblk, all, ec, "roundtrip");
        free(ec);
    }

    /* ---- expected results for check_cli.py ---- */
    if (g_keep) {
        char p[2400];
        snprintf(p, sizeof p, "%s/expect.%d", g_dir, g_rank);
        CHECK(tu_write_file(p, mine->data, mine->len) == 0, "cannot write %s", p);
        int info[2] = {myfile, mylrank}, *infos = NULL;
        if (g_rank == 0)
            infos = malloc(2 * sizeof(int) * (size_t)g_size);
        MPI_Gather(info, 2, MPI_INT, infos, 2, MPI_INT, 0, MPI_COMM_WORLD);
        if (g_rank == 0) {
            snprintf(p, sizeof p, "%s/expect.json", g_dir);
            FILE *f = fopen(p, "w");
            CHECK(f != NULL, "cannot write %s", p);
            if (f) {
                fprintf(f, "{\"container\": \"%s\", \"ntasks\": %d, \"nfiles\": %d, \"fsblksize\": %d, \"tasks\": [",
                        fname, g_size, nfiles, fsblk);
                for (int t = 0; t < g_size; t++) {
                    char h[65];
                    sha_hex(all[t].data, all[t].len, h);
                    fprintf(f,
                            "%s\n {\"task\": %d, \"bytes\": %zu, \"chunksize\": %lld, \"file\": %d, "
                            "\"local_task\": %d, \"sha256\": \"%s\"}",
                            t ? "," : "", t, all[t].len, (long long)round_up(all[t].chunk_req, fsblk), infos[2 * t],
                            infos[2 * t + 1], h);
                }
                fprintf(f, "\n]}\n");
                fclose(f);
            }
            free(infos);
        }
    }
out:
    if (lcomm != MPI_COMM_NULL)
        MPI_Comm_free(&lcomm);
    for (int t = 0; t < g_size; t++)
        free(all[t].data);
    free(all);
    cleanup_dir();
    return 0;
}

/* ---- 2. SIONlib vectors ------------------------------------------------------- */

#define MAXVT 64
typedef struct {
    int ntasks, nfiles;
    char file0[256];
    long long bytes[MAXVT];
    char sha[MAXVT][65];
} manifest_vec;

/* Skip a JSON string starting at *p == '"'; returns the char after it. */
static const char *skip_str(const char *p)
{
    for (p++; *p && *p != '"'; p++)
        if (*p == '\\' && p[1])
            p++;
    return *p ? p + 1 : p;
}
/* p at '{' or '['; returns the position after the matching bracket. */
static const char *skip_value(const char *p)
{
    int depth = 0;
    do {
        if (*p == '"') {
            p = skip_str(p);
            continue;
        }
        if (*p == '{' || *p == '[')
            depth++;
        else if (*p == '}' || *p == ']')
            depth--;
        p++;
    } while (*p && depth > 0);
    return p;
}
/* Find "key" (as a key: followed by ':') at the top level of the object or
 * array [s, e); returns the first non-blank char of its value, or NULL. */
static const char *find_key(const char *s, const char *e, const char *key)
{
    size_t k = strlen(key);
    const char *p = s + 1; /* inside the bracket */
    while (p < e) {
        if (*p == '"') {
            const char *q = skip_str(p);
            const char *v = q;
            while (v < e && (*v == ' ' || *v == '\n' || *v == '\t' || *v == '\r'))
                v++;
            if (v < e && *v == ':') {
                v++;
                while (v < e && (*v == ' ' || *v == '\n' || *v == '\t' || *v == '\r'))
                    v++;
                if ((size_t)(q - p) == k + 2 && !strncmp(p + 1, key, k))
                    return v;
                if (*v == '{' || *v == '[')
                    q = skip_value(v);
            }
            p = q;
            continue;
        }
        if (*p == '{' || *p == '[') {
            p = skip_value(p);
            continue;
        }
        p++;
    }
    return NULL;
}
static int get_json_string(const char *v, char *out, size_t n)
{
    if (!v || *v != '"')
        return -1;
    const char *q = skip_str(v);
    size_t len = (size_t)(q - v - 2);
    if (len >= n)
        return -1;
    memcpy(out, v + 1, len);
    out[len] = 0;
    return 0;
}

/* Parse the entry `name` of MANIFEST.json: ntasks, nfiles, files[0], per task bytes and sha256. */
static int parse_manifest(const char *path, const char *name, manifest_vec *mv)
{
    size_t len;
    char *txt = (char *)tu_read_file(path, &len);
    if (!txt)
        return -1;
    txt = realloc(txt, len + 1);
    txt[len] = 0;
    const char *end = txt + len;
    int rc = -1;
    const char *vecs = find_key(txt, end, "vectors");
    const char *v = vecs && *vecs == '{' ? find_key(vecs, skip_value(vecs), name) : NULL;
    if (!v || *v != '{')
        goto done;
    const char *ve = skip_value(v);
    const char *p = find_key(v, ve, "ntasks");
    mv->ntasks = p ? atoi(p) : -1;
    p = find_key(v, ve, "nfiles");
    mv->nfiles = p ? atoi(p) : -1;
    p = find_key(v, ve, "files");
    if (!p || *p != '[')
        goto done;
    p++;
    while (*p == ' ' || *p == '\n')
        p++;
    if (get_json_string(p, mv->file0, sizeof mv->file0))
        goto done;
    p = find_key(v, ve, "tasks");
    if (!p || *p != '[' || mv->ntasks < 1 || mv->ntasks > MAXVT)
        goto done;
    const char *te = skip_value(p);
    int seen = 0;
    for (const char *q = p + 1; q < te; q++) {
        if (*q != '{')
            continue;
        const char *oe = skip_value(q);
        const char *tk = find_key(q, oe, "task"), *by = find_key(q, oe, "bytes"), *sh = find_key(q, oe, "sha256");
        int t = tk ? atoi(tk) : -1;
        if (t < 0 || t >= mv->ntasks || !by || get_json_string(sh, mv->sha[t], sizeof mv->sha[t]))
            goto done;
        mv->bytes[t] = atoll(by);
        seen++;
        q = oe - 1;
    }
    rc = seen == mv->ntasks ? 0 : -1;
done:
    free(txt);
    return rc;
}

/* Check the bytes of vector task t: length, sha256 and the MANIFEST pattern. */
static void check_vector_task(const unsigned char *buf, size_t got, const manifest_vec *mv, int t, const char *what)
{
    char h[65];
    CHECK((long long)got == mv->bytes[t], "%s: read %zu bytes, MANIFEST says %lld", what, got, mv->bytes[t]);
    sha_hex(buf, got, h);
    CHECK(!strcmp(h, mv->sha[t]), "%s: sha256 %s, MANIFEST says %s", what, h, mv->sha[t]);
    size_t i = 0;
    while (i < got && buf[i] == tu_pat(t, (int64_t)i))
        i++;
    CHECK(i == got, "%s: byte %zu is 0x%02x, pattern says 0x%02x", what, i, i < got ? buf[i] : 0,
          tu_pat(t, (int64_t)i));
}

static int load_vector(const char *vdir, const char *name, manifest_vec *mv, char *path, size_t n)
{
    char mpath[2048];
    snprintf(mpath, sizeof mpath, "%s/MANIFEST.json", vdir);
    memset(mv, 0, sizeof *mv);
    if (parse_manifest(mpath, name, mv)) {
        CHECK(0, "cannot parse entry %s of %s", name, mpath);
        return -1;
    }
    snprintf(path, n, "%s/%s", vdir, mv->file0);
    return 0;
}

/* Mapped read of `path` with the automatic distribution; checks all tasks
 * against the manifest (mv) or against expected task data (td). */
static void mapped_read_check(const char *path, int ntasks, int nfiles, const manifest_vec *mv, const taskdata *td,
                              const int *exp_file, const int *exp_lrank, const int *explicit_tasks, int nexplicit,
                              const char *what);

static int test_vector(void)
{
    const char *vdir = arg_str("vecdir", ".");
    const char *name = arg_str("name", "par4");
    int mapped = (int)arg_int("mapped", 0);
    const char *expect = arg_str("expect", "ok");
    manifest_vec mv;
    char path[2400], w[256];
    if (load_vector(vdir, name, &mv, path, sizeof path))
        return 0;
    if (mapped) {
        mapped_read_check(path, mv.ntasks, mv.nfiles, &mv, NULL, NULL, NULL, NULL, 0, name);
        return 0;
    }
    CHECK(mv.ntasks == g_size, "vector %s has %d tasks: run with that many ranks, not %d", name, mv.ntasks, g_size);
    if (mv.ntasks != g_size)
        return 0;
    if (!strcmp(expect, "unclosed")) {
        /* a container whose writer never closed it: refused on every rank,
         * rank 0 (which reads the metadata) says why */
        int nf = -1, grank = -1;
        sion_int64 chunk = -1;
        sion_int32 fsblk = -1;
        int prev = sheaf_set_error_printing(0);
        int sid = sion_paropen_mpi(path, "br", &nf, MPI_COMM_WORLD, NULL, &chunk, &fsblk, &grank, NULL, NULL);
        sheaf_set_error_printing(prev);
        const char *msg = sheaf_last_error();
        CHECK(sid == -1, "sion_paropen_mpi(%s, br) of an unclosed container = %d, expected -1", name, sid);
        CHECK(msg && *msg, "no message for the refused open");
        if (g_rank == 0) {
            CHECK(msg && strstr(msg, "closed"),
                  "rank 0's message does not say the container was not closed: "
                  "\"%s\"",
                  msg ? msg : "");
            CHECK(sheaf_last_error_code() == SHEAF_E_UNCLOSED,
                  "sheaf_last_error_code = %d, expected "
                  "SHEAF_E_UNCLOSED",
                  sheaf_last_error_code());
        }
        if (!agree_ok(sid == -1, "unclosed open failing") && sid >= 0)
            sion_parclose_mpi(sid);
        return 0;
    }
    int nf = -1, grank = -1;
    sion_int64 chunk = -1;
    sion_int32 fsblk = -1;
    FILE *fp = NULL;
    char *newf = NULL;
    int sid = sion_paropen_mpi(path, "br", &nf, MPI_COMM_WORLD, NULL, &chunk, &fsblk, &grank, &fp, &newf);
    CHECK(sid >= 0, "sion_paropen_mpi(%s, br) = %d", path, sid);
    if (!agree_ok(sid >= 0, "vector read open"))
        return 0;
    CHECK(nf == mv.nfiles, "%s: *numFiles = %d, MANIFEST says %d", name, nf, mv.nfiles);
    CHECK(chunk > 0 && fsblk > 0 && chunk % fsblk == 0, "%s: *chunksize %lld / *fsblksize %d", name, (long long)chunk,
          fsblk);
    CHECK(grank == g_rank, "%s: *globalrank = %d", name, grank);
    CHECK(newf != NULL && strstr(newf, mv.file0) != NULL, "%s: *newfname = %s", name, newf ? newf : "(null)");
    free(newf);
    int big = strstr(name, "bigendian") != NULL;
    CHECK(sion_get_file_endianness(sid) == big, "%s: sion_get_file_endianness = %d", name,
          sion_get_file_endianness(sid));
    if (!strcmp(name, "bigblk2"))
        CHECK(chunk >= 65536, "bigblk2: *chunksize = %lld < 65536", (long long)chunk);
    size_t got = 0;
    snprintf(w, sizeof w, "vector %s task %d", name, g_rank);
    unsigned char *buf = read_task_loop(sid, (size_t)mv.bytes[g_rank], &got, 7, w);
    if (buf)
        check_vector_task(buf, got, &mv, g_rank, w);
    free(buf);
    int rc = sion_parclose_mpi(sid);
    CHECK(rc == SION_SUCCESS, "%s: sion_parclose_mpi = %d", name, rc);
    agree_ok(rc == SION_SUCCESS, "vector close");
    return 0;
}

/* ---- 3. wrong task count --------------------------------------------------------- */

static int test_wrongcount(void)
{
    const char *vdir = arg_str("vecdir", ".");
    manifest_vec mv;
    char path[2400];
    if (load_vector(vdir, "par4", &mv, path, sizeof path))
        return 0;
    int nf = -1, grank = -1;
    sion_int64 chunk = -1;
    sion_int32 fsblk = -1;
    double t0 = MPI_Wtime();
    int sid = sion_paropen_mpi(path, "br", &nf, MPI_COMM_WORLD, NULL, &chunk, &fsblk, &grank, NULL, NULL);
    double dt = MPI_Wtime() - t0;
    const char *msg = sheaf_last_error();
    CHECK(sid == -1, "sion_paropen_mpi(par4 (4 tasks), br) with %d ranks = %d, expected -1", g_size, sid);
    CHECK(msg && strstr(msg, "mapped"), "message does not mention the mapped open: \"%s\"", msg ? msg : "");
    CHECK(has_number(msg, 4) && has_number(msg, g_size), "message does not name both counts (4, %d): \"%s\"", g_size,
          msg ? msg : "");
    CHECK(dt < 30, "failing open took %.1f s", dt);
    if (!agree_ok(sid == -1, "wrong-count open failing") && sid >= 0)
        sion_parclose_mpi(sid);
    /* the right way with this many ranks: a mapped read */
    mapped_read_check(path, mv.ntasks, mv.nfiles, &mv, NULL, NULL, NULL, NULL, 0, "par4 mapped");
    return 0;
}

/* ---- 4. mapped opens ------------------------------------------------------------- */

#define NMAP 8
static const uint64_t SEED_PAR8 = 8008, SEED_MAP = 3003;

/* Expected data/chunks/mapping of the containers of the mapped tests. */
static void map_expect(const char *which, taskdata *td, int *file, int *lrank, int *nfiles)
{
    int par8 = !strcmp(which, "par8"), two = !strcmp(which, "map2"), three = !strcmp(which, "map3");
    for (int t = 0; t < NMAP; t++) {
        gen_task(par8 ? SEED_PAR8 : SEED_MAP, t, NMAP, 1, 4096, &td[t]);
        if (three) {
            file[t] = t < 5 ? 0 : 1; /* uneven: 5 + 3 tasks */
            lrank[t] = t < 5 ? t : t - 5;
        } else if (par8) {
            file[t] = t / 4;
            lrank[t] = t % 4;
        } else if (two) {
            file[t] = t % 2; /* non-contiguous mapping */
            lrank[t] = t / 2;
        } else {
            file[t] = 0;
            lrank[t] = t;
        }
    }
    *nfiles = par8 || two || three ? 2 : 1;
}

/* Writer of logical task t in a mapped write: t % size, except for map3,
 * where the last rank owns no task at all. */
static int map_owner(const char *which, int t)
{
    if (!strcmp(which, "map3") && g_size > 1)
        return t % (g_size - 1);
    return t % g_size;
}

static void free_tasks(taskdata *td, int n)
{
    for (int t = 0; t < n; t++)
        free(td[t].data);
}

static int test_mapped_w8(void)
{
    CHECK(g_size == NMAP, "mapped-w8 needs %d ranks, not %d", NMAP, g_size);
    if (g_size != NMAP)
        return 0;
    setup_dir();
    taskdata td[NMAP];
    int file[NMAP], lrank[NMAP], nfiles;
    map_expect("par8", td, file, lrank, &nfiles);
    char fname[2300];
    snprintf(fname, sizeof fname, "%s/par8.sion", g_dir);
    int nf = nfiles, grank;
    sion_int64 chunk = td[g_rank].chunk_req;
    sion_int32 fsblk = 4096;
    /* lComm NULL: allowed when numFiles > 0 */
    int sid = sion_paropen_mpi(fname, "bw", &nf, MPI_COMM_WORLD, NULL, &chunk, &fsblk, &grank, NULL, NULL);
    CHECK(sid >= 0, "sion_paropen_mpi(%s, bw, 2 files, lComm NULL) = %d", fname, sid);
    if (agree_ok(sid >= 0, "par8 write open")) {
        write_pieces(sid, &td[g_rank], chunk, 99 + (uint64_t)g_rank);
        int rc = sion_parclose_mpi(sid);
        CHECK(rc == SION_SUCCESS, "sion_parclose_mpi = %d", rc);
        agree_ok(rc == SION_SUCCESS, "par8 close");
    }
    free_tasks(td, NMAP);
    cleanup_dir();
    return 0;
}

/* Mapped read. explicit_tasks == NULL: automatic distribution (*nlocaltasks = -1),
 * else this rank asks for explicit_tasks[0..nexplicit). Reads each owned task
 * in reverse order with sion_seek(sid, grank, 0, 0) and compares with the
 * manifest (mv) or td. exp_file/exp_lrank: expected mapping (NULL: not checked). */
static void mapped_read_check(const char *path, int ntasks, int nfiles, const manifest_vec *mv, const taskdata *td,
                              const int *exp_file, const int *exp_lrank, const int *explicit_tasks, int nexplicit,
                              const char *what)
{
    /* A process that asks for no task: sheaf may refuse that (it does now:
     * "mapped read: this process got no task to read"); then it must fail on
     * every rank with a message, and not hang. */
    int zero = (explicit_tasks && nexplicit == 0) || (!explicit_tasks && g_size > ntasks), anyzero = 0;
    MPI_Allreduce(&zero, &anyzero, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    int nf = -1, nlocal = explicit_tasks ? nexplicit : -1;
    int *granks = NULL, *mfile = NULL, *mlrank = NULL;
    sion_int64 *chunks = NULL;
    sion_int32 fsblk = -1;
    FILE *fp = NULL;
    char w[300];
    if (explicit_tasks) {
        granks = malloc((size_t)(nexplicit ? nexplicit : 1) * sizeof *granks);
        memcpy(granks, explicit_tasks, (size_t)nexplicit * sizeof *granks);
    }
    int prev = anyzero ? sheaf_set_error_printing(0) : 1;
    int sid = sion_paropen_mapped_mpi((char *)path, "br", &nf, MPI_COMM_WORLD, &nlocal, &granks, &chunks, &mfile,
                                      &mlrank, &fsblk, &fp);
    if (anyzero)
        sheaf_set_error_printing(prev);
    if (anyzero && sid < 0) {
        const char *msg = sheaf_last_error();
        CHECK(msg && *msg, "%s: refused mapped read (a process without tasks) gives no message", what);
        agree_ok(0, "mapped read open with a process without tasks");
        if (g_rank == 0)
            printf("note: %s: mapped read with a process that has no task is refused (\"%s\")\n", what, msg ? msg : "");
        free(granks);
        return;
    }
    CHECK(sid >= 0, "%s: sion_paropen_mapped_mpi(%s, br, %s) = %d", what, path,
          explicit_tasks ? "explicit" : "automatic", sid);
    if (!agree_ok(sid >= 0, "mapped read open")) {
        free(granks);
        return;
    }
    CHECK(nf == nfiles, "%s: mapped read: *numFiles = %d, expected %d", what, nf, nfiles);
    CHECK(fsblk > 0, "%s: mapped read: *fsblksize = %d", what, fsblk);
    CHECK(fp != NULL || nlocal == 0, "%s: mapped read: fileptr NULL in ansi mode", what);
    if (explicit_tasks) {
        CHECK(nlocal == nexplicit, "%s: *nlocaltasks changed to %d from %d", what, nlocal, nexplicit);
    } else {
        /* automatic: contiguous ranges covering 0..ntasks-1 exactly once */
        int first = nlocal > 0 && granks ? granks[0] : -1, ok = granks != NULL || nlocal == 0;
        for (int i = 1; ok && i < nlocal; i++)
            ok = granks[i] == granks[i - 1] + 1;
        CHECK(ok && nlocal >= 0, "%s: automatic distribution gave %d tasks, not a contiguous range", what, nlocal);
        int *counts = malloc((size_t)g_size * sizeof(int)), *firsts = malloc((size_t)g_size * sizeof(int));
        MPI_Allgather(&nlocal, 1, MPI_INT, counts, 1, MPI_INT, MPI_COMM_WORLD);
        MPI_Allgather(&first, 1, MPI_INT, firsts, 1, MPI_INT, MPI_COMM_WORLD);
        int next = 0;
        for (int r = 0; r < g_size; r++) {
            if (counts[r] <= 0)
                continue;
            if (firsts[r] != next)
                ok = 0;
            next += counts[r];
        }
        CHECK(ok && next == ntasks,
              "%s: automatic distribution does not cover tasks 0..%d once (rank %d: %d tasks "
              "from %d)",
              what, ntasks - 1, g_rank, nlocal, first);
        free(counts);
        free(firsts);
    }
    for (int i = 0; i < nlocal && granks; i++) {
        int t = granks[i];
        if (t < 0 || t >= ntasks) {
            CHECK(0, "%s: owned task %d out of range", what, t);
            continue;
        }
        if (td)
            CHECK(chunks && chunks[i] == round_up(td[t].chunk_req, fsblk),
                  "%s: chunksizes[%d] (task %d) = %lld, "
                  "expected %lld",
                  what, i, t, chunks ? (long long)chunks[i] : -1LL, (long long)round_up(td[t].chunk_req, fsblk));
        if (exp_file)
            CHECK(mfile && mlrank && mfile[i] == exp_file[t] && mlrank[i] == exp_lrank[t],
                  "%s: task %d mapped to file %d lrank %d, expected %d/%d", what, t, mfile ? mfile[i] : -1,
                  mlrank ? mlrank[i] : -1, exp_file[t], exp_lrank[t]);
    }
    for (int i = nlocal - 1; i >= 0 && granks; i--) {
        int t = granks[i];
        if (t < 0 || t >= ntasks)
            continue;
        snprintf(w, sizeof w, "%s: mapped read task %d", what, t);
        int rc = sion_seek(sid, t, 0, 0);
        CHECK(rc == SION_SUCCESS, "%s: sion_seek(sid, %d, 0, 0) = %d", w, t, rc);
        if (rc != SION_SUCCESS)
            continue;
        size_t cap = td ? td[t].len : (size_t)mv->bytes[t], got = 0;
        unsigned char *buf = read_task_loop(sid, cap, &got, (uint64_t)t, w);
        if (buf) {
            if (td)
                compare_data(buf, got, &td[t], w);
            else
                check_vector_task(buf, got, mv, t, w);
        }
        free(buf);
    }
    /* interleaved: rewind every owned task, then read a piece of each in
     * turn, switching with sion_seek(sid, t, SION_CURRENT_BLK,
     * SION_CURRENT_POS): each task keeps its own cursor */
    if (nlocal > 1 && granks && td) {
        unsigned char **bufs = calloc((size_t)nlocal, sizeof *bufs);
        size_t *offs = calloc((size_t)nlocal, sizeof *offs);
        int ok = 1;
        for (int i = 0; i < nlocal; i++) {
            bufs[i] = malloc(td[granks[i]].len + 1);
            int rc = sion_seek(sid, granks[i], 0, 0);
            CHECK(rc == SION_SUCCESS, "%s: rewind task %d = %d", what, granks[i], rc);
            ok &= rc == SION_SUCCESS;
        }
        rng_t r = {4711};
        for (int left = ok; left;) {
            left = 0;
            for (int i = 0; i < nlocal && ok; i++) {
                int t = granks[i];
                if (offs[i] >= td[t].len)
                    continue;
                int rc = sion_seek(sid, t, SION_CURRENT_BLK, SION_CURRENT_POS);
                CHECK(rc == SION_SUCCESS, "%s: sion_seek(sid, %d, CURRENT_BLK, CURRENT_POS) = %d", what, t, rc);
                size_t n = (size_t)rng_range(&r, 1, 3000);
                if (n > td[t].len - offs[i])
                    n = td[t].len - offs[i];
                size_t got = rc == SION_SUCCESS ? sion_fread(bufs[i] + offs[i], 1, n, sid) : 0;
                CHECK(got == n, "%s: interleaved sion_fread(%zu) of task %d at offset %zu = %zu", what, n, t, offs[i],
                      got);
                if (got != n) {
                    ok = 0;
                    break;
                }
                offs[i] += n;
                left |= offs[i] < td[t].len;
            }
        }
        for (int i = 0; i < nlocal; i++) {
            snprintf(w, sizeof w, "%s: interleaved read of task %d", what, granks[i]);
            if (ok)
                compare_data(bufs[i], offs[i], &td[granks[i]], w);
            free(bufs[i]);
        }
        free(bufs);
        free(offs);
    }
    /* random access after switching: the middle of the first owned task */
    if (nlocal > 0 && granks && td && td[granks[0]].len > 20) {
        int t = granks[0];
        size_t p = td[t].len / 2;
        unsigned char b[10];
        int rc = sion_seek(sid, t, SION_ABSOLUTE_POS, (sion_int64)p);
        CHECK(rc == SION_SUCCESS, "%s: sion_seek(sid, %d, ABSOLUTE_POS, %zu) = %d", what, t, p, rc);
        size_t got = sion_fread(b, 1, 10, sid);
        CHECK(got == 10 && !memcmp(b, td[t].data + p, 10),
              "%s: 10 bytes at absolute %zu of task %d: got %zu / "
              "mismatch",
              what, p, t, got);
    }
    /* a task this rank does not own cannot be selected */
    {
        int notmine = -1;
        for (int t = 0; t < ntasks && notmine < 0; t++) {
            int own = 0;
            for (int i = 0; i < nlocal && granks; i++)
                own |= granks[i] == t;
            if (!own)
                notmine = t;
        }
        if (notmine >= 0) {
            int prev2 = sheaf_set_error_printing(0);
            int rc = sion_seek(sid, notmine, 0, 0);
            sheaf_set_error_printing(prev2);
            CHECK(rc == SION_NOT_SUCCESS, "%s: sion_seek to task %d not owned by this rank = %d", what, notmine, rc);
        }
    }
    int rc = sion_parclose_mapped_mpi(sid);
    CHECK(rc == SION_SUCCESS, "%s: sion_parclose_mapped_mpi = %d", what, rc);
    agree_ok(rc == SION_SUCCESS, "mapped read close");
    free(granks);
    free(chunks);
    free(mfile);
    free(mlrank);
}

/* Mapped write from this job's ranks: rank r owns tasks t with t % size == r,
 * and writes them interleaved (switching with sion_seek). */
static void mapped_write(const char *which)
{
    taskdata td[NMAP];
    int file[NMAP], lrank[NMAP], nfiles;
    map_expect(which, td, file, lrank, &nfiles);
    char fname[2300], w[64];
    snprintf(fname, sizeof fname, "%s/%s.sion", g_dir, which);
    int nlocal = 0, granks_a[NMAP], mf[NMAP], ml[NMAP];
    sion_int64 ch[NMAP];
    for (int t = 0; t < NMAP; t++)
        if (map_owner(which, t) == g_rank) {
            granks_a[nlocal] = t;
            ch[nlocal] = td[t].chunk_req;
            mf[nlocal] = file[t];
            ml[nlocal] = lrank[t];
            nlocal++;
        }
    int *pg = granks_a, *pf = mf, *pl = ml, nf = nfiles;
    sion_int64 *pc = ch;
    sion_int32 fsblk = 4096;
    FILE *fp = NULL;
    int zero = nlocal == 0, anyzero = 0;
    MPI_Allreduce(&zero, &anyzero, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    int prev = anyzero ? sheaf_set_error_printing(0) : 1;
    int sid = sion_paropen_mapped_mpi(fname, "bw", &nf, MPI_COMM_WORLD, &nlocal, &pg, &pc, &pf, &pl, &fsblk, &fp);
    if (anyzero)
        sheaf_set_error_printing(prev);
    if (anyzero && sid < 0) {
        /* as for reads: refusing a process without tasks is allowed, on every rank */
        const char *msg = sheaf_last_error();
        CHECK(msg && *msg, "refused mapped write (a process without tasks) gives no message");
        agree_ok(0, "mapped write open with a process without tasks");
        if (g_rank == 0)
            printf("note: mapped write of %s with a process that has no task is refused (\"%s\")\n", which,
                   msg ? msg : "");
        /* a refused open must not have touched an existing container of that
         * name (test_mapped_rw put a copy of map1.sion there) */
        if (g_rank == 0) {
            char m1[2300];
            size_t la = 0, lb = 0;
            snprintf(m1, sizeof m1, "%s/map1.sion", g_dir);
            unsigned char *a = tu_read_file(m1, &la), *b = tu_read_file(fname, &lb);
            CHECK(a && b && la == lb && !memcmp(a, b, la),
                  "the refused mapped write open of %s changed the "
                  "existing file there (%zu bytes before, %zu after%s)",
                  fname, la, lb, a && b && la == lb ? ", contents differ" : "");
            free(a);
            free(b);
            unlink(fname);
        }
        goto out;
    }
    CHECK(sid >= 0, "sion_paropen_mapped_mpi(%s, bw, numFiles %d) = %d", fname, nfiles, sid);
    if (!agree_ok(sid >= 0, "mapped write open"))
        goto out;
    CHECK(fsblk == 4096, "mapped write: *fsblksize = %d", fsblk);
    for (int i = 0; i < nlocal; i++)
        CHECK(pc[i] == td[pg[i]].chunk_req,
              "mapped write: chunksizes[%d] = %lld, expected %lld (unchanged, as SIONlib)", i, (long long)pc[i],
              (long long)td[pg[i]].chunk_req);
    /* interleaved: a piece of each owned task in turn */
    {
        size_t off[NMAP] = {0};
        rng_t r = {77 + (uint64_t)g_rank};
        int left = 1;
        while (left) {
            left = 0;
            for (int i = 0; i < nlocal; i++) {
                int t = pg[i];
                if (off[i] >= td[t].len)
                    continue;
                int rc = sion_seek(sid, t, SION_CURRENT_BLK, SION_CURRENT_POS);
                CHECK(rc == SION_SUCCESS, "mapped write: sion_seek(sid, %d, CURRENT_BLK, CURRENT_POS) = %d", t, rc);
                size_t n = rng_range(&r, 0, 4) == 0 ? (size_t)pc[i] + 100 : (size_t)rng_range(&r, 1, 700);
                if (n > td[t].len - off[i])
                    n = td[t].len - off[i];
                size_t got = sion_fwrite(td[t].data + off[i], 1, n, sid);
                CHECK(got == n, "mapped write task %d: sion_fwrite(%zu) = %zu", t, n, got);
                if (got != n) {
                    off[i] = td[t].len;
                    continue;
                }
                off[i] += n;
                left |= off[i] < td[t].len;
            }
        }
    }
    {
        int rc = sion_parclose_mapped_mpi(sid);
        CHECK(rc == SION_SUCCESS, "sion_parclose_mapped_mpi (write %s) = %d", which, rc);
        if (!agree_ok(rc == SION_SUCCESS, "mapped write close"))
            goto out;
    }
    if (g_rank == 0) {
        sion_int64 ec[NMAP];
        for (int t = 0; t < NMAP; t++)
            ec[t] = round_up(td[t].chunk_req, 4096);
        snprintf(w, sizeof w, "serial read of mapped-written %s", which);
        serial_verify(fname, NMAP, nfiles, 4096, td, ec, w);
    }
    MPI_Barrier(MPI_COMM_WORLD);
out:
    free_tasks(td, NMAP);
}

static void mapped_reads(const char *which)
{
    taskdata td[NMAP];
    int file[NMAP], lrank[NMAP], nfiles;
    map_expect(which, td, file, lrank, &nfiles);
    char fname[2300], what[128];
    snprintf(fname, sizeof fname, "%s/%s.sion", g_dir, which);
    if (file_size(fname) <= 0) { /* map3: the mapped write may have been refused */
        free_tasks(td, NMAP);
        return;
    }
    /* explicit, non-contiguous: t % size == rank */
    int mine[NMAP], n = 0;
    for (int t = 0; t < NMAP; t++)
        if (t % g_size == g_rank)
            mine[n++] = t;
    snprintf(what, sizeof what, "%s explicit t%%%d", which, g_size);
    mapped_read_check(fname, NMAP, nfiles, NULL, td, file, lrank, mine, n, what);
    /* explicit, uneven: the last rank takes task 0 only, rank 0 the rest of its share and more */
    n = 0;
    for (int t = 0; t < NMAP; t++) {
        int owner = t == 0 ? g_size - 1 : (t * 7) % g_size;
        if (owner == g_rank)
            mine[n++] = t;
    }
    snprintf(what, sizeof what, "%s explicit scattered", which);
    mapped_read_check(fname, NMAP, nfiles, NULL, td, file, lrank, mine, n, what);
    /* explicit: every task on rank 0, none on the others */
    n = 0;
    for (int t = 0; g_rank == 0 && t < NMAP; t++)
        mine[n++] = NMAP - 1 - t;
    snprintf(what, sizeof what, "%s explicit all on rank 0", which);
    mapped_read_check(fname, NMAP, nfiles, NULL, td, file, lrank, mine, n, what);
    /* automatic */
    snprintf(what, sizeof what, "%s automatic", which);
    mapped_read_check(fname, NMAP, nfiles, NULL, td, file, lrank, NULL, 0, what);
    free_tasks(td, NMAP);
}

/* mapped-w3: mapped writes of map1 (1 file) and map2 (2 files, non-contiguous
 * mapping), each read back with the serial API on rank 0. */
static int test_mapped_w3(void)
{
    setup_dir();
    mapped_write("map1");
    mapped_write("map2");
    cleanup_dir();
    return 0;
}

/* mapped-r: mapped reads (explicit, scattered, all-on-rank-0, automatic) of
 * par8, map1, map2 and, if present, map3. zero=1 first tries the mapped write
 * of map3, in which the last rank owns no task, over a copy of map1.sion. */
static int test_mapped_r(void)
{
    setup_dir();
    if (arg_int("zero", 0)) {
        if (g_rank == 0) { /* an existing container where map3 goes (see mapped_write) */
            char a[2300], b[2300];
            size_t n = 0;
            snprintf(a, sizeof a, "%s/map1.sion", g_dir);
            snprintf(b, sizeof b, "%s/map3.sion", g_dir);
            unsigned char *d = tu_read_file(a, &n);
            CHECK(d && tu_write_file(b, d, n) == 0, "copy %s to %s", a, b);
            free(d);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        mapped_write("map3");
    }
    const char *names[] = {"par8", "map1", "map2", "map3"};
    for (int i = 0; i < 4; i++) {
        char p[2300];
        snprintf(p, sizeof p, "%s/%s.sion", g_dir, names[i]);
        if (i < 3)
            CHECK(file_size(p) > 0, "%s missing (fixtures did not run?)", p);
        if (file_size(p) > 0)
            mapped_reads(names[i]);
    }
    cleanup_dir();
    return 0;
}

/* ---- 5. reinit ------------------------------------------------------------------- */

/* Open "bw" with 1 MiB chunks, write a few bytes, sion_parreinit_mpi(sid,
 * 4096), write the real data, close: read back (parallel and serial) the
 * stored chunk sizes are 4096, the early bytes are gone, the file is small. */
static int test_reinit(void)
{
    setup_dir();
    char fname[2300], w[64];
    snprintf(fname, sizeof fname, "%s/reinit.sion", g_dir);
    taskdata *all = calloc((size_t)g_size, sizeof *all);
    for (int t = 0; t < g_size; t++)
        gen_task(555, t, g_size, 0, 4096, &all[t]);
    taskdata *mine = &all[g_rank];
    int nf = 1, grank;
    sion_int64 chunk = 1 << 20;
    sion_int32 fsblk = 4096;
    MPI_Comm lc = MPI_COMM_NULL;
    int sid = sion_paropen_mpi(fname, "bw", &nf, MPI_COMM_WORLD, &lc, &chunk, &fsblk, &grank, NULL, NULL);
    CHECK(sid >= 0, "sion_paropen_mpi(bw, chunksize 1 MiB) = %d", sid);
    if (!agree_ok(sid >= 0, "reinit write open"))
        goto out;
    CHECK(chunk == 1 << 20, "*chunksize = %lld", (long long)chunk);
    /* data written before the reinit are dropped */
    CHECK(sion_fwrite("JUNKJUNKJUNK", 1, 12, sid) == 12, "sion_fwrite before reinit");
    int rc = sion_parreinit_mpi(sid, 4096);
    CHECK(rc == SION_SUCCESS, "sion_parreinit_mpi(sid, 4096) = %d", rc);
    if (!agree_ok(rc == SION_SUCCESS, "reinit")) {
        sion_parclose_mpi(sid);
        goto out;
    }
    CHECK(sion_get_bytes_written(sid) == 0, "bytes written after reinit = %lld",
          (long long)sion_get_bytes_written(sid));
    write_pieces(sid, mine, 4096, 5);
    rc = sion_parclose_mpi(sid);
    CHECK(rc == SION_SUCCESS, "sion_parclose_mpi after reinit = %d", rc);
    if (!agree_ok(rc == SION_SUCCESS, "reinit close"))
        goto out;
    long long sz = file_size(fname);
    CHECK(sz > 0 && sz < (1 << 20), "file size %lld: the 1 MiB chunks are still in the layout", sz);
    /* read back */
    sion_int64 rchunk = -1;
    sion_int32 rfs = -1;
    nf = -1;
    sid = sion_paropen_mpi(fname, "br", &nf, MPI_COMM_WORLD, &lc, &rchunk, &rfs, &grank, NULL, NULL);
    CHECK(sid >= 0, "read open after reinit = %d", sid);
    if (!agree_ok(sid >= 0, "reinit read open"))
        goto out;
    CHECK(rchunk == 4096, "read: *chunksize = %lld, expected 4096 (the reinit size)", (long long)rchunk);
    CHECK(rfs == 4096 && nf == 1, "read: *fsblksize %d, *numFiles %d", rfs, nf);
    size_t got = 0;
    snprintf(w, sizeof w, "reinit read task %d", g_rank);
    unsigned char *buf = read_task_loop(sid, mine->len, &got, 3, w);
    if (buf)
        compare_data(buf, got, mine, w);
    free(buf);
    rc = sion_parclose_mpi(sid);
    CHECK(rc == SION_SUCCESS, "read close = %d", rc);
    agree_ok(rc == SION_SUCCESS, "reinit read close");
    if (g_rank == 0) {
        sion_int64 *ec = malloc((size_t)g_size * sizeof *ec);
        for (int t = 0; t < g_size; t++)
            ec[t] = 4096;
        serial_verify(fname, g_size, 1, 4096, all, ec, "serial read after reinit");
        free(ec);
    }
out:
    for (int t = 0; t < g_size; t++)
        free(all[t].data);
    free(all);
    cleanup_dir();
    return 0;
}

/* ---- 6. dup ---------------------------------------------------------------------- */

/* After a parallel read open: SION_DUP_ALL copy read from a second pthread
 * while the main thread reads through the original; collective close refused
 * on the copy; sion_dedup; SION_DUP_RANK of the own task (other ranks' tasks
 * and unknown tasks refused); dup of write and serial sids refused. */
struct reader {
    int sid;
    const taskdata *td;
    size_t got;
    unsigned char *buf;
    uint64_t seed;
    int fail;
};

static void *reader_thread(void *arg)
{
    struct reader *r = arg;
    /* no CHECK here (g_fail is not atomic): results are checked by the caller */
    rng_t g = {r->seed};
    r->buf = malloc(r->td->len + 1);
    r->got = 0;
    while (!sion_feof(r->sid)) {
        sion_int64 avail = sion_bytes_avail_in_block(r->sid);
        if (avail <= 0 || r->got + (size_t)avail > r->td->len) {
            r->fail = 1;
            break;
        }
        size_t n = (size_t)rng_range(&g, 1, avail);
        size_t got = sion_fread(r->buf + r->got, 1, n, r->sid);
        if (got != n) {
            r->fail = 2;
            break;
        }
        r->got += n;
    }
    return NULL;
}

static int test_dup(void)
{
    setup_dir();
    char fname[2300], w[96];
    snprintf(fname, sizeof fname, "%s/dup.sion", g_dir);
    taskdata mine;
    gen_task(4242, g_rank, g_size, 0, 4096, &mine);
    int nf = 1, grank;
    sion_int64 chunk = 4096;
    sion_int32 fsblk = 4096;
    MPI_Comm lc = MPI_COMM_NULL;
    int sid = sion_paropen_mpi(fname, "bw", &nf, MPI_COMM_WORLD, &lc, &chunk, &fsblk, &grank, NULL, NULL);
    CHECK(sid >= 0, "write open = %d", sid);
    if (!agree_ok(sid >= 0, "dup write open"))
        goto out;
    {
        int prev = sheaf_set_error_printing(0);
        int d = sion_dup(sid, SION_DUP_ALL, 0, 0);
        sheaf_set_error_printing(prev);
        CHECK(d == -1, "sion_dup on a write sid = %d, expected -1", d);
        if (d >= 0)
            sion_dedup(d);
    }
    write_pieces(sid, &mine, chunk, 1);
    int rc = sion_parclose_mpi(sid);
    if (!agree_ok(rc == SION_SUCCESS, "dup write close"))
        goto out;

    nf = -1;
    sid = sion_paropen_mpi(fname, "br", &nf, MPI_COMM_WORLD, &lc, &chunk, &fsblk, &grank, NULL, NULL);
    if (!agree_ok(sid >= 0, "dup read open"))
        goto out;
    /* SION_DUP_ALL, read concurrently from a second thread */
    int d = sion_dup(sid, SION_DUP_ALL, 0, 0);
    CHECK(d >= 0 && d != sid, "sion_dup(sid, SION_DUP_ALL) = %d (sid %d)", d, sid);
    if (d >= 0) {
        struct reader r = {d, &mine, 0, NULL, 11, 0};
        pthread_t th;
        int prc = pthread_create(&th, NULL, reader_thread, &r);
        CHECK(prc == 0, "pthread_create = %d", prc);
        size_t got = 0;
        snprintf(w, sizeof w, "original sid, task %d, concurrent with the copy", g_rank);
        unsigned char *buf = read_task_loop(sid, mine.len, &got, 12, w);
        if (prc == 0)
            pthread_join(th, NULL);
        if (buf)
            compare_data(buf, got, &mine, w);
        free(buf);
        CHECK(r.fail == 0, "reader thread on the copy failed (%s) after %zu bytes",
              r.fail == 1 ? "bytes_avail_in_block <= 0 or too much data" : "short sion_fread", r.got);
        snprintf(w, sizeof w, "SION_DUP_ALL copy, task %d, second thread", g_rank);
        compare_data(r.buf, r.got, &mine, w);
        free(r.buf);
        /* collective calls are refused on a copy (called on all ranks: no hang either way) */
        int prev = sheaf_set_error_printing(0);
        rc = sion_parclose_mpi(d);
        sheaf_set_error_printing(prev);
        CHECK(rc == SION_ID_NOT_VALID, "sion_parclose_mpi on a dup copy = %d, expected refusal", rc);
        rc = sion_dedup(d);
        CHECK(rc == SION_SUCCESS, "sion_dedup(copy) = %d", rc);
    }
    /* SION_DUP_RANK of this rank's task */
    d = sion_dup(sid, SION_DUP_RANK, g_rank, 0);
    CHECK(d >= 0, "sion_dup(sid, SION_DUP_RANK, %d) = %d", g_rank, d);
    if (d >= 0) {
        size_t got = 0;
        snprintf(w, sizeof w, "SION_DUP_RANK copy, task %d", g_rank);
        unsigned char *buf = read_task_loop(d, mine.len, &got, 13, w);
        if (buf)
            compare_data(buf, got, &mine, w);
        free(buf);
        CHECK(sion_dedup(d) == SION_SUCCESS, "sion_dedup(SION_DUP_RANK copy)");
    }
    {
        int prev = sheaf_set_error_printing(0);
        int other = (g_rank + 1) % g_size;
        if (g_size > 1) {
            d = sion_dup(sid, SION_DUP_RANK, other, 0);
            CHECK(d == -1, "sion_dup(sid, SION_DUP_RANK, %d = another rank's task) = %d, expected -1", other, d);
            if (d >= 0)
                sion_dedup(d);
        }
        d = sion_dup(sid, SION_DUP_RANK, g_size + 5, 0);
        CHECK(d == -1, "sion_dup(sid, SION_DUP_RANK, %d = no such task) = %d", g_size + 5, d);
        rc = sion_dedup(sid);
        CHECK(rc == SION_NOT_SUCCESS, "sion_dedup(original sid) = %d, expected SION_NOT_SUCCESS", rc);
        sheaf_set_error_printing(prev);
    }
    /* the original is still usable: rewind and read again */
    rc = sion_seek(sid, g_rank, 0, 0);
    CHECK(rc == SION_SUCCESS, "sion_seek(sid, own, 0, 0) after dups = %d", rc);
    {
        size_t got = 0;
        snprintf(w, sizeof w, "original after dedup, task %d", g_rank);
        unsigned char *buf = read_task_loop(sid, mine.len, &got, 14, w);
        if (buf)
            compare_data(buf, got, &mine, w);
        free(buf);
    }
    rc = sion_parclose_mpi(sid);
    CHECK(rc == SION_SUCCESS, "sion_parclose_mpi(original) = %d", rc);
    agree_ok(rc == SION_SUCCESS, "dup read close");
    /* serial opens cannot be duplicated */
    if (g_rank == 0) {
        int nt, nfs;
        sion_int32 bs;
        int s = sion_open(fname, "rb", &nt, &nfs, NULL, &bs, NULL, NULL);
        CHECK(s >= 0, "serial open = %d", s);
        if (s >= 0) {
            int prev = sheaf_set_error_printing(0);
            d = sion_dup(s, SION_DUP_ALL, 0, 0);
            sheaf_set_error_printing(prev);
            CHECK(d == -1, "sion_dup on a serial sid = %d, expected -1", d);
            if (d >= 0)
                sion_dedup(d);
            sion_close(s);
        }
    }
out:
    free(mine.data);
    cleanup_dir();
    return 0;
}

/* ---- 7. misuse ------------------------------------------------------------------- */

/* Refusals that must be agreed on by all ranks (mode without w/r, numFiles >
 * ranks, a bad chunk size on one rank, a missing file, an I/O error on one
 * file's master, a missing member file) and per-sid misuse (fwrite on a read
 * sid, fread on a write sid, seek to another rank's task). */
static int test_misuse(void)
{
    setup_dir();
    char fname[2300], w[96];
    snprintf(fname, sizeof fname, "%s/misuse.sion", g_dir);
    taskdata mine;
    gen_task(777, g_rank, g_size, 0, 4096, &mine);
    int nf = 1, grank, sid, rc;
    sion_int64 chunk = 4096;
    sion_int32 fsblk = 4096;
    MPI_Comm lc = MPI_COMM_NULL;
    unsigned char tmp[64];
    const char *msg;
    int prev = sheaf_set_error_printing(0);

    /* mode without w or r: refused on all ranks */
    sid = sion_paropen_mpi(fname, "b,ansi", &nf, MPI_COMM_WORLD, &lc, &chunk, &fsblk, &grank, NULL, NULL);
    msg = sheaf_last_error();
    CHECK(sid == -1, "sion_paropen_mpi(mode \"b,ansi\") = %d, expected -1", sid);
    CHECK(msg && *msg, "no message for a mode without w or r");
    if (!agree_ok(sid == -1, "bad-mode open failing") && sid >= 0)
        sion_parclose_mpi(sid);
    /* numFiles > size */
    nf = g_size + 1;
    sid = sion_paropen_mpi(fname, "bw", &nf, MPI_COMM_WORLD, &lc, &chunk, &fsblk, &grank, NULL, NULL);
    CHECK(sid == -1, "sion_paropen_mpi(numFiles %d > %d ranks) = %d, expected -1", g_size + 1, g_size, sid);
    if (!agree_ok(sid == -1, "numFiles > size open failing") && sid >= 0)
        sion_parclose_mpi(sid);
    /* a bad chunk size on the last rank only: the open fails on every rank */
    nf = 1;
    chunk = g_rank == g_size - 1 ? -5 : 4096;
    sid = sion_paropen_mpi(fname, "bw", &nf, MPI_COMM_WORLD, &lc, &chunk, &fsblk, &grank, NULL, NULL);
    CHECK(sid == -1, "sion_paropen_mpi with chunksize -5 on rank %d = %d, expected -1 on all ranks", g_size - 1, sid);
    if (!agree_ok(sid == -1, "bad-chunk open failing") && sid >= 0)
        sion_parclose_mpi(sid);
    /* reading a file that does not exist */
    {
        char nx[2400];
        snprintf(nx, sizeof nx, "%s/does-not-exist.sion", g_dir);
        nf = -1;
        sid = sion_paropen_mpi(nx, "br", &nf, MPI_COMM_WORLD, &lc, &chunk, &fsblk, &grank, NULL, NULL);
        msg = sheaf_last_error();
        CHECK(sid == -1, "read open of a missing file = %d", sid);
        CHECK(msg && strstr(msg, "does-not-exist.sion"), "message does not name the missing file: \"%s\"",
              msg ? msg : "");
        if (!agree_ok(sid == -1, "missing-file open failing") && sid >= 0)
            sion_parclose_mpi(sid);
    }
    /* an I/O error on one file's master only (physical file 1 cannot be
     * created: a directory has its name): the open fails on every rank */
    if (g_size > 1) {
        char f1[2400], bad[2300];
        snprintf(bad, sizeof bad, "%s/ioerr.sion", g_dir);
        physname(f1, sizeof f1, bad, 1);
        if (g_rank == 0)
            CHECK(mkdir(f1, 0755) == 0, "mkdir %s", f1);
        MPI_Barrier(MPI_COMM_WORLD);
        nf = 2;
        chunk = 4096;
        sid = sion_paropen_mpi(bad, "bw", &nf, MPI_COMM_WORLD, &lc, &chunk, &fsblk, &grank, NULL, NULL);
        msg = sheaf_last_error();
        CHECK(sid == -1, "write open with physical file 1 not creatable = %d, expected -1 on all ranks", sid);
        if (g_rank == g_size / 2) /* the master of file 1 */
            CHECK(msg && strstr(msg, "ioerr.sion.000001"), "the master of file 1 does not name it: \"%s\"",
                  msg ? msg : "");
        if (!agree_ok(sid == -1, "unwritable-member open failing") && sid >= 0)
            sion_parclose_mpi(sid);
    }
    /* chunk size 0 on one rank: the open works; that rank cannot write a byte
     * (refused, no endless block loop), the others write normally */
    {
        char z[2300];
        snprintf(z, sizeof z, "%s/zero.sion", g_dir);
        nf = 1;
        chunk = g_rank == 0 ? 0 : 4096;
        sid = sion_paropen_mpi(z, "bw", &nf, MPI_COMM_WORLD, &lc, &chunk, &fsblk, &grank, NULL, NULL);
        CHECK(sid >= 0, "write open with chunksize 0 on rank 0 = %d", sid);
        if (agree_ok(sid >= 0, "chunk-0 open")) {
            if (g_rank == 0) {
                CHECK(chunk == 0, "*chunksize for a request of 0 = %lld", (long long)chunk);
                size_t wn = sion_fwrite("x", 1, 1, sid);
                CHECK(wn == 0, "sion_fwrite of 1 byte with chunk size 0 = %zu, expected 0", wn);
            } else {
                CHECK(sion_fwrite(mine.data, 1, 100, sid) == 100, "sion_fwrite(100) next to a chunk-0 task");
            }
            rc = sion_parclose_mpi(sid);
            CHECK(rc == SION_SUCCESS, "close with a chunk-0 task = %d", rc);
            agree_ok(rc == SION_SUCCESS, "chunk-0 close");
        }
    }
    sheaf_set_error_printing(prev);

    /* a good container */
    chunk = 4096;
    nf = 1;
    sid = sion_paropen_mpi(fname, "bw", &nf, MPI_COMM_WORLD, &lc, &chunk, &fsblk, &grank, NULL, NULL);
    CHECK(sid >= 0, "write open after failed opens = %d", sid);
    if (!agree_ok(sid >= 0, "misuse write open"))
        goto out;
    prev = sheaf_set_error_printing(0);
    CHECK(sion_fread(tmp, 1, 10, sid) == 0, "sion_fread on a write sid did not return 0");
    if (g_size > 1) {
        rc = sion_seek(sid, (g_rank + 1) % g_size, SION_CURRENT_BLK, SION_CURRENT_POS);
        CHECK(rc == SION_NOT_SUCCESS, "sion_seek to another rank on a parallel write sid = %d", rc);
    }
    sheaf_set_error_printing(prev);
    write_pieces(sid, &mine, chunk, 2);
    rc = sion_parclose_mpi(sid);
    if (!agree_ok(rc == SION_SUCCESS, "misuse write close"))
        goto out;

    nf = -1;
    sid = sion_paropen_mpi(fname, "br", &nf, MPI_COMM_WORLD, &lc, &chunk, &fsblk, &grank, NULL, NULL);
    CHECK(sid >= 0, "read open = %d", sid);
    if (!agree_ok(sid >= 0, "misuse read open"))
        goto out;
    prev = sheaf_set_error_printing(0);
    size_t wn = sion_fwrite("abcdefghij", 1, 10, sid);
    msg = sheaf_last_error();
    CHECK(wn == 0, "sion_fwrite on a read sid = %zu, expected 0", wn);
    CHECK(msg && *msg, "no message for sion_fwrite on a read sid");
    if (g_size > 1) {
        int other = (g_rank + 1) % g_size;
        rc = sion_seek(sid, other, 0, 0);
        msg = sheaf_last_error();
        CHECK(rc == SION_NOT_SUCCESS, "sion_seek(sid, %d = another rank's task, 0, 0) on a parallel sid = %d", other,
              rc);
        CHECK(msg && *msg, "no message for sion_seek to another rank");
    }
    rc = sion_seek(sid, g_size + 3, 0, 0);
    CHECK(rc == SION_NOT_SUCCESS, "sion_seek(sid, %d = no such task) = %d", g_size + 3, rc);
    sheaf_set_error_printing(prev);
    /* the refused calls did not disturb the cursor */
    {
        size_t got = 0;
        snprintf(w, sizeof w, "read after refused calls, task %d", g_rank);
        unsigned char *buf = read_task_loop(sid, mine.len, &got, 9, w);
        if (buf)
            compare_data(buf, got, &mine, w);
        free(buf);
    }
    rc = sion_parclose_mpi(sid);
    CHECK(rc == SION_SUCCESS, "read close = %d", rc);
    agree_ok(rc == SION_SUCCESS, "misuse read close");
    /* a multi-file set with a missing member: the read open fails on every
     * rank and names the missing file */
    if (g_size > 1) {
        char mf[2300], m1[2400];
        snprintf(mf, sizeof mf, "%s/member.sion", g_dir);
        nf = 2;
        chunk = 4096;
        sid = sion_paropen_mpi(mf, "bw", &nf, MPI_COMM_WORLD, &lc, &chunk, &fsblk, &grank, NULL, NULL);
        if (agree_ok(sid >= 0, "member write open")) {
            CHECK(sion_fwrite(mine.data, 1, 50, sid) == 50, "sion_fwrite(50)");
            rc = sion_parclose_mpi(sid);
            agree_ok(rc == SION_SUCCESS, "member write close");
        }
        physname(m1, sizeof m1, mf, 1);
        if (g_rank == 0)
            CHECK(unlink(m1) == 0, "unlink %s", m1);
        MPI_Barrier(MPI_COMM_WORLD);
        prev = sheaf_set_error_printing(0);
        nf = -1;
        sid = sion_paropen_mpi(mf, "br", &nf, MPI_COMM_WORLD, &lc, &chunk, &fsblk, &grank, NULL, NULL);
        sheaf_set_error_printing(prev);
        msg = sheaf_last_error();
        CHECK(sid == -1, "read open of a set whose file 1 is missing = %d, expected -1 on all ranks", sid);
        CHECK(msg && *msg, "no message for the missing member");
        if (g_rank == g_size / 2) /* the master of file 1 */
            CHECK(msg && strstr(msg, "member.sion.000001"), "the reader of file 1 does not name it: \"%s\"",
                  msg ? msg : "");
        if (!agree_ok(sid == -1, "missing-member open failing") && sid >= 0)
            sion_parclose_mpi(sid);
    }
out:
    free(mine.data);
    cleanup_dir();
    return 0;
}

/* ---- 8. SIONlib-style raw access, deprecated opens, collective calls ------------ */
/* A: sion_paropen_comms_mpi / sion_paropen_multi_mpi with writes and reads
 * through the exported FILE*; B: posix writes through the fd, and
 * sion_coll_fwrite_mpi / sion_coll_fread_mpi with endianness=big; C: a
 * sub-communicator as gComm; D: two containers open at the same time. */

/* Write through the exported FILE* (ansi) or fd (posix) after
 * sion_ensure_free_space, in pieces of at most one chunk. */
static int write_raw(int sid, FILE *fp, const taskdata *td, sion_int64 chunk, uint64_t seed)
{
    rng_t r = {seed};
    size_t off = 0;
    int fd = fp ? -1 : sion_get_fd(sid);
    CHECK(fp || fd >= 0, "posix mode: sion_get_fd = %d", fd);
    while (off < td->len) {
        size_t n = (size_t)rng_range(&r, 1, rng_range(&r, 0, 3) ? 300 : chunk);
        if (n > td->len - off)
            n = td->len - off;
        int rc = sion_ensure_free_space(sid, (sion_int64)n);
        CHECK(rc == SION_SUCCESS, "sion_ensure_free_space(%zu) = %d", n, rc);
        if (rc != SION_SUCCESS)
            return -1;
        size_t got = fp ? fwrite(td->data + off, 1, n, fp) : (size_t)write(fd, td->data + off, n);
        CHECK(got == n, "raw write of %zu bytes returned %zu", n, got);
        if (got != n)
            return -1;
        off += n;
    }
    return 0;
}

static int test_compat(void)
{
    setup_dir();
    char fname[2300], w[128], newf[SION_FILENAME_LENGTH], expname[2400];
    taskdata mine;
    gen_task(9090, g_rank, g_size, 1, 4096, &mine);
    MPI_Comm lcomm;
    MPI_Comm_split(MPI_COMM_WORLD, g_rank % 2, g_rank, &lcomm);
    int nfiles = g_size < 2 ? 1 : 2, rc;

    /* A: sion_paropen_comms_mpi + writes through the FILE*; read back with
     * sion_paropen_multi_mpi and fread on the FILE* (SIONlib's documented loop) */
    snprintf(fname, sizeof fname, "%s/comms.sion", g_dir);
    int nf = 5, grank = -1;
    sion_int64 chunk = mine.chunk_req;
    sion_int32 fsblk = 4096;
    FILE *fp = NULL;
    newf[0] = 0;
    int sid = sion_paropen_comms_mpi(fname, "bw", &nf, MPI_COMM_WORLD, lcomm, &chunk, &fsblk, &grank, &fp, newf);
    CHECK(sid >= 0, "sion_paropen_comms_mpi(bw) = %d", sid);
    if (!agree_ok(sid >= 0, "comms write open"))
        goto out;
    CHECK(nf == nfiles, "comms open: *numFiles = %d, expected %d", nf, nfiles);
    physname(expname, sizeof expname, fname, g_rank % 2);
    CHECK(!strcmp(newf, expname), "comms open: newfname \"%s\", expected %s", newf, expname);
    CHECK(fp != NULL, "comms open: fileptr NULL");
    if (fp)
        write_raw(sid, fp, &mine, chunk, 1);
    CHECK(sion_get_bytes_written(sid) == (sion_int64)mine.len,
          "bytes written through FILE*: library counts %lld, "
          "wrote %zu",
          (long long)sion_get_bytes_written(sid), mine.len);
    rc = sion_parclose_mpi(sid);
    CHECK(rc == SION_SUCCESS, "close = %d", rc);
    if (!agree_ok(rc == SION_SUCCESS, "comms write close"))
        goto out;
    nf = -1;
    fp = NULL;
    newf[0] = 0;
    sid = sion_paropen_multi_mpi(fname, "br", &nf, MPI_COMM_WORLD, &lcomm, &chunk, &fsblk, &grank, &fp, newf);
    CHECK(sid >= 0, "sion_paropen_multi_mpi(br) = %d", sid);
    if (!agree_ok(sid >= 0, "multi read open"))
        goto out;
    CHECK(nf == nfiles, "multi open: *numFiles = %d, expected %d", nf, nfiles);
    CHECK(!strcmp(newf, expname), "multi open: newfname \"%s\", expected %s", newf, expname);
    if (fp) {
        unsigned char *buf = malloc(mine.len + 1);
        size_t off = 0;
        int guard = 0;
        while (!sion_feof(sid) && guard++ < 100000) {
            sion_int64 n = sion_bytes_avail_in_block(sid);
            if (n <= 0 || off + (size_t)n > mine.len) {
                CHECK(0, "FILE* read loop: bytes_avail_in_block %lld at offset %zu of %zu", (long long)n, off,
                      mine.len);
                break;
            }
            size_t got = fread(buf + off, 1, (size_t)n, fp);
            CHECK(got == (size_t)n, "fread on the exported FILE* returned %zu of %lld", got, (long long)n);
            off += got;
            if (got != (size_t)n)
                break;
        }
        snprintf(w, sizeof w, "task %d read through the FILE*", g_rank);
        compare_data(buf, off, &mine, w);
        free(buf);
    }
    rc = sion_parclose_mpi(sid);
    CHECK(rc == SION_SUCCESS, "close = %d", rc);
    if (!agree_ok(rc == SION_SUCCESS, "multi read close"))
        goto out;

    /* B: posix mode, writes through the fd; sion_coll_fwrite_mpi / sion_coll_fread_mpi */
    for (int pass = 0; pass < 2; pass++) {
        snprintf(fname, sizeof fname, "%s/%s.sion", g_dir, pass ? "coll" : "fd");
        nf = 1;
        chunk = mine.chunk_req;
        fsblk = 4096;
        MPI_Comm none = MPI_COMM_NULL;
        sid = sion_paropen_mpi(fname, pass ? "bw,endianness=big" : "bw,posix", &nf, MPI_COMM_WORLD, &none, &chunk,
                               &fsblk, &grank, &fp, NULL);
        CHECK(sid >= 0, "%s write open = %d", fname, sid);
        if (!agree_ok(sid >= 0, "fd/coll write open"))
            goto out;
        if (pass == 0) {
            write_raw(sid, NULL, &mine, chunk, 2);
        } else {
            /* the same number of collective calls on every rank */
            size_t piece = mine.len / 4 + 1, off = 0;
            for (int k = 0; k < 4; k++) {
                size_t n = off + piece <= mine.len ? piece : mine.len - off;
                size_t got = sion_coll_fwrite_mpi(mine.data + off, 1, n, sid);
                CHECK(got == n || (n == 0 && got == 0), "sion_coll_fwrite_mpi(%zu) = %zu", n, got);
                off += n;
            }
        }
        rc = sion_parclose_mpi(sid);
        CHECK(rc == SION_SUCCESS, "close = %d", rc);
        if (!agree_ok(rc == SION_SUCCESS, "fd/coll write close"))
            goto out;
        nf = -1;
        sid = sion_paropen_mpi(fname, pass ? "br" : "br,posix", &nf, MPI_COMM_WORLD, &none, &chunk, &fsblk, &grank, &fp,
                               NULL);
        if (!agree_ok(sid >= 0, "fd/coll read open"))
            goto out;
        CHECK(sion_get_file_endianness(sid) == pass, "%s: sion_get_file_endianness = %d, expected %d", fname,
              sion_get_file_endianness(sid), pass);
        CHECK(sion_endianness_swap_needed(sid) == (pass != sion_get_endianness()),
              "%s: sion_endianness_swap_needed = %d", fname, sion_endianness_swap_needed(sid));
        unsigned char *buf = malloc(mine.len + 8);
        size_t got = 0;
        snprintf(w, sizeof w, "task %d %s", g_rank, pass ? "via sion_coll_fread_mpi" : "written through the fd");
        if (pass) {
            size_t piece = mine.len / 4 + 1;
            for (int k = 0; k < 4; k++) {
                size_t n = got + piece <= mine.len ? piece : mine.len - got;
                size_t g = sion_coll_fread_mpi(buf + got, 1, n, sid);
                CHECK(g == n, "sion_coll_fread_mpi(%zu) = %zu", n, g);
                got += g;
            }
            compare_data(buf, got, &mine, w);
        } else {
            free(buf);
            buf = read_task_loop(sid, mine.len, &got, 4, w);
            if (buf)
                compare_data(buf, got, &mine, w);
        }
        free(buf);
        rc = sion_parclose_mpi(sid);
        CHECK(rc == SION_SUCCESS, "close = %d", rc);
        if (!agree_ok(rc == SION_SUCCESS, "fd/coll read close"))
            goto out;
    }

    /* C: a sub-communicator as gComm (two halves write and read their own
     * containers at the same time; nothing may use MPI_COMM_WORLD inside) */
    {
        MPI_Comm half;
        int hrank, hsize, color = g_rank % 2;
        MPI_Comm_split(MPI_COMM_WORLD, color, g_rank, &half);
        MPI_Comm_rank(half, &hrank);
        MPI_Comm_size(half, &hsize);
        taskdata ht;
        gen_task(600 + (uint64_t)color, hrank, hsize, 0, 4096, &ht);
        snprintf(fname, sizeof fname, "%s/half%d.sion", g_dir, color);
        nf = 1;
        chunk = ht.chunk_req;
        fsblk = 4096;
        grank = -1;
        MPI_Comm none = MPI_COMM_NULL;
        sid = sion_paropen_mpi(fname, "bw", &nf, half, &none, &chunk, &fsblk, &grank, NULL, NULL);
        CHECK(sid >= 0, "sion_paropen_mpi(gComm = half %d) = %d", color, sid);
        CHECK(grank == hrank, "*globalrank = %d, expected the rank in gComm %d", grank, hrank);
        int ok = sid >= 0;
        if (ok) {
            write_pieces(sid, &ht, chunk, 3);
            rc = sion_parclose_mpi(sid);
            CHECK(rc == SION_SUCCESS, "close on half %d = %d", color, rc);
            ok = rc == SION_SUCCESS;
        }
        if (agree_ok(ok, "sub-communicator write")) {
            nf = -1;
            sid = sion_paropen_mpi(fname, "br", &nf, half, &none, &chunk, &fsblk, &grank, NULL, NULL);
            CHECK(sid >= 0, "read open on half %d = %d", color, sid);
            if (sid >= 0) {
                size_t got = 0;
                snprintf(w, sizeof w, "half %d task %d", color, hrank);
                unsigned char *buf = read_task_loop(sid, ht.len, &got, 8, w);
                if (buf)
                    compare_data(buf, got, &ht, w);
                free(buf);
                rc = sion_parclose_mpi(sid);
                CHECK(rc == SION_SUCCESS, "read close on half %d = %d", color, rc);
            }
            agree_ok(sid >= 0, "sub-communicator read");
            if (hrank == 0) {
                int nt = -1, nfs = -1;
                sion_int32 bs = -1;
                int s2 = sion_open(fname, "rb", &nt, &nfs, NULL, &bs, NULL, NULL);
                CHECK(s2 >= 0 && nt == hsize, "serial open of %s: sid %d, %d tasks, expected %d", fname, s2, nt, hsize);
                if (s2 >= 0)
                    sion_close(s2);
            }
        }
        free(ht.data);
        MPI_Comm_free(&half);
    }
    /* D: two containers open at once (different numFiles, lComm for one),
     * written interleaved, closed in the opposite order of opening, then read
     * at once, interleaved */
    {
        char fa[2300], fb[2300];
        taskdata ta, tb;
        gen_task(31, g_rank, g_size, 0, 4096, &ta);
        gen_task(32, g_rank, g_size, 1, 4096, &tb);
        snprintf(fa, sizeof fa, "%s/twoA.sion", g_dir);
        snprintf(fb, sizeof fb, "%s/twoB.sion", g_dir);
        int nfa = 1, nfb = 0, ga, gb;
        sion_int64 ca = ta.chunk_req, cb = tb.chunk_req;
        sion_int32 ba = 4096, bb = -1;
        MPI_Comm none = MPI_COMM_NULL;
        int sa = sion_paropen_mpi(fa, "bw", &nfa, MPI_COMM_WORLD, &none, &ca, &ba, &ga, NULL, NULL);
        int sb = sion_paropen_mpi(fb, "bw", &nfb, MPI_COMM_WORLD, &lcomm, &cb, &bb, &gb, NULL, NULL);
        CHECK(sa >= 0 && sb >= 0 && sa != sb, "two write opens at once: sids %d, %d", sa, sb);
        if (!agree_ok(sa >= 0 && sb >= 0, "two write opens"))
            goto out;
        size_t oa = 0, ob = 0;
        while (oa < ta.len || ob < tb.len) {
            size_t na = ta.len - oa < 777 ? ta.len - oa : 777, nb = tb.len - ob < 555 ? tb.len - ob : 555;
            if (na)
                CHECK(sion_fwrite(ta.data + oa, 1, na, sa) == na, "interleaved write to A");
            if (nb)
                CHECK(sion_fwrite(tb.data + ob, 1, nb, sb) == nb, "interleaved write to B");
            oa += na;
            ob += nb;
        }
        int rb = sion_parclose_mpi(sb), ra = sion_parclose_mpi(sa);
        CHECK(ra == SION_SUCCESS && rb == SION_SUCCESS, "closing B then A: %d, %d", rb, ra);
        if (!agree_ok(ra == SION_SUCCESS && rb == SION_SUCCESS, "two closes"))
            goto out;
        nfa = nfb = -1;
        sb = sion_paropen_mpi(fb, "br", &nfb, MPI_COMM_WORLD, &none, &cb, &bb, &gb, NULL, NULL);
        sa = sion_paropen_mpi(fa, "br", &nfa, MPI_COMM_WORLD, &none, &ca, &ba, &ga, NULL, NULL);
        CHECK(sa >= 0 && sb >= 0, "two read opens at once: sids %d, %d", sa, sb);
        if (!agree_ok(sa >= 0 && sb >= 0, "two read opens"))
            goto out;
        CHECK(nfa == 1 && nfb == nfiles, "numFiles of A %d (1), of B %d (%d)", nfa, nfb, nfiles);
        unsigned char *xa = malloc(ta.len + 1), *xb = malloc(tb.len + 1);
        oa = ob = 0;
        for (int guard = 0; (oa < ta.len || ob < tb.len) && guard < 100000; guard++) {
            size_t na = ta.len - oa < 333 ? ta.len - oa : 333, nb = tb.len - ob < 444 ? tb.len - ob : 444;
            size_t ga2 = na ? sion_fread(xa + oa, 1, na, sa) : 0, gb2 = nb ? sion_fread(xb + ob, 1, nb, sb) : 0;
            CHECK(ga2 == na && gb2 == nb, "interleaved reads: A %zu of %zu, B %zu of %zu", ga2, na, gb2, nb);
            if (ga2 != na || gb2 != nb)
                break;
            oa += na;
            ob += nb;
        }
        CHECK(sion_feof(sa) == 1 && sion_feof(sb) == 1, "feof after all data: A %d, B %d", sion_feof(sa),
              sion_feof(sb));
        snprintf(w, sizeof w, "task %d of A (read interleaved with B)", g_rank);
        compare_data(xa, oa, &ta, w);
        snprintf(w, sizeof w, "task %d of B (read interleaved with A)", g_rank);
        compare_data(xb, ob, &tb, w);
        free(xa);
        free(xb);
        ra = sion_parclose_mpi(sa);
        rb = sion_parclose_mpi(sb);
        CHECK(ra == SION_SUCCESS && rb == SION_SUCCESS, "read closes: %d, %d", ra, rb);
        agree_ok(ra == SION_SUCCESS && rb == SION_SUCCESS, "two read closes");
        free(ta.data);
        free(tb.data);
    }
out:
    MPI_Comm_free(&lcomm);
    free(mine.data);
    cleanup_dir();
    return 0;
}

/* ---- main ------------------------------------------------------------------------ */

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    g_argc = argc;
    g_argv = argv;
    const char *cmd = argc > 1 ? argv[1] : "";
    double t0 = MPI_Wtime();
    if (!strcmp(cmd, "roundtrip"))
        test_roundtrip();
    else if (!strcmp(cmd, "vector"))
        test_vector();
    else if (!strcmp(cmd, "wrongcount"))
        test_wrongcount();
    else if (!strcmp(cmd, "mapped-w8"))
        test_mapped_w8();
    else if (!strcmp(cmd, "mapped-w3"))
        test_mapped_w3();
    else if (!strcmp(cmd, "mapped-r"))
        test_mapped_r();
    else if (!strcmp(cmd, "reinit"))
        test_reinit();
    else if (!strcmp(cmd, "dup"))
        test_dup();
    else if (!strcmp(cmd, "misuse"))
        test_misuse();
    else if (!strcmp(cmd, "compat"))
        test_compat();
    else {
        if (g_rank == 0)
            fprintf(stderr, "usage: mpi_sion_test roundtrip|vector|wrongcount|mapped-w8|mapped-w3|mapped-r|reinit|"
                            "dup|misuse|compat [key=value ...]\n");
        MPI_Finalize();
        return 2;
    }
    int fails = 0, checks = 0;
    MPI_Allreduce(&g_fail, &fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&g_checks, &checks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (g_rank == 0)
        printf("mpi_sion_test %s on %d ranks: %d checks, %d failed (%.2f s)\n", cmd, g_size, checks, fails,
               MPI_Wtime() - t0);
    MPI_Finalize();
    return fails ? 1 : 0;
}
