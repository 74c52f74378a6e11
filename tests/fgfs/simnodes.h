/* simnodes.h - simulated nodes for the in-process layer (tests and bench):
 * N nodes with ppn processes each (rank r on node r / ppn), each node with
 * its own host name and a mount table injected through the API:
 *   /                ext4 (local)
 *   /proc            proc
 *   LOCAL            tmpfs, node-local, at the same path on every node
 *   LOCAL-bind       bind mount of LOCAL/sub
 *   ONE              nfs srvA:/one on every node               -> unique
 *   HALF             nfs srvA:/half on the first half, srvB:/half on the rest -> poorly, 2 groups
 *   MANY             nfs srv<node % many>:/many                -> well when many >= threshold
 * Tables are shared by the nodes that have the same one (at most 2 x many). */
#ifndef SIMNODES_H
#define SIMNODES_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sheaf_fgfs.h"

typedef struct simnodes {
    int nodes, ppn, many;
    char local[512], one[512], half[512], many_mp[512];
    sheaf_fgfs_mounts **tables; /* [2 * many]: (first half?, node % many) */
} simnodes;

static inline int simnodes_init(simnodes *s, int nodes, int ppn, int many, const char *base)
{
    s->nodes = nodes, s->ppn = ppn, s->many = many;
    snprintf(s->local, sizeof s->local, "%s/local", base);
    snprintf(s->one, sizeof s->one, "%s/one", base);
    snprintf(s->half, sizeof s->half, "%s/half", base);
    snprintf(s->many_mp, sizeof s->many_mp, "%s/many", base);
    s->tables = calloc((size_t)(2 * many), sizeof *s->tables);
    if (!s->tables)
        return -1;
    for (int h = 0; h < 2; h++)
        for (int k = 0; k < many; k++) {
            char text[4096];
            int n = snprintf(text, sizeof text,
                             "1 0 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n"
                             "2 1 0:4 / /proc rw - proc proc rw\n"
                             "3 1 0:30 / %s rw - tmpfs tmpfs rw\n"
                             "4 1 0:30 /sub %s-bind rw - tmpfs tmpfs rw\n"
                             "5 1 0:31 / %s rw - nfs srvA:/one rw\n"
                             "6 1 0:32 / %s rw - nfs %s:/half rw\n"
                             "7 1 0:33 / %s rw - nfs srv%d:/many rw\n",
                             s->local, s->local, s->one, s->half, h ? "srvB" : "srvA", s->many_mp, k);
            if (sheaf_fgfs_mounts_parse(text, (size_t)n, "simnodes", &s->tables[h * many + k]))
                return -1;
        }
    return 0;
}

static inline int simnodes_node(const simnodes *s, int rank) { return rank / s->ppn; }
static inline const sheaf_fgfs_mounts *simnodes_table(const simnodes *s, int rank)
{
    int node = simnodes_node(s, rank);
    return s->tables[(node >= s->nodes / 2 ? 1 : 0) * s->many + node % s->many];
}
static inline void simnodes_host(const simnodes *s, int rank, char *buf, size_t n)
{
    snprintf(buf, n, "node%d", simnodes_node(s, rank));
}
static inline void simnodes_free(simnodes *s)
{
    for (int i = 0; s->tables && i < 2 * s->many; i++)
        sheaf_fgfs_mounts_free(s->tables[i]);
    free(s->tables);
}
#endif
