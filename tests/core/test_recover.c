/* test_recover.c - crash recovery of the serial writer (journal.c, recover.c):
 * a child process writes and flushes, then dies without closing; sheaf_recover
 * brings back exactly the flushed state. Also: damaged journal records are
 * skipped (the previous record of the task wins), a data file shorter than
 * the journal says is reported as loss, a closed container is left alone (a
 * stale journal goes), an open for writing removes a stale journal, no
 * journal without --salvage is a clear error, the salvage of SIONlib's
 * unclosed4 gives the manifest's bytes, and files are created with the
 * caller's umask. Headers made hostile on purpose: a huge chunk size, a
 * file-system block size that puts the data start more than 64 MiB past the
 * file's end (refused, SHEAF_E_FORMAT, the input untouched), and block rows
 * that start past the file's end (dropped, the valid rows' bytes kept).
 * Tasks whose chunks start past the file's end (only task 0 flushed): the
 * recovered container reads back with 0 bytes for them. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <signal.h>
#include <sys/wait.h>
#include "../helpers/vecpath.h"
#include "../helpers/testutil.h"
#include "sion.h"
#include "sheaf.h"
#include "crc32c.h"
#include "endian.h"

#define NT 3
static const sion_int64 chunk_req[NT] = {100, 5000, 2000}; /* task 2: one piece per block */
/* rounds of writes; the child flushes after round `flush_after` and dies after `die_after` */
static size_t piece(int t, int r) { return (size_t)(150 + t * 700 + r * 11); }

static char *g_dir;

static void child_write(const char *fn, int flush_after, int die_after)
{
    int nt = NT, nf = 1, gr[NT] = {0, 1, 2}, *grp = gr;
    sion_int64 cs[NT], *csp = cs;
    memcpy(cs, chunk_req, sizeof cs);
    sion_int32 fsb = 512;
    FILE *fp = NULL;
    int sid = sion_open((char *)fn, "bw", &nt, &nf, &csp, &fsb, &grp, &fp);
    if (sid < 0)
        _exit(3);
    int64_t off[NT] = {0};
    unsigned char buf[4096];
    for (int r = 0; r <= die_after; r++) {
        for (int t = 0; t < NT; t++) {
            sion_seek(sid, t, SION_CURRENT_BLK, SION_CURRENT_POS);
            tu_fill(buf, t, off[t], piece(t, r));
            if (sion_fwrite(buf, 1, piece(t, r), sid) != piece(t, r))
                _exit(4);
            off[t] += (int64_t)piece(t, r);
        }
        if (r <= flush_after && sion_flush(sid) != SION_SUCCESS)
            _exit(5);
    }
    kill(getpid(), SIGKILL); /* a crash: no close */
}

static void crash_writer(const char *fn, int flush_after, int die_after)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        child_write(fn, flush_after, die_after);
    int st = 0;
    waitpid(pid, &st, 0);
    assert_true(WIFSIGNALED(st));
}

static int64_t flushed_bytes(int t, int flush_after)
{
    int64_t s = 0;
    for (int r = 0; r <= flush_after; r++)
        s += (int64_t)piece(t, r);
    return s;
}

/* every task holds exactly want[t] bytes of the pattern */
static void expect_tasks(const char *fn, const int64_t *want)
{
    int nt = 0, nf = 0, *gr = NULL;
    sion_int64 *cs = NULL;
    sion_int32 fsb = 0;
    FILE *fp = NULL;
    int sid = sion_open((char *)fn, "rb", &nt, &nf, &cs, &fsb, &gr, &fp);
    assert_true(sid >= 0);
    assert_int_equal(nt, NT);
    for (int t = 0; t < NT; t++) {
        unsigned char *b = malloc((size_t)want[t] + 1), *e = malloc((size_t)want[t] + 1);
        tu_fill(e, t, 0, (size_t)want[t]);
        assert_int_equal(sion_seek(sid, t, SION_ABSOLUTE_POS, 0), SION_SUCCESS);
        assert_int_equal(sion_fread(b, 1, (size_t)want[t], sid), (size_t)want[t]);
        assert_memory_equal(b, e, (size_t)want[t]);
        assert_int_equal(sion_feof(sid), 1);
        free(b);
        free(e);
    }
    sion_close(sid);
    free(cs);
    free(gr);
}

static void jpath(char *out, size_t n, const char *fn) { snprintf(out, n, "%s.sheafj", fn); }

static void test_recover_flushed(void **st)
{
    (void)st;
    char fn[4200], j[4300];
    snprintf(fn, sizeof fn, "%s/crash.sion", g_dir);
    crash_writer(fn, 2, 4); /* flushed after rounds 0..2, died after round 4 */
    jpath(j, sizeof j, fn);
    assert_true(access(j, F_OK) == 0);
    int nt = 0, nf = 0, *gr = NULL;
    sion_int64 *cs = NULL;
    sion_int32 fsb = 0;
    FILE *fp = NULL;
    assert_true(sion_open(fn, "rb", &nt, &nf, &cs, &fsb, &gr, &fp) < 0); /* unclosed: refused */
    assert_int_equal(sheaf_last_error_code(), SHEAF_E_UNCLOSED);
    sheaf_recover_summary s;
    assert_int_equal(sheaf_recover(fn, SHEAF_RECOVER_DRY_RUN, NULL, NULL, &s), 0);
    assert_true(access(j, F_OK) == 0); /* dry run changes nothing */
    int64_t want[NT], total = 0;
    for (int t = 0; t < NT; t++)
        total += want[t] = flushed_bytes(t, 2);
    assert_int_equal(s.bytes, total);
    assert_int_equal(sheaf_recover(fn, 0, NULL, NULL, &s), 0);
    assert_int_equal(s.bytes, total);
    assert_int_equal(s.uncertain, 0);
    assert_true(access(j, F_OK) != 0); /* journal gone */
    expect_tasks(fn, want);
    assert_int_equal(sheaf_recover(fn, 0, NULL, NULL, &s), 0); /* again: closed, nothing to do */
    assert_int_equal(s.files_closed, 1);
}

static void test_damaged_record(void **st)
{
    (void)st;
    char fn[4200], j[4300];
    snprintf(fn, sizeof fn, "%s/damaged.sion", g_dir);
    crash_writer(fn, 2, 2);
    jpath(j, sizeof j, fn);
    size_t n = 0;
    unsigned char *jr = tu_read_file(j, &n);
    assert_non_null(jr);
    jr[n - 1] ^= 0x55; /* last record (task 2, round 2): CRC no longer matches */
    assert_int_equal(tu_write_file(j, jr, n), 0);
    free(jr);
    sheaf_recover_summary s;
    assert_int_equal(sheaf_recover(fn, 0, NULL, NULL, &s), 0);
    int64_t want[NT] = {flushed_bytes(0, 2), flushed_bytes(1, 2), flushed_bytes(2, 1)};
    expect_tasks(fn, want); /* task 2 falls back to its previous record */
}

static void test_truncated_data(void **st)
{
    (void)st;
    char fn[4200];
    snprintf(fn, sizeof fn, "%s/short.sion", g_dir);
    crash_writer(fn, 3, 3);
    struct stat sb;
    assert_int_equal(stat(fn, &sb), 0);
    assert_int_equal(truncate(fn, sb.st_size - 100), 0);
    sheaf_recover_summary s;
    assert_int_equal(sheaf_recover(fn, 0, NULL, NULL, &s), 0);
    assert_true(s.lost > 0 && s.lost <= 100);
}

static void test_no_journal(void **st)
{
    (void)st;
    char fn[4200], j[4300];
    snprintf(fn, sizeof fn, "%s/nojournal.sion", g_dir);
    crash_writer(fn, 1, 2);
    jpath(j, sizeof j, fn);
    unlink(j);
    sheaf_recover_summary s;
    assert_int_equal(sheaf_recover(fn, 0, NULL, NULL, &s), SHEAF_E_NOTFOUND);
    assert_non_null(strstr(sheaf_last_error(), "--salvage"));
    assert_int_equal(sheaf_recover(fn, SHEAF_RECOVER_SALVAGE, NULL, NULL, &s), 0);
    assert_int_equal(s.uncertain, 1);
    /* salvage sees what reached the file: at least the flushed rounds, at most
     * all written ones, and only pattern bytes */
    int nt = 0, nf = 0, *gr = NULL;
    sion_int64 *cs = NULL;
    sion_int32 fsb = 0;
    FILE *fp = NULL;
    int sid = sion_open(fn, "rb", &nt, &nf, &cs, &fsb, &gr, &fp);
    assert_true(sid >= 0);
    for (int t = 0; t < NT; t++) {
        unsigned char b[8192], e[8192];
        assert_int_equal(sion_seek(sid, t, SION_ABSOLUTE_POS, 0), SION_SUCCESS);
        size_t got = sion_fread(b, 1, sizeof b, sid);
        assert_true((int64_t)got >= flushed_bytes(t, 1)); /* this pattern ends every block non-zero */
        assert_true((int64_t)got <= flushed_bytes(t, 2));
        tu_fill(e, t, 0, got);
        assert_memory_equal(b, e, got);
    }
    sion_close(sid);
    free(cs);
    free(gr);
}

static void test_stale_journal(void **st)
{
    (void)st;
    char fn[4200], j[4300];
    snprintf(fn, sizeof fn, "%s/stale.sion", g_dir);
    crash_writer(fn, 1, 1);
    jpath(j, sizeof j, fn);
    assert_true(access(j, F_OK) == 0);
    /* a new run over the same name: the old journal must not survive */
    int nt = NT, nf = 1, gr[NT] = {0, 1, 2}, *grp = gr;
    sion_int64 cs[NT], *csp = cs;
    memcpy(cs, chunk_req, sizeof cs);
    sion_int32 fsb = 512;
    FILE *fp = NULL;
    int sid = sion_open(fn, "bw", &nt, &nf, &csp, &fsb, &grp, &fp);
    assert_true(sid >= 0);
    assert_true(access(j, F_OK) != 0);
    assert_int_equal(sion_close(sid), SION_SUCCESS);
    /* closed container plus a journal someone left: recover only removes the journal */
    assert_int_equal(tu_write_file(j, "SHJ1junk", 8), 0);
    sheaf_recover_summary s;
    assert_int_equal(sheaf_recover(fn, 0, NULL, NULL, &s), 0);
    assert_int_equal(s.files_closed, 1);
    assert_true(access(j, F_OK) != 0);
}

static void test_salvage_unclosed4(void **st)
{
    (void)st;
    char src[4200], fn[4200];
    vec_path("unclosed4.sion", src, sizeof src);
    snprintf(fn, sizeof fn, "%s/unclosed4.sion", g_dir);
    size_t n = 0;
    unsigned char *d = tu_read_file(src, &n);
    assert_non_null(d);
    assert_int_equal(tu_write_file(fn, d, n), 0);
    free(d);
    sheaf_recover_summary s;
    assert_int_equal(sheaf_recover(fn, SHEAF_RECOVER_SALVAGE, NULL, NULL, &s), 0);
    assert_int_equal(s.bytes, 3000 + 5000 + 7000 + 9000); /* the manifest's sizes; bytes: tests/tools */
    assert_int_equal(s.uncertain, 1);
}

/* A journal record with a valid CRC that names a million blocks: recovery
 * keeps only blocks inside the file, counts the rest as lost, and neither
 * the memory nor the file grows with the claim. */
static void test_hostile_block_count(void **st)
{
    (void)st;
    char fn[4200], j[4300];
    snprintf(fn, sizeof fn, "%s/hostile.sion", g_dir);
    crash_writer(fn, 0, 0);
    jpath(j, sizeof j, fn);
    const int64_t nb = 1000000;
    size_t L = 36 + 8 * (size_t)nb;
    unsigned char *r = calloc(1, L);
    assert_non_null(r);
    memcpy(r, "SHJ1", 4);
    core_put_le32(r + 4, (uint32_t)L);
    core_put_le32(r + 8, 0);  /* task 0 */
    core_put_le64(r + 16, 0); /* global rank 0 */
    core_put_le64(r + 24, (uint64_t)nb);
    core_put_le64(r + 32, 150);              /* block 0: what task 0 wrote */
    core_put_le64(r + 32 + 8 * (nb - 1), 7); /* a far block claiming data */
    core_put_le32(r + L - 4, core_crc32c(0, r, L - 4));
    FILE *f = fopen(j, "ab");
    assert_non_null(f);
    assert_int_equal(fwrite(r, 1, L, f), L);
    fclose(f);
    free(r);
    struct stat before;
    assert_int_equal(stat(fn, &before), 0);
    sheaf_recover_summary s;
    assert_int_equal(sheaf_recover(fn, 0, NULL, NULL, &s), 0);
    assert_true(s.lost >= 7);
    struct stat after;
    assert_int_equal(stat(fn, &after), 0);
    assert_true(after.st_size < before.st_size + (1 << 20)); /* no block table for a million blocks */
    int64_t want[NT] = {150, flushed_bytes(1, 0), flushed_bytes(2, 0)};
    expect_tasks(fn, want);
}

/* The header of a crashed container claims a chunk of 2^50 bytes for its last
 * task (globalskip ~1 PiB): recovery writes the metadata at the file's real
 * end, not at the chunk layout's offset (a 1 PiB sparse file, or EFBIG on
 * ext4), and every task's flushed bytes read back. */
static void test_hostile_chunk_size(void **st)
{
    (void)st;
    char fn[4200];
    snprintf(fn, sizeof fn, "%s/hugechunk.sion", g_dir);
    crash_writer(fn, 0, 0);
    FILE *f = fopen(fn, "r+b");
    assert_non_null(f);
    unsigned char h[64];
    assert_int_equal(fread(h, 1, 32, f), 32);
    assert_int_equal(h[4], 0); /* little-endian metadata (this host) */
    assert_int_equal((int)core_get_le32(h + 24), NT);
    long at = 52 + 1024 + 8L * NT + 8L * (NT - 1); /* the chunk size of the last task */
    core_put_le64(h, (uint64_t)1 << 50);
    assert_int_equal(fseek(f, at, SEEK_SET), 0);
    assert_int_equal(fwrite(h, 1, 8, f), 8);
    assert_int_equal(fclose(f), 0);
    struct stat before, after;
    assert_int_equal(stat(fn, &before), 0);
    sheaf_recover_summary s;
    assert_int_equal(sheaf_recover(fn, SHEAF_RECOVER_DRY_RUN, NULL, NULL, &s), 0);
    assert_int_equal(sheaf_recover(fn, 0, NULL, NULL, &s), 0);
    assert_int_equal(stat(fn, &after), 0);
    /* the input plus its metadata: 3 tasks x (1 + 1 block) x 8 bytes */
    assert_true(after.st_size >= before.st_size);
    assert_true(after.st_size <= before.st_size + 3 * 2 * 8);
    int64_t want[NT] = {flushed_bytes(0, 0), flushed_bytes(1, 0), flushed_bytes(2, 0)};
    assert_int_equal(s.bytes, want[0] + want[1] + want[2]);
    assert_int_equal(s.lost, 0);
    expect_tasks(fn, want);
}

static void test_umask(void **st)
{
    (void)st;
    char fn[4200], j[4300];
    snprintf(fn, sizeof fn, "%s/umask.sion", g_dir);
    mode_t old = umask(027);
    crash_writer(fn, 0, 0); /* container and journal created under umask 027 */
    umask(old);
    jpath(j, sizeof j, fn);
    struct stat a, b;
    assert_int_equal(stat(fn, &a), 0);
    assert_int_equal(stat(j, &b), 0);
    assert_int_equal(a.st_mode & 0777, 0640);
    assert_int_equal(b.st_mode & 0777, 0640);
}

/* ---- headers whose layout lies past the file's end (recover.c, drop_rows_past_end and the 64 MiB rule) ---- */
#define HDR_CHUNKS (52 + 1024 + 8L * NT) /* the chunk sizes in META1 (little-endian on this host) */

/* A crashed container's layout from its header: data start, global skip. */
static void read_layout(const char *fn, int64_t *data_start, int64_t *globalskip, int32_t *fsb)
{
    size_t n = 0;
    unsigned char *d = tu_read_file(fn, &n);
    assert_non_null(d);
    assert_true(n > (size_t)HDR_CHUNKS + 8 * NT);
    assert_int_equal(d[4], 0); /* little-endian metadata (this host) */
    *fsb = (int32_t)core_get_le32(d + 20);
    int64_t hs = 1088 + 16 * NT;
    *data_start = (hs + *fsb - 1) / *fsb * *fsb;
    *globalskip = 0;
    for (int t = 0; t < NT; t++)
        *globalskip += (int64_t)core_get_le64(d + HDR_CHUNKS + 8 * t);
    free(d);
}

static void patch_fsblksize(const char *fn, uint32_t fsb)
{
    FILE *f = fopen(fn, "r+b");
    assert_non_null(f);
    unsigned char b[4];
    core_put_le32(b, fsb);
    assert_int_equal(fseek(f, 20, SEEK_SET), 0);
    assert_int_equal(fwrite(b, 1, 4, f), 4);
    assert_int_equal(fclose(f), 0);
}

/* The header's file-system block size puts the data start (and so the
 * metadata) more than 64 MiB past the file's end: refused with
 * SHEAF_E_FORMAT and a message naming the data start, the block size and the
 * file size; the input neither grows nor changes, no other file appears,
 * the journal stays (dry run and real run alike). */
static void test_huge_fsblksize(void **st)
{
    (void)st;
    static const uint32_t sizes[] = {(uint32_t)1 << 27, (uint32_t)1 << 30}; /* data start 128 MiB, 1 GiB */
    for (int k = 0; k < 2; k++) {
        char fn[4200], j[4300], want[256];
        snprintf(fn, sizeof fn, "%s/hugefsb%d.sion", g_dir, k);
        crash_writer(fn, 1, 1);
        patch_fsblksize(fn, sizes[k]);
        jpath(j, sizeof j, fn);
        size_t n0 = 0, jn0 = 0;
        unsigned char *before = tu_read_file(fn, &n0), *jbefore = tu_read_file(j, &jn0);
        assert_non_null(before);
        assert_non_null(jbefore);
        for (int dry = 1; dry >= 0; dry--) {
            sheaf_recover_summary s;
            assert_int_equal(sheaf_recover(fn, dry ? SHEAF_RECOVER_DRY_RUN : 0, NULL, NULL, &s), SHEAF_E_FORMAT);
            const char *m = sheaf_last_error();
            snprintf(want, sizeof want,
                     "the data start %lld (file-system block size %u) lies past the file's end "
                     "(%zu bytes)",
                     (long long)sizes[k], sizes[k], n0);
            if (!strstr(m, want) || !strstr(m, fn))
                fail_msg("message \"%s\" lacks \"%s\" or the file's name", m, want);
            size_t n1 = 0, jn1 = 0;
            unsigned char *after = tu_read_file(fn, &n1), *jafter = tu_read_file(j, &jn1);
            assert_non_null(after);
            assert_non_null(jafter);
            assert_int_equal(n1, n0); /* no metadata written 128 MiB / 1 GiB on */
            assert_memory_equal(after, before, n0);
            assert_int_equal(jn1, jn0);
            assert_memory_equal(jafter, jbefore, jn0);
            free(after);
            free(jafter);
        }
        struct stat sb;
        char other[4300];
        snprintf(other, sizeof other, "%s.000001", fn);
        assert_true(stat(other, &sb) != 0); /* no second file */
        free(before);
        free(jbefore);
    }
}

/* Rows 2 and 3 of task 2's blocks start at or past the file's end (the file
 * was cut at the end of row 1 after the writer flushed 4 rows, one piece per
 * block for task 2): recovery, from the journal or by salvage, drops them
 * (the journal's bytes for them count as lost), writes the metadata at the
 * file's real end and every task reads back the bytes of its rows 0 and 1. */
static void rows_past_end(int salvage)
{
    char fn[4200], j[4300];
    snprintf(fn, sizeof fn, "%s/rowspast%d.sion", g_dir, salvage);
    crash_writer(fn, 3, 3); /* task 2: 4 rounds of ~1570 bytes, one per block: 4 rows */
    jpath(j, sizeof j, fn);
    if (salvage) /* what the file holds: this pattern ends every block non-zero */
        assert_int_equal(unlink(j), 0);
    int flags = salvage ? SHEAF_RECOVER_SALVAGE : 0;
    int64_t ds = 0, gs = 0;
    int32_t fsb = 0;
    read_layout(fn, &ds, &gs, &fsb);
    assert_int_equal(fsb, 512);
    int64_t cut = ds + 2 * gs; /* the end of row 1 = the start of row 2 */
    struct stat sb;
    assert_int_equal(stat(fn, &sb), 0);
    assert_true(sb.st_size > ds + 3 * gs); /* row 3 was written */
    assert_int_equal(truncate(fn, cut), 0);
    int64_t all[NT], want[NT], total = 0;
    for (int t = 0; t < NT; t++) {
        all[t] = flushed_bytes(t, 3);
        /* task 2: one piece per block (chunk_req); tasks 0 and 1 fit in rows 0 and 1 */
        want[t] = t == 2 ? (int64_t)(piece(2, 0) + piece(2, 1)) : all[t];
        total += want[t];
    }
    sheaf_recover_summary s;
    assert_int_equal(sheaf_recover(fn, flags | SHEAF_RECOVER_DRY_RUN, NULL, NULL, &s), 0);
    assert_int_equal(s.bytes, total);
    assert_int_equal(sheaf_recover(fn, flags, NULL, NULL, &s), 0);
    assert_int_equal(s.bytes, total);
    if (!salvage) /* the journal's claim for rows 2 and 3 */
        assert_int_equal(s.lost, all[2] - want[2]);
    assert_int_equal(stat(fn, &sb), 0);
    assert_true(sb.st_size >= cut);
    assert_true(sb.st_size <= cut + 4096); /* the metadata at the file's end, not at row 4 */
    expect_tasks(fn, want);
    /* the block table: task 2 has rows 0 and 1 only, no empty entries for rows 2 and 3 */
    int nt = 0, nf = 0, *gr = NULL, maxchunks = 0;
    sion_int64 *cs = NULL, gskip = 0, varh = 0, *lcs = NULL, *lgr = NULL, *bc = NULL, *bsz = NULL;
    sion_int32 rfsb = 0;
    FILE *fp = NULL;
    int sid = sion_open(fn, "rb", &nt, &nf, &cs, &rfsb, &gr, &fp);
    assert_true(sid >= 0);
    assert_int_equal(sion_get_locations(sid, &nt, &maxchunks, &gskip, &varh, &lcs, &lgr, &bc, &bsz), SION_SUCCESS);
    assert_int_equal(nt, NT);
    assert_int_equal(gskip, gs);
    assert_int_equal(maxchunks, 2);
    assert_int_equal(bc[2], 2);
    assert_int_equal(bsz[NT * 0 + 2], (sion_int64)piece(2, 0));
    assert_int_equal(bsz[NT * 1 + 2], (sion_int64)piece(2, 1));
    assert_int_equal(varh, cut); /* META2 right at the cut */
    sion_close(sid);
    free(cs);
    free(gr);
}

static void test_rows_past_end(void **st)
{
    (void)st;
    rows_past_end(0); /* the journal names 4 blocks of task 2 */
    rows_past_end(1); /* no journal: --salvage */
}

/* Only task 0 wrote (and flushed) before the crash, less than its chunk, so
 * the file ends before task 1's chunk starts: the recovered metadata go at
 * the file's end (the chunk layout's offset lies past it), and tasks 1 and 2
 * have one empty block each that starts past the metadata. The container must
 * read back: task 0's bytes, 0 bytes for the others (crash.sigkill met this:
 * the reader refused an empty block that started past the block table). */
static void child_write_task0(const char *fn)
{
    int nt = NT, nf = 1, gr[NT] = {0, 1, 2}, *grp = gr;
    sion_int64 cs[NT] = {20000, 20000, 20000}, *csp = cs;
    sion_int32 fsb = 512;
    FILE *fp = NULL;
    int sid = sion_open((char *)fn, "bw", &nt, &nf, &csp, &fsb, &grp, &fp);
    if (sid < 0)
        _exit(3);
    unsigned char buf[3000];
    tu_fill(buf, 0, 0, sizeof buf);
    if (sion_seek(sid, 0, SION_CURRENT_BLK, SION_CURRENT_POS) != SION_SUCCESS ||
        sion_fwrite(buf, 1, sizeof buf, sid) != sizeof buf || sion_flush(sid) != SION_SUCCESS)
        _exit(4);
    kill(getpid(), SIGKILL);
}

static void test_empty_tasks_past_end(void **st)
{
    (void)st;
    char fn[4200];
    snprintf(fn, sizeof fn, "%s/task0only.sion", g_dir);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        child_write_task0(fn);
    int ws = 0;
    waitpid(pid, &ws, 0);
    assert_true(WIFSIGNALED(ws));
    int64_t ds = 0, gs = 0;
    int32_t fsb = 0;
    read_layout(fn, &ds, &gs, &fsb);
    struct stat sb;
    assert_int_equal(stat(fn, &sb), 0);
    assert_true(sb.st_size < ds + 20000); /* task 1's chunk starts past the end */
    sheaf_recover_summary s;
    assert_int_equal(sheaf_recover(fn, 0, NULL, NULL, &s), 0);
    assert_int_equal(s.bytes, 3000);
    int64_t want[NT] = {3000, 0, 0};
    expect_tasks(fn, want);
}

int main(void)
{
    g_dir = tu_mkdtemp();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recover_flushed),
        cmocka_unit_test(test_damaged_record),
        cmocka_unit_test(test_truncated_data),
        cmocka_unit_test(test_no_journal),
        cmocka_unit_test(test_stale_journal),
        cmocka_unit_test(test_salvage_unclosed4),
        cmocka_unit_test(test_umask),
        cmocka_unit_test(test_hostile_block_count),
        cmocka_unit_test(test_hostile_chunk_size),
        cmocka_unit_test(test_huge_fsblksize),
        cmocka_unit_test(test_rows_past_end),
        cmocka_unit_test(test_empty_tasks_past_end),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    tu_rmtree(g_dir);
    free(g_dir);
    return rc;
}
