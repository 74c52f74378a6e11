/* record.c - pack and unpack the monitor log's fixed-size records (record.h). */
#include "record.h"

#include <stdio.h>
#include <string.h>

const char *const mon_counter_names[MC_N] = {
    "opens",           "reads",
    "writes",          "seeks",
    "stats",           "fsyncs",
    "mmaps",           "flushes",
    "stdio_ops",       "bytes_read",
    "bytes_written",   "mmap_bytes",
    "max_byte_read",   "max_byte_written",
    "seq_reads",       "seq_writes",
    "consec_reads",    "consec_writes",
    "rw_switches",     "file_not_aligned",
    "mem_not_aligned", "read_ns",
    "write_ns",        "meta_ns",
    "first_ns",        "last_ns",
    "files",           "read_0_100",
    "read_100_1K",     "read_1K_10K",
    "read_10K_100K",   "read_100K_1M",
    "read_1M_4M",      "read_4M_10M",
    "read_10M_100M",   "read_100M_1G",
    "read_1G_plus",    "write_0_100",
    "write_100_1K",    "write_1K_10K",
    "write_10K_100K",  "write_100K_1M",
    "write_1M_4M",     "write_4M_10M",
    "write_10M_100M",  "write_100M_1G",
    "write_1G_plus",
};

int mon_counter_merge(int i)
{
    if (i == MC_MAX_BYTE_READ || i == MC_MAX_BYTE_WRITTEN || i == MC_LAST_NS)
        return 1;
    if (i == MC_FIRST_NS)
        return 2;
    return 0;
}

void mon_counters_merge(uint64_t *dst, const uint64_t *src)
{
    for (int i = 0; i < MC_N; i++) {
        int m = mon_counter_merge(i);
        if (m == 1)
            dst[i] = src[i] > dst[i] ? src[i] : dst[i];
        else if (m == 2)
            dst[i] = dst[i] == 0 || (src[i] && src[i] < dst[i]) ? src[i] : dst[i];
        else
            dst[i] += src[i];
    }
}

int mon_hist_bucket(uint64_t n)
{
    static const uint64_t lim[MON_HIST_N - 1] = {100,     1024,     10240,     102400,    1048576,
                                                 4194304, 10485760, 104857600, 1073741824};
    int b = 0;
    while (b < MON_HIST_N - 1 && n >= lim[b])
        b++;
    return b;
}

static void put16(unsigned char **p, uint16_t v)
{
    (*p)[0] = (unsigned char)v;
    (*p)[1] = (unsigned char)(v >> 8);
    *p += 2;
}
static void put32(unsigned char **p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        (*p)[i] = (unsigned char)(v >> (8 * i));
    *p += 4;
}
static void put64(unsigned char **p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        (*p)[i] = (unsigned char)(v >> (8 * i));
    *p += 8;
}
static void putb(unsigned char **p, const char *s, size_t n)
{
    memcpy(*p, s, n);
    *p += n;
}
static uint16_t get16(const unsigned char **p)
{
    uint16_t v = (uint16_t)((*p)[0] | ((*p)[1] << 8));
    *p += 2;
    return v;
}
static uint32_t get32(const unsigned char **p)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v |= (uint32_t)(*p)[i] << (8 * i);
    *p += 4;
    return v;
}
static uint64_t get64(const unsigned char **p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)(*p)[i] << (8 * i);
    *p += 8;
    return v;
}
static void getb(const unsigned char **p, char *s, size_t n)
{
    memcpy(s, *p, n);
    *p += n;
}

void mon_rec_pack(const mon_rec *r, unsigned char *out)
{
    unsigned char *p = out;
    memset(out, 0, MON_REC_SIZE);
    put32(&p, MON_MAGIC);
    put16(&p, r->type);
    put16(&p, 0);
    switch (r->type) {
    case MON_T_HEAD: {
        const mon_head *h = &r->u.head;
        put32(&p, h->version);
        put32(&p, (uint32_t)h->rank);
        put32(&p, h->max_files);
        put32(&p, h->max_dirs);
        put64(&p, h->pid);
        put64(&p, h->ppid);
        put64(&p, h->start_ns);
        put64(&p, h->interval_ns);
        put64(&p, h->align);
        putb(&p, h->host, MON_HOST_MAX);
        putb(&p, h->exe, MON_EXE_MAX);
        put32(&p, h->max_targets);
        break;
    }
    case MON_T_NAME: {
        const mon_name *n = &r->u.name;
        put32(&p, n->id);
        put32(&p, n->offset);
        put32(&p, n->total);
        put32(&p, n->len);
        putb(&p, n->seg, n->len <= MON_NAME_SEG ? n->len : MON_NAME_SEG);
        break;
    }
    case MON_T_FILE: {
        const mon_filerec *f = &r->u.file;
        put32(&p, f->id);
        put32(&p, f->kind);
        put64(&p, f->snap);
        for (int i = 0; i < MC_N; i++)
            put64(&p, f->c[i]);
        put32(&p, f->tgt);
        break;
    }
    case MON_T_TGT: {
        const mon_tgt *t = &r->u.tgt;
        put32(&p, t->id);
        put32(&p, t->kind);
        putb(&p, t->fstype, MON_FSTYPE_MAX);
        putb(&p, t->name, MON_TGT_NAME);
        break;
    }
    case MON_T_SNAP:
        put64(&p, r->u.snap.snap);
        put64(&p, r->u.snap.time_ns);
        put64(&p, r->u.snap.nfile);
        put64(&p, r->u.snap.final);
        break;
    default:
        break;
    }
}

#define BAD(...) (snprintf(err, errlen, __VA_ARGS__), -1)

static int unpack_tgt(const unsigned char *p, mon_tgt *t, char *err, size_t errlen)
{
    t->id = get32(&p);
    t->kind = get32(&p);
    getb(&p, t->fstype, MON_FSTYPE_MAX);
    getb(&p, t->name, MON_TGT_NAME);
    if (t->id > MON_TGT_MAX || (t->kind >= 64 && t->kind != MON_TGT_UNKNOWN) || !memchr(t->fstype, 0, MON_FSTYPE_MAX) ||
        !memchr(t->name, 0, MON_TGT_NAME) || !t->name[0])
        return BAD("target record: id %u kind %u, or its names not terminated", t->id, t->kind);
    return 0;
}

int mon_rec_unpack(const unsigned char *in, mon_rec *r, char *err, size_t errlen)
{
    const unsigned char *p = in;
    memset(r, 0, sizeof *r);
    uint32_t magic = get32(&p);
    if (magic != MON_MAGIC)
        return BAD("not a monitor record (magic 0x%08x)", magic);
    r->type = get16(&p);
    (void)get16(&p);
    switch (r->type) {
    case MON_T_HEAD: {
        mon_head *h = &r->u.head;
        h->version = get32(&p);
        if (h->version < MON_VERSION_MIN || h->version > MON_VERSION)
            return BAD("log version %u, this reader knows %d to %d", h->version, MON_VERSION_MIN, MON_VERSION);
        h->rank = (int32_t)get32(&p);
        h->max_files = get32(&p);
        h->max_dirs = get32(&p);
        if (h->max_files >= MON_IDS_MAX || h->max_dirs >= MON_IDS_MAX)
            return BAD("head record: budget %u files / %u dirs is past the limit %u", h->max_files, h->max_dirs,
                       MON_IDS_MAX);
        h->pid = get64(&p);
        h->ppid = get64(&p);
        h->start_ns = get64(&p);
        h->interval_ns = get64(&p);
        h->align = get64(&p);
        getb(&p, h->host, MON_HOST_MAX);
        getb(&p, h->exe, MON_EXE_MAX);
        h->host[MON_HOST_MAX - 1] = 0;
        h->exe[MON_EXE_MAX - 1] = 0;
        h->max_targets = h->version >= 2 ? get32(&p) : 0;
        if (h->max_targets > MON_TGT_MAX)
            return BAD("head record: %u storage targets is past the limit %d", h->max_targets, MON_TGT_MAX);
        return 0;
    }
    case MON_T_NAME: {
        mon_name *n = &r->u.name;
        n->id = get32(&p);
        n->offset = get32(&p);
        n->total = get32(&p);
        n->len = get32(&p);
        if (n->id >= MON_IDS_MAX || n->total == 0 || n->total >= MON_NAME_MAX || n->len > MON_NAME_SEG ||
            n->offset > n->total || n->len > n->total - n->offset)
            return BAD("name record: id %u, segment %u+%u of %u out of bounds", n->id, n->offset, n->len, n->total);
        getb(&p, n->seg, n->len);
        return 0;
    }
    case MON_T_FILE: {
        mon_filerec *f = &r->u.file;
        f->id = get32(&p);
        f->kind = get32(&p);
        f->snap = get64(&p);
        if (f->id >= MON_IDS_MAX || f->kind < MON_K_FILE || f->kind > MON_K_OTHER)
            return BAD("file record: id %u kind %u out of bounds", f->id, f->kind);
        for (int i = 0; i < MC_N; i++)
            f->c[i] = get64(&p);
        f->tgt = get32(&p);
        if (f->tgt > MON_TGT_MAX + 1)
            return BAD("file record %u: storage target %u out of bounds", f->id, f->tgt);
        return 0;
    }
    case MON_T_TGT:
        return unpack_tgt(p, &r->u.tgt, err, errlen);
    case MON_T_SNAP:
        r->u.snap.snap = get64(&p);
        r->u.snap.time_ns = get64(&p);
        r->u.snap.nfile = get64(&p);
        r->u.snap.final = get64(&p);
        return 0;
    default:
        return BAD("unknown record type %u", r->type);
    }
}
