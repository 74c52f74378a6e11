/* f77_data.c - the untyped calls of SIONlib's Fortran 77 interface: a
 * program calls LFSION_WRITE(BUFFER, SIZE, NITEMS, SID, RC) with any BUFFER
 * and no interface, so the routine receives a bare address, which C takes
 * whatever its type. The typed names (LFSION_WRITE_INTEGER, ..._LOGICAL)
 * are the same routines under SIONlib's names. With SHEAF_F77_MPI this file
 * gives LFSION_COLL_FWRITE_MPI / _FREAD_MPI and their typed names instead
 * (libsheaf_f77_mpi). Sizes are INTEGER*8, SID an INTEGER, RC the items
 * done (INTEGER*8); a negative size gives 0 items, as the Fortran 90
 * interface (a collective call still takes part, with zero bytes). The
 * symbol names come from CMake's FortranCInterface (f77_mangle.h). */
#include <stddef.h>
#include <stdint.h>
#include "sion.h"
#include "f77_mangle.h"

#define F77_API __attribute__((visibility("default")))
#define F77_ARGS const int64_t *size, const int64_t *nitems, const int *sid, int64_t *rc

static int f77_sizes_ok(const int64_t *size, const int64_t *nitems) { return *size >= 0 && *nitems >= 0; }

#ifndef SHEAF_F77_MPI

static void f77_write(const void *data, F77_ARGS)
{
    *rc = f77_sizes_ok(size, nitems) ? (int64_t)sion_fwrite(data, (size_t)*size, (size_t)*nitems, *sid) : 0;
}

static void f77_read(void *data, F77_ARGS)
{
    *rc = f77_sizes_ok(size, nitems) ? (int64_t)sion_fread(data, (size_t)*size, (size_t)*nitems, *sid) : 0;
}

#define F77_WRITE(lower, UPPER)                                                                                        \
    F77_API void FC_GLOBAL_(lower, UPPER)(const void *data, F77_ARGS) { f77_write(data, size, nitems, sid, rc); }
#define F77_READ(lower, UPPER)                                                                                         \
    F77_API void FC_GLOBAL_(lower, UPPER)(void *data, F77_ARGS) { f77_read(data, size, nitems, sid, rc); }

/* byte-reverse n elements of size bytes from source into target when
 * aflag /= 0, else copy; rc = 1 (0 for a negative size or count) */
F77_API void FC_GLOBAL_(lfsion_swap, LFSION_SWAP)(void *target, void *source, const int *size, const int *n,
                                                  const int *aflag, int *rc)
{
    *rc = 0;
    if (*size < 0 || *n < 0)
        return;
    sion_swap(target, source, *size, *n, *aflag);
    *rc = 1;
}

/* clang-format off */
F77_WRITE(lfsion_write, LFSION_WRITE)
F77_WRITE(lfsion_fwrite, LFSION_FWRITE)
F77_READ(lfsion_read, LFSION_READ)
F77_READ(lfsion_fread, LFSION_FREAD)
F77_WRITE(lfsion_write_integer, LFSION_WRITE_INTEGER)
F77_WRITE(lfsion_fwrite_integer, LFSION_FWRITE_INTEGER)
F77_READ(lfsion_read_integer, LFSION_READ_INTEGER)
F77_READ(lfsion_fread_integer, LFSION_FREAD_INTEGER)
F77_WRITE(lfsion_write_character, LFSION_WRITE_CHARACTER)
F77_WRITE(lfsion_fwrite_character, LFSION_FWRITE_CHARACTER)
F77_READ(lfsion_read_character, LFSION_READ_CHARACTER)
F77_READ(lfsion_fread_character, LFSION_FREAD_CHARACTER)
F77_WRITE(lfsion_write_real, LFSION_WRITE_REAL)
F77_WRITE(lfsion_fwrite_real, LFSION_FWRITE_REAL)
F77_READ(lfsion_read_real, LFSION_READ_REAL)
F77_READ(lfsion_fread_real, LFSION_FREAD_REAL)
F77_WRITE(lfsion_write_double, LFSION_WRITE_DOUBLE)
F77_WRITE(lfsion_fwrite_double, LFSION_FWRITE_DOUBLE)
F77_READ(lfsion_read_double, LFSION_READ_DOUBLE)
F77_READ(lfsion_fread_double, LFSION_FREAD_DOUBLE)
F77_WRITE(lfsion_write_complex, LFSION_WRITE_COMPLEX)
F77_WRITE(lfsion_fwrite_complex, LFSION_FWRITE_COMPLEX)
F77_READ(lfsion_read_complex, LFSION_READ_COMPLEX)
F77_READ(lfsion_fread_complex, LFSION_FREAD_COMPLEX)
F77_WRITE(lfsion_write_logical, LFSION_WRITE_LOGICAL)
F77_WRITE(lfsion_fwrite_logical, LFSION_FWRITE_LOGICAL)
F77_READ(lfsion_read_logical, LFSION_READ_LOGICAL)
F77_READ(lfsion_fread_logical, LFSION_FREAD_LOGICAL)
/* clang-format on */

#else /* SHEAF_F77_MPI: the collective calls */

#include <mpi.h>
#include "sion_mpi.h"

/* a refused size still takes part in the collective, with zero bytes */
static void f77_coll_write(const void *data, F77_ARGS)
{
    int ok = f77_sizes_ok(size, nitems);
    size_t done = sion_coll_fwrite_mpi(data, ok ? (size_t)*size : 0, ok ? (size_t)*nitems : 0, *sid);
    *rc = ok ? (int64_t)done : 0;
}

static void f77_coll_read(void *data, F77_ARGS)
{
    int ok = f77_sizes_ok(size, nitems);
    size_t done = sion_coll_fread_mpi(data, ok ? (size_t)*size : 0, ok ? (size_t)*nitems : 0, *sid);
    *rc = ok ? (int64_t)done : 0;
}

#define F77_CWRITE(lower, UPPER)                                                                                       \
    F77_API void FC_GLOBAL_(lower, UPPER)(const void *data, F77_ARGS) { f77_coll_write(data, size, nitems, sid, rc); }
#define F77_CREAD(lower, UPPER)                                                                                        \
    F77_API void FC_GLOBAL_(lower, UPPER)(void *data, F77_ARGS) { f77_coll_read(data, size, nitems, sid, rc); }

/* clang-format off */
F77_CWRITE(lfsion_coll_fwrite_mpi, LFSION_COLL_FWRITE_MPI)
F77_CREAD(lfsion_coll_fread_mpi, LFSION_COLL_FREAD_MPI)
F77_CWRITE(lfsion_coll_fwrite_mpi_integer, LFSION_COLL_FWRITE_MPI_INTEGER)
F77_CREAD(lfsion_coll_fread_mpi_integer, LFSION_COLL_FREAD_MPI_INTEGER)
F77_CWRITE(lfsion_coll_fwrite_mpi_character, LFSION_COLL_FWRITE_MPI_CHARACTER)
F77_CREAD(lfsion_coll_fread_mpi_character, LFSION_COLL_FREAD_MPI_CHARACTER)
F77_CWRITE(lfsion_coll_fwrite_mpi_real, LFSION_COLL_FWRITE_MPI_REAL)
F77_CREAD(lfsion_coll_fread_mpi_real, LFSION_COLL_FREAD_MPI_REAL)
F77_CWRITE(lfsion_coll_fwrite_mpi_double, LFSION_COLL_FWRITE_MPI_DOUBLE)
F77_CREAD(lfsion_coll_fread_mpi_double, LFSION_COLL_FREAD_MPI_DOUBLE)
F77_CWRITE(lfsion_coll_fwrite_mpi_complex, LFSION_COLL_FWRITE_MPI_COMPLEX)
F77_CREAD(lfsion_coll_fread_mpi_complex, LFSION_COLL_FREAD_MPI_COMPLEX)
F77_CWRITE(lfsion_coll_fwrite_mpi_logical, LFSION_COLL_FWRITE_MPI_LOGICAL)
F77_CREAD(lfsion_coll_fread_mpi_logical, LFSION_COLL_FREAD_MPI_LOGICAL)
/* clang-format on */

#endif
