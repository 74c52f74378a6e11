/* loader.h - internal declarations of the load server (src/loader, only for
 * this directory). */
#ifndef SHEAF_LOADER_INTERNAL_H
#define SHEAF_LOADER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "proto.h"

/* a string-keyed hash table (chained, grows at load 1) */
struct sld_hent { struct sld_hent *next; uint64_t h; char *key; void *val; };
struct sld_htab { struct sld_hent **b; size_t nb, n; };

void *sld_htab_get(const struct sld_htab *t, const char *key);
int sld_htab_put(struct sld_htab *t, const char *key, void *val);
void sld_htab_free(struct sld_htab *t, void (*freeval)(void *));

/* the state of one server: cache directory, caches, counters */
struct sld_server {
  char dir[SLD_PATH_MAX];      /* <base>/sheaf-ld.<uid>.<pid>, 0700 */
  char sock[SLD_PATH_MAX];     /* <dir>/sock */
  int strip;                   /* copies hold only the PT_LOAD extents of ELF files */
  unsigned long seq;
  struct sld_htab dirs, stats, lstats, files, listed, reals;
  uint64_t c[SLD_NCOUNTERS];
};

/* cache.c: answers one request from the caches, reading the file system on a miss */
void sld_cache_serve(struct sld_server *s, const struct sld_request *rq, struct sld_reply *rp);
void sld_cache_free(struct sld_server *s);

/* copy.c: a copy of src at dst (created 0700-dir-relative, O_EXCL|O_NOFOLLOW via a
 * temporary name, then renamed); with strip, only the PT_LOAD extents of an ELF
 * file hold data (the rest is a hole). Adds to the read counters; 0 or an errno. */
int sld_copy_file(struct sld_server *s, const char *src, const char *dst, mode_t mode);
/* mkdir -p below the cache directory (components created 0700, never followed
 * through a symlink); 0 or an errno */
int sld_mkdirs(const char *path);

/* cachedir.c: the cache directory of this server and the removal of stale ones */
int sld_cachedir_create(struct sld_server *s, const char *base, char *err, size_t errlen);
int sld_remove_tree(const char *path);
void sld_cleanup_stale(const char *base);
const char *sld_default_base(void);

/* conn.c (shared with the audit client): a connection with timeouts */
int sld_connect(const char *sock, int timeout_ms);
int sld_call(int fd, const struct sld_request *rq, struct sld_reply *rp);

#endif
