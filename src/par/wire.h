/* wire.h - the messages of the non-mapped parallel protocol, as typed structs
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
    int64_t chunksize;      /* requested (0 after a local failure) */
    int64_t grank;          /* global rank */
    int64_t capability;     /* SION_CAPABILITY_* for coalescing I/O */
} par_wire_wreq;
#define PAR_WIRE_WREQ_N 3

/* Reinit, task -> master (L gather): as the write request, plus the task's status. */
typedef struct par_wire_rreq {
    int64_t chunksize, grank, status, capability;
} par_wire_rreq;
#define PAR_WIRE_RREQ_N 4

/* Write open and reinit, master -> task (L scatter): the task's place in the file. */
typedef struct par_wire_wlayout {
    int64_t status;                 /* 0, or the master's error code */
    int64_t start, chunksize, globalskip;
    int64_t coll[PAR_COLL_FIELDS];  /* coalescing roles (par_coll_fill / par_coll_set) */
    int64_t checksum;               /* the master's decision on checksums (write open) */
} par_wire_wlayout;
#define PAR_WIRE_WLAYOUT_N (5 + PAR_COLL_FIELDS)

/* Read open, master -> task (L scatter): the task's entry of its file. */
typedef struct par_wire_rlayout {
    int64_t status;
    int64_t start, chunksize, globalskip, grank, nblocks, keyval, data_big;
    int64_t coll[PAR_COLL_FIELDS];
    int64_t checksum;               /* 1: the block table carries checksums */
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
#endif
