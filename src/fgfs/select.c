/* select.c - the inverse query (FGFS IV-F): given bytes per process and
 * speed / distribution / scalability needs, rank the mounted file systems.
 * Per mount point of the union: classify, group exactly, and let each
 * group's representative check bytes x group size against statvfs; one
 * reduction combines "fits", "writable everywhere" and the least free space
 * and the most conservative site parameters. Score (the paper's):
 *   Scalability / max(Scalability, Distribution) x Speed
 * with Distribution = the largest number of processes sharing one server.
 * Site parameters come from a small config file (doc/fgfs.md):
 *   # comment
 *   type tmpfs speed=4000 scal=64 multi=0
 *   mount /p/lscratch speed=2000 scal=2048 multi=1
 *   high_speed 1000            (MB/s from which a file system is "HIGH") */
#include "fgfs.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

typedef struct site_param {
    char key[256];
    int is_mount;
    double speed, scal;
    int multi;
} site_param;
typedef struct site {
    site_param p[64];
    int n;
    double high_speed;
} site;

static void builtin(sheaf_fgfs_kind k, const char *fstype, site_param *p)
{
    p->multi = 0;
    if (k == SHEAF_FGFS_LOCAL && (!strcmp(fstype, "tmpfs") || !strcmp(fstype, "ramfs")))
        p->speed = 4000, p->scal = 64;
    else if (k == SHEAF_FGFS_LOCAL || k == SHEAF_FGFS_IMAGE)
        p->speed = 500, p->scal = 8;
    else if (k == SHEAF_FGFS_LUSTRE || k == SHEAF_FGFS_GPFS || k == SHEAF_FGFS_BEEGFS || k == SHEAF_FGFS_CEPH ||
             k == SHEAF_FGFS_PANFS)
        p->speed = 1000, p->scal = 1024, p->multi = 1;
    else /* NFS, CIFS, FUSE */
        p->speed = 300, p->scal = 8;
}

static int parse_site(const char *path, site *s)
{
    s->n = 0;
    s->high_speed = 1000;
    if (!path)
        path = getenv("SHEAF_FGFS_SITE");
    if (!path || !*path)
        return 0;
    int fd, orc = fgfs_open_input(path, "site parameter file", 0, &fd);
    if (orc)
        return orc;
    FILE *f = fdopen(fd, "r");
    if (!f) {
        close(fd);
        return fgfs_err(SHEAF_FGFS_ENOMEM, "%s: cannot read the site parameters: %s", path, strerror(errno));
    }
    char line[1024];
    int ln = 0, rc = 0;
    while (!rc && fgets(line, sizeof line, f)) {
        ln++;
        char *save = NULL, *w = strtok_r(line, " \t\r\n", &save);
        if (!w || w[0] == '#')
            continue;
        if (!strcmp(w, "high_speed")) {
            char *v = strtok_r(NULL, " \t\r\n", &save), *e = NULL;
            s->high_speed = v ? strtod(v, &e) : -1;
            if (!v || *e || s->high_speed <= 0)
                rc = fgfs_err(SHEAF_FGFS_EPARSE, "%s:%d: high_speed needs a positive number", path, ln);
            continue;
        }
        char *key = strtok_r(NULL, " \t\r\n", &save);
        if ((strcmp(w, "type") && strcmp(w, "mount")) || !key || strlen(key) >= sizeof s->p[0].key) {
            rc = fgfs_err(SHEAF_FGFS_EPARSE, "%s:%d: expected 'type FSTYPE' or 'mount PATH' and key=value", path, ln);
            break;
        }
        if (s->n >= 64) {
            rc = fgfs_err(SHEAF_FGFS_ELIMIT, "%s:%d: more than 64 entries", path, ln);
            break;
        }
        site_param *p = &s->p[s->n++];
        memset(p, 0, sizeof *p);
        strcpy(p->key, key);
        p->is_mount = !strcmp(w, "mount");
        p->speed = p->scal = -1;
        p->multi = -1;
        for (char *kv; !rc && (kv = strtok_r(NULL, " \t\r\n", &save));) {
            char *eq = strchr(kv, '='), *e = NULL;
            double v = eq ? strtod(eq + 1, &e) : 0;
            if (!eq || e == eq + 1 || *e || v < 0)
                rc = fgfs_err(SHEAF_FGFS_EPARSE, "%s:%d: '%s' is not key=number", path, ln, kv);
            else if (!strncmp(kv, "speed=", 6))
                p->speed = v;
            else if (!strncmp(kv, "scal=", 5))
                p->scal = v;
            else if (!strncmp(kv, "multi=", 6))
                p->multi = v != 0;
            else
                rc = fgfs_err(SHEAF_FGFS_EPARSE, "%s:%d: unknown key in '%s' (speed, scal, multi)", path, ln, kv);
        }
    }
    fclose(f);
    return rc;
}

/* parameters for a mount: built-in by kind, then "type", then "mount" lines */
static site_param params_for(const site *s, const fgfs_mount *e, const char *union_mp)
{
    site_param r;
    builtin(e->kind, e->fstype, &r);
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < s->n; i++) {
            const site_param *p = &s->p[i];
            if (p->is_mount != pass || strcmp(p->key, pass ? union_mp : e->fstype))
                continue;
            if (p->speed >= 0)
                r.speed = p->speed;
            if (p->scal >= 0)
                r.scal = p->scal;
            if (p->multi >= 0)
                r.multi = p->multi;
        }
    return r;
}

/* the select message: AND of fits/writable/multi, min of free, speed, scalability */
typedef struct sel_msg {
    fgfs_status_word st;
    uint64_t fits, multi, free_min, speed, scal;
} sel_msg;
#define SEL_LEN 48
static void sel_pack(const sel_msg *m, uint8_t *o)
{
    uint64_t v[6] = {(uint64_t)(uint32_t)m->st.code | (uint64_t)(uint32_t)m->st.rank << 32,
                     m->fits,
                     m->multi,
                     m->free_min,
                     m->speed,
                     m->scal};
    for (int i = 0; i < 6; i++)
        for (int b = 0; b < 8; b++)
            o[8 * i + b] = (uint8_t)(v[i] >> (8 * b));
}
static int sel_unpack(const uint8_t *in, size_t len, sel_msg *m)
{
    if (len != SEL_LEN)
        return -1;
    uint64_t v[6] = {0};
    for (int i = 0; i < 6; i++)
        for (int b = 7; b >= 0; b--)
            v[i] = v[i] << 8 | in[8 * i + b];
    m->st.code = (int32_t)(uint32_t)v[0];
    m->st.rank = (int32_t)(uint32_t)(v[0] >> 32);
    m->fits = v[1], m->multi = v[2], m->free_min = v[3], m->speed = v[4], m->scal = v[5];
    return 0;
}
#define MIN(a, b) ((a) < (b) ? (a) : (b))
static int sel_combine(const void *a, size_t al, const void *b, size_t bl, void *out, size_t *ol, void *arg)
{
    sel_msg x, y;
    if (sel_unpack(a, al, &x) || sel_unpack(b, bl, &y))
        return -1;
    fgfs_sw_merge(&x.st, &y.st);
    x.fits = x.fits && y.fits;
    x.multi = x.multi && y.multi;
    x.free_min = MIN(x.free_min, y.free_min);
    x.speed = MIN(x.speed, y.speed);
    x.scal = MIN(x.scal, y.scal);
    sel_pack(&x, out);
    *ol = SEL_LEN;
    return 0;
}
static const sheaf_fgfs_op op_select = {"fgfs-select", SEL_LEN, sel_combine, NULL};

static int dist_ok(sheaf_fgfs_dist_req d, sheaf_fgfs_class c)
{
    switch (d) {
    case SHEAF_FGFS_DIST_UNIQUE:
        return c == SHEAF_FGFS_UNIQUE;
    case SHEAF_FGFS_DIST_LOW:
        return c == SHEAF_FGFS_UNIQUE || c == SHEAF_FGFS_POORLY;
    case SHEAF_FGFS_DIST_HIGH:
        return c == SHEAF_FGFS_WELL || c == SHEAF_FGFS_FULLY;
    case SHEAF_FGFS_DIST_FULL:
        return c == SHEAF_FGFS_FULLY;
    default:
        return 1;
    }
}

/* one mount point of the union: collective */
static int judge(sheaf_fgfs_ctx *ctx, const site *s, const sheaf_fgfs_criteria *c, const char *mp,
                 sheaf_fgfs_choice *ch, int *fits)
{
    sheaf_fgfs_name *nm = malloc(sizeof *nm);
    int my = nm ? sheaf_fgfs_resolve(ctx->mounts, ctx->host, mp, ctx->cfg.flags | SHEAF_FGFS_NOREALPATH, nm)
                : fgfs_err(SHEAF_FGFS_ENOMEM, "%s: out of memory", mp);
    static sheaf_fgfs_name dummy;
    const sheaf_fgfs_name *use = my ? &dummy : nm;
    sheaf_fgfs_status st;
    fgfs_group_table t = {0};
    int rc = fgfs_classify(ctx, use, my, mp, &st);
    if (!rc)
        rc = fgfs_group(ctx, use->uri, 0, mp, &t);
    sel_msg m = {{0, ctx->rank}, 1, 1, UINT64_MAX, UINT64_MAX, UINT64_MAX};
    int g = rc ? -1 : fgfs_group_find(&t, use->uri);
    const fgfs_mount *e = rc ? NULL : &ctx->mounts->e[use->mount];
    if (e) {
        site_param p = params_for(s, e, mp);
        m.multi = (uint64_t)p.multi;
        m.speed = (uint64_t)(p.speed * 1000);
        m.scal = (uint64_t)p.scal;
        snprintf(ch->fstype, sizeof ch->fstype, "%s", e->fstype); /* as this process sees it */
        if (!strncmp(e->mopts, "ro", 2) && (e->mopts[2] == 0 || e->mopts[2] == ','))
            m.fits = 0; /* read-only somewhere: not a place to write */
    }
    if (g >= 0 && t.e[g].rep == (uint32_t)ctx->rank) {
        struct statvfs sv;
        if (statvfs(use->path, &sv) == 0) {
            uint64_t avail = (uint64_t)sv.f_bavail * sv.f_frsize;
            m.free_min = avail;
            if (c->bytes_per_process && t.e[g].members > avail / c->bytes_per_process)
                m.fits = 0;
        } else
            m.fits = 0, m.free_min = 0; /* the path is not there for this group */
    }
    if (!rc) {
        uint8_t buf[SEL_LEN];
        void *res = NULL;
        size_t rl;
        sel_pack(&m, buf);
        rc = fgfs_allreduce(ctx->comm, buf, sizeof buf, &op_select, &res, &rl);
        if (!rc && sel_unpack(res, rl, &m))
            rc = fgfs_err(SHEAF_FGFS_ECOMM, "%s: malformed select message", mp);
        free(res);
        if (!rc)
            rc = fgfs_status_result(&m.st, ctx->rank, 0, mp);
    }
    if (!rc) {
        uint32_t maxg = 0;
        for (uint32_t i = 0; i < t.n; i++)
            maxg = t.e[i].members > maxg ? t.e[i].members : maxg;
        snprintf(ch->mount_point, sizeof ch->mount_point, "%s", mp);
        ch->cls = st.cls;
        ch->ngroups = (int)t.n;
        ch->max_group = (int)maxg;
        ch->speed_mbs = (double)m.speed / 1000;
        ch->scalability = (double)m.scal;
        ch->multi = (int)m.multi;
        ch->min_free = m.free_min;
        double dist = maxg, sc = ch->scalability;
        ch->score = sc > 0 ? sc / (sc > dist ? sc : dist) * ch->speed_mbs : 0;
        *fits = m.fits && dist_ok(c->distribution, st.cls) &&
                (c->speed != SHEAF_FGFS_SPEED_HIGH || ch->speed_mbs >= s->high_speed) &&
                (c->speed != SHEAF_FGFS_SPEED_LOW || ch->speed_mbs < s->high_speed) &&
                (c->scalability != SHEAF_FGFS_SCAL_MULTI || ch->multi) &&
                (c->scalability != SHEAF_FGFS_SCAL_SINGLE || !ch->multi);
    }
    fgfs_group_table_free(&t);
    free(nm);
    return rc;
}

static int by_score(const void *a, const void *b)
{
    double x = ((const sheaf_fgfs_choice *)a)->score, y = ((const sheaf_fgfs_choice *)b)->score;
    return (x < y) - (x > y);
}

int sheaf_fgfs_select(sheaf_fgfs_ctx *ctx, const sheaf_fgfs_criteria *c, sheaf_fgfs_choice *out, int max, int *n)
{
    if (!ctx || !c || !n || max < 0 || (max && !out))
        return fgfs_err(SHEAF_FGFS_EINVAL, "fgfs select: NULL argument or negative max");
    *n = 0;
    site *s = malloc(sizeof *s);
    int my = s ? parse_site(ctx->cfg.site_config, s) : fgfs_err(SHEAF_FGFS_ENOMEM, "fgfs select: out of memory");
    fgfs_group_table u = {0};
    int rc = fgfs_mount_union(ctx, &u);
    sheaf_fgfs_choice *all = rc ? NULL : calloc(u.n ? u.n : 1, sizeof *all);
    if (!rc && !all && !my)
        my = fgfs_err(SHEAF_FGFS_ENOMEM, "fgfs select: out of memory for %u mounts", u.n);
    if (!rc)
        rc = fgfs_agree(ctx, my, "fgfs select");
    int k = 0;
    for (uint32_t i = 0; i < u.n && !rc; i++) {
        char mp[FGFS_PATH];
        sheaf_fgfs_choice ch;
        int fits = 0;
        snprintf(mp, sizeof mp, "%.*s", (int)u.e[i].len, u.e[i].name);
        if (!strncmp(mp, "/proc/", 6) || !strncmp(mp, "/sys/", 5))
            continue; /* e.g. the cgroup tmpfs: not storage (the same on every process: the union is) */
        memset(&ch, 0, sizeof ch);
        rc = judge(ctx, s, c, mp, &ch, &fits);
        if (!rc && fits)
            all[k++] = ch;
    }
    if (!rc) {
        qsort(all, (size_t)k, sizeof *all, by_score);
        *n = k < max ? k : max;
        memcpy(out, all, (size_t)*n * sizeof *out);
    }
    free(all);
    free(s);
    fgfs_group_table_free(&u);
    return rc;
}
