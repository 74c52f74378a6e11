/* sheaf_fgfs_mpi.h - the FGFS collective interface over MPI (libsheaf_fgfs_mpi).
 *
 * sheaf_fgfs_comm_mpi duplicates `comm` (so FGFS traffic never mixes with the
 * application's), sets MPI_ERRORS_RETURN on the duplicate, and fills *out.
 * Collective over comm (one MPI_Comm_dup). Returns SHEAF_FGFS_OK or
 * SHEAF_FGFS_ECOMM with a message. Reductions are binomial trees of
 * point-to-point messages (variable length, bounded by the operator's
 * max_len): ceil(log2 P) rounds; bcast is MPI_Bcast of the length then the
 * data. Free with out->ops->free_comm(out) (collective: MPI_Comm_free).
 * Thread-safety: as the MPI library's; one thread per communicator. */
#ifndef SHEAF_FGFS_MPI_H
#define SHEAF_FGFS_MPI_H
#include <mpi.h>
#include "sheaf_fgfs.h"
#ifdef __cplusplus
extern "C" {
#endif
SHEAF_API int sheaf_fgfs_comm_mpi(MPI_Comm comm, sheaf_fgfs_comm *out);
#ifdef __cplusplus
}
#endif
#endif
