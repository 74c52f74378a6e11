/* wire.h - the messages of the parallel protocol (plain, mapped, buddy), as typed structs
 * (internal to src/par).
 *
 * Each message travels through the API callbacks as a fixed number of
 * elements of one SION type (_SION_INT64, the task placement _SION_INT32),
 * so the callbacks (MPI, threads, the scale simulator) convert byte order
 * if they ever cross machines; the wire order of the fields is the order
 * below and PAR_WIRE_*_N gives the element counts (they are the counts the
 * collective-count and byte-count contracts of doc/parallel.md assume).
 *
 * pack writes a struct into exactly N elements. unpack checks the buffer
 * length (n elements given) and every field's range and returns 0, or
 * SHEAF_E_FORMAT with a message naming the message and field: a short or
 * hostile buffer never yields a struct with out-of-range values. */
#ifndef PAR_WIRE_H
#define PAR_WIRE_H
#include "par.h"

/* Write open, task -> master of its file (L gather): what the master needs
 * to create the file. */
typedef struct par_wire_wreq {
    int64_t chunksize;  /* requested (0 after a local failure) */
    int64_t grank;      /* global rank */
    int64_t capability; /* SION_CAPABILITY_* for coalescing I/O */
} par_wire_wreq;
#define PAR_WIRE_WREQ_N 3

/* Reinit, task -> master (L gather): as the write request, plus the task's status. */
typedef struct par_wire_rreq {
    int64_t chunksize, grank, status, capability;
} par_wire_rreq;
#define PAR_WIRE_RREQ_N 4

/* Write open and reinit, master -> task (L scatter): the task's place in the file. */
typedef struct par_wire_wlayout {
    int64_t status; /* 0, or the master's error code */
    int64_t start, chunksize, globalskip;
    int64_t coll[PAR_COLL_FIELDS]; /* coalescing roles (par_coll_fill / par_coll_set) */
    int64_t checksum;              /* the master's decision on checksums (write open) */
} par_wire_wlayout;
#define PAR_WIRE_WLAYOUT_N (5 + PAR_COLL_FIELDS)

/* Read open, master -> task (L scatter): the task's entry of its file. */
typedef struct par_wire_rlayout {
    int64_t status;
    int64_t start, chunksize, globalskip, grank, nblocks, keyval, data_big;
    int64_t coll[PAR_COLL_FIELDS];
    int64_t checksum; /* 1: the block table carries checksums */
} par_wire_rlayout;
#define PAR_WIRE_RLAYOUT_N (9 + PAR_COLL_FIELDS)

/* Read open, task 0 -> every task (G scatter): its file and local rank. */
typedef struct par_wire_place {
    int32_t status, filenumber, lrank, lsize;
} par_wire_place;
#define PAR_WIRE_PLACE_N 4

/* Write close, task -> master (L gather): its block count and status. */
typedef struct par_wire_ccount {
    int64_t nblocks, status;
} par_wire_ccount;
#define PAR_WIRE_CCOUNT_N 2

/* Write close of a multi-file set, task -> the master of file 0 (G gather):
 * the task's place, for the set's task mapping. */
typedef struct par_wire_cmap {
    int32_t filenumber, lrank;
} par_wire_cmap;
#define PAR_WIRE_CMAP_N 2

/* ---- mapped opens and closes (m logical tasks on n processes; all G) ---- */

/* Options of a mapped open that must be the same on every task. */
enum { MO_WRITE, MO_NFILES, MO_FSBLK, MO_KEYVAL, MO_N };

/* First step of every mapped call, process -> task 0 (G gather). */
typedef struct par_wire_mhead {
    int64_t count;  /* logical tasks (a read: wanted ones, -1 "distribute for me") */
    int64_t blocks; /* write close: block entries it sends (0 otherwise) */
    int64_t status;
    int64_t opt[MO_N]; /* an open's options (0 in a close) */
} par_wire_mhead;
#define PAR_WIRE_MHEAD_N (3 + MO_N)

/* Its verdict, task 0 -> every process (G bcast). */
typedef struct par_wire_mverdict {
    int64_t status;        /* 0, or the agreed code */
    int64_t total;         /* sum of the counts */
    int64_t blocks;        /* sum of the block entries */
    int64_t who;           /* the process that failed or disagrees (-1: none) */
    int64_t field;         /* MO_* it disagrees on (-1: none) */
    int64_t value, value0; /* its value and task 0's */
} par_wire_mverdict;
#define PAR_WIRE_MVERDICT_N 7

/* Mapped write: one logical task's record, process -> task 0 (G gatherv). */
typedef struct par_wire_mwrec {
    int64_t grank, chunksize, filenumber, lrank;
} par_wire_mwrec;
#define PAR_WIRE_MWREC_N 4

/* Mapped write: task 0's verdict on the set (G bcast). */
typedef struct par_wire_mwverdict {
    int64_t status, fsblksize, nfiles, ntotal;
} par_wire_mwverdict;
#define PAR_WIRE_MWVERDICT_N 4

/* Mapped write: a logical task's place, task 0 -> process (G scatterv). */
typedef struct par_wire_mwlayout {
    int64_t start, chunksize, globalskip;
} par_wire_mwlayout;
#define PAR_WIRE_MWLAYOUT_N 3

/* Mapped read: task 0's verdict on the set (G bcast). */
typedef struct par_wire_mrverdict {
    int64_t status, ntasks, nfiles, fsblksize, checksum;
} par_wire_mrverdict;
#define PAR_WIRE_MRVERDICT_N 5

/* Mapped read: a process's share, task 0 -> process (G scatter). */
typedef struct par_wire_mrshare {
    int64_t ntasks, nblocks; /* its logical tasks, its block entries (sizes, and checksums) */
} par_wire_mrshare;
#define PAR_WIRE_MRSHARE_N 2

/* Mapped read: one logical task's entry, task 0 -> process (G scatterv). */
typedef struct par_wire_mrrec {
    int64_t grank, filenumber, lrank, start, chunksize, globalskip, nblocks, keyval, data_big;
} par_wire_mrrec;
#define PAR_WIRE_MRREC_N 9

/* ---- reading a buddy copy (buddy_read.c) ---- */

/* A member's reader -> each task of that member (G scatter): its entry. */
typedef struct par_wire_bhead {
    int64_t status; /* 0, or why the reader cannot serve it */
    int64_t nblocks, capacity, fsblksize, keyval, data_big;
} par_wire_bhead;
#define PAR_WIRE_BHEAD_N 6

/* Step "members", task -> 0 (G gather) and back (G bcast): the number of
 * copy members a task sees in a member's header (-1: none), then the
 * agreed number (-1: no member visible anywhere). */
typedef struct par_wire_bseen {
    int64_t members;
} par_wire_bseen;
#define PAR_WIRE_BSEEN_N 1

/* Step "direct", task -> 0 (G gather): whether it sees its own member, its status. */
typedef struct par_wire_bsees {
    int64_t sees, status;
} par_wire_bsees;
#define PAR_WIRE_BSEES_N 2

/* Its verdict, 0 -> every task (G bcast). */
typedef struct par_wire_bdirect {
    int64_t status; /* 0, or the code of the lowest failing task */
    int64_t who;    /* that task (-1: none) */
    int64_t direct; /* 1: every task reads its own entry itself */
} par_wire_bdirect;
#define PAR_WIRE_BDIRECT_N 3

/* Steps "readers" and "mapping" send a par_wire_verdict (below) in front of
 * their arrays: readers, task -> 0: its status, then a 0/1 per member (sees
 * it); 0 -> every task: the verdict, then the reader of each member;
 * mapping, the reader of member 0 -> every task: the verdict, then (member,
 * entry) of every task. */

/* ---- writing buddy copies (buddy.c; all int64) ---- */

/* A verdict that ends a step, root -> every task (G bcast), in front of the
 * step's data: 0 or the agreed code, and the lowest failing task (-1: none).
 * The copies' open sends it with the set's information (tasks per file,
 * then per level the writer of copy member 0's mapping). */
typedef struct par_wire_verdict {
    int64_t status, who;
} par_wire_verdict;
#define PAR_WIRE_VERDICT_N 2

/* A copy member's group, member -> its writer (group gather): what the
 * writer needs to create the member file. */
typedef struct par_wire_bwreq {
    int64_t chunksize; /* the chunk size requested at open */
    int64_t grank;     /* global rank */
    int64_t status;    /* this task's failure so far (the writer then creates nothing) */
} par_wire_bwreq;
#define PAR_WIRE_BWREQ_N 3

/* Its answer, writer -> member (group scatter): the member's stream in the copy. */
typedef struct par_wire_bwlayout {
    int64_t status; /* 0, or why the member file was not created */
    int64_t start, chunksize, globalskip;
} par_wire_bwlayout;
#define PAR_WIRE_BWLAYOUT_N 4

/* The close of the copies reuses par_wire_cmap (task -> writer of member 0:
 * member and entry) and par_wire_ccount (member -> writer: block count, status). */

/* n elements of an array that follows a message, each in [lo, hi], copied to
 * out (int64) when all are; else SHEAF_E_FORMAT naming the message and field. */
int par_wire_array_unpack(const char *msg, const char *field, int64_t lo, int64_t hi, int64_t *out, const int64_t *in,
                          int64_t n);

/* Every message's table (wire.c), for code that handles several messages
 * alike: its element count, and pack/unpack through it (elements of the
 * message's type, as its own pack/unpack). */
struct wire_msg;
typedef struct wire_msg par_wire_msg;
extern const par_wire_msg par_wire_wreq_msg, par_wire_rreq_msg, par_wire_wlayout_msg, par_wire_rlayout_msg,
    par_wire_place_msg, par_wire_ccount_msg, par_wire_cmap_msg, par_wire_mhead_msg, par_wire_mverdict_msg,
    par_wire_mwrec_msg, par_wire_mwverdict_msg, par_wire_mwlayout_msg, par_wire_mrverdict_msg, par_wire_mrshare_msg,
    par_wire_mrrec_msg, par_wire_bhead_msg, par_wire_verdict_msg, par_wire_bwreq_msg, par_wire_bwlayout_msg,
    par_wire_bseen_msg, par_wire_bsees_msg, par_wire_bdirect_msg;
#define PAR_WIRE_MAX_N 16 /* elements of the longest message */
int par_wire_msg_count(const par_wire_msg *w);
void par_wire_pack(const par_wire_msg *w, const void *m, void *out);
int par_wire_unpack(const par_wire_msg *w, void *m, const void *in, int64_t n);

/* Initial values: the ones a task keeps when the message never arrives
 * (a failed callback): status SHEAF_E_IO, coalescing off. */
void par_wire_wlayout_init(par_wire_wlayout *m);
void par_wire_rlayout_init(par_wire_rlayout *m);

void par_wire_wreq_pack(const par_wire_wreq *m, int64_t *out);
int par_wire_wreq_unpack(par_wire_wreq *m, const int64_t *in, int64_t n);
void par_wire_rreq_pack(const par_wire_rreq *m, int64_t *out);
int par_wire_rreq_unpack(par_wire_rreq *m, const int64_t *in, int64_t n);
void par_wire_wlayout_pack(const par_wire_wlayout *m, int64_t *out);
int par_wire_wlayout_unpack(par_wire_wlayout *m, const int64_t *in, int64_t n);
void par_wire_rlayout_pack(const par_wire_rlayout *m, int64_t *out);
int par_wire_rlayout_unpack(par_wire_rlayout *m, const int64_t *in, int64_t n);
void par_wire_place_pack(const par_wire_place *m, int32_t *out);
int par_wire_place_unpack(par_wire_place *m, const int32_t *in, int64_t n);
void par_wire_ccount_pack(const par_wire_ccount *m, int64_t *out);
int par_wire_ccount_unpack(par_wire_ccount *m, const int64_t *in, int64_t n);
void par_wire_cmap_pack(const par_wire_cmap *m, int32_t *out);
int par_wire_cmap_unpack(par_wire_cmap *m, const int32_t *in, int64_t n);
void par_wire_mhead_pack(const par_wire_mhead *m, int64_t *out);
int par_wire_mhead_unpack(par_wire_mhead *m, const int64_t *in, int64_t n);
void par_wire_mverdict_pack(const par_wire_mverdict *m, int64_t *out);
int par_wire_mverdict_unpack(par_wire_mverdict *m, const int64_t *in, int64_t n);
void par_wire_mwrec_pack(const par_wire_mwrec *m, int64_t *out);
int par_wire_mwrec_unpack(par_wire_mwrec *m, const int64_t *in, int64_t n);
void par_wire_mwverdict_pack(const par_wire_mwverdict *m, int64_t *out);
int par_wire_mwverdict_unpack(par_wire_mwverdict *m, const int64_t *in, int64_t n);
void par_wire_mwlayout_pack(const par_wire_mwlayout *m, int64_t *out);
int par_wire_mwlayout_unpack(par_wire_mwlayout *m, const int64_t *in, int64_t n);
void par_wire_mrverdict_pack(const par_wire_mrverdict *m, int64_t *out);
int par_wire_mrverdict_unpack(par_wire_mrverdict *m, const int64_t *in, int64_t n);
void par_wire_mrshare_pack(const par_wire_mrshare *m, int64_t *out);
int par_wire_mrshare_unpack(par_wire_mrshare *m, const int64_t *in, int64_t n);
void par_wire_bhead_pack(const par_wire_bhead *m, int64_t *out);
int par_wire_bhead_unpack(par_wire_bhead *m, const int64_t *in, int64_t n);
void par_wire_mrrec_pack(const par_wire_mrrec *m, int64_t *out);
int par_wire_mrrec_unpack(par_wire_mrrec *m, const int64_t *in, int64_t n);
void par_wire_verdict_pack(const par_wire_verdict *m, int64_t *out);
int par_wire_verdict_unpack(par_wire_verdict *m, const int64_t *in, int64_t n);
void par_wire_bwreq_pack(const par_wire_bwreq *m, int64_t *out);
int par_wire_bwreq_unpack(par_wire_bwreq *m, const int64_t *in, int64_t n);
void par_wire_bwlayout_pack(const par_wire_bwlayout *m, int64_t *out);
int par_wire_bwlayout_unpack(par_wire_bwlayout *m, const int64_t *in, int64_t n);
void par_wire_bseen_pack(const par_wire_bseen *m, int64_t *out);
int par_wire_bseen_unpack(par_wire_bseen *m, const int64_t *in, int64_t n);
void par_wire_bsees_pack(const par_wire_bsees *m, int64_t *out);
int par_wire_bsees_unpack(par_wire_bsees *m, const int64_t *in, int64_t n);
void par_wire_bdirect_pack(const par_wire_bdirect *m, int64_t *out);
int par_wire_bdirect_unpack(par_wire_bdirect *m, const int64_t *in, int64_t n);
#endif
