/* file_check.c - SIONlib's file-check callback for parallel opens
 * (sion_file_check_par_*_mpi, sion_mpi.h): can a container be opened in a
 * given mode over a communicator? */
#include "sion.h"
#include "sion_mpi.h"
#include "../par/binding.h"
#include <stdlib.h>
#include <string.h>

struct _sion_file_check_par_args_mpi_struct {
    char *file_mode;
    int numfiles;
    MPI_Comm gComm;
    MPI_Comm lComm;
};

sion_file_check_par_args_mpi *sion_file_check_par_args_init_mpi(const char *file_mode, MPI_Comm gComm, int numfiles,
                                                                MPI_Comm lComm)
{
    binding_clear_error();
    sion_file_check_par_args_mpi *a = calloc(1, sizeof *a);
    if (!a || !(a->file_mode = strdup(file_mode ? file_mode : ""))) {
        free(a);
        binding_fail(SHEAF_E_NOMEM, "sion_file_check_par_args_init_mpi: out of memory");
        binding_report_error(-1);
        return NULL;
    }
    a->numfiles = numfiles;
    a->gComm = gComm;
    a->lComm = lComm;
    return a;
}

int sion_file_check_par_args_free_mpi(sion_file_check_par_args_mpi *args)
{
    if (args) {
        free(args->file_mode);
        free(args);
    }
    return SION_SUCCESS;
}

int sion_file_check_par_cb_mpi(char *fname, void *v)
{
    sion_file_check_par_args_mpi *a = v;
    if (!a) { /* the same on every rank when no rank has args: no collective */
        binding_fail(SHEAF_E_ARG, "%s: sion_file_check_par_cb_mpi: no arguments (sion_file_check_par_args_init_mpi)",
                     fname ? fname : "(null)");
        binding_report_error(-1);
        return SION_NOT_SUCCESS;
    }
    sion_int64 chunksize = 0;
    sion_int32 fsblksize = -1;
    int globalrank = -1, numfiles = a->numfiles;
    MPI_Comm lc = a->lComm;
    int was = sheaf_set_error_printing(0); /* a check, not an error (SIONlib suppresses them too) */
    int sid = sion_paropen_mpi(fname, a->file_mode, &numfiles, a->gComm, lc == MPI_COMM_NULL ? NULL : &lc, &chunksize,
                               &fsblksize, &globalrank, NULL, NULL);
    int ok = sid >= 0 && sion_parclose_mpi(sid) == SION_SUCCESS;
    if (sid >= 0 && lc != a->lComm && lc != MPI_COMM_NULL) /* files=auto hands out the file's ranks */
        MPI_Comm_free(&lc);
    sheaf_set_error_printing(was);
    return ok ? SION_SUCCESS : SION_NOT_SUCCESS;
}
