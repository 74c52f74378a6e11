/* journal.c - the progress journal beside a physical file (see journal.h). */
#define _FILE_OFFSET_BITS 64
#include "journal.h"
#include "stream.h"
#include "crc32c.h"
#include "endian.h"
#include "error.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checksum.h"
#define REC_FIXED 36                   /* record without the block sizes */
#define JOURNAL_MAX ((int64_t)1 << 30) /* larger journals are refused */

char *core_journal_path(const char *path)
{
    size_t n = strlen(path);
    char *j = malloc(n + 8);
    if (j) {
        memcpy(j, path, n);
        memcpy(j + n, ".sheafj", 8);
    }
    return j;
}

int core_journal_remove(const char *path)
{
    char *j = core_journal_path(path);
    if (!j)
        return core_fail(SHEAF_E_NOMEM, "%s: out of memory", path);
    int rc = 0;
    if (unlink(j) != 0 && errno != ENOENT)
        rc = core_fail_errno(SHEAF_E_IO, errno, "%s: cannot remove the journal", j);
    free(j);
    return rc;
}

int core_journal_exists(const char *path)
{
    char *j = core_journal_path(path);
    struct stat st;
    int e = j && stat(j, &st) == 0;
    free(j);
    return e;
}

static int write_all(int fd, const unsigned char *p, size_t n, const char *name)
{
    /* one write per attempt: O_APPEND keeps concurrent records whole. A short
     * write (a signal, the disk filling up) leaves a torn record, which
     * readers skip; the whole record is then appended again. */
    for (int attempt = 0; attempt < 64; attempt++) {
        ssize_t w = write(fd, p, n);
        if (w == (ssize_t)n)
            return 0;
        if (w < 0 && errno != EINTR)
            return core_fail_errno(SHEAF_E_IO, errno, "%s: cannot append to the journal", name);
    }
    return core_fail(SHEAF_E_IO, "%s: journal record still incomplete after 64 attempts", name);
}

/* Append the records of the tasks of physical file k. */
static int flush_file(core_container *c, int32_t k)
{
    core_pfile *pf = &c->files[k];
    size_t len = 0;
    int rc = 0;
    for (int32_t t = 0; t < c->ntasks && !rc; t++)
        if (c->tasks[t].file == k) {
            len += REC_FIXED + (c->tasks[t].crc_on ? 12 : 8) * (size_t)c->tasks[t].nblocks;
            rc = core_cksum_finish_task(c, t); /* the CRC of every byte written, also through the raw handle */
        }
    if (rc || !len)
        return rc;
    rc = core_file_sync(&pf->f); /* the data first: a record never names bytes that are not durable */
    if (rc)
        return rc;
    unsigned char *buf = malloc(len), *p = buf;
    if (!buf)
        return core_fail(SHEAF_E_NOMEM, "%s: out of memory for a journal record", pf->f.name);
    for (int32_t t = 0; t < c->ntasks; t++) {
        const core_task *tk = &c->tasks[t];
        if (tk->file != k)
            continue;
        size_t L = REC_FIXED + (tk->crc_on ? 12 : 8) * (size_t)tk->nblocks;
        memcpy(p, tk->crc_on ? "SHJ2" : "SHJ1", 4);
        core_put_le32(p + 4, (uint32_t)L);
        core_put_le32(p + 8, (uint32_t)tk->lrank);
        core_put_le32(p + 12, 0);
        core_put_le64(p + 16, (uint64_t)tk->globalrank);
        core_put_le64(p + 24, (uint64_t)tk->nblocks);
        for (int64_t b = 0; b < tk->nblocks; b++)
            core_put_le64(p + 32 + 8 * b, (uint64_t)tk->bsize[b]);
        for (int64_t b = 0; tk->crc_on && b < tk->nblocks; b++)
            core_put_le32(p + 32 + 8 * tk->nblocks + 4 * b, tk->bcrc[b]);
        core_put_le32(p + L - 4, core_crc32c(0, p, L - 4));
        p += L;
    }
    char *j = NULL;
    if (!pf->jfd1) {
        if (!(j = core_journal_path(pf->f.name))) {
            free(buf);
            return core_fail(SHEAF_E_NOMEM, "%s: out of memory", pf->f.name);
        }
        int fd; /* never through a symbolic link planted at the journal's name, never a FIFO */
        if ((rc = core_open_regular(j, O_WRONLY | O_CREAT | O_APPEND, &fd))) {
            free(j);
            free(buf);
            return rc;
        }
        pf->jfd1 = fd + 1;
    }
    rc = write_all(pf->jfd1 - 1, buf, len, j ? j : pf->f.name);
    free(buf);
    while (!rc && fdatasync(pf->jfd1 - 1) != 0)
        if (errno != EINTR)
            rc = core_fail_errno(SHEAF_E_IO, errno, "%s: fsync of the journal failed", pf->f.name);
    /* a new journal must be found after a crash: its directory entry too */
    if (!rc && j) {
        char *dir = strdup(j), *slash = dir ? strrchr(dir, '/') : NULL;
        if (dir) {
            if (slash)
                *(slash == dir ? slash + 1 : slash) = '\0';
            int dfd = open(slash ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            if (dfd >= 0) {
                fsync(dfd);
                close(dfd);
            }
            free(dir);
        }
    }
    free(j);
    return rc;
}

int core_journal_flush(core_container *c)
{
    if (!c->mode.write)
        return 0;
    for (int32_t k = 0; k < c->nfiles; k++) {
        if (!c->files[k].f.name)
            continue;
        int rc = flush_file(c, k);
        if (rc)
            return rc;
    }
    return 0;
}

int core_durable_flush(core_container *c)
{
    int rc = core_sync(c);
    return rc ? rc : core_journal_flush(c);
}

void core_journal_state_free(core_journal_state *st)
{
    for (int32_t t = 0; t < st->ntasks; t++) {
        if (st->bsize)
            free(st->bsize[t]);
        if (st->bcrc)
            free(st->bcrc[t]);
    }
    free(st->nblocks);
    free(st->bsize);
    free(st->bcrc);
    memset(st, 0, sizeof *st);
}

int core_journal_parse(const unsigned char *raw, size_t n, int32_t ntasks, const int64_t *globalranks,
                       core_journal_state *st, const char *j)
{
    int rc = 0;
    st->ntasks = ntasks;
    if (!st->nblocks)
        st->nblocks = calloc((size_t)(ntasks > 0 ? ntasks : 1), sizeof *st->nblocks);
    if (!st->bsize)
        st->bsize = calloc((size_t)(ntasks > 0 ? ntasks : 1), sizeof *st->bsize);
    if (!st->bcrc)
        st->bcrc = calloc((size_t)(ntasks > 0 ? ntasks : 1), sizeof *st->bcrc);
    if (!st->nblocks || !st->bsize || !st->bcrc)
        return core_fail(SHEAF_E_NOMEM, "%s: out of memory reading the journal", j);
    for (size_t pos = 0; !rc && pos + REC_FIXED <= n;) {
        const unsigned char *p = raw + pos;
        uint32_t L = core_get_le32(p + 4);
        int magic = !memcmp(p, "SHJ1", 4) ? 1 : !memcmp(p, "SHJ2", 4) ? 2 : 0;
        unsigned per = magic == 2 ? 12 : 8; /* bytes per block: size (and CRC) */
        int ok = magic && L >= REC_FIXED && (L - REC_FIXED) % per == 0 && L <= n - pos &&
                 core_get_le64(p + 24) == (L - REC_FIXED) / per && core_get_le32(p + L - 4) == core_crc32c(0, p, L - 4);
        if (!ok) {
            st->damaged += magic != 0;
            const unsigned char *next = NULL;
            for (size_t q = pos + 1; q + 4 <= n && !next; q++)
                if (raw[q] == 'S' && (!memcmp(raw + q, "SHJ1", 4) || !memcmp(raw + q, "SHJ2", 4)))
                    next = raw + q;
            pos = next ? (size_t)(next - raw) : n;
            continue;
        }
        int32_t t = (int32_t)core_get_le32(p + 8);
        int64_t nb = (int64_t)core_get_le64(p + 24);
        if (t >= 0 && t < ntasks && (!globalranks || (int64_t)core_get_le64(p + 16) == globalranks[t]) && nb >= 1) {
            free(st->bsize[t]); /* a later record of the task replaces the earlier one */
            free(st->bcrc[t]);
            st->bcrc[t] = NULL;
            st->bsize[t] = malloc((size_t)nb * sizeof(int64_t));
            if (magic == 2)
                st->bcrc[t] = malloc((size_t)nb * sizeof(uint32_t));
            if (!st->bsize[t] || (magic == 2 && !st->bcrc[t])) {
                rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", j);
                break;
            }
            for (int64_t b = 0; b < nb; b++)
                st->bsize[t][b] = (int64_t)core_get_le64(p + 32 + 8 * b);
            for (int64_t b = 0; magic == 2 && b < nb; b++)
                st->bcrc[t][b] = core_get_le32(p + 32 + 8 * nb + 4 * b);
            st->nblocks[t] = nb;
            st->records++;
        }
        pos += L;
    }
    return rc;
}

int core_journal_load(const char *path, int32_t ntasks, const int64_t *globalranks, core_journal_state *st)
{
    memset(st, 0, sizeof *st);
    char *j = core_journal_path(path);
    if (!j)
        return core_fail(SHEAF_E_NOMEM, "%s: out of memory", path);
    core_file f;
    int rc = core_file_open(&f, j, 0, 1); /* a missing journal: SHEAF_E_NOTFOUND */
    if (rc) {
        free(j);
        return rc;
    }
    int64_t n = 0;
    unsigned char *raw = NULL;
    rc = core_file_size(&f, &n);
    if (!rc && n > JOURNAL_MAX)
        rc = core_fail(SHEAF_E_FORMAT, "%s: journal of %lld bytes is larger than 1 GiB", j, (long long)n);
    if (!rc && !(raw = malloc((size_t)(n ? n : 1))))
        rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory reading the journal", j);
    if (!rc && n)
        rc = core_file_pread(&f, raw, (size_t)n, 0);
    core_file_close(&f);
    if (!rc)
        rc = core_journal_parse(raw, (size_t)n, ntasks, globalranks, st, j);
    free(raw); /* everything kept is decoded */
    free(j);
    if (rc)
        core_journal_state_free(st);
    return rc;
}
