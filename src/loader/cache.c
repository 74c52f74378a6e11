/* cache.c - the load server's caches: directory listings, stat results and
 * node-local copies of files, each in a hash table keyed by the original path.
 * Every file-system operation on the original tree is counted (sld_server.c):
 * one listing per distinct directory, one stat per distinct path, one read per
 * distinct file. Requests are served in the server's single event loop, so all
 * clients asking for the same key while it is read wait for that one read. */
#define _GNU_SOURCE
#include "loader.h"
#include "net.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define SLD_MAX_NAMES (1u << 20) /* a listing larger than this is not cached */

#define ldir sld_dir

struct lstatent {
    int err;
    struct sld_stat st;
};
struct lfile {
    int err;
    char *local;
};
struct lreal {
    int err;
    char *real;
};

static void free_real(void *p)
{
    struct lreal *r = p;
    if (r)
        free(r->real);
    free(r);
}

static void free_dir(void *p)
{
    struct ldir *d = p;
    if (!d)
        return;
    for (size_t i = 0; i < d->n; i++)
        free(d->names[i]);
    free(d->names);
    free(d->types);
    free(d->real);
    free(d);
}

static void free_file(void *p)
{
    struct lfile *f = p;
    if (f)
        free(f->local);
    free(f);
}

void sld_cache_free(struct sld_server *s)
{
    sld_htab_free(&s->dirs, free_dir);
    sld_htab_free(&s->stats, free);
    sld_htab_free(&s->lstats, free);
    sld_htab_free(&s->files, free_file);
    sld_htab_free(&s->listed, free);
    sld_htab_free(&s->reals, free_real);
}

static int cmpname(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* reads one directory of the original tree: realpath + one listing */
static struct ldir *read_dir(struct sld_server *s, const char *path)
{
    struct ldir *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    size_t cap = 0;
    s->c[SLD_C_LISTINGS]++;
    DIR *dp = opendir(path);
    if (!dp) {
        d->err = errno;
        return d;
    }
    struct dirent *e;
    while ((e = readdir(dp))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (d->n == cap) {
            if (cap >= SLD_MAX_NAMES) {
                d->err = EFBIG;
                break;
            }
            size_t nc = cap ? cap * 2 : 64;
            char **nn = realloc(d->names, nc * sizeof *nn);
            if (nn)
                d->names = nn;
            unsigned char *nt = nn ? realloc(d->types, nc) : NULL;
            if (!nn || !nt) {
                d->err = ENOMEM;
                break;
            }
            d->types = nt;
            cap = nc;
        }
        char *nm = strdup(e->d_name);
        if (!nm) {
            d->err = ENOMEM;
            break;
        }
        d->names[d->n] = nm;
        d->types[d->n++] = e->d_type;
    }
    closedir(dp);
    /* sort names and types together: sort an index-carrying copy */
    if (!d->err && d->n) {
        char **tmp = malloc(d->n * sizeof *tmp);
        if (!tmp)
            d->err = ENOMEM;
        else {
            for (size_t i = 0; i < d->n; i++) {
                /* the type rides in front of the name: one allocation per entry */
                size_t l = strlen(d->names[i]);
                tmp[i] = malloc(l + 2);
                if (!tmp[i]) {
                    d->err = ENOMEM;
                    for (size_t j = 0; j < i; j++)
                        free(tmp[j]);
                    break;
                }
                memcpy(tmp[i], d->names[i], l + 1);
                tmp[i][l + 1] = (char)d->types[i];
            }
            if (!d->err) {
                qsort(tmp, d->n, sizeof *tmp, cmpname);
                for (size_t i = 0; i < d->n; i++) {
                    free(d->names[i]);
                    d->names[i] = tmp[i];
                    d->types[i] = (unsigned char)tmp[i][strlen(tmp[i]) + 1];
                }
            }
            free(tmp);
        }
    }
    if (!d->err) {
        s->c[SLD_C_REALPATHS]++;
        d->real = realpath(path, NULL);
        if (!d->real)
            d->err = errno;
    }
    return d;
}

/* a listing as an object of the overlay (names borrowed; a listing too
 * large for one frame travels as EFBIG: the receiver then asks per name) */
static void obj_of_dir(const char *path, const struct ldir *d, struct sln_obj *o)
{
    memset(o, 0, sizeof *o);
    o->kind = SLN_K_DIR;
    snprintf(o->path, sizeof o->path, "%s", path);
    o->status = d->err;
    if (d->err)
        return;
    snprintf(o->real, sizeof o->real, "%s", d->real ? d->real : "");
    o->n = (uint32_t)d->n;
    o->names = d->names;
    o->types = d->types;
    if (sln_obj_size(o) > SLN_FRAME_MAX) {
        o->n = 0;
        o->names = NULL;
        o->types = NULL;
        o->status = EFBIG;
    }
}

static struct ldir *dir_of_obj(struct sln_obj *o)
{
    struct ldir *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->err = o->status;
    if (!d->err && !(d->real = strdup(o->real)))
        d->err = ENOMEM;
    if (!d->err) {
        d->n = o->n;
        d->names = o->names;
        d->types = o->types;
        o->names = NULL;
        o->types = NULL;
        o->n = 0;
    }
    return d;
}

static struct ldir *get_dir(struct sld_server *s, const char *path)
{
    struct ldir *d = sld_htab_get(&s->dirs, path);
    if (d) {
        s->c[SLD_C_HITS]++;
        return d;
    }
    struct sln_where w;
    sln_where(s->net, path, &w);
    if (w.remote) {
        sln_fetch(s, SLN_K_DIR, path, &w);
        return NULL;
    } /* parked, or the server stops */
    d = read_dir(s, path);
    if (d && w.push) {
        struct sln_obj o;
        obj_of_dir(path, d, &o);
        sln_push(s, &o, &w);
    }
    if (d && sld_htab_put(&s->dirs, path, d)) {
        free_dir(d);
        return NULL;
    }
    return d;
}

/* the type of `name` in d (DT_*), or -1 when absent */
static int find_name(const struct ldir *d, const char *name)
{
    size_t lo = 0, hi = d->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(name, d->names[mid]);
        if (!c)
            return d->types[mid];
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return -1;
}

static void split(const char *path, char *dir, const char **name)
{
    const char *sl = strrchr(path, '/');
    size_t n = (size_t)(sl - path);
    memcpy(dir, path, n ? n : 1);
    dir[n ? n : 1] = 0;
    *name = sl + 1;
}

static void to_sld_stat(const struct stat *st, struct sld_stat *o)
{
    o->dev = st->st_dev;
    o->ino = st->st_ino;
    o->mode = st->st_mode;
    o->nlink = st->st_nlink;
    o->uid = st->st_uid;
    o->gid = st->st_gid;
    o->rdev = st->st_rdev;
    o->size = (uint64_t)st->st_size;
    o->blksize = (uint64_t)st->st_blksize;
    o->blocks = (uint64_t)st->st_blocks;
    o->atime_sec = st->st_atim.tv_sec;
    o->atime_nsec = st->st_atim.tv_nsec;
    o->mtime_sec = st->st_mtim.tv_sec;
    o->mtime_nsec = st->st_mtim.tv_nsec;
    o->ctime_sec = st->st_ctim.tv_sec;
    o->ctime_nsec = st->st_ctim.tv_nsec;
}

/* the listing says whether the name exists: ENOENT without touching the tree.
 * Returns the entry type (>= 0), or -errno; -EAGAIN when the listing is not
 * usable (unreadable directory) and the caller must ask the file system. */
static int check_listing(struct sld_server *s, const char *path, struct ldir **dp, const char **namep)
{
    char dir[SLD_PATH_MAX];
    const char *name;
    if (path[0] != '/' || !strcmp(path, "/"))
        return -EAGAIN;
    split(path, dir, &name);
    struct ldir *d = get_dir(s, dir);
    if (!d)
        return -ENOMEM;
    if (dp)
        *dp = d;
    if (namep)
        *namep = name;
    if (d->err == ENOENT || d->err == ENOTDIR)
        return -d->err;
    if (d->err)
        return -EAGAIN;
    int t = find_name(d, name);
    return t < 0 ? -ENOENT : t;
}

static void do_stat(struct sld_server *s, const char *path, int follow, struct sld_reply *rp)
{
    struct sld_htab *tab = follow ? &s->stats : &s->lstats;
    struct lstatent *e = sld_htab_get(tab, path);
    if (!e) {
        int t = check_listing(s, path, NULL, NULL);
        if (t < 0 && t != -EAGAIN) {
            rp->status = -t;
            return;
        }
        if (s->dead) {
            rp->status = ENOMEM;
            return;
        }
        struct sln_where w;
        sln_where(s->net, path, &w);
        if (w.remote) { /* parked (the reply is stored, the request asked again), or the server stops */
            sln_fetch(s, follow ? SLN_K_STAT : SLN_K_LSTAT, path, &w);
            rp->status = ENOMEM;
            return;
        }
        e = calloc(1, sizeof *e);
        if (!e) {
            rp->status = ENOMEM;
            return;
        }
        struct stat st;
        s->c[SLD_C_STATS]++;
        if ((follow ? stat(path, &st) : lstat(path, &st)) != 0)
            e->err = errno;
        else
            to_sld_stat(&st, &e->st);
        if (w.push) {
            struct sln_obj o;
            memset(&o, 0, sizeof o);
            o.kind = follow ? SLN_K_STAT : SLN_K_LSTAT;
            snprintf(o.path, sizeof o.path, "%s", path);
            o.status = e->err;
            o.st = e->st;
            sln_push(s, &o, &w);
        }
        if (sld_htab_put(tab, path, e)) {
            free(e);
            rp->status = ENOMEM;
            return;
        }
    } else {
        s->c[SLD_C_HITS]++;
    }
    rp->status = e->err;
    rp->st = e->st;
}

/* realpath(3) of the original, once per distinct path string (the result or
 * its errno remembered); DT_UNKNOWN or -errno */
static int resolve_once(struct sld_server *s, const char *path, char *real)
{
    struct lreal *r = sld_htab_get(&s->reals, path);
    if (!r) {
        struct sln_where w;
        sln_where(s->net, path, &w);
        if (w.remote) {
            sln_fetch(s, SLN_K_REAL, path, &w);
            return -ENOMEM;
        } /* parked, or the server stops */
        if (s->dead)
            return -ENOMEM;
        r = calloc(1, sizeof *r);
        if (!r)
            return -ENOMEM;
        s->c[SLD_C_REALPATHS]++;
        if (!realpath(path, real))
            r->err = errno;
        else if (!(r->real = strdup(real)))
            r->err = ENOMEM;
        if (sld_htab_put(&s->reals, path, r)) {
            free_real(r);
            return -ENOMEM;
        }
        if (w.push) {
            struct sln_obj o;
            memset(&o, 0, sizeof o);
            o.kind = SLN_K_REAL;
            snprintf(o.path, sizeof o.path, "%s", path);
            o.status = r->err;
            if (r->real)
                snprintf(o.real, sizeof o.real, "%s", r->real);
            sln_push(s, &o, &w);
        }
    } else {
        s->c[SLD_C_HITS]++;
    }
    if (r->err)
        return -r->err;
    snprintf(real, SLD_PATH_MAX, "%s", r->real);
    return DT_UNKNOWN;
}

/* the original's real path (symlinks resolved) and kind, or -errno */
static int real_of(struct sld_server *s, const char *path, char *real)
{
    struct ldir *d;
    const char *name;
    int t = check_listing(s, path, &d, &name);
    /* a symlink (or an unlisted name): resolved once, remembered */
    if (t == -EAGAIN || t == DT_LNK || t == DT_UNKNOWN)
        return resolve_once(s, path, real);
    if (t < 0)
        return t;
    if ((size_t)snprintf(real, SLD_PATH_MAX, "%s/%s", strcmp(d->real, "/") ? d->real : "", name) >= SLD_PATH_MAX)
        return -ENAMETOOLONG;
    return t;
}

int sld_local_name(const struct sld_server *s, const char *real, char *out, size_t cap)
{
    /* only a clean absolute real path names a copy: "..", "." or "//" could leave the cache */
    if (!sld_path_clean(real, 1) || !strcmp(real, "/"))
        return EINVAL;
    return (size_t)snprintf(out, cap, "%s/f%s", s->dir, real) >= cap ? ENAMETOOLONG : 0;
}

static void obj_of_file(const char *real, const struct lfile *f, struct sln_obj *o)
{
    memset(o, 0, sizeof *o);
    o->kind = SLN_K_FILE;
    snprintf(o->path, sizeof o->path, "%s", real);
    o->status = f->err;
    struct stat st;
    if (!f->err && stat(f->local, &st))
        o->status = errno;
    if (o->status)
        return;
    snprintf(o->real, sizeof o->real, "%s", f->local);
    o->mode = st.st_mode & 07777;
    o->size = (uint64_t)st.st_size;
}

/* the file read once from the original (or from the parent); NULL: no memory or no parent */
static struct lfile *get_file(struct sld_server *s, const char *real)
{
    struct lfile *f = sld_htab_get(&s->files, real);
    if (f) {
        s->c[SLD_C_HITS]++;
        return f;
    }
    if (s->dead)
        return NULL;
    struct sln_where w;
    sln_where(s->net, real, &w);
    if (w.remote) {
        sln_fetch(s, SLN_K_FILE, real, &w);
        return NULL;
    } /* parked, or the server stops */
    if (w.pass) {
        /* node-local or well distributed (FGFS): the clients read the original */
        if (!(f = calloc(1, sizeof *f)))
            return NULL;
        struct stat st;
        s->c[SLD_C_STATS]++;
        s->c[SLD_C_PASSTHROUGH]++;
        if (stat(real, &st))
            f->err = errno;
        else if (!S_ISREG(st.st_mode))
            f->err = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
        else if (!(f->local = strdup(real)))
            f->err = ENOMEM;
    } else {
        if (!(f = calloc(1, sizeof *f)))
            return NULL;
        char local[SLD_PATH_MAX];
        struct stat st;
        s->c[SLD_C_STATS]++;
        if (stat(real, &st))
            f->err = errno;
        else if (!S_ISREG(st.st_mode))
            f->err = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
        else if (!(f->err = sld_local_name(s, real, local, sizeof local)) &&
                 !(f->err = sld_copy_file(s, real, local, (st.st_mode & 0755) | 0400)))
            f->local = strdup(local);
        if (!f->err && !f->local)
            f->err = ENOMEM;
    }
    if (sld_htab_put(&s->files, real, f)) {
        free_file(f);
        return NULL;
    }
    if (w.push) {
        struct sln_obj o;
        obj_of_file(real, f, &o);
        sln_push(s, &o, &w);
    }
    return f;
}

static void do_lookup(struct sld_server *s, const char *path, struct sld_reply *rp)
{
    char real[SLD_PATH_MAX];
    int t = real_of(s, path, real);
    if (t < 0) {
        rp->status = -t;
        return;
    }
    if (t == DT_DIR) {
        rp->status = EISDIR;
        return;
    }
    struct lfile *f = get_file(s, real);
    if (!f) {
        rp->status = ENOMEM;
        return;
    }
    rp->status = f->err;
    if (!f->err)
        snprintf(rp->path, sizeof rp->path, "%s", f->local);
}

/* whether realpath(3) of path is its listing's real path plus the name: no
 * "." or ".." component, no "//", no trailing '/' */
static int plain_path(const char *path)
{
    if (path[0] != '/' || !path[1])
        return 0;
    for (const char *p = path; *p; p++) {
        if (*p != '/')
            continue;
        if (p[1] == '/' || !p[1])
            return 0;
        if (p[1] == '.' && (p[2] == '/' || !p[2] || (p[2] == '.' && (p[3] == '/' || !p[3]))))
            return 0;
    }
    return 1;
}

/* realpath(3) of the original: a plain path from its directory's listing (a
 * file or directory named there is the listing's real path plus the name;
 * missing from the listing is ENOENT, below a non-directory ENOTDIR), a
 * symlink, an unlisted name or any other path by realpath itself, once */
static void do_realpath(struct sld_server *s, const char *path, struct sld_reply *rp)
{
    char real[SLD_PATH_MAX];
    int t = plain_path(path) ? real_of(s, path, real) : resolve_once(s, path, real);
    if (t < 0) {
        rp->status = -t;
        return;
    }
    rp->kind = (uint32_t)t;
    snprintf(rp->path, sizeof rp->path, "%s", real);
}

/* a node-local directory with the same names (empty files, directories,
 * symlinks), for opendir/readdir. It is named by the request's path when that
 * is clean, else by the listing's real path (a path with "..", "." or "//"
 * never names anything in the cache); made below the cache's descriptor. */
static void do_listdir(struct sld_server *s, const char *path, struct sld_reply *rp)
{
    char *done = sld_htab_get(&s->listed, path);
    if (done) {
        s->c[SLD_C_HITS]++;
        snprintf(rp->path, sizeof rp->path, "%s", done);
        return;
    }
    struct ldir *d = get_dir(s, path);
    if (!d) {
        rp->status = ENOMEM;
        return;
    }
    if (d->err) {
        rp->status = d->err;
        return;
    }
    const char *name = sld_path_clean(path, 1) ? path : d->real;
    char local[SLD_PATH_MAX];
    if (!name || !sld_path_clean(name, 1)) {
        rp->status = EINVAL;
        return;
    }
    if ((size_t)snprintf(local, sizeof local, "%s/d%s", s->dir, strcmp(name, "/") ? name : "") >= sizeof local) {
        rp->status = ENAMETOOLONG;
        return;
    }
    int dfd = -1, err = sld_cache_dir(s, local, &dfd);
    for (size_t i = 0; !err && i < d->n; i++) {
        const char *nm = d->names[i];
        if (!sld_path_clean(nm, 0) || strchr(nm, '/'))
            continue; /* one plain component */
        int r;
        if (d->types[i] == DT_DIR)
            r = mkdirat(dfd, nm, 0700);
        else if (d->types[i] == DT_LNK)
            r = symlinkat(".", dfd, nm);
        else {
            r = openat(dfd, nm, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
            if (r >= 0)
                r = close(r);
        }
        if (r && errno != EEXIST)
            err = errno;
    }
    if (dfd >= 0)
        close(dfd);
    char *cp = err ? NULL : strdup(local);
    if (!err && (!cp || sld_htab_put(&s->listed, path, cp))) {
        free(cp);
        err = ENOMEM;
    }
    rp->status = err;
    if (!err)
        snprintf(rp->path, sizeof rp->path, "%s", local);
}

void sld_cache_serve(struct sld_server *s, const struct sld_request *rq, struct sld_reply *rp)
{
    memset(rp, 0, sizeof *rp);
    s->c[SLD_C_REQUESTS]++;
    if (rq->op != SLD_OP_STATS && rq->op != SLD_OP_SHUTDOWN && rq->path[0] != '/') {
        rp->status = EINVAL;
        return;
    }
    switch (rq->op) {
    case SLD_OP_LOOKUP:
        do_lookup(s, rq->path, rp);
        break;
    case SLD_OP_STAT:
        do_stat(s, rq->path, 1, rp);
        break;
    case SLD_OP_LSTAT:
        do_stat(s, rq->path, 0, rp);
        break;
    case SLD_OP_LISTDIR:
        do_listdir(s, rq->path, rp);
        break;
    case SLD_OP_REALPATH:
        do_realpath(s, rq->path, rp);
        break;
    case SLD_OP_STATS:
        memcpy(rp->counters, s->c, sizeof rp->counters);
        snprintf(rp->path, sizeof rp->path, "%s", s->dir);
        break;
    case SLD_OP_SHUTDOWN:
        break;
    default:
        rp->status = EINVAL;
        break;
    }
}

int sld_cache_obj(struct sld_server *s, uint32_t kind, const char *path, struct sln_obj *o)
{
    memset(o, 0, sizeof *o);
    o->kind = kind;
    snprintf(o->path, sizeof o->path, "%s", path);
    if (kind == SLN_K_DIR) {
        struct ldir *d = get_dir(s, path);
        if (d)
            obj_of_dir(path, d, o);
        else
            o->status = ENOMEM;
    } else if (kind == SLN_K_STAT || kind == SLN_K_LSTAT) {
        struct sld_reply rp;
        memset(&rp, 0, sizeof rp);
        do_stat(s, path, kind == SLN_K_STAT, &rp);
        o->status = rp.status;
        o->st = rp.st;
    } else if (kind == SLN_K_REAL) {
        int t = resolve_once(s, path, o->real);
        if (t < 0) {
            o->status = -t;
            o->real[0] = 0;
        }
    } else if (kind == SLN_K_FILE) {
        struct lfile *f = get_file(s, path);
        if (f)
            obj_of_file(path, f, o);
        else
            o->status = ENOMEM;
    } else {
        o->status = EINVAL;
    }
    return s->dead ? -1 : 0;
}

int sld_cache_has(struct sld_server *s, uint32_t kind, const char *path)
{
    switch (kind) {
    case SLN_K_DIR:
        return sld_htab_get(&s->dirs, path) != NULL;
    case SLN_K_STAT:
        return sld_htab_get(&s->stats, path) != NULL;
    case SLN_K_LSTAT:
        return sld_htab_get(&s->lstats, path) != NULL;
    case SLN_K_REAL:
        return sld_htab_get(&s->reals, path) != NULL;
    case SLN_K_FILE:
        return sld_htab_get(&s->files, path) != NULL;
    default:
        return 0;
    }
}

void sld_cache_store(struct sld_server *s, struct sln_obj *o)
{
    if (o->kind == SLN_K_DIR && !sld_htab_get(&s->dirs, o->path)) {
        struct ldir *d = dir_of_obj(o);
        if (d && sld_htab_put(&s->dirs, o->path, d))
            free_dir(d);
    } else if ((o->kind == SLN_K_STAT || o->kind == SLN_K_LSTAT) &&
               !sld_htab_get(o->kind == SLN_K_STAT ? &s->stats : &s->lstats, o->path)) {
        struct lstatent *e = calloc(1, sizeof *e);
        if (!e)
            return;
        e->err = o->status;
        e->st = o->st;
        if (sld_htab_put(o->kind == SLN_K_STAT ? &s->stats : &s->lstats, o->path, e))
            free(e);
    } else if (o->kind == SLN_K_REAL && !sld_htab_get(&s->reals, o->path)) {
        struct lreal *r = calloc(1, sizeof *r);
        if (!r)
            return;
        r->err = o->status;
        if (!r->err && !(r->real = strdup(o->real)))
            r->err = ENOMEM;
        if (sld_htab_put(&s->reals, o->path, r))
            free_real(r);
    } else if (o->kind == SLN_K_FILE && !sld_htab_get(&s->files, o->path)) {
        struct lfile *f = calloc(1, sizeof *f);
        if (!f)
            return;
        f->err = o->status;
        if (!f->err && !(f->local = strdup(o->real)))
            f->err = ENOMEM;
        if (sld_htab_put(&s->files, o->path, f))
            free_file(f);
    }
}
