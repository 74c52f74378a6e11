/* bed_tables_check.c - the namespace test bed at 8 nodes without 8 MPI ranks:
 * the mount tables captured inside each simulated node
 * (/proc/self/mountinfo as the node sees it) are given to NODES x PPN
 * processes of the in-process layer, each with its node's host name.
 *   bed_tables_check NODES PPN MNTDIR TABLEDIR   (TABLEDIR/nodeK.mountinfo)
 * Checks in sync and async mode: local and bind -> fully distributed; one ->
 * unique; half-same and half-diff -> poorly distributed, 2 groups,
 * representatives 0 and NODES/2 x PPN. (Bytes live inside the namespaces:
 * consistency is checked by mpi_fgfs_check.) Exit 0 when all hold. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sheaf_fgfs.h"

typedef struct bed {
    int nodes, ppn, failures;
    const char *mnt;
    sheaf_fgfs_mounts **t;
} bed;

#define CHECK(c)                                                                                                       \
    do {                                                                                                               \
        if (!(c)) {                                                                                                    \
            fprintf(stderr, "rank %d: check failed: %s: %s\n", rank, #c, sheaf_fgfs_last_error());                     \
            b->failures++;                                                                                             \
        }                                                                                                              \
    } while (0)

static int proc(sheaf_fgfs_comm *c, int rank, void *arg)
{
    bed *b = arg;
    int node = rank / b->ppn, P = b->nodes * b->ppn;
    char host[32], p[5][600];
    const char *sub[5] = {"local/sub/f", "bind/f", "one/data", "half-same/data", "half-diff/data"};
    const sheaf_fgfs_class want[5] = {SHEAF_FGFS_FULLY, SHEAF_FGFS_FULLY, SHEAF_FGFS_UNIQUE, SHEAF_FGFS_POORLY,
                                      SHEAF_FGFS_POORLY};
    snprintf(host, sizeof host, "node%d", node);
    for (int i = 0; i < 5; i++)
        snprintf(p[i], sizeof p[i], "%s/%s", b->mnt, sub[i]);
    for (int mode = 0; mode < 2; mode++) {
        sheaf_fgfs_config cfg = {mode, 0, 0, 0, b->t[node], host, SHEAF_FGFS_NOREALPATH, NULL};
        sheaf_fgfs_ctx *ctx = NULL;
        sheaf_fgfs_status st;
        sheaf_fgfs_pardesc d;
        if (sheaf_fgfs_init(c, &cfg, &ctx)) {
            CHECK(!"init");
            continue;
        }
        for (int i = 0; i < 5; i++) {
            CHECK(sheaf_fgfs_status_of(ctx, p[i], &st) == 0 && st.cls == want[i]);
            if (rank == 0)
                printf("%s %d nodes x %d: %-15s %s\n", mode ? "async" : "sync ", b->nodes, b->ppn, sub[i],
                       st.cls == want[i] ? "as expected" : "WRONG");
        }
        CHECK(sheaf_fgfs_pardesc_of(ctx, p[0], &d) == 0 && d.ngroups == b->nodes && d.rep == node * b->ppn);
        CHECK(sheaf_fgfs_pardesc_of(ctx, p[3], &d) == 0 && d.ngroups == 2 && d.group_size == P / 2 &&
              d.rep == (node >= b->nodes / 2 ? (b->nodes / 2) * b->ppn : 0));
        sheaf_fgfs_finalize(ctx);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: bed_tables_check NODES PPN MNTDIR TABLEDIR\n");
        return 2;
    }
    bed b = {atoi(argv[1]), atoi(argv[2]), 0, argv[3], NULL};
    b.t = calloc((size_t)b.nodes, sizeof *b.t);
    static char buf[1 << 20];
    for (int k = 0; k < b.nodes; k++) {
        char f[700];
        snprintf(f, sizeof f, "%s/node%d.mountinfo", argv[4], k);
        FILE *fp = fopen(f, "r");
        size_t n = fp ? fread(buf, 1, sizeof buf, fp) : 0;
        if (fp)
            fclose(fp);
        if (sheaf_fgfs_mounts_parse(buf, n, f, &b.t[k])) {
            fprintf(stderr, "%s\n", sheaf_fgfs_last_error());
            return 1;
        }
    }
    int rc = sheaf_fgfs_sim_run(b.nodes * b.ppn, 0, proc, &b, NULL);
    for (int k = 0; k < b.nodes; k++)
        sheaf_fgfs_mounts_free(b.t[k]);
    free(b.t);
    printf("bed_tables_check: %d nodes x %d: %s\n", b.nodes, b.ppn, rc || b.failures ? "FAILED" : "OK");
    return rc || b.failures ? 1 : 0;
}
