/* ompi_test_hook.h - fault injection for tests/omp (internal). A build of
 * sion_ompi.c with SHEAF_OMPI_TEST_HOOK (the test program compiles the
 * binding from its sources, as tests/mpi does with SHEAF_CC_TEST_HOOK) makes
 * the allocations named by the bits of ompi_test_fail fail on this process
 * as if out of memory. The test sets it before the parallel region and
 * clears it after, so every thread of the process reads the same value. */
#ifndef SHEAF_OMPI_TEST_HOOK_H
#define SHEAF_OMPI_TEST_HOOK_H

enum {
    OMPI_FAIL_TEAM = 1,   /* the thread team (team_new) */
    OMPI_FAIL_GROUP = 2,  /* the global group object */
    OMPI_FAIL_LGROUP = 4, /* the local (physical file's) group object */
};

#ifdef SHEAF_OMPI_TEST_HOOK
extern int ompi_test_fail;
#define OMPI_HOOK_FAILS(bit) ((ompi_test_fail & (bit)) != 0)
#else
#define OMPI_HOOK_FAILS(bit) 0
#endif
#endif
