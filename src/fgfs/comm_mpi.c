/* comm_mpi.c - libsheaf_fgfs_mpi: FGFS's name for sheaf's collective layer
 * over MPI (sheaf_comm_mpi, libsheaf_comm_mpi), kept so that programs
 * written against sheaf_fgfs_mpi.h build and link unchanged. */
#include "sheaf_fgfs_mpi.h"
#include "sheaf_comm_mpi.h"

int sheaf_fgfs_comm_mpi(MPI_Comm comm, sheaf_fgfs_comm *out)
{
    int rc = sheaf_comm_mpi(comm, out);
    if (rc)
        sheaf_fgfs_error(rc, "fgfs comm_mpi: %s", sheaf_comm_last_error());
    return rc;
}
