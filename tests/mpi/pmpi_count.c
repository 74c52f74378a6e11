/* pmpi_count.c - counting MPI profiling shim for tests (see pmpi_count.h).
 * Counters are process-wide atomics (the tests open from one thread; the
 * counting stays correct with more). */
#include "pmpi_count.h"
#include <mpi.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

const char *const pc_names[PC_N] = {
    "Comm_split", "Comm_dup",   "Comm_create", "Comm_free", "Barrier", "Bcast",  "Gather",
    "Gatherv",    "Scatter",    "Scatterv",    "Allreduce", "Reduce",  "Exscan", "Scan",
    "Allgather",  "Allgatherv", "Alltoall",    "Send",      "Recv",
};

static atomic_long counts[PC_N];

void pc_reset(void)
{
    for (int i = 0; i < PC_N; i++)
        atomic_store(&counts[i], 0);
}

void pc_snapshot(long out[PC_N])
{
    for (int i = 0; i < PC_N; i++)
        out[i] = atomic_load(&counts[i]);
}

long pc_created(const long c[PC_N]) { return c[PC_COMM_SPLIT] + c[PC_COMM_DUP] + c[PC_COMM_CREATE]; }

long pc_collectives(const long c[PC_N])
{
    long n = 0;
    for (int i = PC_COMM_SPLIT; i <= PC_ALLTOALL; i++)
        n += c[i];
    return n;
}

long pc_expected(const char *spec, const char *name, int later)
{
    if (!spec)
        return -1;
    const char *p = strstr(spec, name);
    if (!p || p[strlen(name)] != ':')
        return -1;
    char *end;
    long first = strtol(p + strlen(name) + 1, &end, 10);
    if (!later)
        return first;
    return *end == '/' ? atol(end + 1) : first;
}

#define HIT(k) atomic_fetch_add(&counts[k], 1)

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    HIT(PC_COMM_SPLIT);
    return PMPI_Comm_split(comm, color, key, newcomm);
}

int MPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    HIT(PC_COMM_SPLIT);
    return PMPI_Comm_split_type(comm, type, key, info, newcomm);
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    HIT(PC_COMM_DUP);
    return PMPI_Comm_dup(comm, newcomm);
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    HIT(PC_COMM_CREATE);
    return PMPI_Comm_create(comm, group, newcomm);
}

int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    HIT(PC_COMM_CREATE);
    return PMPI_Comm_create_group(comm, group, tag, newcomm);
}

int MPI_Comm_free(MPI_Comm *comm)
{
    HIT(PC_COMM_FREE);
    return PMPI_Comm_free(comm);
}

int MPI_Barrier(MPI_Comm comm)
{
    HIT(PC_BARRIER);
    return PMPI_Barrier(comm);
}

int MPI_Bcast(void *buf, int n, MPI_Datatype t, int root, MPI_Comm comm)
{
    HIT(PC_BCAST);
    return PMPI_Bcast(buf, n, t, root, comm);
}

int MPI_Gather(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, int root, MPI_Comm comm)
{
    HIT(PC_GATHER);
    return PMPI_Gather(s, sn, st, r, rn, rt, root, comm);
}

int MPI_Gatherv(const void *s, int sn, MPI_Datatype st, void *r, const int rn[], const int d[], MPI_Datatype rt,
                int root, MPI_Comm comm)
{
    HIT(PC_GATHERV);
    return PMPI_Gatherv(s, sn, st, r, rn, d, rt, root, comm);
}

int MPI_Scatter(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, int root, MPI_Comm comm)
{
    HIT(PC_SCATTER);
    return PMPI_Scatter(s, sn, st, r, rn, rt, root, comm);
}

int MPI_Scatterv(const void *s, const int sn[], const int d[], MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
                 int root, MPI_Comm comm)
{
    HIT(PC_SCATTERV);
    return PMPI_Scatterv(s, sn, d, st, r, rn, rt, root, comm);
}

int MPI_Allreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm comm)
{
    HIT(PC_ALLREDUCE);
    return PMPI_Allreduce(s, r, n, t, op, comm);
}

int MPI_Reduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm comm)
{
    HIT(PC_REDUCE);
    return PMPI_Reduce(s, r, n, t, op, root, comm);
}

int MPI_Exscan(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm comm)
{
    HIT(PC_EXSCAN);
    return PMPI_Exscan(s, r, n, t, op, comm);
}

int MPI_Scan(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm comm)
{
    HIT(PC_SCAN);
    return PMPI_Scan(s, r, n, t, op, comm);
}

int MPI_Allgather(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, MPI_Comm comm)
{
    HIT(PC_ALLGATHER);
    return PMPI_Allgather(s, sn, st, r, rn, rt, comm);
}

int MPI_Allgatherv(const void *s, int sn, MPI_Datatype st, void *r, const int rn[], const int d[], MPI_Datatype rt,
                   MPI_Comm comm)
{
    HIT(PC_ALLGATHERV);
    return PMPI_Allgatherv(s, sn, st, r, rn, d, rt, comm);
}

int MPI_Alltoall(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, MPI_Comm comm)
{
    HIT(PC_ALLTOALL);
    return PMPI_Alltoall(s, sn, st, r, rn, rt, comm);
}

int MPI_Send(const void *b, int n, MPI_Datatype t, int dest, int tag, MPI_Comm comm)
{
    HIT(PC_SEND);
    return PMPI_Send(b, n, t, dest, tag, comm);
}

int MPI_Recv(void *b, int n, MPI_Datatype t, int src, int tag, MPI_Comm comm, MPI_Status *st)
{
    HIT(PC_RECV);
    return PMPI_Recv(b, n, t, src, tag, comm, st);
}
