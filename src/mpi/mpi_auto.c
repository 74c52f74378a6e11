/* mpi_auto.c - the mode key files=auto of sion_paropen_mpi (sion_mpi.h). */
#include "mpi_internal.h"
#ifdef SHEAF_HAVE_FGFS
#include "sheaf_fgfs_mpi.h"
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- files=auto: one physical file per storage group ---------------------
 * The groups come from FGFS (libsheaf_fgfs_mpi): the parallel descriptor of
 * the container's directory over gComm (FGFS duplicates it for itself). Ranks that resolve the
 * directory to the same global name (file://HOST/... for node-local storage,
 * nfs://SERVER:/EXPORT/... and so on for shared storage) share its storage
 * and form one group; groups are numbered 0..ngroups-1 by FGFS. */

/* Remove the token "files=auto" from mode: *out is a malloc'd copy without
 * it (*found = 1) or NULL when the token is absent (*found = 0). Other
 * files=... values stay, and core_mode_parse refuses them. */
int mpi_mode_strip_auto(const char *mode, char **out, int *found)
{
    *out = NULL;
    *found = 0;
    if (!mode)
        return 0;
    char *o = malloc(strlen(mode) + 1);
    if (!o)
        return binding_fail(SHEAF_E_NOMEM, "out of memory");
    size_t k = 0;
    for (const char *p = mode;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == 10 && !strncmp(p, "files=auto", 10)) {
            *found = 1;
        } else if (len) {
            if (k)
                o[k++] = ',';
            memcpy(o + k, p, len);
            k += len;
        }
        if (!end)
            break;
        p = end + 1;
    }
    o[k] = '\0';
    if (!*found) {
        free(o);
        return 0;
    }
    *out = o;
    return 0;
}

#ifdef SHEAF_HAVE_FGFS
/* Directory of fname (malloc'd; NULL: out of memory). */
static char *dir_of(const char *fname)
{
    const char *sl = strrchr(fname, '/');
    if (!sl)
        return strdup(".");
    if (sl == fname)
        return strdup("/");
    size_t n = (size_t)(sl - fname);
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, fname, n);
        d[n] = '\0';
    }
    return d;
}

static int fgfs_code(int frc)
{
    return frc == SHEAF_FGFS_ENOMEM ? SHEAF_E_NOMEM : frc == SHEAF_FGFS_EINVAL ? SHEAF_E_ARG : SHEAF_E_IO;
}
#endif

/* The storage group of this rank for the directory of fname. Collective
 * over comm (gComm): with FGFS, one MPI_Comm_dup (FGFS's
 * private communicator) + 1 agreement (one MPI_Allreduce), FGFS init (its
 * agreement, one MPI_Allreduce; it parses the mount table: /proc/self/mountinfo or
 * $SHEAF_FGFS_MOUNTINFO), the parallel descriptor (1 reduce + 1 bcast of the
 * table of distinct names: about 70 bytes per group, bounded by FGFS's
 * max_group_bytes, 1 MiB), MPI_Comm_free, and 1 agreement. Returns 0 on
 * every rank or a failure on every rank, with the message of the first rank
 * that failed. Without FGFS: fails on every rank (no communication). */
int mpi_auto_groups(const char *call, const char *fname, MPI_Comm comm, auto_desc *d)
{
#ifndef SHEAF_HAVE_FGFS
    (void)comm;
    (void)d;
    return binding_fail(SHEAF_E_ARG,
                        "%s: %s: files=auto needs FGFS (libsheaf_fgfs, which tells the ranks that "
                        "share storage), and this sheaf was built without it (SHEAF_FGFS off: xxhash.h was not "
                        "found at build time); give numFiles or lComm instead",
                        fname, call);
#else
    char *dir = dir_of(fname);
    int lrc = dir ? 0 : binding_fail(SHEAF_E_NOMEM, "%s: %s: out of memory", fname, call);
    sheaf_fgfs_comm fc;
    int frc = sheaf_fgfs_comm_mpi(comm, &fc); /* taken part in even after a local failure */
    if (frc && !lrc)
        lrc = binding_fail(fgfs_code(frc), "%s: %s: files=auto: %s", fname, call, sheaf_fgfs_last_error());
    int arc = mpi_agree(call, fname, comm, lrc, NULL);
    if (arc) {
        if (!frc)
            fc.ops->free_comm(&fc);
        free(dir);
        return arc;
    }
    /* init and the descriptor fail on every rank or on none: the rank that
     * failed has its own message, the others EREMOTE */
    sheaf_fgfs_ctx *ctx = NULL;
    sheaf_fgfs_pardesc pd;
    memset(&pd, 0, sizeof pd);
    frc = sheaf_fgfs_init(&fc, NULL, &ctx);
    if (!frc)
        frc = sheaf_fgfs_pardesc_of(ctx, dir, &pd);
    if (ctx)
        sheaf_fgfs_finalize(ctx);
    fc.ops->free_comm(&fc);
    lrc = 0;
    if (frc && frc != SHEAF_FGFS_EREMOTE)
        lrc = binding_fail(fgfs_code(frc),
                           "%s: %s: files=auto: FGFS cannot tell which ranks share the storage of "
                           "%s: %s",
                           fname, call, dir, sheaf_fgfs_last_error());
    arc = mpi_agree(call, fname, comm, lrc, NULL);
    if (!arc && frc) /* every rank saw EREMOTE: not expected, but never go on */
        arc = binding_fail(SHEAF_E_IO,
                           "%s: %s: files=auto: FGFS cannot tell which ranks share the storage of %s: "
                           "%s",
                           fname, call, dir, sheaf_fgfs_last_error());
    free(dir);
    d->group = pd.group;
    d->ngroups = pd.ngroups;
    return arc;
#endif
}

/* files=auto, write: the ranks of this rank's storage group form its local
 * communicator; when numFiles (req) asks for more files than there are
 * groups, each group is cut into k = req / ngroups contiguous pieces (at
 * most one per rank, in rank order). One MPI_Comm_split over comm (two with
 * k > 1). Local result: *lc (MPI_ERRORS_RETURN) or MPI_COMM_NULL and a
 * failure; the caller agrees. */
int mpi_auto_split_write(const char *call, const char *fname, MPI_Comm comm, int rank, const auto_desc *d, int req,
                         MPI_Comm *lc)
{
    *lc = MPI_COMM_NULL;
    MPI_Comm gc = MPI_COMM_NULL;
    int rc = MPI_Comm_split(comm, d->group, rank, &gc);
    if (rc != MPI_SUCCESS)
        return mpi_fail(call, fname, SHEAF_E_IO, "files=auto: MPI_Comm_split by storage group failed", rc);
    int k = d->ngroups > 0 && req > d->ngroups ? req / d->ngroups : 1;
    if (k > 1) {
        int gr = 0, gs = 1, f = 0, lr = 0, ls = 0;
        MPI_Comm_rank(gc, &gr);
        MPI_Comm_size(gc, &gs);
        mpi_split_by_count(gr, gs, k < gs ? k : gs, &f, &lr, &ls);
        rc = MPI_Comm_split(gc, f, gr, lc);
        MPI_Comm_free(&gc);
        if (rc != MPI_SUCCESS) {
            *lc = MPI_COMM_NULL;
            return mpi_fail(call, fname, SHEAF_E_IO, "files=auto: MPI_Comm_split of a storage group failed", rc);
        }
    } else {
        *lc = gc;
    }
    MPI_Comm_set_errhandler(*lc, MPI_ERRORS_RETURN);
    return 0;
}

/* files=auto, read, rank 0: with every rank's storage group (grp) and the
 * set's layout (m), fill fl (3 ints per rank: verdict, physical file, local
 * rank; file -1: nothing to check) and return the verdict: are the tasks of
 * each physical file in one storage group now? */
static int judge_placement(const char *call, const char *fname, int size, const auto_desc *d, const int *grp,
                           const sheaf__binding_v2_set *mp, int *fl, int lrc)
{
    const sheaf__binding_v2_set m = *mp;
    int nf = m.nfiles > 1 ? m.nfiles : 1;
    /* tasks of the set: file 0's own for a single file, else the
     * mapping's; a set of another size, or a broken mapping, is left to
     * the generic open's own message (file -1: nothing to check here) */
    int judge = !lrc && (nf == 1 ? m.ntasks == size : m.mapping && m.mapping_size == size);
    for (int g = 0; g < size; g++) {
        int f = nf > 1 && judge ? m.mapping[2 * g] : 0, l = nf > 1 && judge ? m.mapping[2 * g + 1] : g;
        if (f < 0 || f >= nf)
            judge = 0;
        fl[3 * g + 1] = f;
        fl[3 * g + 2] = l;
    }
    int *first = judge ? malloc((size_t)nf * sizeof *first) : NULL;
    if (judge && !first && !lrc)
        lrc = binding_fail(SHEAF_E_NOMEM, "%s: %s: out of memory", fname, call);
    for (int f = 0; first && f < nf; f++)
        first[f] = -1;
    for (int g = 0; first && g < size && !lrc; g++) {
        int f = fl[3 * g + 1];
        if (first[f] < 0)
            first[f] = g;
        else if (grp[first[f]] != grp[g])
            lrc = binding_fail(SHEAF_E_ARG,
                               "%s: %s: files=auto: physical file %d of %d was written by tasks that "
                               "shared its storage, but in this run its tasks %d and %d are in different storage "
                               "groups (of %d): the ranks are placed on the nodes differently from the run that "
                               "wrote the set. Read it with the writer's placement (the same ranks on each node), "
                               "or copy the physical files to storage all ranks share",
                               fname, call, f, nf, first[f], g, d->ngroups);
    }
    free(first);
    for (int g = 0; g < size; g++) {
        fl[3 * g] = lrc;
        if (!judge)
            fl[3 * g + 1] = fl[3 * g + 2] = -1;
    }
    return lrc;
}

/* files=auto, read: the master of each physical file checks that it can
 * read the file (mine: verdict, file, local rank). */
static int master_check(const char *call, const char *fname, int rank, const int mine[3])
{
    if (mine[0] || mine[1] < 0 || mine[2] != 0)
        return 0;
    char *path = binding_member_name(fname, mine[1]);
    int e = 0, lrc = 0;
    if (!path)
        lrc = binding_fail(SHEAF_E_NOMEM, "%s: %s: out of memory", fname, call);
    else if (access(path, R_OK) != 0 && (e = errno) != 0)
        lrc = binding_fail(e == ENOENT ? SHEAF_E_NOTFOUND : SHEAF_E_IO,
                           "%s: %s: files=auto: rank %d, the master of physical file %d, cannot read %s in its "
                           "storage (%s); on node-local storage a set is read with the ranks placed on the nodes "
                           "as when it was written",
                           fname, call, rank, mine[1], path, strerror(e));
    free(path);
    return lrc;
}

/* files=auto, read: can every rank read its physical file in its storage?
 * Rank 0 reads the metadata of file 0 (the generic open reads it again) and
 * (1 agreement) checks, with every rank's storage group (1 MPI_Gather), that
 * the tasks of each physical file are in one storage group now, as they were
 * when the set was written (on node-local storage: the same ranks on each
 * node). Each rank gets the verdict and its (file, local rank) (1
 * MPI_Scatter of 3 ints), the master of each file checks that the file is
 * there (access), the ranks of each file are split off (MPI_Comm_split) into
 * *lc, and 1 agreement ends it. Returns 0 on every rank (*lc set) or a
 * failure on every rank (*lc MPI_COMM_NULL), with the message of the first
 * rank that failed. */
int mpi_auto_read_check(const char *call, const char *fname, MPI_Comm comm, int rank, int size, const auto_desc *d,
                        MPI_Comm *lc)
{
    int *grp = NULL, *fl = NULL, mine[3] = {0, -1, -1}, lrc = 0;
    sheaf__binding_v2_set m;
    memset(&m, 0, sizeof m);
    m.mapping_size = -1;
    *lc = MPI_COMM_NULL;
    if (rank == 0) {
        int mrc;
        if (!(grp = malloc((size_t)size * sizeof *grp)) || !(fl = malloc((size_t)size * 3 * sizeof *fl)))
            lrc = binding_fail(SHEAF_E_NOMEM, "%s: %s: out of memory", fname, call);
        else if ((mrc = binding_set_read(fname, &m)) != 0) {
            char why[1024];
            snprintf(why, sizeof why, "%s", sheaf_last_error());
            lrc = binding_fail(mrc,
                               "%s: %s: files=auto: rank 0 cannot read the first physical file of the set in its "
                               "storage (%s); on node-local storage a set is read with the ranks placed on the nodes "
                               "as when it was written (rank 0 on the node of the first file)",
                               fname, call, why);
        }
    }
    if ((lrc = mpi_agree(call, fname, comm, lrc, NULL)) != 0) {
        free(grp);
        free(fl);
        free(m.mapping);
        return lrc;
    }
    int one = d->group, rc = MPI_Gather(&one, 1, MPI_INT, grp, 1, MPI_INT, 0, comm);
    if (rc != MPI_SUCCESS)
        lrc = mpi_fail(call, fname, SHEAF_E_IO, "files=auto: MPI_Gather of the storage groups failed", rc);
    if (rank == 0)
        lrc = judge_placement(call, fname, size, d, grp, &m, fl, lrc);
    free(grp);
    free(m.mapping);
    rc = MPI_Scatter(fl, 3, MPI_INT, mine, 3, MPI_INT, 0, comm);
    free(fl);
    if (rc != MPI_SUCCESS && !lrc)
        lrc = mpi_fail(call, fname, SHEAF_E_IO, "files=auto: MPI_Scatter of the physical files failed", rc);
    if (!lrc)
        lrc = master_check(call, fname, rank, mine);
    /* every rank takes part (the caller may not want *lc: it frees it) */
    rc = MPI_Comm_split(comm, mine[1] >= 0 ? mine[1] : 0, rank, lc);
    if (rc != MPI_SUCCESS) {
        *lc = MPI_COMM_NULL;
        if (!lrc)
            lrc = mpi_fail(call, fname, SHEAF_E_IO, "files=auto: MPI_Comm_split by physical file failed", rc);
    } else {
        MPI_Comm_set_errhandler(*lc, MPI_ERRORS_RETURN);
    }
    lrc = mpi_agree(call, fname, comm, lrc, NULL);
    if (lrc && *lc != MPI_COMM_NULL)
        MPI_Comm_free(lc);
    return lrc;
}
