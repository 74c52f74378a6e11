/* vecpath.h - path of a SIONlib test vector for cmocka tests (include after
 * <cmocka.h>). The directory comes from $SHEAF_VECTORS_DIR (set by ctest),
 * else ../shared/vectors/sionlib-1.7.6; an unreadable vector fails the test. */
#ifndef SHEAF_TEST_VECPATH_H
#define SHEAF_TEST_VECPATH_H
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static inline const char *vec_path(const char *name, char *buf, size_t n)
{
    const char *vdir = getenv("SHEAF_VECTORS_DIR");
    snprintf(buf, n, "%s/%s", vdir ? vdir : "../shared/vectors/sionlib-1.7.6", name);
    if (access(buf, R_OK) != 0)
        fail_msg("vector %s not readable (set SHEAF_VECTORS_DIR)", buf);
    return buf;
}
#endif
