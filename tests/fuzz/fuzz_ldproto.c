/* fuzz_ldproto.c - libFuzzer target for the load server protocol
 * (src/loader/proto.[ch]): the input is one frame as it arrives on the
 * server's or the client's socket. The first SLD_HDR_SIZE bytes go to
 * sld_unpack_header (which reads exactly that many); the rest, at its real
 * length, to sld_unpack_request (with the header's type, or the type the
 * first byte names when the header is refused) and to sld_unpack_reply.
 * Checked beyond "no crash": a header is accepted only with the magic and a
 * length within SLD_MSG_MAX, and an accepted request or reply packs back to
 * exactly the payload it was unpacked from (unpack consumed every byte and
 * kept every value); a decoded path that sld_path_clean accepts (what names
 * things in the server's cache) has no empty, "." or ".." component. */
#include "proto.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c)                                                                                                       \
    do {                                                                                                               \
        if (!(c)) {                                                                                                    \
            fprintf(stderr, "fuzz_ldproto: check failed: %s (line %d)\n", #c, __LINE__);                               \
            abort();                                                                                                   \
        }                                                                                                              \
    } while (0)

static unsigned char out[SLD_MSG_MAX];

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    if (size < SLD_HDR_SIZE)
        return 0;
    uint32_t type = 0, len = 0;
    int hdr = sld_unpack_header(data, &type, &len);
    if (hdr == 0)
        CHECK(len <= SLD_MSG_MAX - SLD_HDR_SIZE);
    else
        type = data[0] % 8;
    size_t plen = size - SLD_HDR_SIZE;
    /* a copy of exactly the payload, so that ASan sees reads past it */
    unsigned char *p = malloc(plen ? plen : 1);
    if (!p)
        return 0;
    memcpy(p, data + SLD_HDR_SIZE, plen);
    struct sld_request *rq = malloc(sizeof *rq);
    struct sld_reply *rp = malloc(sizeof *rp);
    if (rq && sld_unpack_request(type, p, plen, rq) == 0) {
        CHECK(rq->op == type && strlen(rq->path) < SLD_PATH_MAX);
        /* the decoded path as the server names cache entries by it: clean
         * only if walking its components from a directory never climbs above
         * it nor stays on a "." (checked independently of sld_path_clean) */
        if (sld_path_clean(rq->path, 1)) {
            CHECK(rq->path[0] == '/');
            CHECK(!strstr(rq->path, "//") && !strstr(rq->path, "/./") && !strstr(rq->path, "/../"));
            size_t n = strlen(rq->path);
            CHECK(n == 1 || rq->path[n - 1] != '/');
            CHECK(!(n >= 2 && !strcmp(rq->path + n - 2, "/.")) && !(n >= 3 && !strcmp(rq->path + n - 3, "/..")));
        }
        if (sld_path_clean(rq->path, 0))
            CHECK(rq->path[0] && rq->path[0] != '/' && strcmp(rq->path, ".") && strcmp(rq->path, "..") &&
                  strncmp(rq->path, "../", 3) && strncmp(rq->path, "./", 2) && !strstr(rq->path, "/../"));
        size_t n = sld_pack_request(rq, out, sizeof out);
        CHECK(n == SLD_HDR_SIZE + plen && memcmp(out + SLD_HDR_SIZE, p, plen) == 0);
    }
    if (rp && sld_unpack_reply(p, plen, rp) == 0) {
        CHECK(strlen(rp->path) < SLD_PATH_MAX);
        size_t n = sld_pack_reply(rp, out, sizeof out);
        CHECK(n == SLD_HDR_SIZE + plen && memcmp(out + SLD_HDR_SIZE, p, plen) == 0);
    }
    free(rq);
    free(rp);
    free(p);
    return 0;
}
