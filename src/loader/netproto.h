/* netproto.h - the messages between load servers on the overlay network (and
 * from the front end to the root), as typed structs with one pack and one
 * unpack function each. Same wire style as proto.h: a frame {u32 magic,
 * u32 type, u32 length} then `length` payload bytes, integers little-endian,
 * strings {u32 length, bytes} without terminator. Every frame is bounded
 * (SLN_FRAME_MAX); a file travels as one FILE frame and DATA frames of at
 * most SLN_CHUNK bytes; a listing larger than a frame is sent as EFBIG (the
 * receiver then asks for single names instead).
 *
 * Handshake (the connecting side is the child or the front end):
 *   child  -> HELLO     {tree, rank, nonce_c}
 *   parent -> CHALLENGE {nonce_p, mac_p = HMAC(key, "P" tree rank nonce_c nonce_p)}
 *   child  -> PROOF     {mac_c = HMAC(key, "C" tree rank nonce_p nonce_c)}
 *   parent -> WELCOME   {}
 * Both nonces are fresh random bytes, so a recorded PROOF or CHALLENGE does
 * not fit any later connection (replays fail). */
#ifndef SHEAF_LOADER_NETPROTO_H
#define SHEAF_LOADER_NETPROTO_H

#include <stddef.h>
#include <stdint.h>

#include "proto.h"

#define SLN_MAGIC 0x4e4c4853u /* "SHLN" */
#define SLN_NONCE 32
#define SLN_MAC 32
#define SLN_CHUNK (256u * 1024u)
#define SLN_FRAME_MAX (4u * 1024u * 1024u) /* payload bound of every frame */
#define SLN_MAX_RANKS 65536
#define SLN_FRONTEND_RANK 0xffffffffu /* HELLO from the launcher (not a server) */

enum sln_type {
    SLN_HELLO = 1,
    SLN_CHALLENGE = 2,
    SLN_PROOF = 3,
    SLN_WELCOME = 4,
    SLN_GET = 10,      /* child -> parent: an object by kind and path */
    SLN_OBJ = 11,      /* an object (reply, or broadcast when flags & SLN_F_BCAST) */
    SLN_DATA = 12,     /* bytes of the FILE object just sent */
    SLN_ACK = 13,      /* reply to GET: the object came with a broadcast before */
    SLN_PRELOAD = 14,  /* front end -> root: read this path and push it everywhere */
    SLN_SHUTDOWN = 15, /* front end -> root -> every server: stop */
    SLN_REDUCE = 16,   /* FGFS collective: up the tree */
    SLN_BCAST = 17,    /* FGFS collective: down the tree */
    SLN_STATS = 18     /* front end -> root: empty; root -> front end: its counters */
};

/* object kinds */
enum sln_kind { SLN_K_DIR = 1, SLN_K_STAT = 2, SLN_K_LSTAT = 3, SLN_K_REAL = 4, SLN_K_FILE = 5 };

#define SLN_F_BCAST 1u

struct sln_hello {
    uint32_t tree, rank;
    unsigned char nonce[SLN_NONCE];
};
struct sln_challenge {
    unsigned char nonce[SLN_NONCE];
    unsigned char mac[SLN_MAC];
};
struct sln_proof {
    unsigned char mac[SLN_MAC];
};

struct sln_get {
    uint32_t kind;
    char path[SLD_PATH_MAX];
};

/* an object: kind, path, status (0 or an errno of the original file system)
 * and, by kind: DIR the real path and the names (sorted, `types` d_type);
 * STAT/LSTAT st; REAL the real path; FILE mode and size (DATA frames follow). */
struct sln_obj {
    uint32_t kind, flags;
    int32_t status;
    char path[SLD_PATH_MAX];
    char real[SLD_PATH_MAX];
    struct sld_stat st;
    uint64_t mode, size;
    uint32_t n;   /* DIR: number of names */
    char **names; /* DIR: unpack allocates (sln_obj_free) */
    unsigned char *types;
};

/* a collective message of the FGFS layer: a sequence number and bytes */
struct sln_coll {
    uint32_t seq;
    uint32_t len;
    unsigned char *data; /* unpack: points into p */
};

/* a server's counters (the reply to the front end's STATS) */
struct sln_stats {
    uint32_t rank;
    uint32_t n;
    uint64_t c[SLD_NCOUNTERS];
};

size_t sln_pack_hello(const struct sln_hello *m, unsigned char *buf, size_t cap);
size_t sln_pack_challenge(const struct sln_challenge *m, unsigned char *buf, size_t cap);
size_t sln_pack_proof(const struct sln_proof *m, unsigned char *buf, size_t cap);
size_t sln_pack_empty(uint32_t type, unsigned char *buf, size_t cap);
size_t sln_pack_get(uint32_t type, const struct sln_get *m, unsigned char *buf, size_t cap);
/* the size an OBJ frame needs (DIR: the names), to allocate buf */
size_t sln_obj_size(const struct sln_obj *m);
size_t sln_pack_obj(const struct sln_obj *m, unsigned char *buf, size_t cap);
size_t sln_pack_coll(uint32_t type, const struct sln_coll *m, unsigned char *buf, size_t cap);
size_t sln_pack_stats(const struct sln_stats *m, unsigned char *buf, size_t cap);

/* 0 and *type, *len for a valid header (magic, len <= SLN_FRAME_MAX), else -1 */
int sln_unpack_header(const unsigned char *buf, uint32_t *type, uint32_t *len);
int sln_unpack_hello(const unsigned char *p, size_t len, struct sln_hello *m);
int sln_unpack_challenge(const unsigned char *p, size_t len, struct sln_challenge *m);
int sln_unpack_proof(const unsigned char *p, size_t len, struct sln_proof *m);
int sln_unpack_get(const unsigned char *p, size_t len, struct sln_get *m);
/* allocates m->names/types for DIR (free with sln_obj_free); -1 on bad input */
int sln_unpack_obj(const unsigned char *p, size_t len, struct sln_obj *m);
void sln_obj_free(struct sln_obj *m);
int sln_unpack_coll(const unsigned char *p, size_t len, struct sln_coll *m);
/* n at most SLD_NCOUNTERS, exactly the payload's length */
int sln_unpack_stats(const unsigned char *p, size_t len, struct sln_stats *m);

#endif
