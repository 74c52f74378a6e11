/* test_recover_cksum.c - recovery keeps the protection of the "checksum" mode
 * key (issue 11.2): a child writes with "bw,checksum", flushes (the journal
 * records carry each block's CRC-32C, version SHJ2) and dies without closing.
 * sheaf_recover checks every block against the journaled CRCs and writes the
 * checksum trailer: a byte damaged after the recovery, or before it, makes the
 * read fail with a checksum error naming the task and block; a block the file
 * lost part of is reported unverifiable; a plain writer's journal (SHJ1, what
 * earlier versions wrote) still recovers, without checksums. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <signal.h>
#include <sys/wait.h>
#include "../helpers/testutil.h"
#include "sion.h"
#include "sheaf.h"

#define NT 3
/* fsblksize 512: data start at 1536; chunks 512, 5120, 5120 -> tasks start at 1536, 2048, 7168;
 * up to 3 rounds every task stays in its first block */
static const sion_int64 chunk_req[NT] = {100, 5000, 5000};
static const int64_t task_start[NT] = {1536, 2048, 7168};
static size_t piece(int t, int r) { return (size_t)(150 + t * 700 + r * 11); }
static char *g_dir;

static void child_write(const char *fn, const char *mode, int rounds, int raw)
{
    int nt = NT, nf = 1, gr[NT] = {0, 1, 2}, *grp = gr;
    sion_int64 cs[NT], *csp = cs;
    memcpy(cs, chunk_req, sizeof cs);
    sion_int32 fsb = 512;
    FILE *fp = NULL;
    int sid = sion_open((char *)fn, mode, &nt, &nf, &csp, &fsb, &grp, &fp);
    if (sid < 0)
        _exit(3);
    int64_t off[NT] = {0};
    unsigned char buf[4096];
    for (int r = 0; r < rounds; r++) {
        for (int t = 0; t < NT; t++) {
            sion_seek(sid, t, SION_CURRENT_BLK, SION_CURRENT_POS);
            tu_fill(buf, t, off[t], piece(t, r));
            if (raw && t == 1 && fp) { /* through the exported FILE*: read back at the flush */
                if (sion_ensure_free_space(sid, (sion_int64)piece(t, r)) != SION_SUCCESS ||
                    fwrite(buf, 1, piece(t, r), fp) != piece(t, r))
                    _exit(6);
            } else if (sion_fwrite(buf, 1, piece(t, r), sid) != piece(t, r)) {
                _exit(4);
            }
            off[t] += (int64_t)piece(t, r);
        }
        if (sion_flush(sid) != SION_SUCCESS)
            _exit(5);
    }
    kill(getpid(), SIGKILL); /* a crash: no close */
}

static void crash_writer(const char *fn, const char *mode, int rounds, int raw)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        child_write(fn, mode, rounds, raw);
    int st = 0;
    waitpid(pid, &st, 0);
    assert_true(WIFSIGNALED(st));
}

static int64_t task_bytes(int t, int rounds)
{
    int64_t s = 0;
    for (int r = 0; r < rounds; r++)
        s += (int64_t)piece(t, r);
    return s;
}

static void flip(const char *fn, int64_t off)
{
    FILE *f = fopen(fn, "r+b");
    assert_non_null(f);
    assert_int_equal(fseeko(f, off, SEEK_SET), 0);
    int c = fgetc(f);
    assert_true(c != EOF);
    assert_int_equal(fseeko(f, off, SEEK_SET), 0);
    fputc(c ^ 0x20, f);
    assert_int_equal(fclose(f), 0);
}

/* Read every task of fn; task `bad` (-1: none) must fail with a checksum error
 * naming it and block 0, the others must come back exactly. */
static void read_back(const char *fn, int rounds, int bad)
{
    int nt = 0, nf = 0, *gr = NULL;
    sion_int64 *cs = NULL;
    sion_int32 fsb = 0;
    FILE *fp = NULL;
    int sid = sion_open((char *)fn, "rb", &nt, &nf, &cs, &fsb, &gr, &fp);
    if (sid < 0)
        fail_msg("open %s: %s", fn, sheaf_last_error());
    assert_int_equal(nt, NT);
    for (int t = 0; t < NT; t++) {
        size_t n = (size_t)task_bytes(t, rounds);
        unsigned char *b = malloc(n + 1), *e = malloc(n + 1);
        tu_fill(e, t, 0, n);
        assert_int_equal(sion_seek(sid, t, SION_ABSOLUTE_POS, 0), SION_SUCCESS);
        size_t got = sion_fread(b, 1, n, sid);
        if (t == bad) {
            assert_true(got < n);
            char want[64];
            snprintf(want, sizeof want, "checksum mismatch: task %d (global rank %d), block 0", t, t);
            if (!strstr(sheaf_last_error(), want) || !strstr(sheaf_last_error(), fn))
                fail_msg("task %d: message \"%s\" lacks \"%s\"", t, sheaf_last_error(), want);
        } else {
            assert_int_equal(got, n);
            assert_memory_equal(b, e, n);
        }
        free(b);
        free(e);
    }
    sion_close(sid);
    free(cs);
    free(gr);
}

static void test_damage_after_recovery(void **st)
{
    (void)st;
    char fn[4200];
    snprintf(fn, sizeof fn, "%s/after.sion", g_dir);
    crash_writer(fn, "bw,checksum", 3, 0);
    sheaf_recover_summary d, s;
    assert_int_equal(sheaf_recover(fn, SHEAF_RECOVER_DRY_RUN, NULL, NULL, &d), 0);
    assert_int_equal(sheaf_recover(fn, 0, NULL, NULL, &s), 0);
    read_back(fn, 3, -1);
    flip(fn, task_start[1] + 100); /* damaged after the recovery */
    read_back(fn, 3, 1);
    assert_int_equal(d.checksums, 1); /* the dry run (sheaf verify) checks too */
    assert_int_equal(d.blocks, NT);
    assert_int_equal(d.blocks_verified, NT);
    assert_int_equal(s.checksums, 1);
    assert_int_equal(s.blocks_verified, NT);
    assert_int_equal(s.blocks_damaged + s.blocks_unverifiable, 0);
}

static void test_damage_before_recovery(void **st)
{
    (void)st;
    char fn[4200];
    snprintf(fn, sizeof fn, "%s/before.sion", g_dir);
    crash_writer(fn, "bw,checksum", 2, 0);
    flip(fn, task_start[2] + 7); /* damaged while nobody had it open */
    sheaf_recover_summary s;
    assert_int_equal(sheaf_recover(fn, 0, NULL, NULL, &s), 0);
    assert_int_equal(s.checksums, 1);
    assert_int_equal(s.blocks_damaged, 1);
    assert_int_equal(s.blocks_verified, NT - 1);
    read_back(fn, 2, 2);
}

/* Bytes written through the exported FILE*: the flush reads the block back for its CRC. */
static void test_raw_handle(void **st)
{
    (void)st;
    char fn[4200];
    snprintf(fn, sizeof fn, "%s/raw.sion", g_dir);
    crash_writer(fn, "bw,checksum", 2, 1);
    sheaf_recover_summary s;
    assert_int_equal(sheaf_recover(fn, 0, NULL, NULL, &s), 0);
    assert_int_equal(s.blocks_verified, NT);
    read_back(fn, 2, -1);
    flip(fn, task_start[1] + 3);
    read_back(fn, 2, 1);
}

/* The file lost the end of task 2's block: what is left cannot be verified. */
static void test_truncated_unverifiable(void **st)
{
    (void)st;
    char fn[4200];
    snprintf(fn, sizeof fn, "%s/cut.sion", g_dir);
    crash_writer(fn, "bw,checksum", 2, 0);
    assert_int_equal(truncate(fn, task_start[2] + 100), 0);
    sheaf_recover_summary s;
    assert_int_equal(sheaf_recover(fn, 0, NULL, NULL, &s), 0);
    assert_int_equal(s.blocks_unverifiable, 1);
    assert_int_equal(s.blocks_verified, NT - 1);
    assert_true(s.lost > 0);
}

/* A writer without the checksum key journals SHJ1 records: no checksums, every
 * data block reported unverifiable, no trailer. */
static void test_plain_journal(void **st)
{
    (void)st;
    char fn[4200];
    snprintf(fn, sizeof fn, "%s/plain.sion", g_dir);
    crash_writer(fn, "bw", 2, 0);
    char j[4300];
    snprintf(j, sizeof j, "%s.sheafj", fn);
    size_t n = 0;
    unsigned char *d = tu_read_file(j, &n);
    assert_non_null(d);
    assert_true(n > 4 && memcmp(d, "SHJ1", 4) == 0);
    free(d);
    sheaf_recover_summary s;
    assert_int_equal(sheaf_recover(fn, 0, NULL, NULL, &s), 0);
    assert_int_equal(s.checksums, 0);
    assert_int_equal(s.blocks_unverifiable, NT);
    read_back(fn, 2, -1);
}

int main(void)
{
    g_dir = tu_mkdtemp();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_damage_after_recovery),
        cmocka_unit_test(test_damage_before_recovery),
        cmocka_unit_test(test_raw_handle),
        cmocka_unit_test(test_truncated_unverifiable),
        cmocka_unit_test(test_plain_journal),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    tu_rmtree(g_dir);
    free(g_dir);
    return rc;
}
