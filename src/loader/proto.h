/* proto.h - the messages between the audit client (and the bootstrapper and
 * launcher) and the per-node load server, as typed structs with one pack and
 * one unpack function each. libc only: this file is compiled into the audit
 * library, which lives in every process.
 *
 * Wire format: every message is a frame {u32 magic, u32 type, u32 length}
 * followed by `length` payload bytes; integers little-endian, strings as
 * {u32 length, bytes} (no terminator on the wire, at most SLD_PATH_MAX-1).
 */
#ifndef SHEAF_LOADER_PROTO_H
#define SHEAF_LOADER_PROTO_H

#include <stddef.h>
#include <stdint.h>

#define SLD_MAGIC 0x444c4853u /* "SHLD" */
#define SLD_PATH_MAX 4096
#define SLD_HDR_SIZE 12
/* in the cache directory: a symlink to itself (realpath of it: ELOOP) */
#define SLD_ELOOP_NAME "eloop"
#define SLD_MSG_MAX (SLD_HDR_SIZE + 64 + 2 * (4 + SLD_PATH_MAX) + 160)

enum sld_op {
    SLD_OP_LOOKUP = 1,   /* a file to read or map: its node-local copy */
    SLD_OP_STAT = 2,     /* stat() of the original (cached) */
    SLD_OP_LSTAT = 3,    /* lstat() of the original (cached) */
    SLD_OP_LISTDIR = 4,  /* a directory: a node-local directory with the same names */
    SLD_OP_STATS = 5,    /* the server's counters */
    SLD_OP_SHUTDOWN = 6, /* stop the server (launcher) */
    SLD_OP_REALPATH = 7, /* realpath(3) of the original: the resolved path (or the errno) */
    SLD_OP_REPLY = 100
};

/* status of a reply: 0 = served (path / stat valid), else an errno value of
 * the original file system (ENOENT: the name is not in the cached listing).
 * REALPATH: the request's path is absolute but not normalised (realpath
 * resolves "..", "." and a trailing '/' against the real tree itself); the
 * reply's path is what realpath(3) returns, its status the errno it sets. */
struct sld_request {
    uint32_t op;
    uint32_t flags;
    char path[SLD_PATH_MAX];
};

struct sld_stat {
    uint64_t dev, ino, mode, nlink, uid, gid, rdev, size, blksize, blocks;
    int64_t atime_sec, atime_nsec, mtime_sec, mtime_nsec, ctime_sec, ctime_nsec;
};

enum sld_counter {
    SLD_C_REQUESTS,
    SLD_C_LISTINGS,
    SLD_C_STATS,
    SLD_C_READS,
    SLD_C_BYTES,
    SLD_C_REALPATHS,
    SLD_C_HITS,
    SLD_C_CLIENTS,
    SLD_C_REFUSED,
    SLD_C_STRIPPED,
    /* the overlay: peers refused by the handshake, GETs sent to the parent,
   * GETs served for children, objects received, file bytes received, objects
   * sent down by push/broadcast */
    SLD_C_NET_REFUSED,
    SLD_C_NET_GETS,
    SLD_C_NET_SERVED,
    SLD_C_NET_OBJS,
    SLD_C_NET_BYTES,
    SLD_C_NET_PUSHED,
    SLD_C_PASSTHROUGH, /* files passed through by the FGFS policy (clients read the original) */
    SLD_NCOUNTERS
};

struct sld_reply {
    int32_t status;
    uint32_t kind;                    /* d_type-like: 4 dir, 8 regular, 10 link, 0 unknown */
    struct sld_stat st;               /* STAT/LSTAT */
    uint64_t counters[SLD_NCOUNTERS]; /* STATS */
    char path[SLD_PATH_MAX];          /* LOOKUP/LISTDIR: the node-local path; REALPATH: resolved */
};

/* pack: writes a whole frame into buf (capacity cap); returns its length or 0 */
size_t sld_pack_request(const struct sld_request *r, unsigned char *buf, size_t cap);
size_t sld_pack_reply(const struct sld_reply *r, unsigned char *buf, size_t cap);
/* header: 0 and *type, *len when buf holds a valid header; -1 otherwise */
int sld_unpack_header(const unsigned char *buf, uint32_t *type, uint32_t *len);
/* unpack a payload (after the header); 0 or -1 on malformed input */
int sld_unpack_request(uint32_t type, const unsigned char *p, size_t len, struct sld_request *r);
int sld_unpack_reply(const unsigned char *p, size_t len, struct sld_reply *r);

/* whether path is clean: absolute (abs = 1: starts with '/'; "/" itself is
 * clean) or relative (abs = 0: non-empty, no leading '/'), shorter than
 * SLD_PATH_MAX, and no component empty ("//", a trailing '/'), "." or "..".
 * What the server creates in its cache is named by clean paths only. */
int sld_path_clean(const char *path, int abs);

/* the names of the counters, for printing ("listings", ...) */
const char *sld_counter_name(int i);

#endif
