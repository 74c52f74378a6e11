/* pmpi_count.h - MPI profiling-interface counters for tests (pmpi_count.c).
 * Linked into a test program, the MPI_* entry points below count each call
 * of the calling process and forward to PMPI_*; libsheaf_mpi's calls land
 * here because the program's definitions interpose on the MPI library's. */
#ifndef SHEAF_TEST_PMPI_COUNT_H
#define SHEAF_TEST_PMPI_COUNT_H

enum {
    PC_COMM_SPLIT,
    PC_COMM_DUP,
    PC_COMM_CREATE,
    PC_COMM_FREE,
    PC_BARRIER,
    PC_BCAST,
    PC_GATHER,
    PC_GATHERV,
    PC_SCATTER,
    PC_SCATTERV,
    PC_ALLREDUCE,
    PC_REDUCE,
    PC_EXSCAN,
    PC_SCAN,
    PC_ALLGATHER,
    PC_ALLGATHERV,
    PC_ALLTOALL,
    PC_SEND,
    PC_RECV,
    PC_N
};

extern const char *const pc_names[PC_N];

void pc_reset(void);
void pc_snapshot(long out[PC_N]);
/* communicators created (split, dup, create, create_group, split_type) */
long pc_created(const long c[PC_N]);
/* collective calls, communicator creation and free included (each is a
 * collective over its communicator) */
long pc_collectives(const long c[PC_N]);
/* Expected collective calls of scenario `name` in spec ("w1:C/R,r1:C/R,...",
 * C for the first open, R for every later one; "name:C" both): -1 when spec
 * is NULL or does not name it. */
long pc_expected(const char *spec, const char *name, int later);

#endif
