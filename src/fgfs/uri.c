/* uri.c - a local path raised to a global name (FGFS IV-A): realpath or a
 * lexical normalisation, the longest mount-point prefix, then a URI built
 * from the file-system kind: the host for node-local file systems, the
 * server and export for NFS/CIFS, NIDs + fsname for Lustre, the device for
 * GPFS, the cluster for Ceph, the fsname for FUSE, the backing file for
 * squashfs/erofs images on loop devices. The mount's root field is put in
 * front of the rest of the path (bind mounts). No communication. */
#define _GNU_SOURCE
#include "fgfs.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_IMAGE_DEPTH 4

typedef struct {
    char *p;
    size_t n, len;
    int over;
} sbuf;

static void put(sbuf *b, const char *s, size_t n)
{
    if (b->over || b->len + n >= b->n) {
        b->over = 1;
        return;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
}
static void puts_(sbuf *b, const char *s) { put(b, s, strlen(s)); }

int fgfs_normalize(const char *in, char *out, size_t n)
{
    if (n < 2 || in[0] != '/')
        return -1;
    size_t o = 0;
    const char *s = in;
    while (*s) {
        while (*s == '/')
            s++;
        const char *e = s;
        while (*e && *e != '/')
            e++;
        size_t l = (size_t)(e - s);
        if (l == 0)
            break;
        if (l == 1 && s[0] == '.') {
        } else if (l == 2 && s[0] == '.' && s[1] == '.') {
            while (o > 0 && out[o - 1] != '/')
                o--;
            if (o > 0)
                o--;
        } else {
            if (o + 1 + l >= n)
                return -1;
            out[o++] = '/';
            memcpy(out + o, s, l);
            o += l;
        }
        s = e;
    }
    if (o == 0)
        out[o++] = '/';
    out[o] = 0;
    return 0;
}

/* A path that does not exist (yet): its deepest existing ancestor through
 * realpath (symlinks such as /home -> /gpfs/home), the rest appended and
 * normalised lexically. 0, or -1 when no ancestor resolves. */
static int ancestor_real(const char *path, char *out)
{
    char *buf = malloc(FGFS_PATH), *tmp = malloc(FGFS_PATH);
    int rc = -1;
    if (!buf || !tmp)
        goto done;
    if (path[0] == '/' ? snprintf(buf, FGFS_PATH, "%s", path) >= FGFS_PATH
                       : !getcwd(tmp, FGFS_PATH) || snprintf(buf, FGFS_PATH, "%s/%s", tmp, path) >= FGFS_PATH)
        goto done;
    for (size_t pos = strlen(buf); pos > 0;) {
        size_t cut = pos - 1;
        while (cut > 0 && buf[cut] != '/')
            cut--;
        char c = buf[cut ? cut : 1];
        buf[cut ? cut : 1] = 0;
        char *r = realpath(buf, NULL);
        buf[cut ? cut : 1] = c;
        if (r) {
            if (snprintf(tmp, FGFS_PATH, "%s/%s", r, buf + cut) < FGFS_PATH)
                rc = fgfs_normalize(tmp, out, FGFS_PATH);
            free(r);
            break;
        }
        pos = cut;
    }
done:
    free(buf);
    free(tmp);
    return rc;
}

/* Absolute, normalised form of path into out (FGFS_PATH bytes). */
static int absolute(const char *path, int flags, char *out)
{
    if (!(flags & SHEAF_FGFS_NOREALPATH)) {
        char *r = realpath(path, NULL);
        if (r) {
            int bad = strlen(r) >= FGFS_PATH;
            if (!bad)
                strcpy(out, r);
            free(r);
            if (!bad)
                return 0;
        } else if (!ancestor_real(path, out))
            return 0;
    }
    if (path[0] == '/')
        return fgfs_normalize(path, out, FGFS_PATH);
    /* relative: on the heap, to keep the stacks of simulated processes small */
    char *cwd = malloc(FGFS_PATH), *tmp = malloc(FGFS_PATH);
    int rc = !cwd || !tmp || !getcwd(cwd, FGFS_PATH) || snprintf(tmp, FGFS_PATH, "%s/%s", cwd, path) >= FGFS_PATH
                 ? -1
                 : fgfs_normalize(tmp, out, FGFS_PATH);
    free(cwd);
    free(tmp);
    return rc;
}

/* rest of p below mount point e ("" or "/..."), prefixed by the root field */
static void fs_relative(sbuf *b, const fgfs_mount *e, const char *p)
{
    const char *rest = e->mplen == 1 ? p : p + e->mplen;
    int has_root = strcmp(e->root, "/") != 0;
    if (has_root)
        puts_(b, e->root);
    if (!strcmp(rest, "/"))
        rest = "";
    puts_(b, rest);
    if (!has_root && !*rest)
        puts_(b, "/");
}

/* tokens of s separated by any of seps, sorted, joined with ',' */
static void sorted_list(sbuf *b, const char *s, size_t n, const char *seps)
{
    char tmp[1024];
    if (n >= sizeof tmp)
        n = sizeof tmp - 1;
    memcpy(tmp, s, n);
    tmp[n] = 0;
    char *tok[32];
    int k = 0;
    for (char *save = NULL, *t = strtok_r(tmp, seps, &save); t && k < 32; t = strtok_r(NULL, seps, &save))
        tok[k++] = t;
    for (int i = 1; i < k; i++)
        for (int j = i; j > 0 && strcmp(tok[j - 1], tok[j]) > 0; j--) {
            char *x = tok[j];
            tok[j] = tok[j - 1], tok[j - 1] = x;
        }
    for (int i = 0; i < k; i++) {
        if (i)
            puts_(b, ",");
        puts_(b, tok[i]);
    }
}

static const char *opt_value(const char *opts, const char *key, size_t *len)
{
    size_t kl = strlen(key);
    for (const char *o = opts; o && *o; o = strchr(o, ',') ? strchr(o, ',') + 1 : NULL)
        if (!strncmp(o, key, kl) && o[kl] == '=') {
            const char *v = o + kl + 1, *e = strchr(v, ',');
            *len = e ? (size_t)(e - v) : strlen(v);
            return v;
        }
    return NULL;
}

/* the superblock options every FUSE mount has (the kernel's own): they say
 * nothing about which file system is behind it */
static int fuse_generic_opt(const char *o, size_t n)
{
    static const char *const g[] = {"rw",          "ro",       "user_id", "group_id", "default_permissions",
                                    "allow_other", "max_read", "blksize", "fd",       "rootmode",
                                    "sync",        "dirsync"};
    for (size_t i = 0; i < sizeof g / sizeof g[0]; i++) {
        size_t l = strlen(g[i]);
        if (n >= l && !strncmp(o, g[i], l) && (n == l || o[l] == '='))
            return 1;
    }
    return 0;
}

/* fuse.SUBTYPE://FSNAME[,OPTION...][@dev-MAJ-MIN]: the fsname alone does not
 * tell file systems apart (every DAOS dfuse mount is "dfuse"), so the
 * superblock options other than the kernel's generic ones (e.g. pool=,
 * container=) follow, sorted; when the fsname names no location (no ':',
 * '@' or '/') and no such option is there, the mount's device number does
 * (a new mount, e.g. another container at the same path, gets a new one). */
static void fuse_name(sbuf *b, const fgfs_mount *e, const char *src)
{
    puts_(b, e->fstype);
    puts_(b, "://");
    puts_(b, src);
    char tmp[1024];
    size_t n = 0;
    int k = 0;
    for (const char *o = e->opts; o && *o;) {
        const char *c = strchr(o, ',');
        size_t l = c ? (size_t)(c - o) : strlen(o);
        if (l && !fuse_generic_opt(o, l)) {
            if (n + l + 2 > sizeof tmp || ++k > 32) { /* never a silently shortened name (sorted_list: 32) */
                b->over = 1;
                return;
            }
            if (n)
                tmp[n++] = ',';
            memcpy(tmp + n, o, l);
            n += l;
        }
        o = c ? c + 1 : NULL;
    }
    if (n) {
        puts_(b, ",");
        sorted_list(b, tmp, n, ",");
    } else if (!strpbrk(src, ":@/")) {
        char dev[48];
        snprintf(dev, sizeof dev, "@dev-%u-%u", e->dev_major, e->dev_minor);
        puts_(b, dev);
    }
}

/* backing file of an image mount, or NULL */
static const char *backing_file(const sheaf_fgfs_mounts *m, const fgfs_mount *e, char *buf, size_t n)
{
    for (int i = 0; i < m->nloops; i++)
        if (!strcmp(m->loop_dev[i], e->source))
            return m->loop_file[i];
    if (!strncmp(e->source, "/dev/loop", 9)) {
        char sys[128];
        snprintf(sys, sizeof sys, "/sys/block/%.32s/loop/backing_file", e->source + 5);
        int fd = open(sys, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return NULL;
        ssize_t r = read(fd, buf, n - 1);
        close(fd);
        if (r <= 1 || buf[0] != '/')
            return NULL;
        buf[r] = 0;
        if (buf[r - 1] == '\n')
            buf[r - 1] = 0;
        return buf;
    }
    return e->source[0] == '/' && strncmp(e->source, "/dev/", 5) ? e->source : NULL; /* squashfuse: the image */
}

static int resolve_abs(const sheaf_fgfs_mounts *m, const char *host, const char *p, int depth, sheaf_fgfs_name *out);

/* local name: file://HOST/PATH, bind mounts through an entry of the same
 * device with root "/" (else HOST:dev-MAJ-MIN) */
static void local_uri(sbuf *b, const sheaf_fgfs_mounts *m, const fgfs_mount *e, const char *host, const char *p)
{
    puts_(b, "file://");
    puts_(b, host);
    if (!strcmp(e->root, "/")) {
        puts_(b, p);
        return;
    }
    for (int i = 0; i < m->n; i++)
        if (m->e[i].dev_major == e->dev_major && m->e[i].dev_minor == e->dev_minor && !strcmp(m->e[i].root, "/")) {
            if (m->e[i].mplen > 1)
                puts_(b, m->e[i].mp);
            fs_relative(b, e, p);
            return;
        }
    char dev[48];
    snprintf(dev, sizeof dev, ":dev-%u-%u", e->dev_major, e->dev_minor);
    puts_(b, dev);
    fs_relative(b, e, p);
}

/* an image mount: image+<name of its backing file>!/REST (node-local when
 * the backing file cannot be traced); buffers on the heap */
static int image_uri(sbuf *b, const sheaf_fgfs_mounts *m, const fgfs_mount *e, const char *host, const char *p,
                     int depth, int *local)
{
    char *bk = malloc(2 * FGFS_PATH), *norm = bk ? bk + FGFS_PATH : NULL;
    sheaf_fgfs_name *inner = bk ? malloc(sizeof *inner) : NULL;
    const char *backing = inner && depth < MAX_IMAGE_DEPTH ? backing_file(m, e, bk, FGFS_PATH) : NULL;
    int rc = SHEAF_FGFS_OK;
    if (!inner)
        rc = fgfs_err(SHEAF_FGFS_ENOMEM, "%s: out of memory", p);
    else if (!backing)
        local_uri(b, m, e, host, p);
    else if (fgfs_normalize(backing, norm, FGFS_PATH))
        rc = fgfs_err(SHEAF_FGFS_EINVAL, "%s: backing file %s is not an absolute path", p, backing);
    else if (!(rc = resolve_abs(m, host, norm, depth + 1, inner))) {
        *local = inner->local;
        puts_(b, "image+");
        puts_(b, inner->uri);
        puts_(b, "!");
        fs_relative(b, e, p);
    }
    free(inner);
    free(bk);
    return rc;
}

static int remote_uri(sbuf *b, const sheaf_fgfs_mounts *m, const fgfs_mount *e, const char *host, const char *p,
                      int depth, int *local)
{
    const char *src = e->source, *c;
    size_t l;
    *local = 0;
    switch (e->kind) {
    case SHEAF_FGFS_NFS:
        puts_(b, "nfs://"); /* server:/export, without a trailing slash */
        l = strlen(src);
        put(b, src, l > 1 && src[l - 1] == '/' ? l - 1 : l);
        if (!strchr(src, ':'))
            puts_(b, ":");
        break;
    case SHEAF_FGFS_CIFS: /* //server/share -> cifs://server:/share */
        while (*src == '/')
            src++;
        c = strchr(src, '/');
        puts_(b, "cifs://");
        put(b, src, c ? (size_t)(c - src) : strlen(src));
        puts_(b, ":/");
        if (c)
            puts_(b, c + 1);
        break;
    case SHEAF_FGFS_LUSTRE: /* nid[,nid][:nid...]:/fsname */
        c = strstr(src, ":/");
        puts_(b, "lustre://");
        sorted_list(b, src, c ? (size_t)(c - src) : strlen(src), ":,");
        puts_(b, "/");
        puts_(b, c ? c + 2 : "");
        break;
    case SHEAF_FGFS_GPFS:
        c = strrchr(src, '/');
        puts_(b, "gpfs://");
        puts_(b, c ? c + 1 : src);
        break;
    case SHEAF_FGFS_BEEGFS: {
        const char *v = opt_value(e->opts, "cfgFile", &l);
        puts_(b, "beegfs://");
        if (v)
            put(b, v, l);
        else
            puts_(b, src);
        break;
    }
    case SHEAF_FGFS_CEPH: /* mon1,mon2:/path  or  user@fsid.fsname=/path */
        puts_(b, "ceph://");
        if ((c = strchr(src, '='))) {
            put(b, src, (size_t)(c - src));
            if (strcmp(c + 1, "/"))
                puts_(b, c + 1);
        } else if ((c = strstr(src, ":/"))) {
            sorted_list(b, src, (size_t)(c - src), ",");
            if (strcmp(c + 1, "/"))
                puts_(b, c + 1);
        } else
            puts_(b, src);
        break;
    case SHEAF_FGFS_FUSE:
        fuse_name(b, e, src);
        break;
    case SHEAF_FGFS_PANFS:
        puts_(b, "panfs://");
        puts_(b, src);
        break;
    default:
        return -1;
    }
    fs_relative(b, e, p);
    return 0;
}

static int resolve_abs(const sheaf_fgfs_mounts *m, const char *host, const char *p, int depth, sheaf_fgfs_name *out)
{
    int i = fgfs_mount_lookup(m, p);
    if (i < 0)
        return fgfs_err(SHEAF_FGFS_EPARSE, "%s: no mount in the table covers the path", p);
    const fgfs_mount *e = &m->e[i];
    sbuf b = {out->uri, sizeof out->uri, 0, 0};
    out->uri[0] = 0;
    out->kind = e->kind;
    out->mount = i;
    out->local = 1;
    if (e->kind == SHEAF_FGFS_IMAGE || (e->kind == SHEAF_FGFS_FUSE && !strcmp(e->fstype, "fuse.squashfuse"))) {
        int rc = image_uri(&b, m, e, host, p, depth, &out->local);
        if (rc)
            return rc;
    } else if (e->kind == SHEAF_FGFS_FUSE &&
               (strstr(e->fstype, "lxcfs") || strstr(e->fstype, "portal") || strstr(e->fstype, "gvfsd"))) {
        local_uri(&b, m, e, host, p); /* node-local FUSE services */
    } else if (e->kind == SHEAF_FGFS_LOCAL || e->kind == SHEAF_FGFS_PSEUDO ||
               remote_uri(&b, m, e, host, p, depth, &out->local))
        local_uri(&b, m, e, host, p);
    if (b.over)
        return fgfs_err(SHEAF_FGFS_EINVAL, "%s: global name longer than %zu bytes", p, sizeof out->uri - 1);
    return SHEAF_FGFS_OK;
}

int sheaf_fgfs_resolve(const sheaf_fgfs_mounts *m, const char *host, const char *path, int flags, sheaf_fgfs_name *out)
{
    if (!m || !path || !out || !*path)
        return fgfs_err(SHEAF_FGFS_EINVAL, "resolve: NULL or empty argument");
    char hb[256];
    if (!host) {
        if (gethostname(hb, sizeof hb))
            return fgfs_err(SHEAF_FGFS_EIO, "%s: gethostname failed: %s", path, strerror(errno));
        hb[sizeof hb - 1] = 0;
        host = hb;
    }
    if (absolute(path, flags, out->path))
        return fgfs_err(SHEAF_FGFS_EINVAL, "%s: path too long or not resolvable", path);
    return resolve_abs(m, host, out->path, 0, out);
}

const char *sheaf_fgfs_kind_name(sheaf_fgfs_kind k)
{
    static const char *const names[SHEAF_FGFS_NKINDS] = {"local",  "pseudo", "nfs",  "cifs",  "lustre", "gpfs",
                                                         "beegfs", "ceph",   "fuse", "image", "panfs"};
    return k >= 0 && k < SHEAF_FGFS_NKINDS ? names[k] : "?";
}
