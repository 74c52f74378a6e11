/* commit.c - the checkpoint directories: <base>/step-N.tmp while written,
 * <base>/step-N (with its manifest) once committed; fsync, rename, prune. */
#if defined(__GNUC__) && !defined(__clang__)
/* messages are cut at their buffer's size on purpose; MPI_Testall with
 * MPI_STATUSES_IGNORE is not an array access (GCC's false positive) */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
#include "ckpt.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void ck_tmpdir(const sheaf_ckpt_ctx *c, uint64_t step, char *out, size_t n)
{
    char d[32];
    ckf_step_dirname(step, d, sizeof d);
    snprintf(out, n, "%s/%s.tmp", c->base, d);
}

void ck_finaldir(const sheaf_ckpt_ctx *c, uint64_t step, char *out, size_t n)
{
    char d[32];
    ckf_step_dirname(step, d, sizeof d);
    snprintf(out, n, "%s/%s", c->base, d);
}

int ck_fsync_path(const char *path, int dir)
{
    int fd = open(path, (dir ? O_RDONLY | O_DIRECTORY : O_RDONLY) | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return errno;
    int rc = fsync(fd) ? errno : 0;
    close(fd);
    return rc;
}

/* Apply fn to every entry of dir (one level of subdirectories descended). */
static int walk(const char *dir, int depth, int (*fn)(const char *path, int isdir))
{
    DIR *d = opendir(dir);
    if (!d)
        return errno;
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char p[CKF_PATH_BYTES];
        struct stat st;
        if (ckf_join(p, sizeof p, dir, e->d_name)) {
            rc = rc ? rc : ENAMETOOLONG;
            continue;
        }
        if (lstat(p, &st))
            continue;
        int isdir = S_ISDIR(st.st_mode);
        if (isdir && depth > 0) {
            int r = walk(p, depth - 1, fn);
            rc = rc ? rc : r;
        }
        int r = fn(p, isdir);
        rc = rc ? rc : r;
    }
    closedir(d);
    return rc;
}

static int sync_one(const char *p, int isdir) { return ck_fsync_path(p, isdir); }

int ck_rmtree(const char *dir) { return ckf_rmtree(dir); }

int ck_units(const sheaf_ckpt_ctx *c, ckf_manifest *m)
{
    memset(m, 0, sizeof *m);
    const ck_cfg *g = &c->cfg;
    uint64_t np = (uint64_t)c->np;
    uint32_t n = g->strategy == CK_FPP || g->strategy == CK_SION ? (uint32_t)np
                 : g->strategy == CK_COIO                        ? (uint32_t)g->nf
                 : g->sion_container                             ? (uint32_t)g->ng
                                                                 : (uint32_t)g->nf;
    enum { PATHLEN = 32 }; /* the longest name below is 25 bytes */
    m->units = calloc(n, sizeof *m->units);
    m->text = malloc((size_t)n * PATHLEN);
    if (!m->units || !m->text) {
        ckf_manifest_free(m);
        return ENOMEM;
    }
    m->nunits = n;
    m->nranks = np;
    snprintf(m->app, sizeof m->app, "%s", c->app[0] ? c->app : "-");
    snprintf(m->strategy, sizeof m->strategy, "%s", sheaf_ckpt_strategy_name(c));
    for (uint32_t u = 0; u < n; u++) {
        ckf_unit *x = &m->units[u];
        char *path = m->text + (size_t)u * PATHLEN;
        x->path = path;
        x->kind = 'p';
        x->task = -1;
        x->first_rank = ck_first(u, np, n);
        x->nranks = ck_first(u + 1, np, n) - x->first_rank;
        if (g->strategy == CK_FPP)
            snprintf(path, PATHLEN, "d%05d/rank-%08u.ckpt", g->subdirs ? (int)(u % (uint32_t)g->subdirs) : 0, u);
        else if (g->strategy == CK_SION || g->sion_container) {
            x->kind = 's';
            x->task = u;
            snprintf(path, PATHLEN, "%s", g->strategy == CK_SION ? "ckpt.sion" : "rbio.sion");
        } else if (g->strategy == CK_COIO)
            snprintf(path, PATHLEN, "coio-%05u.ckpt", u);
        else {
            /* rbio file u holds the writer groups [first(u, ng, nf), first(u+1, ng, nf)) */
            uint64_t g0 = ck_first(u, (uint64_t)g->ng, n), g1 = ck_first(u + 1, (uint64_t)g->ng, n);
            x->first_rank = ck_first(g0, np, (uint64_t)g->ng);
            x->nranks = ck_first(g1, np, (uint64_t)g->ng) - x->first_rank;
            snprintf(path, PATHLEN, "rbio-%05u.ckpt", u);
        }
    }
    return 0;
}

static int write_manifest(const char *tmp, const ckf_manifest *m, int durable, char *msg, size_t mn)
{
    char *t = ckf_manifest_text(m), p[4400];
    if (!t)
        return snprintf(msg, mn, "no memory for the manifest"), ENOMEM;
    snprintf(p, sizeof p, "%s/%s", tmp, CKF_MANIFEST);
    int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666), rc = 0;
    size_t len = strlen(t);
    if (fd < 0 || write(fd, t, len) != (ssize_t)len || (durable && fsync(fd)))
        rc = errno ? errno : EIO, snprintf(msg, mn, "%s: %s", p, strerror(rc));
    if (fd >= 0 && close(fd) && !rc)
        rc = errno, snprintf(msg, mn, "%s: close: %s", p, strerror(rc));
    free(t);
    return rc;
}

static void prune(const sheaf_ckpt_ctx *c)
{
    size_t n = 0;
    if (c->cfg.keep <= 0 || sheaf_ckpt_list(c->base, NULL, 0, &n) || n <= (size_t)c->cfg.keep)
        return;
    uint64_t *s = malloc(n * sizeof *s);
    if (s && !sheaf_ckpt_list(c->base, s, n, &n))
        for (size_t i = 0; i + (size_t)c->cfg.keep < n; i++) {
            char d[4096];
            ck_finaldir(c, s[i], d, sizeof d);
            ck_rmtree(d);
        }
    free(s);
}

int ck_commit_local(sheaf_ckpt_ctx *c, uint64_t step, char *msg, size_t mn)
{
    char tmp[4096], fin[4096];
    ck_tmpdir(c, step, tmp, sizeof tmp);
    ck_finaldir(c, step, fin, sizeof fin);
    ckf_manifest m;
    if (ck_units(c, &m))
        return snprintf(msg, mn, "no memory for the manifest"), ENOMEM;
    m.step = step;
    int rc = 0;
    if (c->cfg.durable && (rc = walk(tmp, 1, sync_one)) != 0)
        snprintf(msg, mn, "%s: fsync of its files: %s", tmp, strerror(rc));
    if (!rc)
        rc = write_manifest(tmp, &m, c->cfg.durable, msg, mn);
    ckf_manifest_free(&m);
    if (!rc && c->cfg.durable && (rc = ck_fsync_path(tmp, 1)) != 0)
        snprintf(msg, mn, "%s: fsync: %s", tmp, strerror(rc));
    if (!rc) {
        /* the same step written again: the old one moves aside (no longer
         * listed: its name is not step-N) and goes only after the rename */
        char old[4200];
        snprintf(old, sizeof old, "%s.old", fin);
        ck_rmtree(old);
        int moved = rename(fin, old) == 0;
        if (rename(tmp, fin)) {
            rc = errno, snprintf(msg, mn, "rename %s -> %s: %s", tmp, fin, strerror(rc));
            if (moved)
                rename(old, fin);
        } else if (moved)
            ck_rmtree(old);
    }
    if (!rc && c->cfg.durable && (rc = ck_fsync_path(c->base, 1)) != 0)
        snprintf(msg, mn, "%s: fsync: %s", c->base, strerror(rc));
    if (!rc)
        prune(c);
    return rc;
}

void ck_remove_stale(const char *base)
{
    DIR *d = opendir(base);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (strncmp(e->d_name, "step-", 5) || n < 9 ||
            (strcmp(e->d_name + n - 4, ".tmp") && strcmp(e->d_name + n - 4, ".old")))
            continue;
        char p[CKF_PATH_BYTES];
        if (!ckf_join(p, sizeof p, base, e->d_name))
            ck_rmtree(p);
    }
    closedir(d);
}
