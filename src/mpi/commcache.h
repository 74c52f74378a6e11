/* commcache.h - the communicators of a (user communicator, file split) pair,
 * kept for the next open of the same pair (issue 19). Internal to the MPI
 * bindings (libsheaf_mpi and libsheaf_ompi each compile commcache.c: each
 * library has its own cache, with its own MPI attribute keys).
 *
 * A parallel open needs a local communicator per physical file: a
 * MPI_Comm_split of the user's communicator by file number, ordered by the
 * rank in the file. Creating one is the most expensive step of an open + close
 * on a busy node (at 8 ranks on a 2-core machine ~80 ms, more than the rest of
 * the open), and programs open the same container split again and again (one
 * file per checkpoint). So the split communicator is cached on the user's
 * communicator (an MPI attribute), keyed by this rank's place in the split
 * (number of files, file number, rank and size in the file):
 *
 *  - Bounded: at most CC_MAX idle or busy entries per list per user
 *    communicator (least recently used evicted, MPI_Comm_free).
 *  - Freed with the user communicator (the attribute's delete callback, also
 *    run by MPI_Comm_disconnect) and at MPI_Finalize (a delete callback on
 *    MPI_COMM_SELF, which MPI runs first thing in MPI_Finalize, deletes the
 *    attribute from every user communicator still holding a cache).
 *  - An entry in use by an open file is marked busy; an open that finds its
 *    entry busy (two files open at once on the same pair) splits a fresh
 *    communicator: no two open files ever share one, so their messages cannot
 *    interleave.
 *  - The hit or miss decision is the same on every rank (a miss is a
 *    collective MPI_Comm_split): CC_SAME when the caller guarantees it (the
 *    split is a function of the user communicator and an argument agreed on
 *    every rank, e.g. numFiles; these entries live in their own list whose
 *    every change happens at the same collective call on every rank), CC_AGREE
 *    otherwise (a read's split comes from the file: one MPI_Allreduce of the
 *    local verdict decides, much cheaper than a split).
 *  - Thread-safe: one mutex over every cache, never held across an MPI call
 *    (the delete callbacks run inside MPI calls and take it).
 *  - SHEAF_COMM_CACHE=0 in the environment turns the cache off (every open
 *    splits and every close frees, as before; for comparisons). */
#ifndef SHEAF_MPI_COMMCACHE_H
#define SHEAF_MPI_COMMCACHE_H
#include <mpi.h>

enum { CC_MAX = 4 };

/* How the caller knows that every rank decides alike (see above). */
enum { CC_OFF = 0, CC_AGREE = 1, CC_SAME = 2 };

/* This rank's place in a file split (the cache key). */
typedef struct cc_split {
    int numfiles, filenumber, lrank, lsize;
} cc_split;

typedef struct cc_entry cc_entry;

/* Collective over user: *out = the ranks of user with this rank's color
 * (MPI_UNDEFINED: MPI_COMM_NULL), ordered by key, with MPI_ERRORS_RETURN;
 * from the cache when the pair was split before and its communicator is idle.
 * *lease is the cache entry now busy (NULL: not cached, the caller frees *out
 * itself, or passes it to cc_release with a NULL lease). Returns MPI_SUCCESS
 * or the failing MPI call's code (*out MPI_COMM_NULL, *lease NULL). */
int cc_split_comm(MPI_Comm user, int how, const cc_split *s, int color, int key, MPI_Comm *out, cc_entry **lease);

/* The open that leased comm is closed: the entry becomes idle (kept for the
 * next open of its pair), or comm is freed when it is not cached (lease
 * NULL, or its user communicator was freed meanwhile). */
void cc_release(cc_entry *lease, MPI_Comm comm);

/* After an open failed on every rank: free the idle entries of user's cache
 * (its state may differ between the ranks now; emptying it makes it equal). */
void cc_purge(MPI_Comm user);

#endif
