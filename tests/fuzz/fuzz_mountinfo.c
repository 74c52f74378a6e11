/* fuzz_mountinfo.c - libFuzzer target: arbitrary bytes as /proc/self/mountinfo
 * (sheaf_fgfs_mounts_parse), then every mount point and a path below it
 * resolved to a global name (lexically, as for a table injected from
 * elsewhere). Beyond "no crash, no leak, no huge allocation": a parsed table
 * has at least one entry, every name is non-empty and its mount index is in
 * range, and every mount point resolves to a mount at least as long. */
#include "fgfs.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c)                                                                                                       \
    do {                                                                                                               \
        if (!(c)) {                                                                                                    \
            fprintf(stderr, "fuzz_mountinfo: check failed: %s (line %d)\n", #c, __LINE__);                             \
            abort();                                                                                                   \
        }                                                                                                              \
    } while (0)

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    sheaf_fgfs_mounts *m = NULL;
    if (sheaf_fgfs_mounts_parse((const char *)data, size, "fuzz", &m))
        return 0;
    int n = sheaf_fgfs_mounts_count(m);
    CHECK(n >= 1);
    sheaf_fgfs_mounts_set_loop(m, "/dev/loop0", "/img/x.sqsh");
    sheaf_fgfs_name *nm = malloc(sizeof *nm);
    for (int i = 0; nm && i < n && i < 64; i++) {
        const char *mp = sheaf_fgfs_mount_point(m, i);
        char p[4200];
        CHECK(mp && mp[0] == '/');
        for (int k = 0; k < 2; k++) {
            snprintf(p, sizeof p, k ? "%s/sub/../file x" : "%s", mp);
            if (sheaf_fgfs_resolve(m, "fuzzhost", p, SHEAF_FGFS_NOREALPATH, nm) == 0) {
                CHECK(nm->uri[0] != 0);
                CHECK(nm->mount >= 0 && nm->mount < n);
                CHECK(strlen(sheaf_fgfs_mount_point(m, nm->mount)) <= strlen(nm->path) || nm->path[1] == 0);
            }
        }
    }
    free(nm);
    sheaf_fgfs_mounts_free(m);
    return 0;
}
