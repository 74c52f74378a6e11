/* ckpt.h - internals of libsheaf_ckpt (the MPI writer). */
#ifndef SHEAF_CKPT_INTERNAL_H
#define SHEAF_CKPT_INTERNAL_H
#include "format.h"
#include "proto.h"
#include "sheaf_ckpt.h"
#include "sheaf_comm_mpi.h"
#include <mpi.h>

enum ck_strategy { CK_FPP = 0, CK_COIO, CK_RBIO, CK_SION };

typedef struct ck_fielddecl {
    char name[SHEAF_CKPT_NAME_MAX + 1];
    int type;
    size_t es;
    uint64_t count;
    const void *data;
} ck_fielddecl;

enum { CK_HANDOFF_AUTO = 0, CK_HANDOFF_SHM, CK_HANDOFF_SEND };
typedef struct ck_cfg {
    int handoff; /* rbio workers -> writer: auto (shm where possible), shm, send */
    int strategy, nf, ng, dedicated, sion_container, durable, subdirs, keep;
    uint64_t buffer;
    uint64_t slot; /* rbio shm: bytes of a worker's slot (0: buffer / workers, at most 64 MiB) */
    double timeout;
    char hint_keys[16][64], hint_vals[16][128];
    int nhints;
} ck_cfg;

/* A participant's data for one unit: nlocal ranks starting at global rank
 * first; per field f contiguous bytes data[f] (every local rank in order). */
typedef struct ck_part {
    uint32_t nfields, nlocal;
    uint64_t first;
    const ck_fielddecl *decl;   /* names/types */
    uint64_t *counts, *sums;    /* [f * nlocal + r] */
    const unsigned char **data; /* [f] */
} ck_part;

/* rbio's shared-memory hand-off (shm.c) */
typedef struct ck_shm {
    int on;               /* this context hands off through the window */
    MPI_Comm gcomm;       /* the group (one node) */
    MPI_Win win;          /* one slot per worker */
    uint64_t slotsz;      /* bytes of a slot */
    unsigned char *mine;  /* worker: its slot */
    uint64_t wser;        /* worker: pieces published so far */
    unsigned char **slot; /* writer: worker i's slot (group rank i + 1) */
    uint64_t *ack;        /* writer: the last piece taken of worker i */
} ck_shm;

/* the progress thread of send-mode workers (progress.c) */
typedef struct ck_prog ck_prog;

/* rbio state of one rank */
typedef struct ck_rbio {
    ck_shm shm;
    ck_prog *prog;           /* NULL: none (no MPI_THREAD_MULTIPLE, or shm) */
    int role, group, writer; /* writer = world rank of the group's writer */
    int gfirst, gsize;       /* group ranks [gfirst, gfirst+gsize) */
    MPI_Comm wcomm;          /* writers (MPI_COMM_NULL on workers) */
    MPI_Comm fcomm;          /* writers sharing one file (nf < ng) */
    unsigned char *pkg[2];   /* worker double buffer */
    uint64_t pkgcap[2];
    unsigned char *hdr[2];
    MPI_Request req[2][2];
    unsigned char *gbuf; /* writer: the group's data, field-major */
    uint64_t gcap;
} ck_rbio;

/* One checkpoint step in flight: its directory (prep), every rank's code
 * gathered to rank 0 (plus the messages of failing ranks), and rank 0's
 * result broadcast back (commit done or the first failure). */
typedef struct ck_result {
    int rc, rank;
    char msg[256];
} ck_result;
typedef struct ck_slot {
    uint64_t seq; /* the context's write number (the same on every rank) */
    int active, posted, bc_posted, prep_done;
    uint64_t step;
    int local_rc;
    char local_msg[256];
    ck_result prep, res;
    MPI_Request prep_req, gat_req, err_req, bc_req;
} ck_slot;

struct sheaf_ckpt_ctx {
    MPI_Comm comm;
    sheaf_comm_mpi_ref_t cref; /* comm as a sheaf_comm (no allocation, no MPI call) */
    ck_ag ag;                  /* the agreements of the current call (proto.h) */
    int rank, np;
    char base[3800], app[SHEAF_CKPT_APP_MAX + 1];
    ck_cfg cfg;
    MPI_Info info;
    ck_fielddecl *fields;
    int nfields, capfields;
    int broken;   /* a wait timed out: every call fails */
    int lenient;  /* ck_waitall: MPI errors in statuses are completions */
    int checked;  /* the fields were compared across ranks */
    uint64_t seq; /* writes so far; slot[seq & 1] is the current one */
    uint64_t last_step;
    int have_last;
    ck_slot slot[2]; /* the step being written and the one before */
    int *rcs;        /* rank 0: every rank's code of a step (Igather) */
    ck_rbio rb;
    MPI_Comm ccomm; /* the compute ranks (sheaf_ckpt_compute_comm) */
    sheaf_ckpt_stats st;
    char err[512];
};

/* util.c: helpers of every step file (nothing above them is called) */
extern const char *const ck_strategy_names[4];
/* a public call's code: 0 or negative (-errno; negative codes of the
 * collective layer pass unchanged) */
int ck_pub(int rc);
int ck_fail(sheaf_ckpt_ctx *c, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
double ck_now(void);
/* Wait for n requests, polling politely, at most cfg.timeout seconds:
 * 0, or ETIMEDOUT (context broken) with a message naming `what`. */
int ck_waitall(sheaf_ckpt_ctx *c, int n, MPI_Request *reqs, const char *what);
int ck_options(ck_cfg *cfg, const char *opts, char *err, size_t n);
/* the declared fields' fingerprint (names, types, order) */
uint64_t ck_fields_fp(const sheaf_ckpt_ctx *c);
/* First write: every rank of comm declared the same fields (bounded wait;
 * sets c->checked). 0, EINVAL (message set) or ETIMEDOUT. */
int ck_check_fields(sheaf_ckpt_ctx *c, MPI_Comm comm);
uint64_t ck_first(uint64_t g, uint64_t n, uint64_t k); /* first of group g of k over n */
int ck_group_of(uint64_t r, uint64_t n, uint64_t k);
/* Test hook (SHEAF_CKPT_FAULT): 0, or the fault's effect for this rank/step. */
int ck_fault(sheaf_ckpt_ctx *c, const char *kind, uint64_t step);

/* paths of step directories */
void ck_tmpdir(const sheaf_ckpt_ctx *c, uint64_t step, char *out, size_t n);
void ck_finaldir(const sheaf_ckpt_ctx *c, uint64_t step, char *out, size_t n);
/* rank 0: remove dir and its tree without following symlinks (ckf_rmtree) */
int ck_rmtree(const char *dir);
/* rank 0 at init: remove every step-*.tmp and step-*.old under base */
void ck_remove_stale(const char *base);
int ck_fsync_path(const char *path, int dir);
/* rank 0: fsync every file of the tmp dir, write the manifest, rename. */
int ck_commit_local(sheaf_ckpt_ctx *c, uint64_t step, char *msg, size_t n);

/* the header of a unit from the participants' counts (root side) */
int ck_header_init(ckf_header *h, const sheaf_ckpt_ctx *c, uint64_t step, uint64_t first, uint32_t nranks);
/* Write a whole unit alone through sink (header, then each field's block). */
typedef int (*ck_sink)(void *sctx, const void *buf, uint64_t n, char *msg, size_t mn);
int ck_write_stream(sheaf_ckpt_ctx *c, uint64_t step, const ck_part *p, ck_sink sink, void *sctx, char *msg, size_t mn);
/* Write a unit shared by the ranks of fcomm (each a participant, in rank
 * order) with MPI-IO split-collective writes; the same code on all. */
int ck_write_shared(sheaf_ckpt_ctx *c, MPI_Comm fcomm, uint64_t step, const char *path, const ck_part *p,
                    uint64_t unit_first, uint32_t unit_nranks, char *msg, size_t mn);
/* A plain file written alone with MPI_File_write_at on MPI_COMM_SELF. */
int ck_write_self(sheaf_ckpt_ctx *c, uint64_t step, const char *path, const ck_part *p, char *msg, size_t mn);
int ck_write_posix(sheaf_ckpt_ctx *c, uint64_t step, const char *path, const ck_part *p, char *msg, size_t mn);
/* sion container over comm: each rank of comm one task holding its unit */
int ck_write_sion(sheaf_ckpt_ctx *c, MPI_Comm comm, uint64_t step, const char *path, int nfiles, const ck_part *p,
                  char *msg, size_t mn);

/* This rank's own data as a 1-rank participant (checksums computed). */
int ck_part_own(sheaf_ckpt_ctx *c, ck_part *p);
void ck_part_free(ck_part *p);

/* strategies: 0 or an errno code with msg set (local, not agreed) */
int ck_rbio_setup(sheaf_ckpt_ctx *c);
int ck_rbio_write(sheaf_ckpt_ctx *c, uint64_t step, char *msg, size_t mn);
int ck_rbio_complete_sends(sheaf_ckpt_ctx *c);
void ck_rbio_free(sheaf_ckpt_ctx *c);
/* shm.c: the hand-off through a shared window (every group on one node) */
int ck_shm_setup(sheaf_ckpt_ctx *c);             /* collective over comm; s->on when used */
void ck_shm_free(sheaf_ckpt_ctx *c, int broken); /* collective over the group, bounded */
int ck_shm_put(sheaf_ckpt_ctx *c, uint64_t step, uint64_t seq, char *msg, size_t mn);
int ck_shm_take(sheaf_ckpt_ctx *c, uint64_t step, uint64_t seq, uint64_t *counts, uint64_t *sums, uint64_t *foff,
                int rc_in, char *msg, size_t mn);
void ck_shm_publish(sheaf_ckpt_ctx *c, uint64_t seq, int rc, int rank, const char *m);
int ck_shm_result(sheaf_ckpt_ctx *c, uint64_t seq, int *rc, int *rank, char *m, size_t mn);
int ck_shm_wait_result(sheaf_ckpt_ctx *c, uint64_t seq, int *rc, int *rank, char *m, size_t mn);
/* progress.c: a thread that enters MPI while send-mode data are in flight */
void ck_prog_start(sheaf_ckpt_ctx *c);
void ck_prog_kick(sheaf_ckpt_ctx *c); /* sends were posted */
void ck_prog_stop(sheaf_ckpt_ctx *c);
/* manifest units of this configuration (rank 0 at commit) */
int ck_units(const sheaf_ckpt_ctx *c, ckf_manifest *m);
#endif
