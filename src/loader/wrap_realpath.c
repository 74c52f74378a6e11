/* wrap_realpath.c - realpath(3), __realpath_chk (its _FORTIFY_SOURCE form,
 * which CPython calls on the script path) and canonicalize_file_name,
 * answered by the load server for the paths the loader serves (slc_wanted).
 * realpath's own lstat/readlink calls happen inside libc, where no binding
 * can redirect them: without this every process walked the script's path on
 * the shared tree.
 *
 * As everywhere in the client, the application's errno is set by the
 * application's own libc: a served failure calls the real function on a
 * local path that fails with the same errno (ENOENT: the empty path; ENOTDIR:
 * below /dev/null; ELOOP: the server's self-referencing symlink; ENAMETOOLONG:
 * an over-long name below /), and a served success leaves errno as glibc's
 * realpath does (EINVAL from its readlink of the last, non-link component:
 * set by calling the real function with a NULL path). A result of "/" (whose
 * errno depends on the walk), any other errno, an unserved path, a server
 * that cannot answer, or (resolved == NULL) an application malloc not known
 * yet: the real function on the original, as without the loader. The buffer
 * realpath(p, NULL) returns comes from the application's malloc (the binding
 * ld.so made for it), so the application's free() releases it. */
#define _GNU_SOURCE
#include "client.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

typedef char *(*realpath_fn)(const char *, char *);
typedef char *(*realpath_chk_fn)(const char *, char *, size_t);
typedef char *(*canon_fn)(const char *);
typedef void *(*malloc_fn)(size_t);

enum { K_REALPATH, K_CHK, K_CANON, K_N };

static uintptr_t real[K_N];
static uintptr_t app_malloc;

/* glibc's realpath buffer size (PATH_MAX); __realpath_chk refuses less */
#define RP_MAX 4096

/* the real function of kind k (buf: a RP_MAX buffer for K_REALPATH/K_CHK) */
static char *call(int k, const char *path, char *buf, size_t len)
{
    if (k == K_REALPATH)
        return ((realpath_fn)real[K_REALPATH])(path, buf);
    if (k == K_CHK)
        return ((realpath_chk_fn)real[K_CHK])(path, buf, len);
    return ((canon_fn)real[K_CANON])(path);
}

/* makes the application's libc set errno to e with a call that fails without
 * touching the shared tree (none of these paths resolves, so canonicalize_
 * file_name allocates nothing) */
static void set_errno(int k, int e)
{
    char buf[RP_MAX], p[SLD_PATH_MAX + 16];
    const char *path = p;
    if (e == EINVAL)
        path = NULL;
    else if (e == ENOENT)
        path = "";
    else if (e == ENOTDIR)
        path = "/dev/null/sheaf-ld";
    else if (e == ELOOP)
        snprintf(p, sizeof p, "%s/%s", slc_cache_dir(), SLD_ELOOP_NAME);
    else { /* ENAMETOOLONG: a name longer than NAME_MAX */
        memset(p, 'x', 300);
        p[0] = '/';
        p[300] = 0;
    }
    char *r = call(k, path, buf, sizeof buf);
    (void)r;
}

/* `path` made absolute (not normalised: the server resolves "..", "." and a
 * trailing '/' as realpath does); 0 or -1 */
static int absolute(const char *path, char *out, size_t cap)
{
    size_t n = strlen(path);
    if (path[0] == '/') {
        if (n >= cap)
            return -1;
        memcpy(out, path, n + 1);
        return 0;
    }
    if (!getcwd(out, cap))
        return -1;
    size_t c = strlen(out);
    if (c + 1 + n >= cap)
        return -1;
    out[c] = '/';
    memcpy(out + c + 1, path, n + 1);
    return 0;
}

/* 0: resolved into out; > 0: the errno realpath sets; -1: not served */
static int ask(const char *path, char *out)
{
    char abs[SLD_PATH_MAX], orig[SLD_PATH_MAX];
    struct sld_reply rp;
    if (!path || !path[0] || !slc_enabled())
        return -1;
    if (absolute(path, abs, sizeof abs) || slc_original(abs, orig, sizeof orig))
        return -1;
    /* a path into the cache resolves to the copy, as without the loader */
    const char *cache = slc_cache_dir();
    size_t cl = strlen(cache);
    if (!cl || (!strncmp(abs, cache, cl) && abs[cl] == '/') || !slc_wanted(orig, 0))
        return -1;
    if (slc_ask(SLD_OP_REALPATH, abs, &rp))
        return -1;
    if (rp.status == 0) {
        if (rp.path[0] != '/' || !rp.path[1])
            return -1;
        memcpy(out, rp.path, strlen(rp.path) + 1);
        slc_log("realpath", abs, out);
        return 0;
    }
    if (rp.status == ENOENT || rp.status == ENOTDIR || rp.status == ELOOP || rp.status == ENAMETOOLONG) {
        slc_log("realpath", abs,
                rp.status == ENOENT    ? "ENOENT"
                : rp.status == ENOTDIR ? "ENOTDIR"
                : rp.status == ELOOP   ? "ELOOP"
                                       : "ENAMETOOLONG");
        return rp.status;
    }
    return -1;
}

/* the served answer for kind k: resolved filled (or a buffer from the
 * application's malloc), errno set by the application's libc; *done = 0 when
 * the caller must call the real function instead */
static char *serve(int k, const char *path, char *resolved, int *done)
{
    char res[SLD_PATH_MAX];
    *done = 0;
    if (!resolved && !app_malloc)
        return NULL;
    int r = ask(path, res);
    if (r < 0)
        return NULL;
    *done = 1;
    set_errno(k, r ? r : EINVAL);
    if (r)
        return NULL;
    size_t n = strlen(res) + 1;
    if (!resolved && !(resolved = ((malloc_fn)app_malloc)(n)))
        return NULL; /* errno ENOMEM */
    memcpy(resolved, res, n);
    return resolved;
}

static char *w_realpath(const char *path, char *resolved)
{
    int done;
    char *r = serve(K_REALPATH, path, resolved, &done);
    return done ? r : call(K_REALPATH, path, resolved, 0);
}

static char *w_realpath_chk(const char *path, char *resolved, size_t len)
{
    int done = 0;
    char *r = len >= RP_MAX ? serve(K_CHK, path, resolved, &done) : NULL; /* else: libc's check */
    return done ? r : call(K_CHK, path, resolved, len);
}

static char *w_canonicalize_file_name(const char *path)
{
    int done;
    char *r = serve(K_CANON, path, NULL, &done);
    return done ? r : call(K_CANON, path, NULL, 0);
}

uintptr_t slc_realpath_wrapper_for(const char *name, uintptr_t realfn)
{
    static const struct {
        const char *name;
        int k;
        void *fn;
    } table[] = {
        {"realpath", K_REALPATH, (void *)w_realpath},
        {"__realpath_chk", K_CHK, (void *)w_realpath_chk},
        {"canonicalize_file_name", K_CANON, (void *)w_canonicalize_file_name},
    };
    if (!strcmp(name, "malloc")) {
        if (!app_malloc)
            app_malloc = realfn;
        return 0;
    }
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        if (strcmp(name, table[i].name))
            continue;
        if (!real[table[i].k])
            real[table[i].k] = realfn;
        return (uintptr_t)table[i].fn;
    }
    return 0;
}
