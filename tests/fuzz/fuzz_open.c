/* fuzz_open.c - libFuzzer target: the input becomes a container file that is
 * opened through the public API (sion_open, sion_open_rank) and read
 * completely, with seeks. Uses one temporary file per process.
 * Multi-file sets: the input may hold up to 3 physical files separated by the
 * line "\n--sheaf-member--\n"; part k > 0 becomes <file>.%06d. */
#include "sion.h"
#include "sheaf.h"
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char g_path[256];
static int g_fd = -1;
#define SEP "\n--sheaf-member--\n"
#define MAXMEMBERS 3

static void member_name(char *out, size_t n, int k) { snprintf(out, n, "%s.%06d", g_path, k); }

static void cleanup(void)
{
    if (g_path[0]) {
        unlink(g_path);
        for (int k = 1; k < MAXMEMBERS; k++) {
            char p[300];
            member_name(p, sizeof p, k);
            unlink(p);
        }
    }
}

static const uint8_t *find_sep(const uint8_t *d, size_t n)
{
    size_t sl = sizeof SEP - 1;
    for (size_t i = 0; i + sl <= n; i++)
        if (d[i] == '\n' && memcmp(d + i, SEP, sl) == 0)
            return d + i;
    return NULL;
}

/* Key-value containers: walk the record parser of the current task. */
static void read_keys(int sid)
{
    static unsigned char kbuf[4096];
    if (sion_get_keyval_mode(sid) != SION_KEYVAL_INLINE)
        return;
    uint64_t key;
    size_t len;
    if (sion_fread_key_iterator_reset(sid) == SION_SUCCESS)
        for (int guard = 0; guard < 10000 && sion_fread_key_iterator_next(sid, &key, &len) == SION_SUCCESS; guard++)
            (void)sion_fread_key(kbuf, key, 1, sizeof kbuf, sid);
    if (sion_key_list_iterator_reset(sid) == SION_SUCCESS)
        for (int guard = 0; guard < 10000 && sion_key_list_iterator_next(sid, &key) == SION_SUCCESS; guard++) {
            sion_key_stat_t st;
            (void)sion_key_get_stat(sid, key, &st);
            if (sion_seek_key(sid, key, SION_ABSOLUTE_POS, 0) == SION_SUCCESS)
                (void)sion_fread_key(kbuf, key, 1, sizeof kbuf, sid);
        }
}

static void read_task(int sid, int t, int seek)
{
    static unsigned char buf[65536];
    if (seek && sion_seek(sid, t, SION_CURRENT_BLK, SION_CURRENT_POS) != SION_SUCCESS)
        return;
    sion_int64 total = 0;
    for (int guard = 0; guard < 100000 && !sion_feof(sid); guard++) {
        size_t got = sion_fread(buf, 1, sizeof buf, sid);
        if (got == 0)
            break;
        total += (sion_int64)got;
    }
    if (sion_seek(sid, SION_CURRENT_RANK, SION_END_POS, 0) == SION_SUCCESS && total > 0)
        (void)sion_seek(sid, SION_CURRENT_RANK, SION_ABSOLUTE_POS, total / 2);
    (void)sion_fread(buf, 1, 16, sid);
    (void)sion_bytes_avail_in_block(sid);
    (void)sion_get_position(sid);
    read_keys(sid);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (g_fd < 0) {
        sheaf_set_error_printing(0);
        snprintf(g_path, sizeof g_path, "/tmp/sheaf-fuzz-open-%ld.sion", (long)getpid());
        g_fd = open(g_path, O_RDWR | O_CREAT | O_TRUNC, 0600);
        if (g_fd < 0) {
            perror(g_path);
            abort();
        }
        atexit(cleanup);
    }
    /* split into members */
    const uint8_t *part = data;
    size_t rest = size, len0 = size;
    const uint8_t *sep = find_sep(data, size);
    if (sep)
        len0 = (size_t)(sep - data);
    if (ftruncate(g_fd, 0) != 0 || (len0 && pwrite(g_fd, data, len0, 0) != (ssize_t)len0))
        abort();
    for (int k = 1; k < MAXMEMBERS; k++) {
        char p[300];
        member_name(p, sizeof p, k);
        unlink(p);
        if (!sep)
            continue;
        part = sep + sizeof SEP - 1;
        rest = size - (size_t)(part - data);
        sep = find_sep(part, rest);
        size_t len = sep ? (size_t)(sep - part) : rest;
        int fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0600);
        if (fd < 0 || (len && write(fd, part, len) != (ssize_t)len))
            abort();
        close(fd);
    }
    int ntasks = 0, nfiles = 0;
    sion_int32 bs = 0;
    sion_int64 *cs = NULL;
    int *gr = NULL;
    int sid = sion_open(g_path, "rb", &ntasks, &nfiles, &cs, &bs, &gr, NULL);
    if (sid >= 0) {
        if (ntasks <= 0 || !cs || !gr)
            abort();
        int nt, mc;
        sion_int64 gs, sov, *c2, *g2, *bc, *bsz;
        if (sion_get_locations(sid, &nt, &mc, &gs, &sov, &c2, &g2, &bc, &bsz) != SION_SUCCESS || nt != ntasks)
            abort();
        for (int t = 0; t < ntasks && t < 64; t++)
            read_task(sid, t, 1);
        if (sion_close(sid) != SION_SUCCESS)
            abort();
        int rank = ntasks - 1;
        sid = sion_open_rank(g_path, "rb,posix", NULL, NULL, &rank, NULL);
        if (sid >= 0) {
            read_task(sid, rank, 0);
            sion_close(sid);
        } else if (!strstr(sheaf_last_error(), g_path)) {
            /* may fail where sion_seek to that task fails too (e.g. an empty
             * task placed beyond the largest file offset), but must say why */
            fprintf(stderr, "open_rank failed without naming the file: \"%s\"\n", sheaf_last_error());
            abort();
        }
    } else if (sheaf_last_error()[0] == '\0' || !strstr(sheaf_last_error(), g_path)) {
        fprintf(stderr, "open failed without naming the file: \"%s\"\n", sheaf_last_error());
        abort();
    }
    free(cs);
    free(gr);
    return 0;
}
