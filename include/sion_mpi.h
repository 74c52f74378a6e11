/* sion_mpi.h - the MPI layer (libsheaf_mpi): open containers collectively over
 * an MPI communicator. Include <mpi.h> before sion.h (or compile with
 * -DSION_MPI, as `sionconfig --cflags --mpi` does) to get these calls.
 *
 * Built on the generic API (sion_generic.h): the MPI layer registers MPI
 * callbacks (MPI_Gather, MPI_Scatterv, MPI_Bcast, ...) once and forwards to
 * sion_generic_paropen; the collective counts and the error agreement stated
 * there hold here. All calls are collective over gComm and must be called by
 * every rank of gComm; a failure on one rank is a failure on all.
 * Thread-safety: call from one thread per process (MPI_THREAD_FUNNELED is
 * enough); different sids may then be used from different threads.
 * Resources: each open duplicates gComm (MPI_ERRORS_RETURN is set on the
 * copy, gComm itself is not changed) and splits one communicator per
 * physical file off it; the close frees both, so close every sid before
 * MPI_Finalize. Link: -lsheaf_mpi -lsheaf (CMake: sheaf::sheaf_mpi). */
#ifndef SION_MPI_H
#define SION_MPI_H
#include "sheaf_export.h"
#include <mpi.h>
#include <stdio.h>
#include "sion_datatypes.h"
#include "sion_datatypes_mpi.h"
#ifdef __cplusplus
extern "C" {
#endif

/* Open a container over gComm.
 * Write (without files=auto, below): *numFiles > 0 cuts gComm into
 *   numFiles contiguous rank ranges of size/numFiles ranks (the remainder
 *   joins the last file; lComm is not used and may be NULL, which SIONlib
 *   1.7 refuses); *numFiles <= 0
 *   uses *lComm (a partition of gComm; one physical file per local
 *   communicator, numbered in the order their rank-0 tasks appear in gComm)
 *   and sets *numFiles. *chunksize >= 0 per rank (rounded up to the block
 *   size inside; the caller's value is not changed, as in SIONlib);
 *   *fsblksize -1 = detected once by rank 0 and broadcast.
 * Read: *numFiles, *chunksize, *fsblksize are outputs; the size of gComm must
 *   equal the number of tasks that wrote the container (otherwise the call
 *   fails on all ranks, naming both counts: use sion_paropen_mapped_mpi).
 * Both: *globalrank is overwritten with the rank in gComm; *fileptr gets the
 *   FILE* in ansi mode (NULL in posix mode); *newfname (if newfname != NULL)
 *   a malloc'd name of this rank's physical file.
 * All ranks must pass the same read/write mode, numFiles (> 0, or <= 0 with
 *   lComm), fsblksize and mode keys (keyval, checksum, collective, collsize,
 *   cmerge, buddy, endianness, files=auto); otherwise the open fails on every
 *   rank with a message naming the disagreement (chunk sizes may differ).
 * Mode key files=auto (sheaf; needs FGFS, libsheaf_fgfs_mpi, doc/fgfs.md):
 *   the physical files follow the storage the ranks share. FGFS's parallel
 *   descriptor of the container's directory (dirname of fname) over gComm
 *   groups the ranks that resolve it to the same global name: one group per
 *   node on node-local storage (tmpfs, local disk: file://HOST/...), one
 *   group on storage all ranks share (nfs://SERVER:/..., lustre://..., ...),
 *   one per server in between. The mount table is /proc/self/mountinfo (or
 *   $SHEAF_FGFS_MOUNTINFO), the host name gethostname (or $SHEAF_FGFS_HOST).
 *   Write: each group writes its own physical file (SIONlib's names: fname
 *   for file 0, fname.000001, ...; files numbered by their lowest rank, so
 *   file 0 holds rank 0), created by the group's master in the group's
 *   storage. *numFiles (may be NULL) asks for at least that many files: a
 *   group gets max(1, *numFiles / groups) files (contiguous in its rank
 *   order, at most one per rank), so shared storage gives *numFiles files
 *   and anything <= the number of groups one file per group; the number made
 *   is written back. lComm is an output (the input is not used): NULL, or
 *   *lComm receives a new communicator of the ranks of this rank's physical
 *   file, which the caller frees (MPI_Comm_free) when done.
 *   Read: the set is found again from file 0 as always, and the open checks
 *   first that it can be read here: rank 0 must see file 0 in its storage,
 *   the tasks of each physical file must be in one storage group now (on
 *   node-local storage: the ranks placed on the nodes as by the writer), and
 *   each file's master must see its file; otherwise the open fails on every
 *   rank with a message saying which. *numFiles and *lComm (if not NULL) are
 *   outputs as for writing. A set copied to storage all ranks share reads
 *   with any placement.
 *   Cost on top of the open: one MPI_Comm_dup and MPI_Comm_free (FGFS's
 *   communicator), FGFS init (1 reduce + 1 bcast of 32 bytes; each rank
 *   parses its mount table), the descriptor (binomial-tree reduce + bcast of
 *   the table of distinct names: 10 bytes + the name per group, at most
 *   1 MiB, so with 60-byte names it fails with ELIMIT beyond ~15,000
 *   groups), 2 agreements (MPI_Allreduce of 5 ints; + 1 MPI_Bcast of the
 *   message on failure). Writing: 1 MPI_Comm_split (2 when a group gets
 *   several files) and 1 agreement, then the numbering of an lComm open (1
 *   MPI_Allreduce, 1 MPI_Exscan, 1 MPI_Bcast per file, 1 agreement).
 *   Reading: 1 MPI_Gather + 1 MPI_Scatter (3 ints per rank), an access()
 *   per master, 1 MPI_Comm_split, 2 agreements, and rank 0 reads file 0's
 *   metadata once more (O(P) memory there, as in the open itself). Not with buddy (refused). Without FGFS in the build, and
 *   anywhere but sion_paropen_mpi (serial, generic, mapped, hybrid opens),
 *   files=auto fails with a message; so does any other files= value.
 *   Not detected: a stale physical file of another set with the same shape
 *   and name in a group's storage (the format has no set identifier).
 * Returns a sid, or -1 on all ranks with a message naming the file and cause. */
SHEAF_API int sion_paropen_mpi(const char *fname, const char *file_mode, int *numFiles, MPI_Comm gComm,
                               const MPI_Comm *lComm, sion_int64 *chunksize, sion_int32 *fsblksize, int *globalrank,
                               FILE **fileptr, char **newfname);
/* Collective close: write mode gathers the block tables to each file's
 * master, which writes them (file 0 also the multi-file mapping).
 * SION_SUCCESS on all ranks, or SION_NOT_SUCCESS on all ranks. A sid that is
 * not open (a second close) gives SION_ID_NOT_VALID (-1), as in SIONlib. */
SHEAF_API int sion_parclose_mpi(int sid);
/* Write mode: restart with a new chunk size (data written so far are dropped).
 * Collective over the gComm of the open; SION_SUCCESS or SION_NOT_SUCCESS on
 * all ranks. */
SHEAF_API int sion_parreinit_mpi(int sid, sion_int64 chunksize);

/* One rank handles several logical tasks (arguments and outputs as in
 * sion_generic_paropen_mapped; gsize/grank are those of gComm). Returns a sid
 * or -1 on all ranks; close with sion_parclose_mapped_mpi. */
SHEAF_API int sion_paropen_mapped_mpi(char *fname, const char *file_mode, int *numFiles, MPI_Comm gComm,
                                      int *nlocaltasks, int **globalranks, sion_int64 **chunksizes,
                                      int **mapping_filenrs, int **mapping_lranks, sion_int32 *fsblksize,
                                      FILE **fileptr);
SHEAF_API int sion_parclose_mapped_mpi(int sid);

/* File check (SIONlib 1.7; used by checkpoint libraries such as SCR to ask
 * whether a container can be opened). sion_file_check_par_args_init_mpi
 * keeps a copy of file_mode and the communicators/numFiles for the check;
 * NULL when out of memory. sion_file_check_par_cb_mpi(fname, args) is
 * collective over args' gComm: it opens fname with sion_paropen_mpi in that
 * mode (errors not printed), closes it again, and returns SION_SUCCESS (1)
 * when the open worked, SION_NOT_SUCCESS (0) otherwise, the same on every
 * rank. As in SIONlib, a write mode ("bw") really creates (truncates) the
 * file; use a read mode ("br", "br,buddy") to check a checkpoint.
 * sion_file_check_par_args_free_mpi releases args (NULL is fine) and returns
 * SION_SUCCESS. The caller keeps ownership of the communicators. */
typedef struct _sion_file_check_par_args_mpi_struct sion_file_check_par_args_mpi;
SHEAF_API sion_file_check_par_args_mpi *sion_file_check_par_args_init_mpi(const char *file_mode, MPI_Comm gComm,
                                                                          int numfiles, MPI_Comm lComm);
SHEAF_API int sion_file_check_par_args_free_mpi(sion_file_check_par_args_mpi *args);
SHEAF_API int sion_file_check_par_cb_mpi(char *fname, void *args);

/* Old names of sion_coll_fwrite / sion_coll_fread. */
SHEAF_API size_t sion_coll_fwrite_mpi(const void *data, size_t size, size_t nitems, int sid);
SHEAF_API size_t sion_coll_fread_mpi(void *data, size_t size, size_t nitems, int sid);

/* Deprecated (SIONlib 1.x): _comms sets *numFiles = 0 and uses lComm;
 * _multi forwards unchanged. newfname, if not NULL, receives the physical
 * file name (at most SION_FILENAME_LENGTH bytes including the NUL). */
SHEAF_API int sion_paropen_comms_mpi(char *fname, const char *file_mode, int *numFiles, MPI_Comm gComm, MPI_Comm lComm,
                                     sion_int64 *chunksize, sion_int32 *fsblksize, int *globalrank, FILE **fileptr,
                                     char *newfname);
SHEAF_API int sion_paropen_multi_mpi(char *fname, const char *file_mode, int *numFiles, MPI_Comm gComm, MPI_Comm *lComm,
                                     sion_int64 *chunksize, sion_int32 *fsblksize, int *globalrank, FILE **fileptr,
                                     char *newfname);

#ifdef __cplusplus
}
#endif
#endif
