/* proto.h - the control protocol of libsheaf_ckpt, without MPI: the
 * agreements and decisions of a checkpoint's init and of a step's open
 * (its directory), the writes of a shared unit and their close, over
 * sheaf's collective layer (include/sheaf_comm.h). How bytes move (MPI-IO,
 * collective writes, gathers) is behind callbacks, so the protocol runs on
 * the in-process simulator (tests/ckpt/test_ckpt_protocol.c) as it runs over
 * MPI (sheaf_comm_mpi_ref on the checkpoint's communicators: one
 * MPI_Allreduce per agreement when all went well).
 *
 * Codes inside libsheaf_ckpt are positive errno values (the public calls
 * return their negation, ck_pub); a failure of the collective layer itself
 * is its own negative code (SHEAF_COMM_ECOMM). */
#ifndef SHEAF_CKPT_PROTO_H
#define SHEAF_CKPT_PROTO_H
#include "sheaf_comm.h"
#include <stddef.h>
#include <stdint.h>

/* A sequence of agreements, "first failure wins": every member makes every
 * exchange of the sequence whatever happened before; the first failed
 * exchange fixes code, rank and msg on every member, later ones keep them. */
typedef struct ck_ag {
    sheaf_comm *comm;
    int who;                     /* this member's rank as messages name it (init: its rank in comm) */
    int code;                    /* 0, or the first agreed failure */
    int rank;                    /* its (lowest failing) rank in comm, -1 */
    char msg[SHEAF_COMM_MSGLEN]; /* "rank W: its message" (W: the failing member's who) */
} ck_ag;

/* who = the member's rank in comm; set a->who after it to name another
 * rank (io.c: the rank in the checkpoint's communicator, not the file's) */
void ck_ag_init(ck_ag *a, sheaf_comm *comm);
/* One agreement named step: this member's rc (0 or an errno) and msg, and
 * n values (min over members in the same exchange; NULL when n is 0).
 * Returns the sequence's code (the same on every member). */
int ck_ag_step(ck_ag *a, const char *step, int rc, const char *msg, int64_t *vals, int n);

/* The test hook (not exported; NULL in production): called at every named
 * step with the member's rank, before the exchange; a non-zero return is
 * injected there as that member's failure (when it did not fail already). */
typedef int (*ck_hook_fn)(const char *step, int rank, void *arg);
extern ck_hook_fn ck_hook;
extern void *ck_hook_arg;

/* ---- init: "init.alloc" (alloc_rc: the context's allocation), then
 * configure (options, the context's communicator) and "init.options" with
 * the parameters that must be equal on every member (params[0..np), np <=
 * CK_PARAMS_MAX: minima and maxima in one exchange; unequal -> EINVAL),
 * then, when setup is not NULL, setup (rbio: its communicators) and
 * "init.setup". configure and setup run only when every member got there. */
#define CK_PARAMS_MAX 12
typedef struct ck_init_ops {
    int (*configure)(void *x, int64_t *params, int *np, char *msg, size_t mn);
    int (*setup)(void *x, char *msg, size_t mn); /* NULL: none (decided by configure) */
    int (*need_setup)(void *x);                  /* the same on every member once params agree */
} ck_init_ops;
int ck_proto_init(ck_ag *a, int alloc_rc, const ck_init_ops *ops, void *x);

/* ---- a step's open: "step.dirs" (coio, sion: collective opens follow) */
int ck_proto_dirs(ck_ag *a, int drc, const char *msg);

/* ---- a unit shared by the members of a communicator (coio; rbio writers
 * with nf < ng): "shared.sizes" (each member's sizes fit one call), plan
 * (offsets and the header, collective over the file's communicator),
 * "shared.header", open (collective: MPI_File_open reports its outcome on
 * every member; a member whose open failed skips the collective writes and
 * brings that failure to the next agreement), per field the collective write
 * and "shared.data" (stop together: ROMIO does not join later split
 * collectives after a failed one), the first member's headers and
 * "shared.headers" (always made once the file is open: close needs the same
 * code on every member), close (sync unless failed, close). Returns 0 or the
 * code; msg gets the agreed message, or close's own. */
typedef struct ck_shared_ops {
    int (*sizes)(void *x, char *msg, size_t mn);
    int (*plan)(void *x, char *msg, size_t mn);
    int (*open)(void *x, char *msg, size_t mn);
    int (*write_field)(void *x, uint32_t f, char *msg, size_t mn);
    int (*write_headers)(void *x, char *msg, size_t mn); /* the first member only */
    int (*close)(void *x, int rc, char *msg, size_t mn); /* on members whose open succeeded */
} ck_shared_ops;
int ck_proto_shared(ck_ag *a, const ck_shared_ops *ops, void *x, uint32_t nfields, char *msg, size_t mn);
#endif
