/* mpi_collbuf.c - the MPI binding's coalescing I/O callbacks. */
#include "mpi_internal.h"
#include <stdint.h>
#include <stdlib.h>

/* ---- coalescing I/O: gather_and_execute / execute_and_scatter ---------------
 * Point-to-point inside the local group. A sender sends its spec (offset,
 * length), then its data in pieces of at most `piece` bytes (write) or
 * receives them (read), then receives the collector's verdict (0 = the whole
 * group's I/O succeeded). The collector serves its senders in order, one at
 * a time, through one buffer of `piece` bytes: its memory stays bounded. */
enum { TAG_SPEC = 7301, TAG_DATA = 7302, TAG_VERDICT = 7303 };

/* write: data flows sender -> collector; read: collector -> sender */
static int coll_exchange(int write, void *data, sion_int64 *spec, sion_int64 fsblksize, void *group, int collector,
                         int first, int last, int sid, int (*pw)(const void *, sion_int64 *, int),
                         int (*pr)(void *, sion_int64 *, int))
{
    MPI_Comm comm = mpi_group_comm(group);
    int me, size, bad = 0;
    if (comm == MPI_COMM_NULL || MPI_Comm_rank(comm, &me) || MPI_Comm_size(comm, &size))
        return 1;
    int64_t piece = binding_coll_piece(fsblksize);
    if (first > last)
        return 0;
    if (me == collector) {
        char *buf = malloc((size_t)piece);
        bad = !buf;
        for (int s = first; s <= last && s < size; s++) {
            sion_int64 sp[2];
            if (MPI_Recv(sp, 2, MPI_INT64_T, s, TAG_SPEC, comm, MPI_STATUS_IGNORE)) {
                bad = 1;
                continue;
            }
            for (int64_t done = 0; sp[1] > 0 && done < sp[1]; done += piece) {
                sion_int64 part[2] = {sp[0] + done, sp[1] - done < piece ? sp[1] - done : piece};
                char one;
                char *b = buf ? buf : &one;
                int n = buf ? (int)part[1] : 0;
                if (write) {
                    if (MPI_Recv(b, n, MPI_BYTE, s, TAG_DATA, comm, MPI_STATUS_IGNORE) || !buf || pw(buf, part, sid))
                        bad = 1;
                } else {
                    if (!buf || pr(buf, part, sid))
                        bad = 1;
                    if (MPI_Send(b, n, MPI_BYTE, s, TAG_DATA, comm))
                        bad = 1;
                }
            }
        }
        free(buf);
        sion_int64 end[2] = {-1, 0}; /* end of the group: what the collector combined goes out now */
        if (write && pw(NULL, end, sid))
            bad = 1;
        for (int s = first; s <= last && s < size; s++)
            if (MPI_Send(&bad, 1, MPI_INT, s, TAG_VERDICT, comm))
                bad = 1;
        return bad;
    }
    if (me < first || me > last)
        return 0;
    if (MPI_Send(spec, 2, MPI_INT64_T, collector, TAG_SPEC, comm))
        bad = 1;
    for (int64_t done = 0; spec[1] > 0 && done < spec[1]; done += piece) {
        int n = (int)(spec[1] - done < piece ? spec[1] - done : piece);
        char one, *b = data ? (char *)data + done : &one;
        if (write ? MPI_Send(b, data ? n : 0, MPI_BYTE, collector, TAG_DATA, comm)
                  : MPI_Recv(b, data ? n : 0, MPI_BYTE, collector, TAG_DATA, comm, MPI_STATUS_IGNORE))
            bad = 1;
    }
    int verdict = 1;
    if (MPI_Recv(&verdict, 1, MPI_INT, collector, TAG_VERDICT, comm, MPI_STATUS_IGNORE))
        bad = 1;
    return bad || verdict;
}

int mpi_cb_gather_exec(const void *indata, sion_int64 *spec, int spec_len, sion_int64 fsblksize, void *group,
                       int collector, int first, int last, int sid, int process(const void *, sion_int64 *, int))
{
    if (spec_len < 2)
        return 1;
    return coll_exchange(1, (void *)indata, spec, fsblksize, group, collector, first, last, sid, process, NULL);
}

int mpi_cb_exec_scatter(void *outdata, sion_int64 *spec, int spec_len, sion_int64 fsblksize, void *group, int collector,
                        int first, int last, int sid, int process(void *, sion_int64 *, int))
{
    if (spec_len < 2)
        return 1;
    return coll_exchange(0, outdata, spec, fsblksize, group, collector, first, last, sid, NULL, process);
}
