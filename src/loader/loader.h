/* loader.h - internal declarations of the load server (src/loader, only for
 * this directory). */
#ifndef SHEAF_LOADER_INTERNAL_H
#define SHEAF_LOADER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "proto.h"

struct sld_net;
struct sln_obj;

/* a string-keyed hash table (chained, grows at load 1) */
struct sld_hent {
    struct sld_hent *next;
    uint64_t h;
    char *key;
    void *val;
};
struct sld_htab {
    struct sld_hent **b;
    size_t nb, n;
};

void *sld_htab_get(const struct sld_htab *t, const char *key);
int sld_htab_put(struct sld_htab *t, const char *key, void *val);
void sld_htab_free(struct sld_htab *t, void (*freeval)(void *));

/* the state of one server: cache directory, caches, counters */
struct sld_server {
    char dir[SLD_PATH_MAX];  /* <base>/sheaf-ld.<uid>.<pid>, 0700 */
    int dirfd;               /* that directory: everything in the cache is made below it */
    char sock[SLD_PATH_MAX]; /* <dir>/sock */
    int strip;               /* copies hold only the PT_LOAD extents of ELF files */
    unsigned long seq;
    struct sld_htab dirs, stats, lstats, files, listed, reals;
    uint64_t c[SLD_NCOUNTERS];
    struct sld_net *net; /* the overlay (NULL: a single node) */
    int dead;            /* the overlay link to the parent failed: stop, clients fall back */
    int wouldblock;      /* the request being served waits for an object from a parent */
};

/* a directory listing as the caches hold it */
struct sld_dir {
    int err;    /* errno of opendir, 0 when listed */
    char *real; /* realpath of the directory */
    size_t n;
    char **names; /* sorted */
    unsigned char *types;
};

/* cache.c: answers one request from the caches, reading the file system on a miss */
void sld_cache_serve(struct sld_server *s, const struct sld_request *rq, struct sld_reply *rp);
void sld_cache_free(struct sld_server *s);
/* the overlay's view of the caches: an object for a child's GET (DIR: names
 * borrowed from the cache, not to be freed; FILE: o->real is the local copy);
 * 0, or -1 when the server lost its parent */
int sld_cache_obj(struct sld_server *s, uint32_t kind, const char *path, struct sln_obj *o);
/* whether the caches hold the object already */
int sld_cache_has(struct sld_server *s, uint32_t kind, const char *path);
/* stores an object received from the parent unless it is there (takes the names) */
void sld_cache_store(struct sld_server *s, struct sln_obj *o);
/* where the local copy of the original `real` goes */
int sld_local_name(const struct sld_server *s, const char *real, char *out, size_t cap);

/* copy.c: a copy of src at dst, a path in the cache (created below the cache's
 * descriptor, O_EXCL|O_NOFOLLOW via a temporary name, then renamed); with strip,
 * only the PT_LOAD extents of an ELF file hold data (the rest is a hole). Adds to
 * the read counters; 0 or an errno. */
int sld_copy_file(struct sld_server *s, const char *src, const char *dst, mode_t mode);

/* confine.c: local is <s->dir>/<clean relative name> (else EINVAL); the
 * directory local itself (sld_cache_dir) or the one holding it
 * (sld_cache_parent, *base = the last component) is opened, missing
 * components created 0700, never through a symlink and never outside the
 * cache (ENOTDIR when a component is a symlink). 0 and *dfd, or an errno. */
int sld_cache_dir(const struct sld_server *s, const char *local, int *dfd);
int sld_cache_parent(const struct sld_server *s, const char *local, int *dfd, const char **base);

/* cachedir.c: the cache directory of this server and the removal of stale ones */
int sld_cachedir_create(struct sld_server *s, const char *base, char *err, size_t errlen);
int sld_remove_tree(const char *path);
void sld_cleanup_stale(const char *base);
const char *sld_default_base(void);

/* conn.c (shared with the audit client): a connection with timeouts */
int sld_connect(const char *sock, int timeout_ms);
int sld_call(int fd, const struct sld_request *rq, struct sld_reply *rp);

#endif
