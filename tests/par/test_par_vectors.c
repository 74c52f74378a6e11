/* test_par_vectors.c - SIONlib-written containers (shared/vectors/sionlib-1.7.6)
 * read through sion_generic_paropen "br" with one thread per stored task:
 * every task gets its own bytes (MANIFEST pattern, byte count), the read
 * outputs match the layout SIONlib's MPI writer used, key-value records
 * read back per key, and the never-closed container fails on every task. */
#include "partest.h"

static const char *vdir(void)
{
    const char *d = getenv("SHEAF_VECTORS_DIR");
    return d && *d ? d : "../shared/vectors/sionlib-1.7.6";
}
/* MANIFEST pattern: byte i of task t */
static unsigned char mpat(int64_t t, int64_t i) { return (unsigned char)((t * 131 + i * 7 + (i >> 8)) & 255); }

#define MAXT 8
typedef struct {
    const char *name;
    int ntasks, nfiles;
    int64_t bytes[MAXT];
    int file_of[MAXT], lrank_of[MAXT];
    sion_int64 chunk[MAXT]; /* expected chunk sizes (aligned), 0 = not checked */
    int big_endian, keyval, unclosed;
} vec;

static const vec vecs[] = {
    {"par4.sion", 4, 1, {16484, 2500, 0, 5}, {0}, {0, 1, 2, 3}, {8192, 4096, 12288, 4096}, 0, 0, 0},
    {"multi6.sion",
     6,
     3,
     {3000, 6000, 9000, 12000, 15000, 18000},
     {0, 0, 1, 1, 2, 2},
     {0, 1, 0, 1, 0, 1},
     {8192, 8192, 8192, 8192, 8192, 8192},
     0,
     0,
     0},
    {"bigblk2.sion", 2, 1, {300000, 312345}, {0}, {0, 1}, {0}, 0, 0, 0},
    {"coll8.sion", 8, 1, {300, 350, 400, 450, 500, 550, 600, 650}, {0}, {0, 1, 2, 3, 4, 5, 6, 7}, {0}, 0, 0, 0},
    {"bigendian2.sion", 2, 1, {1500, 1501}, {0}, {0, 1}, {4096, 4096}, 1, 0, 0},
    {"serial5.sion", 5, 1, {1000, 4000, 0, 50, 20000}, {0}, {0, 1, 2, 3, 4}, {0}, 0, 0, 0},
    {"keyval3.sion", 3, 1, {0}, {0}, {0, 1, 2}, {4096, 4096, 4096}, 0, 1, 0},
    {"unclosed4.sion", 4, 1, {0}, {0}, {0}, {0}, 0, 0, 1},
};

typedef struct {
    int aid;
    const vec *v;
    char path[4200];
} ctx;

static void task(tc_task *t)
{
    ctx *c = t->arg;
    const vec *v = c->v;
    int g = t->grank, P = t->gsize;
    pt_rank = g;
    int fnum = -1, nf = -1, lrank = -1, lsize = -1;
    sion_int64 chunk = 0;
    sion_int32 fsblk = 0;
    FILE *fp = NULL;
    int sid = sion_generic_paropen(c->aid, c->path, v->keyval ? "br,keyval=inline" : "br", &chunk, &fsblk, t->world, g,
                                   P, &fnum, &nf, &lrank, &lsize, &fp, NULL);
    if (v->unclosed) {
        CHECK(sid == -1, "%s (never closed): paropen read returned %d, expected -1 on every task", v->name, sid);
        CHECK(sid >= 0 || sheaf_last_error()[0], "%s: failure without a message", v->name);
        if (g == 0)
            printf("  %s: %s\n", v->name, sheaf_last_error());
        if (sid >= 0)
            sion_generic_parclose(sid);
        return;
    }
    if (!CHECK(sid >= 0, "%s: paropen read: %s", v->name, sheaf_last_error()))
        return;
    CHECK(nf == v->nfiles && fnum == v->file_of[g] && lrank == v->lrank_of[g],
          "%s: read outputs file %d of %d, lrank %d; expected file %d of %d, lrank %d", v->name, fnum, nf, lrank,
          v->file_of[g], v->nfiles, v->lrank_of[g]);
    if (v->chunk[g])
        CHECK(chunk == v->chunk[g], "%s: chunksize %lld, expected %lld", v->name, chunk, v->chunk[g]);
    if (v->big_endian)
        CHECK(sion_get_file_endianness(sid) == 1, "%s: file endianness %d", v->name, sion_get_file_endianness(sid));
    if (v->keyval) {
        /* iterate the records; byte i of key k's stream = pattern((k mod 251) + 1000*rank, i) */
        uint64_t key;
        size_t size;
        int64_t off[4] = {0, 0, 0, 0};
        int nrec = 0;
        CHECK(sion_fread_key_iterator_reset(sid) == SION_SUCCESS, "%s: iterator reset: %s", v->name,
              sheaf_last_error());
        while (sion_fread_key_iterator_next(sid, &key, &size) == SION_SUCCESS) {
            int ki = key == 1000000007ull ? 3 : (int)key - 1;
            if (!CHECK(ki >= 0 && ki < 4, "%s: unexpected key %llu", v->name, (unsigned long long)key))
                break;
            unsigned char buf[4096];
            if (!CHECK(size <= sizeof buf, "%s: record of %zu bytes", v->name, size))
                break;
            size_t r = sion_fread_key(buf, key, 1, size, sid);
            int64_t t2 = (int64_t)(key % 251) + 1000 * g;
            int ok = r == size;
            for (size_t i = 0; ok && i < size; i++)
                ok = buf[i] == mpat(t2, off[ki] + (int64_t)i);
            CHECK(ok, "%s: record %d (key %llu, %zu bytes): read %zu or data differ", v->name, nrec,
                  (unsigned long long)key, size, r);
            off[ki] += (int64_t)size;
            nrec++;
        }
        CHECK(nrec == 20, "%s: %d records, expected 20 (4 keys x 5 rounds)", v->name, nrec);
    } else {
        int64_t n = v->bytes[g];
        unsigned char *buf = malloc((size_t)n + 1);
        int64_t got = 0;
        while (got < n) {
            size_t k = (size_t)(n - got < 7000 ? n - got : 7000);
            size_t r = sion_fread(buf + got, 1, k, sid);
            if (!CHECK(r == k, "%s: fread(%zu) at %lld of %lld returned %zu: %s", v->name, k, (long long)got,
                       (long long)n, r, sheaf_last_error()))
                break;
            got += (int64_t)r;
        }
        if (got == n) {
            int64_t bad = -1;
            for (int64_t i = 0; i < n && bad < 0; i++)
                if (buf[i] != mpat(g, i))
                    bad = i;
            CHECK(bad < 0, "%s: byte %lld of %lld differs from the MANIFEST pattern", v->name, (long long)bad,
                  (long long)n);
            CHECK(sion_feof(sid) == 1, "%s: not at eof after the task's %lld bytes", v->name, (long long)n);
        }
        free(buf);
    }
    CHECK(sion_generic_parclose(sid) == SION_SUCCESS, "%s: parclose: %s", v->name, sheaf_last_error());
}

static void test_vectors(void)
{
    ctx c;
    c.aid = tc_create_api("threadcomm-vectors");
    for (size_t i = 0; i < sizeof vecs / sizeof *vecs; i++) {
        c.v = &vecs[i];
        snprintf(c.path, sizeof c.path, "%s/%s", vdir(), vecs[i].name);
        if (!CHECK(access(c.path, R_OK) == 0, "vector %s not readable (set SHEAF_VECTORS_DIR)", c.path))
            continue;
        printf("  %s: %d threads\n", vecs[i].name, vecs[i].ntasks);
        tc_run(vecs[i].ntasks, task, &c);
    }
    sion_generic_free_api(c.aid);
}

int main(int argc, char **argv)
{
    static const pt_test tests[] = {{"sionlib_vectors", test_vectors}};
    return pt_main(tests, 1, argc, argv);
}
