/* sheaf_comm_mpi.h - sheaf's collective layer over MPI (libsheaf_comm_mpi).
 *
 * allmin is one MPI_Allreduce; barrier one MPI_Barrier; bcast and reduce
 * carry byte strings of any length (reduce: a binomial tree of messages,
 * each with a status byte so a failure below reaches the root; bcast: the
 * length, an agreement that every member has room, the data). */
#ifndef SHEAF_COMM_MPI_H
#define SHEAF_COMM_MPI_H
#include <mpi.h>
#include "sheaf_comm.h"
#ifdef __cplusplus
extern "C" {
#endif

/* Collective over comm (one MPI_Comm_dup): *out gets a private duplicate
 * with MPI_ERRORS_RETURN; free it with sheaf_comm_free(out) before
 * MPI_Finalize. EINVAL, ECOMM, ENOMEM. */
SHEAF_API int sheaf_comm_mpi(MPI_Comm comm, sheaf_comm *out);

/* Local, no allocation, no MPI call: a communicator that uses comm itself
 * (its error handler as the caller set it; its messages share comm's tags
 * with the caller's, so use it only where the caller's own point-to-point
 * traffic is quiet, e.g. agreements at the end of a call). r must outlive
 * every use; sheaf_comm_free on it frees nothing. Returns &r->comm. */
typedef struct sheaf_comm_mpi_ref_t {
    sheaf_comm comm;
    MPI_Comm mpi;
} sheaf_comm_mpi_ref_t;
SHEAF_API sheaf_comm *sheaf_comm_mpi_ref(sheaf_comm_mpi_ref_t *r, MPI_Comm comm);

#ifdef __cplusplus
}
#endif
#endif
