/* mpi_fgfs_check.c - FGFS over MPI on simulated nodes (scripts/fgfs-testbed.sh:
 * one mount + UTS namespace per node) or on injected mount tables.
 *   mpiexec -n P mpi_fgfs_check NODES PPN MNTDIR [injected]
 * Rank r is on node r / PPN. MNTDIR has local, bind, one, half-same and
 * half-diff (see the test bed). Checks, in sync and async mode: local and
 * bind -> fully distributed (NODES groups, bind and its source have one
 * name); one -> unique and consistent; half-* -> poorly distributed, 2
 * groups, representatives 0 and NODES/2 x PPN; half-same consistent,
 * half-diff not, the node-local copies (different per node) not (with "injected" the bytes are the host's: not checked);
 * select: full distribution -> local, unique -> one. Rank 0 prints what it
 * found; the exit status is 1 on every rank when any check failed anywhere. */
#include <mpi.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sheaf_fgfs_mpi.h"

static int rank, failures;
#define CHECK(c)                                                                                                       \
    do {                                                                                                               \
        if (!(c)) {                                                                                                    \
            fprintf(stderr, "rank %d: check failed: %s (line %d): %s\n", rank, #c, __LINE__, sheaf_fgfs_last_error()); \
            failures++;                                                                                                \
        }                                                                                                              \
    } while (0)

static const char *cls(sheaf_fgfs_class c)
{
    static const char *n[] = {"fully-distributed", "well-distributed", "poorly-distributed", "unique"};
    return n[c];
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 4) {
        fprintf(stderr, "usage: mpi_fgfs_check NODES PPN MNTDIR [injected]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int nodes = atoi(argv[1]), ppn = atoi(argv[2]), node = rank / ppn, injected = argc > 4;
    char p_local[1024], p_bind[1024], p_sub[1024], p_one[1024], p_same[1024], p_diff[1024];
    snprintf(p_local, sizeof p_local, "%s/local/sub/f", argv[3]);
    snprintf(p_bind, sizeof p_bind, "%s/bind/f", argv[3]);
    snprintf(p_sub, sizeof p_sub, "%s/local/sub", argv[3]);
    snprintf(p_one, sizeof p_one, "%s/one/data", argv[3]);
    snprintf(p_same, sizeof p_same, "%s/half-same/data", argv[3]);
    snprintf(p_diff, sizeof p_diff, "%s/half-diff/data", argv[3]);
    sheaf_fgfs_comm comm;
    CHECK(sheaf_fgfs_comm_mpi(MPI_COMM_WORLD, &comm) == 0);
    for (int mode = 0; mode < 2; mode++) {
        sheaf_fgfs_config cfg = {mode, 0, 0, 0, NULL, NULL, 0, NULL};
        sheaf_fgfs_ctx *ctx = NULL;
        sheaf_fgfs_status st;
        sheaf_fgfs_pardesc d;
        int a;
        if (sheaf_fgfs_init(&comm, &cfg, &ctx)) {
            CHECK(!"init");
            break;
        }
        const char *paths[] = {p_local, p_bind, p_one, p_same, p_diff};
        const sheaf_fgfs_class want[] = {SHEAF_FGFS_FULLY, SHEAF_FGFS_FULLY, SHEAF_FGFS_UNIQUE,
                                         nodes > 1 ? SHEAF_FGFS_POORLY : SHEAF_FGFS_UNIQUE,
                                         nodes > 1 ? SHEAF_FGFS_POORLY : SHEAF_FGFS_UNIQUE};
        for (int i = 0; i < 5; i++) {
            int rc = sheaf_fgfs_status_of(ctx, paths[i], &st);
            CHECK(rc == 0 && st.cls == want[i]);
            if (rank == 0 && !rc)
                printf("%s %-44s %s (servers ~%.1f)\n", mode ? "async" : "sync ", paths[i], cls(st.cls), st.servers);
        }
        CHECK(sheaf_fgfs_pardesc_of(ctx, p_local, &d) == 0 && d.ngroups == nodes && d.rep == node * ppn &&
              d.group_size == ppn);
        CHECK(sheaf_fgfs_pardesc_of(ctx, p_bind, &d) == 0 && d.ngroups == nodes && d.rep == node * ppn);
        CHECK(sheaf_fgfs_pardesc_of(ctx, p_one, &d) == 0 && d.ngroups == 1 && d.rep == 0);
        if (nodes > 1) {
            CHECK(sheaf_fgfs_pardesc_of(ctx, p_same, &d) == 0 && d.ngroups == 2);
            CHECK(d.rep == (node >= nodes / 2 ? (nodes / 2) * ppn : 0));
            if (rank == 0)
                printf("%s groups of half-same: %d, representatives 0 and %d\n", mode ? "async" : "sync ", d.ngroups,
                       (nodes / 2) * ppn);
        }
        CHECK(sheaf_fgfs_is_consistent(ctx, p_one, &a) == 0 && a == 1);
        if (!injected) {
            /* node-local copies that differ (each node wrote its own name): one hash per node */
            CHECK(sheaf_fgfs_is_consistent(ctx, p_local, &a) == 0 && a == (nodes == 1));
            CHECK(sheaf_fgfs_is_consistent(ctx, p_same, &a) == 0 && a == 1);
            int rc = sheaf_fgfs_is_consistent(ctx, p_diff, &a);
            CHECK(rc == 0 && a == (nodes > 1 ? 0 : 1));
            if (rank == 0 && !rc)
                printf("%s half-same consistent, half-diff %s\n", mode ? "async" : "sync ",
                       a ? "consistent" : "NOT consistent");
        }
        /* a bind mount and its source have one global name */
        sheaf_fgfs_mounts *m = NULL;
        sheaf_fgfs_name *x = malloc(sizeof *x), *y = malloc(sizeof *y);
        CHECK(sheaf_fgfs_mounts_load(&m) == 0);
        CHECK(m && sheaf_fgfs_resolve(m, NULL, p_bind, 0, x) == 0 && sheaf_fgfs_resolve(m, NULL, p_local, 0, y) == 0 &&
              !strcmp(x->uri, y->uri));
        free(x), free(y);
        sheaf_fgfs_mounts_free(m);
        if (!injected) { /* the inverse query */
            sheaf_fgfs_criteria c = {1 << 20, SHEAF_FGFS_SPEED_ANY, SHEAF_FGFS_DIST_UNIQUE, SHEAF_FGFS_SCAL_ANY};
            sheaf_fgfs_choice ch[16];
            int n = 0;
            CHECK(sheaf_fgfs_select(ctx, &c, ch, 16, &n) == 0 && n >= 1 && strstr(ch[0].mount_point, "/one"));
            if (rank == 0 && n)
                printf("%s select unique -> %s (%s)\n", mode ? "async" : "sync ", ch[0].mount_point, ch[0].fstype);
        }
        sheaf_fgfs_finalize(ctx);
    }
    comm.ops->free_comm(&comm);
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi_fgfs_check: %d nodes x %d: %s (%d failed checks)\n", nodes, ppn, all ? "FAILED" : "OK", all);
    MPI_Finalize();
    return all ? 1 : 0;
}
