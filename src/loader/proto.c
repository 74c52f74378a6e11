/* proto.c - pack/unpack of the load server's messages (see proto.h). */
#include "proto.h"
#include "../base/wire.h"

#include <string.h>

static size_t frame(unsigned char *buf, uint32_t type, unsigned char *end)
{
    size_t len = (size_t)(end - buf);
    base_put_le32(buf, SLD_MAGIC);
    base_put_le32(buf + 4, type);
    base_put_le32(buf + 8, (uint32_t)(len - SLD_HDR_SIZE));
    return len;
}

size_t sld_pack_request(const struct sld_request *r, unsigned char *buf, size_t cap)
{
    size_t n = strnlen(r->path, SLD_PATH_MAX);
    if (n >= SLD_PATH_MAX || cap < SLD_HDR_SIZE + 8 + n)
        return 0;
    unsigned char *p = buf + SLD_HDR_SIZE;
    p = base_put_le32(p, r->flags);
    p = base_put_lestr(p, r->path, n);
    return frame(buf, r->op, p);
}

static unsigned char *putstat(unsigned char *p, const struct sld_stat *s)
{
    const uint64_t u[] = {s->dev,
                          s->ino,
                          s->mode,
                          s->nlink,
                          s->uid,
                          s->gid,
                          s->rdev,
                          s->size,
                          s->blksize,
                          s->blocks,
                          (uint64_t)s->atime_sec,
                          (uint64_t)s->atime_nsec,
                          (uint64_t)s->mtime_sec,
                          (uint64_t)s->mtime_nsec,
                          (uint64_t)s->ctime_sec,
                          (uint64_t)s->ctime_nsec};
    for (size_t i = 0; i < sizeof u / sizeof u[0]; i++)
        p = base_put_le64(p, u[i]);
    return p;
}

static void curstat(base_cur *c, struct sld_stat *s)
{
    s->dev = base_cur_le64(c);
    s->ino = base_cur_le64(c);
    s->mode = base_cur_le64(c);
    s->nlink = base_cur_le64(c);
    s->uid = base_cur_le64(c);
    s->gid = base_cur_le64(c);
    s->rdev = base_cur_le64(c);
    s->size = base_cur_le64(c);
    s->blksize = base_cur_le64(c);
    s->blocks = base_cur_le64(c);
    s->atime_sec = (int64_t)base_cur_le64(c);
    s->atime_nsec = (int64_t)base_cur_le64(c);
    s->mtime_sec = (int64_t)base_cur_le64(c);
    s->mtime_nsec = (int64_t)base_cur_le64(c);
    s->ctime_sec = (int64_t)base_cur_le64(c);
    s->ctime_nsec = (int64_t)base_cur_le64(c);
}

size_t sld_pack_reply(const struct sld_reply *r, unsigned char *buf, size_t cap)
{
    size_t n = strnlen(r->path, SLD_PATH_MAX);
    if (n >= SLD_PATH_MAX || cap < SLD_HDR_SIZE + 8 + 16 * 8 + SLD_NCOUNTERS * 8 + 4 + n)
        return 0;
    unsigned char *p = buf + SLD_HDR_SIZE;
    p = base_put_le32(p, (uint32_t)r->status);
    p = base_put_le32(p, r->kind);
    p = putstat(p, &r->st);
    for (int i = 0; i < SLD_NCOUNTERS; i++)
        p = base_put_le64(p, r->counters[i]);
    p = base_put_lestr(p, r->path, n);
    return frame(buf, SLD_OP_REPLY, p);
}

int sld_unpack_header(const unsigned char *buf, uint32_t *type, uint32_t *len)
{
    if (base_get_le32(buf) != SLD_MAGIC)
        return -1;
    *type = base_get_le32(buf + 4);
    *len = base_get_le32(buf + 8);
    if (*len > SLD_MSG_MAX - SLD_HDR_SIZE)
        return -1;
    return 0;
}

int sld_unpack_request(uint32_t type, const unsigned char *p, size_t len, struct sld_request *r)
{
    base_cur c = {p, len, 0};
    if (type < SLD_OP_LOOKUP || type > SLD_OP_REALPATH)
        return -1;
    r->op = type;
    r->flags = base_cur_le32(&c);
    base_cur_str(&c, r->path, sizeof r->path);
    return c.bad || c.left ? -1 : 0;
}

int sld_unpack_reply(const unsigned char *p, size_t len, struct sld_reply *r)
{
    base_cur c = {p, len, 0};
    r->status = (int32_t)base_cur_le32(&c);
    r->kind = base_cur_le32(&c);
    curstat(&c, &r->st);
    for (int i = 0; i < SLD_NCOUNTERS; i++)
        r->counters[i] = base_cur_le64(&c);
    base_cur_str(&c, r->path, sizeof r->path);
    return c.bad || c.left ? -1 : 0;
}

int sld_path_clean(const char *path, int abs)
{
    size_t n = strnlen(path, SLD_PATH_MAX);
    if (n >= SLD_PATH_MAX || (path[0] == '/') != (abs != 0))
        return 0;
    if (abs && n == 1)
        return 1;
    const char *c = abs ? path + 1 : path;
    for (;;) {
        const char *e = strchr(c, '/');
        size_t k = e ? (size_t)(e - c) : strlen(c);
        if (!k || (k == 1 && c[0] == '.') || (k == 2 && c[0] == '.' && c[1] == '.'))
            return 0;
        if (!e)
            return 1;
        c = e + 1;
    }
}

const char *sld_counter_name(int i)
{
    static const char *const names[SLD_NCOUNTERS] = {"requests",    "listings",   "stats",      "reads",    "bytes",
                                                     "realpaths",   "hits",       "clients",    "refused",  "stripped",
                                                     "net_refused", "net_gets",   "net_served", "net_objs", "net_bytes",
                                                     "net_pushed",  "passthrough"};
    return i >= 0 && i < SLD_NCOUNTERS ? names[i] : "?";
}
