/* client.h - internal declarations of the audit client (libsheaf_audit.so):
 * its configuration, its connection to the server and the redirection of libc
 * calls. Lives in every process: libc only, no abort/exit, no allocation on
 * the request path, errno of the application never disturbed (wrappers call
 * the application's own libc functions, which set it). */
#ifndef SHEAF_LOADER_CLIENT_H
#define SHEAF_LOADER_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "proto.h"

#define SLC_NX_PREFIX "/__sheaf_ld_nonexistent__"

/* client.c */
int slc_enabled(void);
void slc_init(void);
/* one request: 0 (reply valid) or -1 (server unusable: the caller falls back) */
int slc_ask(int op, const char *orig, struct sld_reply *rp);
/* an absolute, lexically normalised path of `path` (relative to the working
 * directory), with a path below the cache's copies mapped back to the
 * original; 0 or -1 (too long / no working directory) */
int slc_original(const char *path, char *out, size_t cap);
/* whether the path ends in '/', "." or "..": only a directory can match it,
 * which the normalised original no longer says (the stat and open family
 * leave such paths to the file system) */
int slc_dir_only(const char *path);
/* whether calls on this original path are redirected (suffix, prefix) */
int slc_wanted(const char *orig, int isdir);
/* a resolved path below the cache's copies: the original path, else NULL */
const char *slc_uncached(const char *local);
void slc_log(const char *what, const char *orig, const char *result);
/* nonexistent path with the same name, so the application's libc reports ENOENT */
void slc_nx(const char *orig, char *out, size_t cap);
/* the server's cache directory ("" when disabled) */
const char *slc_cache_dir(void);

/* resolve.c: the whole search of a bare name at LA_SER_ORIG (0: the copy in
 * out and the original candidate in orig; 1: ld.so searches itself) */
struct link_map;
void slc_resolve_init(void);
void slc_resolve_objopen(struct link_map *map, int base);
int slc_resolve(const char *name, uintptr_t *cookie, char *out, size_t cap, char *orig);

/* whether symbol ndx of the object (its DT_VERSYM) is a non-default version
 * (name@VER, not name@@VER: an old ABI, e.g. realpath@GLIBC_2.2.5) */
int slc_hidden_version(const struct link_map *m, unsigned int ndx);

/* wrap.c: the wrapper for an imported libc symbol (recording the real one), or 0 */
uintptr_t slc_wrapper_for(const char *name, uintptr_t real);
/* wrap_realpath.c: the same for realpath, __realpath_chk, canonicalize_file_name
 * (and records the application's malloc, never wrapped), or 0 */
uintptr_t slc_realpath_wrapper_for(const char *name, uintptr_t real);

#endif
