/* mountinfo.c - the mount table: /proc/self/mountinfo (proc(5)) parsed once
 * into an immutable table. Bounded: at most FGFS_MAX_INPUT bytes and
 * FGFS_MAX_ENTRIES entries; one arena as large as the input holds every
 * decoded field. A line that does not have the documented shape
 *   ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTS
 * is skipped and counted, never trusted. Octal escapes (\040 space, \011
 * tab, \012 newline, \134 backslash) are decoded. */
#include "fgfs.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct {
    const char *type;
    sheaf_fgfs_kind kind;
} kinds[] = {
    {"nfs", SHEAF_FGFS_NFS},           {"nfs4", SHEAF_FGFS_NFS},           {"cifs", SHEAF_FGFS_CIFS},
    {"smb3", SHEAF_FGFS_CIFS},         {"smbfs", SHEAF_FGFS_CIFS},         {"lustre", SHEAF_FGFS_LUSTRE},
    {"gpfs", SHEAF_FGFS_GPFS},         {"beegfs", SHEAF_FGFS_BEEGFS},      {"ceph", SHEAF_FGFS_CEPH},
    {"fuse", SHEAF_FGFS_FUSE},         {"fuseblk", SHEAF_FGFS_LOCAL},      {"squashfs", SHEAF_FGFS_IMAGE},
    {"erofs", SHEAF_FGFS_IMAGE},       {"iso9660", SHEAF_FGFS_IMAGE},      {"panfs", SHEAF_FGFS_PANFS},
    {"proc", SHEAF_FGFS_PSEUDO},       {"sysfs", SHEAF_FGFS_PSEUDO},       {"devtmpfs", SHEAF_FGFS_PSEUDO},
    {"devpts", SHEAF_FGFS_PSEUDO},     {"cgroup", SHEAF_FGFS_PSEUDO},      {"cgroup2", SHEAF_FGFS_PSEUDO},
    {"securityfs", SHEAF_FGFS_PSEUDO}, {"debugfs", SHEAF_FGFS_PSEUDO},     {"tracefs", SHEAF_FGFS_PSEUDO},
    {"mqueue", SHEAF_FGFS_PSEUDO},     {"hugetlbfs", SHEAF_FGFS_PSEUDO},   {"bpf", SHEAF_FGFS_PSEUDO},
    {"pstore", SHEAF_FGFS_PSEUDO},     {"configfs", SHEAF_FGFS_PSEUDO},    {"fusectl", SHEAF_FGFS_PSEUDO},
    {"autofs", SHEAF_FGFS_PSEUDO},     {"binfmt_misc", SHEAF_FGFS_PSEUDO}, {"efivarfs", SHEAF_FGFS_PSEUDO},
    {"nsfs", SHEAF_FGFS_PSEUDO},       {"rpc_pipefs", SHEAF_FGFS_PSEUDO},  {"selinuxfs", SHEAF_FGFS_PSEUDO},
};

sheaf_fgfs_kind fgfs_kind_of(const char *t)
{
    if (!strncmp(t, "fuse.", 5))
        return SHEAF_FGFS_FUSE;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (!strcmp(t, kinds[i].type))
            return kinds[i].kind;
    return SHEAF_FGFS_LOCAL; /* ext2/3/4, xfs, btrfs, tmpfs, ramfs, overlay, unknown */
}

/* Next space-separated field of [*p, end) decoded into *dst (arena). Returns
 * the decoded string or NULL when the line has no more fields. */
static const char *field(const char **p, const char *end, char **dst)
{
    const char *s = *p;
    while (s < end && *s == ' ')
        s++;
    if (s >= end)
        return NULL;
    char *out = *dst, *start = out;
    while (s < end && *s != ' ') {
        if (*s == '\\' && end - s >= 4 && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0' &&
            s[3] <= '7') {
            int c = (s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0');
            *out++ = c ? (char)c : '?'; /* never an embedded NUL */
            s += 4;
        } else
            *out++ = *s++;
    }
    *out++ = 0;
    *dst = out;
    *p = s;
    return start;
}

static int parse_uint(const char *s, const char *stop, unsigned *v)
{
    unsigned long x = 0;
    if (s == stop)
        return -1;
    for (; s < stop; s++) {
        if (*s < '0' || *s > '9' || x > 0xFFFFFFFul)
            return -1;
        x = x * 10 + (unsigned)(*s - '0');
    }
    *v = (unsigned)x;
    return 0;
}

/* One line into e; 0 or -1 (malformed). */
static int parse_line(const char *s, const char *end, char **arena, fgfs_mount *e)
{
    const char *f[6];
    for (int i = 0; i < 6; i++)
        if (!(f[i] = field(&s, end, arena)))
            return -1;
    unsigned id, parent;
    const char *colon = strchr(f[2], ':');
    if (parse_uint(f[0], f[0] + strlen(f[0]), &id) || parse_uint(f[1], f[1] + strlen(f[1]), &parent) || !colon ||
        parse_uint(f[2], colon, &e->dev_major) || parse_uint(colon + 1, colon + 1 + strlen(colon + 1), &e->dev_minor))
        return -1;
    if (f[3][0] != '/' || f[4][0] != '/')
        return -1;
    e->id = id, e->parent = parent;
    const char *sep;
    for (int opt = 0;; opt++) { /* optional fields up to the lone "-" */
        if (opt > 64 || !(sep = field(&s, end, arena)))
            return -1;
        if (!strcmp(sep, "-"))
            break;
    }
    const char *type = field(&s, end, arena), *src = field(&s, end, arena), *sopts = field(&s, end, arena);
    if (!type || !src)
        return -1;
    e->root = f[3];
    e->mopts = f[5];
    e->mp = f[4];
    e->fstype = type;
    e->source = src;
    e->opts = sopts ? sopts : "";
    e->kind = fgfs_kind_of(type);
    /* mount points are kept normalised ("/a/b", never a trailing slash) */
    size_t l = strlen(e->mp);
    while (l > 1 && e->mp[l - 1] == '/')
        ((char *)e->mp)[--l] = 0;
    e->mplen = l;
    return 0;
}

int sheaf_fgfs_mounts_parse(const char *text, size_t len, const char *origin, sheaf_fgfs_mounts **out)
{
    if (!out || (!text && len))
        return fgfs_err(SHEAF_FGFS_EINVAL, "mountinfo parse: NULL argument");
    *out = NULL;
    origin = origin ? origin : "mountinfo";
    if (len > FGFS_MAX_INPUT)
        return fgfs_err(SHEAF_FGFS_ELIMIT, "%s: %zu bytes exceed the limit of %u", origin, len, FGFS_MAX_INPUT);
    size_t lines = 1;
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n';
    if (lines > FGFS_MAX_ENTRIES)
        lines = FGFS_MAX_ENTRIES;
    sheaf_fgfs_mounts *m = calloc(1, sizeof *m);
    if (m)
        m->e = calloc(lines, sizeof *m->e),
        m->arena = malloc(len + 16); /* decoded fields never exceed the line + NULs */
    if (!m || !m->e || !m->arena) {
        sheaf_fgfs_mounts_free(m);
        return fgfs_err(SHEAF_FGFS_ENOMEM, "%s: out of memory for %zu lines", origin, lines);
    }
    char *arena = m->arena;
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        if (le > p) {
            char *save = arena;
            if (m->n < FGFS_MAX_ENTRIES && !memchr(p, 0, (size_t)(le - p)) && !parse_line(p, le, &arena, &m->e[m->n]))
                m->n++;
            else {
                arena = save;
                m->skipped++;
            }
        }
        p = le + 1;
    }
    if (m->n == 0) {
        int skipped = m->skipped;
        sheaf_fgfs_mounts_free(m);
        return fgfs_err(SHEAF_FGFS_EPARSE, "%s: no usable mount entry (%d malformed lines)", origin, skipped);
    }
    *out = m;
    return SHEAF_FGFS_OK;
}

/* Open an input file for reading without ever blocking in open() (a FIFO
 * or a device named by an environment variable would wait for a writer):
 * O_NONBLOCK, then fstat; only a regular file (procfs files are regular) or,
 * with allow_dir, a directory is accepted, else EINVAL naming the file and
 * its type. O_NONBLOCK is cleared again (no effect on regular files). */
int fgfs_open_input(const char *path, const char *what, int allow_dir, int *out)
{
    *out = -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return fgfs_err(SHEAF_FGFS_EIO, "%s: cannot open the %s: %s", path, what, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb)) {
        int e = errno;
        close(fd);
        return fgfs_err(SHEAF_FGFS_EIO, "%s: cannot stat the %s: %s", path, what, strerror(e));
    }
    if (!S_ISREG(sb.st_mode) && !(allow_dir && S_ISDIR(sb.st_mode))) {
        const char *t = S_ISFIFO(sb.st_mode)   ? "a FIFO"
                        : S_ISSOCK(sb.st_mode) ? "a socket"
                        : S_ISCHR(sb.st_mode)  ? "a character device"
                        : S_ISBLK(sb.st_mode)  ? "a block device"
                        : S_ISDIR(sb.st_mode)  ? "a directory"
                                               : "not a regular file";
        close(fd);
        return fgfs_err(SHEAF_FGFS_EINVAL, "%s: the %s is %s, not a regular file%s", path, what, t,
                        allow_dir ? " or a directory" : "");
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    *out = fd;
    return SHEAF_FGFS_OK;
}

int sheaf_fgfs_mounts_load(sheaf_fgfs_mounts **out)
{
    if (!out)
        return fgfs_err(SHEAF_FGFS_EINVAL, "mounts_load: NULL argument");
    const char *path = getenv("SHEAF_FGFS_MOUNTINFO");
    if (!path || !*path)
        path = "/proc/self/mountinfo";
    int fd, rc0 = fgfs_open_input(path, "mount table", 0, &fd);
    if (rc0)
        return rc0;
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap);
    int rc = SHEAF_FGFS_OK;
    while (buf) {
        if (n == cap) {
            if (cap >= FGFS_MAX_INPUT) {
                rc = fgfs_err(SHEAF_FGFS_ELIMIT, "%s: larger than %u bytes", path, FGFS_MAX_INPUT);
                break;
            }
            char *nb = realloc(buf, cap * 2);
            if (!nb) { /* never parse a truncated table */
                rc = fgfs_err(SHEAF_FGFS_ENOMEM, "%s: out of memory after %zu bytes", path, n);
                break;
            }
            buf = nb;
            cap *= 2;
        }
        ssize_t r = read(fd, buf + n, cap - n); /* procfs: read until 0 */
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            rc = fgfs_err(SHEAF_FGFS_EIO, "%s: read failed: %s", path, strerror(errno));
            break;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    if (!buf)
        return fgfs_err(SHEAF_FGFS_ENOMEM, "%s: out of memory", path);
    if (!rc)
        rc = sheaf_fgfs_mounts_parse(buf, n, path, out);
    free(buf);
    return rc;
}

void sheaf_fgfs_mounts_free(sheaf_fgfs_mounts *m)
{
    if (!m)
        return;
    for (int i = 0; i < m->nloops; i++)
        free(m->loop_dev[i]), free(m->loop_file[i]);
    free(m->e);
    free(m->arena);
    free(m);
}

int sheaf_fgfs_mounts_set_loop(sheaf_fgfs_mounts *m, const char *dev, const char *backing)
{
    if (!m || !dev || !backing || backing[0] != '/')
        return fgfs_err(SHEAF_FGFS_EINVAL, "set_loop: need a table, a device and an absolute backing path");
    if (m->nloops >= FGFS_MAX_LOOPS)
        return fgfs_err(SHEAF_FGFS_ELIMIT, "set_loop %s: more than %d loop devices", dev, FGFS_MAX_LOOPS);
    char *d = strdup(dev), *f = strdup(backing);
    if (!d || !f) {
        free(d), free(f);
        return fgfs_err(SHEAF_FGFS_ENOMEM, "set_loop %s: out of memory", dev);
    }
    m->loop_dev[m->nloops] = d;
    m->loop_file[m->nloops++] = f;
    return SHEAF_FGFS_OK;
}

/* Does mount point e cover path p (a prefix on a component boundary)? */
static int covers(const fgfs_mount *e, const char *p, size_t pl)
{
    size_t l = e->mplen;
    return l <= pl && !memcmp(e->mp, p, l) && (l == 1 || p[l] == 0 || p[l] == '/');
}

/* Longest mount point that is a prefix of p on a component boundary; among
 * equal mount points the last entry (mounted on top) wins. */
static int longest_prefix(const sheaf_fgfs_mounts *m, const char *p, size_t pl)
{
    int best = -1;
    size_t bestlen = 0;
    for (int i = 0; i < m->n; i++)
        if (covers(&m->e[i], p, pl) && (best < 0 || m->e[i].mplen >= bestlen))
            best = i, bestlen = m->e[i].mplen;
    return best;
}

#define FGFS_MAX_COVER 256 /* mounts covering one path examined for hiding; more: longest prefix */

/* The mount that path resolution reaches for p: the longest covering mount
 * point that is not hidden. A mount is hidden when a later entry with the same
 * parent mount sits on a proper prefix of its mount point (/a/b mounted on /
 * and then /a on /: /a/b lies under the new /a), or when its parent mount is
 * hidden. Mounts stacked on one point: the last one wins. Tables whose parent
 * IDs do not match (hand-written lines) lose nothing: the rule only uses
 * siblings. */
int fgfs_mount_lookup(const sheaf_fgfs_mounts *m, const char *p)
{
    size_t pl = strlen(p);
    int cand[FGFS_MAX_COVER], k = 0;
    unsigned char hidden[FGFS_MAX_COVER] = {0};
    for (int i = 0; i < m->n; i++)
        if (covers(&m->e[i], p, pl)) {
            if (k == FGFS_MAX_COVER)
                return longest_prefix(m, p, pl);
            cand[k++] = i;
        }
    for (int a = 0; a < k; a++)
        for (int b = a + 1; b < k && !hidden[a]; b++) {
            const fgfs_mount *x = &m->e[cand[a]], *y = &m->e[cand[b]];
            hidden[a] = y->parent == x->parent && y->id != x->id && y->mplen < x->mplen;
        }
    for (int changed = 1, round = 0; changed && round < k; round++) { /* a hidden mount hides what is on it */
        changed = 0;
        for (int a = 0; a < k; a++)
            for (int b = 0; b < k && !hidden[a]; b++)
                if (hidden[b] && b != a && m->e[cand[b]].id == m->e[cand[a]].parent)
                    hidden[a] = 1, changed = 1;
    }
    int best = -1;
    for (int a = 0; a < k; a++)
        if (!hidden[a] && (best < 0 || m->e[cand[a]].mplen >= m->e[best].mplen))
            best = cand[a];
    return best >= 0 ? best : longest_prefix(m, p, pl);
}

int sheaf_fgfs_mounts_count(const sheaf_fgfs_mounts *m) { return m ? m->n : 0; }
int sheaf_fgfs_mounts_skipped(const sheaf_fgfs_mounts *m) { return m ? m->skipped : 0; }
#define ENTRY_FIELD(fn, f)                                                                                             \
    const char *fn(const sheaf_fgfs_mounts *m, int i) { return m && i >= 0 && i < m->n ? m->e[i].f : NULL; }
ENTRY_FIELD(sheaf_fgfs_mount_point, mp)
ENTRY_FIELD(sheaf_fgfs_mount_fstype, fstype)
ENTRY_FIELD(sheaf_fgfs_mount_source, source)
ENTRY_FIELD(sheaf_fgfs_mount_root, root)
