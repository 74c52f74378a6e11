/* reader.c - the serial checkpoint reader (include/sheaf_ckpt_read.h):
 * listing, manifest and unit headers, range reads for a restart with any
 * number of ranks, verification. Plain units are read with pread; sion units
 * through the public serial SIONlib API of libsheaf (sion_open/sion_seek). */
#if defined(__GNUC__) && !defined(__clang__)
/* messages are cut at their buffer's size on purpose; MPI_Testall with
 * MPI_STATUSES_IGNORE is not an array access (GCC's false positive) */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
#include "format.h"
#include "sheaf.h"
#include "sion.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MANIFEST_MAX (64u << 20)

typedef struct unit_src {
    const ckf_unit *u; /* in the manifest */
    char name[256];    /* the unit's path for messages (the tail of dir/path) */
    ckf_header h;
    int fd;  /* plain */
    int sid; /* sion: shared by the units of one container (owner closes) */
    int owns_sid;
    uint64_t size;
    sion_int64 *bsizes; /* sion: block sizes of the container (owned by the sid) */
    int ntasks, maxchunks;
} unit_src;

struct sheaf_ckpt {
    char dir[CKF_PATH_BYTES];
    ckf_manifest m;
    unit_src *units; /* grown as the units open: bounded by the units that exist */
    uint32_t nopen;  /* units[0..nopen) are set up (closed by sheaf_ckpt_close) */
    uint32_t nfields;
    sheaf_ckpt_field_info *info;
};

const char *sheaf_ckpt_errmsg(void) { return ckf_errmsg(); }

static const struct {
    const char *name;
} types[] = {
    /* their sizes: ckf_type_size (format.c) */
    {"?"}, {"u8"}, {"i8"}, {"i16"}, {"u16"}, {"i32"}, {"u32"}, {"i64"}, {"u64"}, {"f32"}, {"f64"},
};
size_t sheaf_ckpt_type_size(int t) { return ckf_type_size(t); }
const char *sheaf_ckpt_type_name(int t) { return t >= 1 && t <= SHEAF_CKPT_F64 ? types[t].name : NULL; }
int sheaf_ckpt_type_by_name(const char *name)
{
    for (int t = 1; t <= SHEAF_CKPT_F64; t++)
        if (name && !strcmp(name, types[t].name))
            return t;
    return 0;
}

/* Open the regular file p for reading: O_NONBLOCK, then fstat, so that a
 * FIFO (or a device) in its place is refused at once instead of waiting for
 * a writer (the container tools do the same, src/core/io.c). 0 and *fd, or
 * an errno with the message naming p. */
static int open_regular(const char *p, int *fd, struct stat *st)
{
    *fd = open(p, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (*fd < 0)
        return ckf_err(errno, "%s: %s", p, strerror(errno));
    int fl;
    if (fstat(*fd, st) || !S_ISREG(st->st_mode) || (fl = fcntl(*fd, F_GETFL)) < 0 ||
        fcntl(*fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
        close(*fd);
        *fd = -1;
        return ckf_err(EINVAL, "%s: not a regular file", p);
    }
    return 0;
}

/* Read the whole small file dir/name into a NUL-terminated malloc'd string. */
static int slurp(const char *dir, const char *name, char **out, size_t *len)
{
    char p[CKF_PATH_BYTES];
    int rc = ckf_join(p, sizeof p, dir, name);
    if (rc)
        return rc;
    struct stat st;
    int fd;
    if ((rc = open_regular(p, &fd, &st)) != 0)
        return rc;
    if (st.st_size > MANIFEST_MAX) {
        close(fd);
        return ckf_err(EFBIG, "%s: %lld bytes: larger than a manifest may be (%u bytes)", p, (long long)st.st_size,
                       MANIFEST_MAX);
    }
    char *t = malloc((size_t)st.st_size + 1);
    if (!t) {
        close(fd);
        return ckf_err(ENOMEM, "%s: no memory", p);
    }
    ssize_t r = pread(fd, t, (size_t)st.st_size, 0);
    close(fd);
    if (r != st.st_size) {
        free(t);
        return ckf_err(EIO, "%s: short read", p);
    }
    t[r] = 0;
    *out = t;
    *len = (size_t)r;
    return 0;
}

static int manifest_load(const char *dir, ckf_manifest *m)
{
    char *t = NULL;
    size_t len = 0;
    int rc = slurp(dir, CKF_MANIFEST, &t, &len);
    if (rc)
        return rc;
    char name[CKF_PATH_BYTES];
    ckf_join(name, sizeof name, dir, CKF_MANIFEST); /* slurp joined it already */
    return ckf_manifest_parse(t, len, name, m);     /* m owns t */
}

static int is_step_name(const char *n, uint64_t *step)
{
    if (strncmp(n, "step-", 5) || strlen(n) != 25)
        return 0;
    uint64_t s = 0;
    for (const char *p = n + 5; *p; p++) {
        if (*p < '0' || *p > '9')
            return 0;
        s = s * 10 + (uint64_t)(*p - '0');
    }
    *step = s;
    return 1;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int rd_list(const char *base, uint64_t *steps, size_t max, size_t *n)
{
    *n = 0;
    DIR *d = opendir(base);
    if (!d)
        return ckf_err(errno, "%s: %s", base, strerror(errno));
    size_t cap = 0, cnt = 0;
    uint64_t *all = NULL;
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d))) {
        uint64_t s;
        if (!is_step_name(e->d_name, &s))
            continue;
        char dir[CKF_PATH_BYTES];
        if ((rc = ckf_join(dir, sizeof dir, base, e->d_name)) != 0)
            break;
        ckf_manifest m;
        if (manifest_load(dir, &m))
            continue; /* incomplete or damaged: not a checkpoint */
        ckf_manifest_free(&m);
        if (cnt == cap) {
            size_t nc = cap ? cap * 2 : 16;
            uint64_t *na = realloc(all, nc * sizeof *na);
            if (!na) {
                rc = ckf_err(ENOMEM, "%s: no memory for the list", base);
                break;
            }
            all = na;
            cap = nc;
        }
        all[cnt++] = s;
    }
    closedir(d);
    if (!rc) {
        if (cnt)
            qsort(all, cnt, sizeof *all, cmp_u64);
        for (size_t i = 0; i < cnt && i < max; i++)
            steps[i] = all[i];
        *n = cnt;
    }
    free(all);
    if (!rc)
        ckf_err(0, "%s", "");
    return rc;
}

static int rd_latest(const char *base, uint64_t *step)
{
    size_t n;
    int rc = rd_list(base, NULL, 0, &n);
    if (rc)
        return rc;
    if (n == 0)
        return ckf_err(ENOENT, "%s: no complete checkpoint", base);
    size_t cap = n;
    uint64_t *s = malloc(cap * sizeof *s);
    if (!s)
        return ckf_err(ENOMEM, "%s: no memory", base);
    /* a writer may commit (or remove) steps between the two listings: the
     * second fills at most cap entries, whatever count it finds */
    rc = rd_list(base, s, cap, &n);
    if (!rc && n == 0)
        rc = ckf_err(ENOENT, "%s: no complete checkpoint", base);
    else if (!rc)
        *step = s[(n < cap ? n : cap) - 1];
    free(s);
    return rc;
}

/* ---- unit sources ---- */

static int src_read(unit_src *s, void *buf, uint64_t n, uint64_t off)
{
    if (off > s->size || n > s->size - off)
        return ckf_err(EIO, "%s: read of %" PRIu64 " bytes at %" PRIu64 " beyond its %" PRIu64 " bytes", s->name, n,
                       off, s->size);
    unsigned char *b = buf;
    if (s->u->kind == 'p') {
        while (n) {
            ssize_t r = pread(s->fd, b, n > (1u << 30) ? (1u << 30) : (size_t)n, (off_t)off);
            if (r <= 0)
                return ckf_err(EIO, "%s: read at %" PRIu64 ": %s", s->name, off, r ? strerror(errno) : "end of file");
            b += r;
            off += (uint64_t)r;
            n -= (uint64_t)r;
        }
        return 0;
    }
    for (int blk = 0; blk < s->maxchunks && n; blk++) {
        sion_int64 bs = s->bsizes[(sion_int64)blk * s->ntasks + s->u->task];
        if (bs <= 0)
            continue;
        if (off >= (uint64_t)bs) {
            off -= (uint64_t)bs;
            continue;
        }
        uint64_t k = (uint64_t)bs - off < n ? (uint64_t)bs - off : n;
        if (sion_seek(s->sid, (int)s->u->task, blk, (sion_int64)off) != SION_SUCCESS ||
            sion_fread(b, 1, (size_t)k, s->sid) != (size_t)k)
            return ckf_err(EIO, "%s task %" PRId64 ": %s", s->name, s->u->task, sheaf_last_error());
        b += k;
        n -= k;
        off = 0;
    }
    return n ? ckf_err(EIO, "%s task %" PRId64 ": data end early", s->name, s->u->task) : 0;
}

static int sion_open_container(const char *path, unit_src *s)
{
    /* the container's first file must be a regular file before sion_open
     * opens it (a FIFO would block there) */
    struct stat st;
    int fd, rc = open_regular(path, &fd, &st);
    if (rc)
        return rc;
    close(fd);
    int nfiles;
    sion_int32 fsblk;
    FILE *fp = NULL;
    int prev = sheaf_set_error_printing(0);
    s->sid = sion_open((char *)path, "rb,posix", &s->ntasks, &nfiles, NULL, &fsblk, NULL, &fp);
    sheaf_set_error_printing(prev);
    if (s->sid < 0)
        return ckf_err(EIO, "%s", sheaf_last_error());
    s->owns_sid = 1;
    sion_int64 gskip, svh, *cs, *gr, *bc;
    if (sion_get_locations(s->sid, &s->ntasks, &s->maxchunks, &gskip, &svh, &cs, &gr, &bc, &s->bsizes) != SION_SUCCESS)
        return ckf_err(EIO, "%s: %s", path, sheaf_last_error());
    return 0;
}

static int check_unit(sheaf_ckpt *ck, uint32_t i);
static int part_stream(unit_src *s, uint64_t off, uint64_t bytes, uint64_t from, uint64_t len, unsigned char *out,
                       uint64_t *sum);

static int unit_open(sheaf_ckpt *ck, uint32_t i)
{
    unit_src *s = &ck->units[i];
    s->u = &ck->m.units[i];
    char p[CKF_PATH_BYTES];
    int jrc = ckf_join(p, sizeof p, ck->dir, s->u->path);
    if (jrc)
        return jrc;
    snprintf(s->name, sizeof s->name, "%s", p + (strlen(p) > 255 ? strlen(p) - 255 : 0));
    if (s->u->kind == 'p') {
        struct stat st;
        int rc = open_regular(p, &s->fd, &st);
        if (rc)
            return rc;
        s->size = (uint64_t)st.st_size;
    } else {
        /* consecutive units of one container share its sid (the writer lists
         * them so; a container named again later is opened again, which costs
         * memory only for units that exist: each must hold its own header) */
        unit_src *o = i && ck->units[i - 1].u->kind == 's' && !strcmp(ck->m.units[i - 1].path, s->u->path)
                          ? &ck->units[i - 1]
                          : NULL;
        int rc = o ? 0 : sion_open_container(p, s);
        if (rc)
            return rc;
        if (o) {
            s->sid = o->sid;
            s->bsizes = o->bsizes;
            s->ntasks = o->ntasks;
            s->maxchunks = o->maxchunks;
        }
        if (s->u->task >= s->ntasks)
            return ckf_err(EINVAL, "%s: task %" PRId64 " of %d", p, s->u->task, s->ntasks);
        for (int b = 0; b < s->maxchunks; b++) {
            sion_int64 bs = s->bsizes[(sion_int64)b * s->ntasks + s->u->task];
            s->size += bs > 0 ? (uint64_t)bs : 0;
        }
    }
    unsigned char fixed[CKF_FIXED];
    uint64_t need;
    int rc = src_read(s, fixed, s->size < CKF_FIXED ? s->size : CKF_FIXED, 0);
    if (!rc)
        rc = ckf_peek_size(fixed, s->size < CKF_FIXED ? s->size : CKF_FIXED, s->name, &need);
    if (rc)
        return rc;
    if (need > s->size)
        return ckf_err(EINVAL, "%s: truncated header", s->name);
    /* the header's checksum first, streamed in 1 MiB pieces: a header size
     * that only a sparse file (a hole of zeros) or a damaged one provides
     * (up to 4 GiB) costs no memory; only a header whose bytes check is
     * allocated (until issue 31: malloc(need) before any check) */
    unsigned char sb[8];
    uint64_t sum;
    if ((rc = part_stream(s, 0, need - 8, 0, 0, NULL, &sum)) != 0 || (rc = src_read(s, sb, 8, need - 8)) != 0)
        return rc;
    if (ckf_get_u64(sb) != sum)
        return ckf_err(EINVAL, "%s: header checksum mismatch", s->name);
    unsigned char *hb = malloc(need);
    if (!hb)
        return ckf_err(ENOMEM, "%s: no memory for the header", s->name);
    rc = src_read(s, hb, need, 0);
    if (!rc)
        rc = ckf_decode(hb, need, s->size, s->name, &s->h);
    free(hb);
    return rc ? rc : check_unit(ck, i);
}

/* Unit i's header against the manifest and unit 0, as soon as it is decoded:
 * a manifest that names one file many times fails at its second use, so the
 * headers held are bounded by the unit files that really exist. */
static int check_unit(sheaf_ckpt *ck, uint32_t i)
{
    const ckf_header *h0 = &ck->units[0].h, *h = &ck->units[i].h;
    const ckf_unit *u = &ck->m.units[i];
    if (h->step != ck->m.step || h->first_rank != u->first_rank || h->nranks != u->nranks ||
        h->total_ranks != ck->m.nranks || h->nfields != h0->nfields)
        return ckf_err(EINVAL,
                       "%s: header (step %" PRIu64 ", ranks %" PRIu64 "+%u of %" PRIu64 ") disagrees with the manifest",
                       ck->units[i].name, h->step, h->first_rank, h->nranks, h->total_ranks);
    for (uint32_t f = 0; f < h->nfields; f++)
        if (strcmp(h->fields[f].name, h0->fields[f].name) || h->fields[f].type != h0->fields[f].type)
            return ckf_err(EINVAL, "%s: field %u differs from the first unit's", ck->units[i].name, f);
    return 0;
}

static int check_units(sheaf_ckpt *ck)
{
    const ckf_header *h0 = &ck->units[0].h;
    ck->nfields = h0->nfields;
    ck->info = calloc(ck->nfields ? ck->nfields : 1, sizeof *ck->info);
    if (!ck->info)
        return ckf_err(ENOMEM, "no memory");
    for (uint32_t f = 0; f < ck->nfields; f++) {
        snprintf(ck->info[f].name, sizeof ck->info[f].name, "%s", h0->fields[f].name);
        ck->info[f].type = (int)h0->fields[f].type;
        ck->info[f].elemsize = h0->fields[f].elemsize;
        for (uint32_t i = 0; i < ck->m.nunits; i++)
            ck->info[f].count += ck->units[i].h.fields[f].block_bytes / h0->fields[f].elemsize;
    }
    return 0;
}

static int rd_open_dir(const char *dir, sheaf_ckpt **out)
{
    *out = NULL;
    sheaf_ckpt *ck = calloc(1, sizeof *ck);
    if (!ck)
        return ckf_err(ENOMEM, "%s: no memory", dir);
    int rc = ckf_join(ck->dir, sizeof ck->dir, dir, NULL);
    if (rc) {
        free(ck);
        return rc;
    }
    rc = manifest_load(dir, &ck->m);
    /* the unit table grows with the units that open (each a real file with
     * its own header), not with the count the manifest claims */
    uint32_t cap = 0;
    for (uint32_t i = 0; !rc && i < ck->m.nunits; i++) {
        if (i == cap) {
            uint32_t nc = cap > ck->m.nunits / 2 ? ck->m.nunits : cap ? cap * 2 : 16;
            if (nc > ck->m.nunits)
                nc = ck->m.nunits;
            unit_src *nu = realloc(ck->units, (size_t)nc * sizeof *nu);
            if (!nu) {
                rc = ckf_err(ENOMEM, "%s: no memory for %u units", dir, nc);
                break;
            }
            memset(nu + cap, 0, (size_t)(nc - cap) * sizeof *nu);
            ck->units = nu;
            cap = nc;
        }
        ck->units[i].fd = ck->units[i].sid = -1;
        ck->nopen = i + 1;
        rc = unit_open(ck, i);
    }
    if (!rc)
        rc = check_units(ck);
    if (rc) {
        sheaf_ckpt_close(ck);
        return rc;
    }
    *out = ck;
    return 0;
}

static int rd_open(const char *base, uint64_t step, sheaf_ckpt **ck)
{
    char name[32], dir[CKF_PATH_BYTES];
    ckf_step_dirname(step, name, sizeof name);
    int rc = ckf_join(dir, sizeof dir, base, name);
    if (rc)
        return rc;
    return rd_open_dir(dir, ck);
}

void sheaf_ckpt_close(sheaf_ckpt *ck)
{
    if (!ck)
        return;
    for (uint32_t i = 0; ck->units && i < ck->nopen; i++) {
        unit_src *s = &ck->units[i];
        if (s->fd >= 0)
            close(s->fd);
        if (s->owns_sid && s->sid >= 0)
            sion_close(s->sid);
        ckf_header_free(&s->h);
    }
    free(ck->units);
    free(ck->info);
    ckf_manifest_free(&ck->m);
    free(ck);
}

uint64_t sheaf_ckpt_step(const sheaf_ckpt *ck) { return ck->m.step; }
const char *sheaf_ckpt_app(const sheaf_ckpt *ck) { return ck->m.app; }
const char *sheaf_ckpt_strategy(const sheaf_ckpt *ck) { return ck->m.strategy; }
int sheaf_ckpt_nranks(const sheaf_ckpt *ck) { return (int)ck->m.nranks; }
int sheaf_ckpt_nfields(const sheaf_ckpt *ck) { return (int)ck->nfields; }
int sheaf_ckpt_nunits(const sheaf_ckpt *ck) { return (int)ck->m.nunits; }

static int rd_field(const sheaf_ckpt *ck, int f, sheaf_ckpt_field_info *info)
{
    if (f < 0 || (uint32_t)f >= ck->nfields)
        return ckf_err(EINVAL, "%s: no field %d (%u fields)", ck->dir, f, ck->nfields);
    *info = ck->info[f];
    return 0;
}

int sheaf_ckpt_field_index(const sheaf_ckpt *ck, const char *name)
{
    for (uint32_t f = 0; f < ck->nfields; f++)
        if (!strcmp(ck->info[f].name, name))
            return (int)f;
    return -1;
}

static const unit_src *unit_of_rank(const sheaf_ckpt *ck, uint64_t r)
{
    for (uint32_t i = 0; i < ck->m.nunits; i++)
        if (r >= ck->units[i].h.first_rank && r < ck->units[i].h.first_rank + ck->units[i].h.nranks)
            return &ck->units[i];
    return NULL;
}

uint64_t sheaf_ckpt_rank_count(const sheaf_ckpt *ck, int f, int r)
{
    const unit_src *s = r >= 0 ? unit_of_rank(ck, (uint64_t)r) : NULL;
    if (!s || f < 0 || (uint32_t)f >= ck->nfields)
        return 0;
    return s->h.counts[(uint64_t)f * s->h.nranks + ((uint64_t)r - s->h.first_rank)];
}

#define PART_CHUNK (1u << 20) /* bytes hashed at a time: a part's check costs no more memory */

/* Stream bytes [off, off+bytes) of unit s through the checksum; the bytes
 * [from, from+len) of that range are copied to out (may be NULL) as they
 * pass. *sum gets the checksum. */
static int part_stream(unit_src *s, uint64_t off, uint64_t bytes, uint64_t from, uint64_t len, unsigned char *out,
                       uint64_t *sum)
{
    ckf_hstate h;
    ckf_hash_begin(&h, CKF_HASH_SEED);
    unsigned char *tmp = malloc(bytes < PART_CHUNK ? (bytes ? bytes : 1) : PART_CHUNK);
    if (!tmp)
        return ckf_err(ENOMEM, "%s: no memory for a read buffer", s->name);
    int rc = 0;
    for (uint64_t done = 0; done < bytes && !rc;) {
        uint64_t k = bytes - done < PART_CHUNK ? bytes - done : PART_CHUNK;
        if ((rc = src_read(s, tmp, k, off + done)) != 0)
            break;
        ckf_hash_add(&h, tmp, k);
        uint64_t a = from > done ? from : done, e = from + len < done + k ? from + len : done + k;
        if (out && a < e)
            memcpy(out + (a - from), tmp + (a - done), (size_t)(e - a));
        done += k;
    }
    free(tmp);
    *sum = ckf_hash_end(&h);
    return rc;
}

/* Field f's block header of unit s is what the unit's header says: 0, an
 * error of the read, or EIO with *damaged = 1. */
static int block_check(unit_src *s, uint32_t f, int *damaged)
{
    unsigned char bh[CKF_BLOCK_HDR], want[CKF_BLOCK_HDR];
    *damaged = 0;
    int rc = src_read(s, bh, CKF_BLOCK_HDR, s->h.fields[f].block_offset);
    if (rc)
        return rc;
    ckf_block_hdr(f, s->h.fields[f].block_bytes, want);
    if (memcmp(bh, want, CKF_BLOCK_HDR) && (*damaged = 1))
        return ckf_err(EIO, "%s: field '%s': block header damaged (checksum mismatch of its marker)", s->name,
                       s->h.fields[f].name);
    return 0;
}

/* Elements [skip, skip+n) of the part of (unit, local rank lr) of field f
 * into buf. The part's checksum covers the whole part, so the whole part is
 * checked before the call succeeds, also when only some of it is asked for
 * (a restart with another rank count reads at most two parts partly per
 * call: it reads those in full, streamed in 1 MiB pieces). */
static int read_part(sheaf_ckpt *ck, unit_src *s, int f, uint32_t lr, uint64_t skip, uint64_t n, void *buf)
{
    (void)ck;
    const ckf_field *fd = &s->h.fields[f];
    uint64_t off = fd->block_offset + CKF_BLOCK_HDR;
    for (uint32_t r = 0; r < lr; r++)
        off += s->h.counts[(uint64_t)f * s->h.nranks + r] * fd->elemsize;
    uint64_t cnt = s->h.counts[(uint64_t)f * s->h.nranks + lr], sum;
    int damaged, rc = block_check(s, (uint32_t)f, &damaged);
    if (rc)
        return rc;
    if (skip == 0 && n == cnt) {
        rc = src_read(s, buf, n * fd->elemsize, off);
        sum = rc ? 0 : ckf_hash(buf, n * fd->elemsize, CKF_HASH_SEED);
    } else
        rc = part_stream(s, off, cnt * fd->elemsize, skip * fd->elemsize, n * fd->elemsize, buf, &sum);
    if (rc)
        return rc;
    if (sum != s->h.sums[(uint64_t)f * s->h.nranks + lr])
        return ckf_err(EIO, "%s: field '%s' of rank %" PRIu64 ": checksum mismatch", s->name, fd->name,
                       s->h.first_rank + lr);
    ckf_swap_elems(buf, n, fd->elemsize);
    return 0;
}

static int rd_read(sheaf_ckpt *ck, int f, uint64_t first, uint64_t n, void *buf)
{
    if (f < 0 || (uint32_t)f >= ck->nfields)
        return ckf_err(EINVAL, "%s: no field %d", ck->dir, f);
    if (first > ck->info[f].count || n > ck->info[f].count - first)
        return ckf_err(EINVAL, "%s: field '%s' has %" PRIu64 " elements, asked for %" PRIu64 "+%" PRIu64, ck->dir,
                       ck->info[f].name, ck->info[f].count, first, n);
    unsigned char *b = buf;
    uint64_t pos = 0; /* global element index of the current part's start */
    for (uint32_t i = 0; i < ck->m.nunits && n; i++) {
        unit_src *s = &ck->units[i];
        for (uint32_t r = 0; r < s->h.nranks && n; r++) {
            uint64_t c = s->h.counts[(uint64_t)f * s->h.nranks + r];
            if (first >= pos + c) {
                pos += c;
                continue;
            }
            uint64_t skip = first - pos, k = c - skip < n ? c - skip : n;
            int rc = read_part(ck, s, f, r, skip, k, b);
            if (rc)
                return rc;
            b += k * ck->info[f].elemsize;
            first += k;
            n -= k;
            pos += c;
        }
    }
    return 0;
}

static int verify_unit(unit_src *s, uint64_t *bad)
{
    for (uint32_t f = 0; f < s->h.nfields; f++) {
        const ckf_field *fd = &s->h.fields[f];
        int damaged, rc = block_check(s, f, &damaged);
        if (damaged) {
            *bad += 1;
            continue;
        }
        if (rc)
            return rc;
        uint64_t off = fd->block_offset + CKF_BLOCK_HDR;
        for (uint32_t r = 0; r < s->h.nranks; r++) {
            uint64_t bytes = s->h.counts[(uint64_t)f * s->h.nranks + r] * fd->elemsize, h;
            if ((rc = part_stream(s, off, bytes, 0, 0, NULL, &h)) != 0)
                return rc;
            if (h != s->h.sums[(uint64_t)f * s->h.nranks + r])
                *bad += 1;
            off += bytes;
        }
    }
    ckf_err(0, "%s", "");
    return 0;
}

static int rd_verify(sheaf_ckpt *ck, uint64_t *bad)
{
    *bad = 0;
    for (uint32_t i = 0; i < ck->m.nunits; i++) {
        int rc = verify_unit(&ck->units[i], bad);
        if (rc)
            return rc;
    }
    return 0;
}

/* public: 0 or a negative code (-errno), include/sheaf_ckpt_read.h */
static int rd_pub(int rc) { return rc < 0 ? rc : -rc; }
int sheaf_ckpt_list(const char *base, uint64_t *steps, size_t max, size_t *n)
{
    return rd_pub(rd_list(base, steps, max, n));
}
int sheaf_ckpt_latest(const char *base, uint64_t *step) { return rd_pub(rd_latest(base, step)); }
int sheaf_ckpt_open_dir(const char *dir, sheaf_ckpt **out) { return rd_pub(rd_open_dir(dir, out)); }
int sheaf_ckpt_open(const char *base, uint64_t step, sheaf_ckpt **ck) { return rd_pub(rd_open(base, step, ck)); }
int sheaf_ckpt_field(const sheaf_ckpt *ck, int f, sheaf_ckpt_field_info *info) { return rd_pub(rd_field(ck, f, info)); }
int sheaf_ckpt_read(sheaf_ckpt *ck, int f, uint64_t first, uint64_t n, void *buf)
{
    return rd_pub(rd_read(ck, f, first, n, buf));
}
int sheaf_ckpt_verify(sheaf_ckpt *ck, uint64_t *bad) { return rd_pub(rd_verify(ck, bad)); }
