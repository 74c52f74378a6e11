/* ckpt_vtk.c - `sheaf ckpt export --vtk`: fields of a committed checkpoint
 * as a legacy VTK file (version 3.0, binary) that ParaView, VisIt, VTK and
 * meshio open. Through the serial reader's public API only
 * (sheaf_ckpt_read.h). The mapping (doc/ckpt.md, "VTK export"):
 *   --dims NX,NY,NZ   STRUCTURED_POINTS, origin 0, spacing 1: element i of
 *                     every exported field (numbered over the ranks in rank
 *                     order, as sheaf_ckpt_read numbers them) is the point
 *                     (i % NX, i / NX % NY, i / (NX NY)); each field needs
 *                     NX NY NZ elements.
 *   --points X,Y,Z    UNSTRUCTURED_GRID of n points whose coordinates are the
 *                     fields X, Y, Z (converted to double), one VTK_VERTEX
 *                     cell per point; the other fields need n elements.
 * Every field (or those named by -f A,B,...) becomes POINT_DATA SCALARS of
 * its own type, big-endian as the format wants; streamed in bounded pieces. */
#include "ckpt_vtk.h"
#include "common.h"
#include "sheaf_ckpt_read.h"
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define VTK_MAX_POINTS ((uint64_t)1 << 40)
#define VTK_CHUNK ((uint64_t)1 << 20) /* elements per piece */

typedef struct vtk_out {
    FILE *f;
    const char *path;
    int failed;
} vtk_out;

static const char *vtk_type(int t)
{
    static const char *const n[] = {"",     "unsigned_char", "char",  "short", "unsigned_short", "int", "unsigned_int",
                                    "long", "unsigned_long", "float", "double"};
    return t >= SHEAF_CKPT_U8 && t <= SHEAF_CKPT_F64 ? n[t] : NULL;
}

/* "a,b,c" -> up to max names (copied into buf); -1 when malformed */
static int split_list(const char *s, char *buf, size_t bn, const char **names, int max)
{
    if (!s || strlen(s) >= bn)
        return -1;
    strcpy(buf, s);
    int k = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (k == max)
            return -1;
        names[k++] = t;
    }
    return k;
}

static int parse_dims(const char *s, uint64_t d[3])
{
    char buf[128];
    const char *p[3];
    if (split_list(s, buf, sizeof buf, p, 3) != 3)
        return -1;
    for (int i = 0; i < 3; i++) {
        char *e = NULL;
        errno = 0;
        unsigned long long v = strtoull(p[i], &e, 10);
        if (errno || e == p[i] || *e || p[i][0] == '-' || v < 1 || v > VTK_MAX_POINTS)
            return -1;
        d[i] = v;
    }
    return d[0] * d[1] > VTK_MAX_POINTS || d[0] * d[1] * d[2] > VTK_MAX_POINTS ? -1 : 0;
}

static void to_be(unsigned char *b, uint64_t n, size_t es)
{
    const uint16_t one = 1;
    if (*(const unsigned char *)&one == 0 || es < 2)
        return; /* big-endian host: already in order */
    for (uint64_t i = 0; i < n; i++, b += es)
        for (size_t a = 0, z = es - 1; a < z; a++, z--) {
            unsigned char t = b[a];
            b[a] = b[z];
            b[z] = t;
        }
}

static void put(vtk_out *o, const void *b, size_t n)
{
    if (!o->failed && fwrite(b, 1, n, o->f) != n)
        o->failed = errno ? errno : EIO;
}

/* one field, all of it, as big-endian elements of its own type, then '\n' */
static int put_field(sheaf_ckpt *ck, int f, const sheaf_ckpt_field_info *fi, vtk_out *o)
{
    unsigned char *buf = malloc(VTK_CHUNK * fi->elemsize);
    if (!buf) {
        tool_err("%s: no memory for field '%s'", o->path, fi->name);
        return -1;
    }
    for (uint64_t i = 0; i < fi->count && !o->failed; i += VTK_CHUNK) {
        uint64_t n = fi->count - i < VTK_CHUNK ? fi->count - i : VTK_CHUNK;
        if (sheaf_ckpt_read(ck, f, i, n, buf)) {
            tool_err("field '%s': %s", fi->name, sheaf_ckpt_errmsg());
            free(buf);
            return -1;
        }
        to_be(buf, n, fi->elemsize);
        put(o, buf, (size_t)(n * fi->elemsize));
    }
    free(buf);
    put(o, "\n", 1);
    return 0;
}

/* a field's element as a double (coordinates) */
static double as_double(const unsigned char *p, int t)
{
    union {
        uint8_t u8;
        int8_t i8;
        int16_t i16;
        uint16_t u16;
        int32_t i32;
        uint32_t u32;
        int64_t i64;
        uint64_t u64;
        float f32;
        double f64;
    } v;
    memcpy(&v, p, sheaf_ckpt_type_size(t));
    switch (t) {
    case SHEAF_CKPT_U8:
        return v.u8;
    case SHEAF_CKPT_I8:
        return v.i8;
    case SHEAF_CKPT_I16:
        return v.i16;
    case SHEAF_CKPT_U16:
        return v.u16;
    case SHEAF_CKPT_I32:
        return v.i32;
    case SHEAF_CKPT_U32:
        return v.u32;
    case SHEAF_CKPT_I64:
        return (double)v.i64;
    case SHEAF_CKPT_U64:
        return (double)v.u64;
    case SHEAF_CKPT_F32:
        return v.f32;
    default:
        return v.f64;
    }
}

/* POINTS n double: x y z of each point from the three coordinate fields */
static int put_points(sheaf_ckpt *ck, const int c[3], uint64_t n, vtk_out *o)
{
    sheaf_ckpt_field_info fi[3];
    unsigned char *in[3] = {NULL, NULL, NULL};
    double *xyz = malloc(VTK_CHUNK * 3 * sizeof *xyz);
    int rc = xyz ? 0 : -1;
    for (int k = 0; k < 3 && !rc; k++)
        if (sheaf_ckpt_field(ck, c[k], &fi[k]) || !(in[k] = malloc(VTK_CHUNK * fi[k].elemsize)))
            rc = -1;
    if (rc)
        tool_err("%s: no memory for the coordinates", o->path);
    fprintf(o->f, "POINTS %" PRIu64 " double\n", n);
    for (uint64_t i = 0; !rc && i < n && !o->failed; i += VTK_CHUNK) {
        uint64_t m = n - i < VTK_CHUNK ? n - i : VTK_CHUNK;
        for (int k = 0; k < 3 && !rc; k++)
            if (sheaf_ckpt_read(ck, c[k], i, m, in[k])) {
                tool_err("field '%s': %s", fi[k].name, sheaf_ckpt_errmsg());
                rc = -1;
            }
        for (uint64_t j = 0; !rc && j < m; j++)
            for (int k = 0; k < 3; k++)
                xyz[3 * j + (uint64_t)k] = as_double(in[k] + j * fi[k].elemsize, fi[k].type);
        if (!rc) {
            to_be((unsigned char *)xyz, 3 * m, sizeof *xyz);
            put(o, xyz, (size_t)(3 * m * sizeof *xyz));
        }
    }
    put(o, "\n", 1);
    /* one VTK_VERTEX cell per point */
    fprintf(o->f, "CELLS %" PRIu64 " %" PRIu64 "\n", n, 2 * n);
    for (uint64_t i = 0; !rc && i < n && !o->failed; i++) {
        unsigned char cell[8] = {
            0, 0, 0, 1, (unsigned char)(i >> 24), (unsigned char)(i >> 16), (unsigned char)(i >> 8), (unsigned char)i};
        put(o, cell, 8);
    }
    put(o, "\n", 1);
    fprintf(o->f, "CELL_TYPES %" PRIu64 "\n", n);
    static const unsigned char one[4] = {0, 0, 0, 1};
    for (uint64_t i = 0; !rc && i < n && !o->failed; i++)
        put(o, one, 4);
    put(o, "\n", 1);
    for (int k = 0; k < 3; k++)
        free(in[k]);
    free(xyz);
    return rc;
}

/* the exported fields: -f's list, or every field but the coordinates */
static int pick_fields(sheaf_ckpt *ck, const char *list, const int coord[3], int *sel, int *nsel)
{
    int nf = sheaf_ckpt_nfields(ck);
    *nsel = 0;
    if (list) {
        char buf[4096];
        const char *names[256];
        int k = split_list(list, buf, sizeof buf, names, 256);
        if (k < 1) {
            tool_err("-f: expected FIELD[,FIELD...], got '%s'", list);
            return TOOL_USAGE;
        }
        for (int i = 0; i < k; i++) {
            int f = sheaf_ckpt_field_index(ck, names[i]);
            if (f < 0) {
                tool_err("no field '%s' in this checkpoint", names[i]);
                return TOOL_FAIL;
            }
            sel[(*nsel)++] = f;
        }
        return TOOL_OK;
    }
    for (int f = 0; f < nf && *nsel < 256; f++)
        if (f != coord[0] && f != coord[1] && f != coord[2])
            sel[(*nsel)++] = f;
    return TOOL_OK;
}

/* --points X,Y,Z: the three coordinate fields, all of *n elements */
static int coord_fields(sheaf_ckpt *ck, const char *points, int coord[3], uint64_t *n)
{
    char buf[256];
    const char *c[3];
    if (split_list(points, buf, sizeof buf, c, 3) != 3) {
        tool_err("--points: expected X,Y,Z (three field names), got '%s'", points);
        return TOOL_USAGE;
    }
    for (int k = 0; k < 3; k++) {
        sheaf_ckpt_field_info fi;
        if ((coord[k] = sheaf_ckpt_field_index(ck, c[k])) < 0 || sheaf_ckpt_field(ck, coord[k], &fi)) {
            tool_err("--points: no field '%s' in this checkpoint", c[k]);
            return TOOL_FAIL;
        }
        if (k == 0)
            *n = fi.count;
        else if (fi.count != *n) {
            tool_err("--points: coordinate field '%s' has %" PRIu64 " elements, '%s' has %" PRIu64, c[k], fi.count,
                     c[0], *n);
            return TOOL_FAIL;
        }
    }
    return TOOL_OK;
}

/* every exported field: n elements, a VTK type, a name without white space */
static int check_fields(sheaf_ckpt *ck, const int *sel, int nsel, uint64_t n, const char *what, int chosen)
{
    for (int i = 0; i < nsel; i++) {
        sheaf_ckpt_field_info fi;
        sheaf_ckpt_field(ck, sel[i], &fi);
        if (fi.count != n) {
            tool_err("field '%s' has %" PRIu64 " elements, the %s has %" PRIu64 " points%s", fi.name, fi.count, what, n,
                     chosen ? "" : " (choose fields with -f)");
            return TOOL_FAIL;
        }
        if (!vtk_type(fi.type) || strpbrk(fi.name, " \t\r\n\v\f")) {
            tool_err("field '%s': %s", fi.name,
                     vtk_type(fi.type) ? "a VTK array name cannot contain white space" : "unknown element type");
            return TOOL_FAIL;
        }
    }
    return TOOL_OK;
}

int ckpt_export_vtk(sheaf_ckpt *ck, const char *out, const char *dims, const char *points, const char *fields)
{
    uint64_t d[3] = {0, 0, 0}, n = 0;
    int coord[3] = {-1, -1, -1}, rc;
    if (!!dims == !!points) {
        tool_err("export --vtk needs exactly one of --dims NX,NY,NZ and --points X,Y,Z");
        return TOOL_USAGE;
    }
    if (dims && parse_dims(dims, d)) {
        tool_err("--dims: expected NX,NY,NZ (positive, product <= 2^40), got '%s'", dims);
        return TOOL_USAGE;
    }
    n = d[0] * d[1] * d[2];
    if (points && (rc = coord_fields(ck, points, coord, &n)))
        return rc;
    if (points && n > INT32_MAX) { /* legacy VTK cell indices are 32-bit ints */
        tool_err("--points: %" PRIu64 " points, more than a legacy VTK file can index (%d)", n, INT32_MAX);
        return TOOL_FAIL;
    }
    int sel[256], nsel = 0;
    if ((rc = pick_fields(ck, fields, coord, sel, &nsel)))
        return rc;
    if ((rc = check_fields(ck, sel, nsel, n, dims ? "grid (--dims)" : "point set (--points)", fields != NULL)))
        return rc;
    int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666);
    FILE *f = fd < 0 ? NULL : fdopen(fd, "wb");
    if (!f) {
        tool_err("%s: %s", out, strerror(errno));
        if (fd >= 0)
            close(fd);
        return TOOL_FAIL;
    }
    vtk_out o = {f, out, 0};
    fprintf(f, "# vtk DataFile Version 3.0\nsheaf checkpoint %s step %" PRIu64 "\nBINARY\n", sheaf_ckpt_app(ck),
            sheaf_ckpt_step(ck));
    if (dims)
        fprintf(f,
                "DATASET STRUCTURED_POINTS\nDIMENSIONS %" PRIu64 " %" PRIu64 " %" PRIu64
                "\nORIGIN 0 0 0\nSPACING 1 1 1\n",
                d[0], d[1], d[2]);
    else {
        fprintf(f, "DATASET UNSTRUCTURED_GRID\n");
        rc = put_points(ck, coord, n, &o) ? TOOL_FAIL : TOOL_OK;
    }
    if (!rc && nsel)
        fprintf(f, "POINT_DATA %" PRIu64 "\n", n);
    for (int i = 0; !rc && i < nsel && !o.failed; i++) {
        sheaf_ckpt_field_info fi;
        sheaf_ckpt_field(ck, sel[i], &fi);
        fprintf(f, "SCALARS %s %s 1\nLOOKUP_TABLE default\n", fi.name, vtk_type(fi.type));
        rc = put_field(ck, sel[i], &fi, &o) ? TOOL_FAIL : TOOL_OK;
    }
    if (fclose(f) && !o.failed)
        o.failed = errno ? errno : EIO;
    if (o.failed && !rc) {
        tool_err("%s: write failed: %s", out, strerror(o.failed));
        rc = TOOL_FAIL;
    }
    if (rc)
        unlink(out); /* no half-written file left behind */
    return rc;
}
