/* test_ckpt_flip.c - a flipped byte anywhere in a committed checkpoint is
 * never returned by a read that succeeds (serial, libsheaf_ckpt_read).
 *
 * Usage: test_ckpt_flip BASE   (a private copy of a round trip's base: the
 * files of its newest checkpoint are damaged in place, one byte at a time,
 * and repaired again). For every byte of every file of the step directory
 * (the manifest too; past 4 KiB of a file, every 3rd byte: the sion
 * containers' padding): the byte is inverted, the checkpoint opened, and
 * every field read as a restart with 1..7 ranks reads it (each rank its even
 * slice) plus 8
 * pseudo-random ranges per field. A read that succeeds must give exactly the
 * elements of the undamaged checkpoint; one that fails must be -EIO with a
 * message saying "checksum". A data byte inverted changes an element, so
 * every read that covers it must fail. The old reader checked a part only
 * when a read covered all of it: partial reads returned the damaged byte.
 * Prints "test_ckpt_flip: OK ..." and exits 0 when all hold. */
#define _XOPEN_SOURCE 700
#include "sheaf_ckpt_read.h"
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAXF 16
static char *files[64];
static int nfiles;
static unsigned char *good[MAXF];
static sheaf_ckpt_field_info info[MAXF];
static int nfields;
static char base[4096];
static uint64_t step;
static long reads, failed, flips, detected;

static int collect(const char *p, const struct stat *st, int type, struct FTW *ftw)
{
    (void)ftw;
    if (type == FTW_F && S_ISREG(st->st_mode) && nfiles < 64)
        files[nfiles++] = strdup(p);
    return 0;
}

static int flip(const char *path, off_t off)
{
    int fd = open(path, O_RDWR);
    unsigned char b;
    if (fd < 0 || pread(fd, &b, 1, off) != 1)
        return -1;
    b ^= 0xff;
    int rc = pwrite(fd, &b, 1, off) == 1 ? 0 : -1;
    close(fd);
    return rc;
}

static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 7;
    rnd_state ^= rnd_state << 17;
    return rnd_state;
}

/* 0: the read is correct or refused with a checksum error; -1: wrong bytes */
static int one_read(sheaf_ckpt *ck, int f, uint64_t first, uint64_t n, unsigned char *buf, int *fail)
{
    size_t es = info[f].elemsize;
    int rc = sheaf_ckpt_read(ck, f, first, n, buf);
    reads++;
    if (rc) {
        failed++;
        *fail = 1;
        if (rc != -EIO || !strstr(sheaf_ckpt_errmsg(), "checksum")) {
            fprintf(stderr, "read %d [%" PRIu64 "+%" PRIu64 "]: %d '%s' (want -EIO, a checksum error)\n", f, first, n,
                    rc, sheaf_ckpt_errmsg());
            return -1;
        }
        return 0;
    }
    if (memcmp(buf, good[f] + first * es, n * es)) {
        fprintf(stderr, "read of field '%s' [%" PRIu64 "+%" PRIu64 "] succeeded with damaged bytes\n", info[f].name,
                first, n);
        return -1;
    }
    return 0;
}

static int check_all(const char *what, off_t off)
{
    sheaf_ckpt *ck;
    int rc = sheaf_ckpt_open(base, step, &ck);
    if (rc) {
        if (rc >= 0 || !*sheaf_ckpt_errmsg()) {
            fprintf(stderr, "%s byte %lld: open failed with %d and no message\n", what, (long long)off, rc);
            return -1;
        }
        detected++;
        return 0;
    }
    int bad = 0, fail = 0;
    for (int f = 0; f < nfields && !bad; f++) {
        uint64_t c = info[f].count;
        unsigned char *buf = malloc(c * info[f].elemsize + 1);
        for (uint64_t p = 1; p <= 7 && !bad; p++)
            for (uint64_t q = 0; q < p && !bad; q++) {
                uint64_t a = c * q / p, e = c * (q + 1) / p;
                bad = one_read(ck, f, a, e - a, buf, &fail);
            }
        for (int k = 0; k < 8 && !bad && c; k++) {
            uint64_t a = rnd() % c, n = 1 + rnd() % (c - a);
            bad = one_read(ck, f, a, n, buf, &fail);
        }
        free(buf);
    }
    sheaf_ckpt_close(ck);
    if (bad)
        fprintf(stderr, "  after inverting byte %lld of %s\n", (long long)off, what);
    detected += fail;
    return bad ? -1 : 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_ckpt_flip BASE\n");
        return 2;
    }
    snprintf(base, sizeof base, "%s", argv[1]);
    sheaf_ckpt *ck;
    if (sheaf_ckpt_latest(base, &step) || sheaf_ckpt_open(base, step, &ck)) {
        fprintf(stderr, "test_ckpt_flip: %s: %s\n", base, sheaf_ckpt_errmsg());
        return 1;
    }
    nfields = sheaf_ckpt_nfields(ck);
    for (int f = 0; f < nfields && f < MAXF; f++) {
        sheaf_ckpt_field(ck, f, &info[f]);
        good[f] = malloc(info[f].count * info[f].elemsize + 1);
        if (sheaf_ckpt_read(ck, f, 0, info[f].count, good[f])) {
            fprintf(stderr, "test_ckpt_flip: undamaged read: %s\n", sheaf_ckpt_errmsg());
            return 1;
        }
    }
    sheaf_ckpt_close(ck);
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/step-%020" PRIu64, base, step);
    nftw(dir, collect, 16, FTW_PHYS);
    if (nfiles < 2) {
        fprintf(stderr, "test_ckpt_flip: %s: %d files\n", dir, nfiles);
        return 1;
    }
    for (int i = 0; i < nfiles; i++) {
        struct stat st;
        stat(files[i], &st);
        for (off_t off = 0; off < st.st_size; off += off < 4096 ? 1 : 3) {
            if (flip(files[i], off)) {
                fprintf(stderr, "test_ckpt_flip: %s: cannot flip byte %lld\n", files[i], (long long)off);
                return 1;
            }
            flips++;
            int rc = check_all(files[i], off);
            flip(files[i], off);
            if (rc)
                return 1;
        }
    }
    if (!detected) {
        fprintf(stderr, "test_ckpt_flip: no flip was ever detected\n");
        return 1;
    }
    printf("test_ckpt_flip: OK %d files, %ld bytes inverted, %ld reads (%ld refused with a checksum error), "
           "%ld detections\n",
           nfiles, flips, reads, failed, detected);
    return 0;
}
