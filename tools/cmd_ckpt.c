/* cmd_ckpt.c - `sheaf ckpt`: checkpoints written by libsheaf_ckpt, read with
 * the serial reader (sheaf_ckpt_read.h, no MPI).
 *   sheaf ckpt list BASE               complete checkpoints (step, ranks, fields, bytes)
 *   sheaf ckpt info CKPT               fields and per-rank element counts
 *   sheaf ckpt verify CKPT             read everything, check every checksum
 *   sheaf ckpt extract [-f FIELD] [--npy] -o OUT CKPT
 *                                      one field, all ranks in rank order, as raw
 *                                      little-endian elements or a .npy file
 *   sheaf ckpt export --vtk (--dims NX,NY,NZ | --points X,Y,Z) [-f F,G] -o OUT.vtk CKPT
 *                                      fields as a legacy VTK file (ckpt_vtk.c)
 * CKPT is a checkpoint directory (BASE/step-N), or BASE (the newest), or
 * BASE with --step N. Exit 0 OK, 1 failure (damaged, unreadable), 2 usage. */
#include "ckpt_vtk.h"
#include "common.h"
#include "sheaf_ckpt_read.h"
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct ck_opts {
    const char *field, *out, *dims, *points;
    int npy, step_set, vtk;
    unsigned long long step;
} ck_opts;

static void usage(FILE *o)
{
    fprintf(o, "usage: sheaf ckpt list BASE\n"
               "       sheaf ckpt info|verify [--step N] CKPT\n"
               "       sheaf ckpt extract [--step N] [-f FIELD] [--npy] -o OUT CKPT\n"
               "       sheaf ckpt export --vtk (--dims NX,NY,NZ | --points X,Y,Z) [--step N] [-f F,G,...]\n"
               "                         -o OUT.vtk CKPT\n"
               "CKPT: a checkpoint directory BASE/step-N, or BASE (the newest, or --step N)\n");
}

static int on_opt(int opt, const char *arg, void *x)
{
    ck_opts *o = x;
    long long v;
    switch (opt) {
    case 'f':
        o->field = arg;
        return 0;
    case 'o':
        o->out = arg;
        return 0;
    case 'n':
        o->npy = 1;
        return 0;
    case 'V':
        o->vtk = 1;
        return 0;
    case 'D':
        o->dims = arg;
        return 0;
    case 'P':
        o->points = arg;
        return 0;
    case 's':
        if (tool_parse_i64(arg, &v) || v < 0) {
            tool_err("bad --step '%s'", arg);
            return TOOL_USAGE;
        }
        o->step = (unsigned long long)v;
        o->step_set = 1;
        return 0;
    }
    return TOOL_USAGE;
}

static int open_ckpt(const char *path, const ck_opts *o, sheaf_ckpt **ck)
{
    char m[4200];
    struct stat st;
    snprintf(m, sizeof m, "%s/manifest", path);
    int rc;
    if (!o->step_set && stat(m, &st) == 0)
        rc = sheaf_ckpt_open_dir(path, ck);
    else {
        uint64_t step = o->step;
        rc = o->step_set ? 0 : sheaf_ckpt_latest(path, &step);
        if (!rc)
            rc = sheaf_ckpt_open(path, step, ck);
    }
    if (rc)
        tool_err("%s", sheaf_ckpt_errmsg());
    return rc ? TOOL_FAIL : TOOL_OK;
}

static int do_list(const char *base)
{
    size_t n;
    if (sheaf_ckpt_list(base, NULL, 0, &n)) {
        tool_err("%s", sheaf_ckpt_errmsg());
        return TOOL_FAIL;
    }
    uint64_t *s = malloc((n + 1) * sizeof *s);
    if (!s || sheaf_ckpt_list(base, s, n, &n)) {
        free(s);
        tool_err("%s", s ? sheaf_ckpt_errmsg() : "no memory");
        return TOOL_FAIL;
    }
    int rc = TOOL_OK;
    for (size_t i = 0; i < n; i++) {
        sheaf_ckpt *ck;
        if (sheaf_ckpt_open(base, s[i], &ck)) {
            printf("step %" PRIu64 " UNREADABLE: %s\n", s[i], sheaf_ckpt_errmsg());
            rc = TOOL_FAIL;
            continue;
        }
        uint64_t bytes = 0;
        for (int f = 0; f < sheaf_ckpt_nfields(ck); f++) {
            sheaf_ckpt_field_info fi;
            sheaf_ckpt_field(ck, f, &fi);
            bytes += fi.count * fi.elemsize;
        }
        printf("step %" PRIu64 " app %s strategy %s ranks %d units %d fields %d bytes %" PRIu64 "\n", s[i],
               sheaf_ckpt_app(ck), sheaf_ckpt_strategy(ck), sheaf_ckpt_nranks(ck), sheaf_ckpt_nunits(ck),
               sheaf_ckpt_nfields(ck), bytes);
        sheaf_ckpt_close(ck);
    }
    free(s);
    return rc;
}

static int do_info(sheaf_ckpt *ck)
{
    printf("step %" PRIu64 " app %s strategy %s ranks %d units %d\n", sheaf_ckpt_step(ck), sheaf_ckpt_app(ck),
           sheaf_ckpt_strategy(ck), sheaf_ckpt_nranks(ck), sheaf_ckpt_nunits(ck));
    for (int f = 0; f < sheaf_ckpt_nfields(ck); f++) {
        sheaf_ckpt_field_info fi;
        sheaf_ckpt_field(ck, f, &fi);
        printf("field %d %s %s count %" PRIu64 " per-rank", f, fi.name, sheaf_ckpt_type_name(fi.type), fi.count);
        for (int r = 0; r < sheaf_ckpt_nranks(ck); r++)
            printf(" %" PRIu64, sheaf_ckpt_rank_count(ck, f, r));
        printf("\n");
    }
    return TOOL_OK;
}

static int do_verify(sheaf_ckpt *ck)
{
    uint64_t bad;
    if (sheaf_ckpt_verify(ck, &bad)) {
        tool_err("%s", sheaf_ckpt_errmsg());
        return TOOL_FAIL;
    }
    printf("%s: step %" PRIu64 ", %d ranks, %d fields: %" PRIu64 " damaged parts\n", bad ? "DAMAGED" : "OK",
           sheaf_ckpt_step(ck), sheaf_ckpt_nranks(ck), sheaf_ckpt_nfields(ck), bad);
    return bad ? TOOL_FAIL : TOOL_OK;
}

static int write_all(int fd, const void *b, size_t n)
{
    const char *p = b;
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static const char *npy_descr(int type)
{
    static const char *d[] = {"", "|u1", "|i1", "<i2", "<u2", "<i4", "<u4", "<i8", "<u8", "<f4", "<f8"};
    return type >= 1 && type <= SHEAF_CKPT_F64 ? d[type] : NULL;
}

/* NPY format 1.0: magic, version, u16 header length, a Python dict literal
 * padded with spaces and ending in '\n' so that the data start at a multiple of 64. */
static int npy_header(int fd, int type, uint64_t count)
{
    char dict[256];
    int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%" PRIu64 ",), }",
                     npy_descr(type), count);
    size_t total = 10 + (size_t)n + 1, pad = (64 - total % 64) % 64;
    unsigned char h[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0, 0};
    size_t hl = (size_t)n + pad + 1;
    h[8] = (unsigned char)(hl & 0xff);
    h[9] = (unsigned char)(hl >> 8);
    memset(dict + n, ' ', pad);
    dict[n + pad] = '\n';
    return write_all(fd, h, 10) || write_all(fd, dict, hl) ? -1 : 0;
}

static void to_le(unsigned char *b, uint64_t n, size_t es)
{
    const uint16_t one = 1;
    if (*(const unsigned char *)&one == 1 || es < 2)
        return;
    for (uint64_t i = 0; i < n; i++, b += es)
        for (size_t a = 0, z = es - 1; a < z; a++, z--) {
            unsigned char t = b[a];
            b[a] = b[z];
            b[z] = t;
        }
}

static int do_extract(sheaf_ckpt *ck, const ck_opts *o)
{
    int f = o->field ? sheaf_ckpt_field_index(ck, o->field) : 0;
    sheaf_ckpt_field_info fi;
    if (f < 0 || sheaf_ckpt_field(ck, f, &fi)) {
        tool_err("no field '%s' in this checkpoint", o->field ? o->field : "(first)");
        return TOOL_FAIL;
    }
    int fd = open(o->out, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0) {
        tool_err("%s: %s", o->out, strerror(errno));
        return TOOL_FAIL;
    }
    int rc = o->npy && npy_header(fd, fi.type, fi.count) ? -1 : 0;
    const uint64_t chunk = (8u << 20) / fi.elemsize;
    unsigned char *buf = malloc(chunk * fi.elemsize);
    if (!buf)
        rc = -1;
    for (uint64_t i = 0; !rc && i < fi.count; i += chunk) {
        uint64_t n = fi.count - i < chunk ? fi.count - i : chunk;
        if (sheaf_ckpt_read(ck, f, i, n, buf)) {
            tool_err("%s", sheaf_ckpt_errmsg());
            rc = -2;
            break;
        }
        to_le(buf, n, fi.elemsize);
        rc = write_all(fd, buf, n * fi.elemsize);
    }
    free(buf);
    if (close(fd) && !rc)
        rc = -1;
    if (rc == -1)
        tool_err("%s: write failed: %s", o->out, strerror(errno));
    return rc ? TOOL_FAIL : TOOL_OK;
}

int cmd_ckpt(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return TOOL_USAGE;
    }
    const char *sub = argv[1];
    if (!strcmp(sub, "-h") || !strcmp(sub, "--help") || !strcmp(sub, "help")) {
        usage(stdout);
        return TOOL_OK;
    }
    static const struct option lo[] = {{"field", required_argument, 0, 'f'},  {"npy", no_argument, 0, 'n'},
                                       {"vtk", no_argument, 0, 'V'},          {"dims", required_argument, 0, 'D'},
                                       {"points", required_argument, 0, 'P'}, {"step", required_argument, 0, 's'},
                                       {"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};
    ck_opts o = {0};
    int first, rc = tool_getopt(argc - 1, argv + 1, "f:o:h", lo, on_opt, &o, usage, 1, 1, &first);
    if (rc < 0)
        return TOOL_OK;
    if (rc)
        return rc;
    const char *path = argv[1 + first];
    if (!strcmp(sub, "list"))
        return do_list(path);
    int exp = !strcmp(sub, "export");
    int known = !strcmp(sub, "info") || !strcmp(sub, "verify") || !strcmp(sub, "extract") || exp;
    if (!known || ((!strcmp(sub, "extract") || exp) && !o.out) || (exp && !o.vtk)) {
        if (!known)
            tool_err("unknown ckpt command '%s'", sub);
        else
            tool_err(!o.out ? "%s needs -o OUT" : "export needs a format: --vtk", sub);
        usage(stderr);
        return TOOL_USAGE;
    }
    sheaf_ckpt *ck;
    if (open_ckpt(path, &o, &ck))
        return TOOL_FAIL;
    rc = !strcmp(sub, "info")     ? do_info(ck)
         : !strcmp(sub, "verify") ? do_verify(ck)
         : exp                    ? ckpt_export_vtk(ck, o.out, o.dims, o.points, o.field)
                                  : do_extract(ck, &o);
    sheaf_ckpt_close(ck);
    return rc;
}
