/* fuzz_ldnet.c - libFuzzer target for the overlay protocol of the load
 * servers (src/loader/netproto.[ch]): the input is one frame as it arrives
 * from a peer. The first SLD_HDR_SIZE bytes go to sln_unpack_header; the
 * rest, at its real length, to every unpacker (hello, challenge, proof, get,
 * obj, coll). Checked beyond "no crash": an accepted header has the magic
 * and a length within SLN_FRAME_MAX; an accepted message packs back to
 * exactly the payload it came from (unpack consumed every byte and kept every
 * value); an accepted object's names are sorted, distinct, single components;
 * a refused object leaves nothing allocated; an accepted object's paths that
 * name things in the cache (a FILE's path, a DIR's or REAL's real path) are
 * confined: absolute, no empty, "." or ".." component (issue 26). */
#include "netproto.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c)                                                                                                       \
    do {                                                                                                               \
        if (!(c)) {                                                                                                    \
            fprintf(stderr, "fuzz_ldnet: check failed: %s (line %d)\n", #c, __LINE__);                                 \
            abort();                                                                                                   \
        }                                                                                                              \
    } while (0)

static void same(const unsigned char *packed, size_t n, const unsigned char *p, size_t plen)
{
    CHECK(n == SLD_HDR_SIZE + plen);
    CHECK(memcmp(packed + SLD_HDR_SIZE, p, plen) == 0);
}

/* an absolute path whose components are neither empty, "." nor "..", checked
 * here independently of sld_path_clean: appended to a cache directory it
 * stays below it */
static int confined(const char *p)
{
    if (p[0] != '/')
        return 0;
    if (!p[1])
        return 1;
    for (const char *c = p + 1;;) {
        const char *e = strchr(c, '/');
        size_t k = e ? (size_t)(e - c) : strlen(c);
        if (k == 0 || (k == 1 && c[0] == '.') || (k == 2 && c[0] == '.' && c[1] == '.'))
            return 0;
        if (!e)
            return 1;
        c = e + 1;
    }
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    if (size < SLD_HDR_SIZE)
        return 0;
    uint32_t type = 0, len = 0;
    if (sln_unpack_header(data, &type, &len) == 0)
        CHECK(len <= SLN_FRAME_MAX);
    size_t plen = size - SLD_HDR_SIZE;
    unsigned char *p = malloc(plen ? plen : 1); /* exactly the payload: ASan sees overreads */
    unsigned char *out = malloc(plen + 64);
    if (!p || !out) {
        free(p);
        free(out);
        return 0;
    }
    memcpy(p, data + SLD_HDR_SIZE, plen);
    struct sln_hello h;
    if (sln_unpack_hello(p, plen, &h) == 0)
        same(out, sln_pack_hello(&h, out, plen + 64), p, plen);
    struct sln_challenge c;
    if (sln_unpack_challenge(p, plen, &c) == 0)
        same(out, sln_pack_challenge(&c, out, plen + 64), p, plen);
    struct sln_proof pr;
    if (sln_unpack_proof(p, plen, &pr) == 0)
        same(out, sln_pack_proof(&pr, out, plen + 64), p, plen);
    struct sln_get *g = malloc(sizeof *g);
    if (g && sln_unpack_get(p, plen, g) == 0) {
        CHECK(g->kind >= SLN_K_DIR && g->kind <= SLN_K_FILE && strlen(g->path) < SLD_PATH_MAX);
        same(out, sln_pack_get(SLN_GET, g, out, plen + 64), p, plen);
    }
    free(g);
    struct sln_obj *o = malloc(sizeof *o);
    if (o && sln_unpack_obj(p, plen, o) == 0) {
        CHECK(o->path[0] == '/' && (o->n == 0 || o->kind == SLN_K_DIR));
        /* the paths that may name things in the cache are clean (confined) */
        if (o->kind == SLN_K_FILE)
            CHECK(confined(o->path));
        if ((o->kind == SLN_K_DIR || o->kind == SLN_K_REAL) && o->status == 0)
            CHECK(confined(o->real));
        for (uint32_t i = 0; i < o->n; i++) {
            CHECK(o->names[i][0] && !strchr(o->names[i], '/'));
            CHECK(strcmp(o->names[i], ".") && strcmp(o->names[i], ".."));
            if (i)
                CHECK(strcmp(o->names[i - 1], o->names[i]) < 0);
        }
        size_t cap = sln_obj_size(o);
        unsigned char *b = malloc(cap);
        if (b) {
            same(b, sln_pack_obj(o, b, cap), p, plen);
            free(b);
        }
        sln_obj_free(o);
    } else if (o) {
        CHECK(o->names == NULL && o->types == NULL);
    }
    free(o);
    struct sln_coll m;
    if (sln_unpack_coll(p, plen, &m) == 0) {
        CHECK(m.len == plen - 8 && (m.len == 0 || m.data == p + 8));
        same(out, sln_pack_coll(SLN_DATA, &m, out, plen + 64), p, plen);
    }
    struct sln_stats st;
    if (sln_unpack_stats(p, plen, &st) == 0) {
        CHECK(st.n <= SLD_NCOUNTERS && plen == 8 + 8 * (size_t)st.n);
        same(out, sln_pack_stats(&st, out, plen + 64), p, plen);
    }
    free(out);
    free(p);
    return 0;
}
