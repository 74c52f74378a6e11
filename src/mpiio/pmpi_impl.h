/* pmpi_impl.h - internals of libsheaf-mpiio-pmpi.so shared by pmpi.c (open,
 * close, views, blocking calls, fallbacks) and pmpi_req.c (nonblocking, split
 * collective, shared and ordered calls). Its functions are hidden: the
 * library exports MPI_File_* only.
 *
 * Every data call is generated from one macro for its int form and its
 * MPI-4 large-count (_c) form (PMPI_BOTH), in one of two shapes (individual
 * or shared pointer: XFER_PTR; explicit offset: XFER_AT) and three kinds of
 * completion (KIND): ST (blocking, a status), REQ (nonblocking, a request
 * completed at the call), BEGIN (split collective begin; the status waits
 * for the _end call). Sheaf serves every data call of a taken-over file, in
 * every mode (pfr, nocache, none: sheaf_independent=serve; dache); a file
 * not taken over goes to the MPI library untouched. */
#ifndef SHEAF_MPIIO_PMPI_IMPL_H
#define SHEAF_MPIIO_PMPI_IMPL_H
#include <limits.h>
#include <mpi.h>
#include "sheaf_mpiio.h"

#define PMPI_HIDDEN __attribute__((visibility("hidden")))

/* served: MPI_File_* calls sheaf answered; fellback: calls passed to the real
 * handle of a taken-over file (none since issue 30: kept as the check that
 * SHEAF_MPIIO_REPORT prints); verbose: SHEAF_MPIIO_VERBOSE was set at open
 * (one log line per data call) */
typedef struct pmpi_entry {
    MPI_File real;
    sheaf_file sf;
    int rank, dache, verbose;
    char name[256];
    unsigned long served, fellback;
    int split;             /* a split collective is between _begin and _end */
    MPI_Count split_bytes; /* its byte count, for the _end's status */
} pmpi_entry;

PMPI_HIDDEN pmpi_entry *pmpi_lookup(MPI_File f);
/* the entry of fh (NULL: not taken over: the caller passes the call to the
 * MPI library); counts the call as served and, verbose, logs `call` */
PMPI_HIDDEN pmpi_entry *pmpi_route(MPI_File f, const char *call);
PMPI_HIDDEN int pmpi_to_mpi(pmpi_entry *e, int rc);
/* the count sheaf gets: -1 (refused, on every rank of a collective) when it
 * does not fit an int or (begin) a split collective is already pending */
PMPI_HIDDEN int pmpi_count(pmpi_entry *e, MPI_Count count, int begin);
/* status / request / split state of a call sheaf served (rc: sheaf's code) */
PMPI_HIDDEN void pmpi_set_status(MPI_Status *st, MPI_Count bytes);
PMPI_HIDDEN int pmpi_done(pmpi_entry *e, int rc, MPI_Datatype t, MPI_Count count, MPI_Status *st);
PMPI_HIDDEN int pmpi_done_req(pmpi_entry *e, int rc, MPI_Datatype t, MPI_Count count, MPI_Request *req);
PMPI_HIDDEN int pmpi_begun(pmpi_entry *e, int rc, MPI_Datatype t, MPI_Count count);
PMPI_HIDDEN int pmpi_ended(pmpi_entry *e, MPI_Status *st);
#if MPI_VERSION >= 4
#define PMPI_BOTH(M, ...) M(, int, __VA_ARGS__) M(_c, MPI_Count, __VA_ARGS__)
#else
#define PMPI_BOTH(M, ...) M(, int, __VA_ARGS__)
#endif
#define PMPI_NOCONST

/* the trailing parameter, argument and completion of each KIND */
#define PMPI_DECL_ST , MPI_Status *last
#define PMPI_ARG_ST , last
#define PMPI_FIN_ST(e, rc, t, count) pmpi_done(e, rc, t, count, last)
#define PMPI_BEGIN_ST 0
#define PMPI_DECL_REQ , MPI_Request *last
#define PMPI_ARG_REQ , last
#define PMPI_FIN_REQ(e, rc, t, count) pmpi_done_req(e, rc, t, count, last)
#define PMPI_BEGIN_REQ 0
#define PMPI_DECL_BEGIN
#define PMPI_ARG_BEGIN
#define PMPI_FIN_BEGIN(e, rc, t, count) pmpi_begun(e, rc, t, count)
#define PMPI_BEGIN_BEGIN 1

#define XFER_PTR(SFX, COUNT_T, NAME, SHEAF, CONST, KIND)                                                               \
    int MPI_File_##NAME##SFX(MPI_File fh, CONST void *buf, COUNT_T count, MPI_Datatype t PMPI_DECL_##KIND)             \
    {                                                                                                                  \
        pmpi_entry *e = pmpi_route(fh, "MPI_File_" #NAME #SFX);                                                        \
        if (!e)                                                                                                        \
            return PMPI_File_##NAME##SFX(fh, buf, count, t PMPI_ARG_##KIND);                                           \
        int src = SHEAF(e->sf, buf, pmpi_count(e, count, PMPI_BEGIN_##KIND), t);                                       \
        return PMPI_FIN_##KIND(e, src, t, count);                                                                      \
    }
#define XFER_AT(SFX, COUNT_T, NAME, SHEAF, CONST, KIND)                                                                \
    int MPI_File_##NAME##SFX(MPI_File fh, MPI_Offset off, CONST void *buf, COUNT_T count,                              \
                             MPI_Datatype t PMPI_DECL_##KIND)                                                          \
    {                                                                                                                  \
        pmpi_entry *e = pmpi_route(fh, "MPI_File_" #NAME #SFX);                                                        \
        if (!e)                                                                                                        \
            return PMPI_File_##NAME##SFX(fh, off, buf, count, t PMPI_ARG_##KIND);                                      \
        int src = SHEAF(e->sf, off, buf, pmpi_count(e, count, PMPI_BEGIN_##KIND), t);                                  \
        return PMPI_FIN_##KIND(e, src, t, count);                                                                      \
    }
/* the read and the write of one family: MPI_File_<P>read<S> and
 * MPI_File_<P>write<S> served by sheaf_file_read<FS> / sheaf_file_write<FS> */
#define PMPI_RW_PTR(P, S, FS, KIND)                                                                                    \
    PMPI_BOTH(XFER_PTR, P##read##S, sheaf_file_read##FS, PMPI_NOCONST, KIND)                                           \
    PMPI_BOTH(XFER_PTR, P##write##S, sheaf_file_write##FS, const, KIND)
#define PMPI_RW_AT(P, S, FS, KIND)                                                                                     \
    PMPI_BOTH(XFER_AT, P##read##S, sheaf_file_read##FS, PMPI_NOCONST, KIND)                                            \
    PMPI_BOTH(XFER_AT, P##write##S, sheaf_file_write##FS, const, KIND)
#endif
