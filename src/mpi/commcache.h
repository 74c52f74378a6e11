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
 *    collective MPI_Comm_split), without a collective of the cache's own
 *    where the state is alike by construction (issue 19: on 2 cores with 16
 *    busy-polling ranks one more collective costs ~100 ms, more than the
 *    split it saves on a first open):
 *      CC_SAME: the split is a function of the user communicator and an
 *      argument agreed on every rank (a write's numFiles; a read of a
 *      one-file set: every rank in the user communicator's order). Such a
 *      key on one rank implies the whole split, and these entries live in
 *      their own list whose every change happens at the same collective call
 *      on every rank, so the lists are the same on every rank and a lookup
 *      gives the same answer everywhere. A one-file split is made with
 *      MPI_Comm_create of the user communicator's group (taken when the
 *      cache is made): the same communicator, cheaper than a split.
 *      CC_AGREE otherwise (a multi-file read's split comes from the file, a
 *      write with lComm from the caller): one agreement (sheaf_comm_agree,
 *      one MPI_Allreduce) of the local verdict and of the entry's stamp (the cache's count of splits when
 *      it was made) decides, much cheaper than a split.
 *      CC_READ: a read; CC_SAME when the set is one file, else CC_AGREE.
 *  - Every rank holds an entry or none: what a miss needs (the cache of the
 *    user communicator and the entry) is reserved by cc_reserve BEFORE the
 *    open, so that an allocation failure fails the open on every rank in the
 *    binding's own agreement (a message it sends anyway); the split then
 *    cannot leave one rank without an entry. An open that fails afterwards
 *    fails on every rank, and every rank then empties the idle entries
 *    (cc_purge). A split itself fails on every rank or none (MPI agrees on a
 *    new communicator's context id inside MPI_Comm_split; sheaf relies on it,
 *    as on any collective creating a communicator).
 *  - Thread-safe: one mutex over every cache, never held across an MPI call
 *    (the delete callbacks run inside MPI calls and take it).
 *  - SHEAF_COMM_CACHE=0 in the environment turns the cache off (every open
 *    splits and every close frees, as before; for comparisons). */
#ifndef SHEAF_MPI_COMMCACHE_H
#define SHEAF_MPI_COMMCACHE_H
#include <mpi.h>

enum { CC_MAX = 4 };

/* How the caller knows that every rank decides alike (see above). */
enum { CC_OFF = 0, CC_AGREE = 1, CC_SAME = 2, CC_READ = 3 };

/* This rank's place in a file split (the cache key). */
typedef struct cc_split {
    int numfiles, filenumber, lrank, lsize;
} cc_split;

typedef struct cc_entry cc_entry;

/* Local, before the binding's agreement of an open that will cache its
 * split: make sure user has a cache and reserve the entry a miss fills
 * (*spare; NULL when the cache is off). MPI_SUCCESS, or a failure code
 * (*spare NULL) that the binding turns into a failure of the open on every
 * rank. */
int cc_reserve(MPI_Comm user, cc_entry **spare);
/* Free a reserved entry the open did not use. */
void cc_unreserve(cc_entry *spare);

/* Collective over user: *out = the ranks of user with this rank's color
 * (MPI_UNDEFINED: MPI_COMM_NULL), ordered by key, with MPI_ERRORS_RETURN;
 * from the cache when the pair was split before and its communicator is idle.
 * A miss caches the new communicator in *spare (then NULL) when there is one.
 * *lease is the cache entry now busy (NULL: not cached, the caller frees *out
 * itself, or passes it to cc_release with a NULL lease). Returns MPI_SUCCESS
 * or the failing MPI call's code (*out MPI_COMM_NULL, *lease NULL). */
int cc_split_comm(MPI_Comm user, int how, const cc_split *s, int color, int key, cc_entry **spare, MPI_Comm *out,
                  cc_entry **lease);

#ifdef SHEAF_CC_TEST_HOOK
/* tests/mpi (a build of the MPI binding's sources with this macro): the
 * next cc_reserve on this rank fails as if out of memory. */
extern int cc_test_fail_reserve;
#endif

/* The open that leased comm is closed: the entry becomes idle (kept for the
 * next open of its pair), or comm is freed when it is not cached (lease
 * NULL, or its user communicator was freed meanwhile). */
void cc_release(cc_entry *lease, MPI_Comm comm);

/* After an open failed on every rank: free the idle entries of user's cache
 * (its state may differ between the ranks now; emptying it makes it equal). */
void cc_purge(MPI_Comm user);

#endif
