/* fuzz_recover.c - libFuzzer target: a crafted container plus journal through
 * the paths of `sheaf verify` and `sheaf recover` (sheaf_recover in dry-run,
 * salvage and real mode, then the recovered container opened and every task
 * read, as verify does). The input up to the first "SHJ1" is the container
 * file, the rest (from that magic on) its journal "<file>.sheafj"; an input
 * without the magic has no journal (salvage). The files live in a private
 * directory under $TMPDIR (/dev/shm when available). Beyond "no crash, no
 * leak, no allocation above -malloc_limit_mb": a successful recovery leaves
 * a container that opens, or fails with a message, never hangs, and is no
 * larger than the input plus its metadata (hostile chunk sizes). */
#define _GNU_SOURCE
#include "sion.h"
#include "sheaf.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char g_dir[4096], g_file[4200], g_journal[4300];

static void cleanup(void)
{
    unlink(g_journal);
    unlink(g_file);
    rmdir(g_dir);
}

static void setup(void)
{
    if (g_file[0])
        return;
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
    snprintf(g_dir, sizeof g_dir, "%s/sheaf-fuzz-recover-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(g_dir)) {
        perror("fuzz_recover: mkdtemp");
        abort();
    }
    snprintf(g_file, sizeof g_file, "%s/c.sion", g_dir);
    snprintf(g_journal, sizeof g_journal, "%s/c.sion.sheafj", g_dir);
    atexit(cleanup);
    sheaf_set_error_printing(0);
}

static void put(const char *path, const unsigned char *d, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f || (n && fwrite(d, 1, n, f) != n)) {
        perror(path);
        abort();
    }
    fclose(f);
}

/* verify's data check: open, read every task to its end */
static void read_all(void)
{
    int nt = 0, nf = 0, *gr = NULL;
    sion_int64 *cs = NULL;
    sion_int32 fsb = 0;
    FILE *fp = NULL;
    int sid = sion_open(g_file, "rb", &nt, &nf, &cs, &fsb, &gr, &fp);
    if (sid < 0)
        return;
    static char buf[65536];
    for (int t = 0; t < nt; t++) {
        if (sion_seek(sid, t, SION_ABSOLUTE_POS, 0) != SION_SUCCESS)
            continue;
        while (!sion_feof(sid) && sion_fread(buf, 1, sizeof buf, sid) > 0)
            ;
    }
    sion_close(sid);
    free(cs);
    free(gr);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    setup();
    const unsigned char *j = memmem(data, size, "SHJ1", 4);
    size_t cn = j ? (size_t)(j - data) : size;
    put(g_file, data, cn);
    unlink(g_journal);
    if (j)
        put(g_journal, j, size - cn);
    sheaf_recover_summary s;
    sheaf_recover(g_file, SHEAF_RECOVER_DRY_RUN, NULL, NULL, &s);
    sheaf_recover(g_file, SHEAF_RECOVER_DRY_RUN | SHEAF_RECOVER_SALVAGE, NULL, NULL, &s);
    if (sheaf_recover(g_file, j ? 0 : SHEAF_RECOVER_SALVAGE, NULL, NULL, &s) == 0) {
        /* the output is the input plus its metadata (bounded by the input: its
         * block table, mapping and checksums), never a file sized by the
         * header's chunk sizes */
        struct stat st;
        if (stat(g_file, &st) || (uint64_t)st.st_size > (uint64_t)cn + (64u << 20)) {
            fprintf(stderr, "fuzz_recover: the recovered file has %lld bytes, the input %zu\n", (long long)st.st_size,
                    cn);
            abort();
        }
        read_all();
    }
    unlink(g_journal);
    unlink(g_file);
    return 0;
}
