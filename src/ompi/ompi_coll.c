/* ompi_coll.c - the hybrid binding's coalescing I/O callbacks
 * (gather_and_execute / execute_and_scatter of sion_generic.h) on a group
 * of ompi_int.h: threads publish, the master thread of each process moves
 * the process's part through MPI point-to-point messages. */
#include "ompi_int.h"
#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* ---- coalescing I/O (gather_and_execute / execute_and_scatter) ------------
 * Each thread publishes its buffer and a hy_coll record; the master thread
 * then does the whole process's part: (1) for its senders whose collector
 * lives in another process, non-blocking sends of spec and data pieces
 * (reads: receives) and a receive of the verdict; (2) for its collectors,
 * the senders in order: a sender in this process is served straight from
 * its buffer, a remote one through blocking receives (reads: sends) of
 * pieces of at most one block into one buffer; then the verdict to every
 * sender; (3) wait for (1). Every blocking call of (2) is matched by a
 * non-blocking one posted in (1) by the other process, so no order of
 * processes can deadlock. Tags: 100 + kind * nthreads + sender thread. */
typedef struct hy_coll {
    sion_int64 *spec;
    int collector, first, last, sid, verdict;
} hy_coll;

enum { HK_SPEC = 0, HK_DATA = 1, HK_VERDICT = 2 };

static int hy_tag(const hy_group *g, int kind, int thread) { return 100 + kind * g->nthreads + thread; }

typedef struct {
    MPI_Request *r;
    int n, cap;
} reqlist;

static int req_add(reqlist *l, MPI_Request **out)
{
    if (!l->r)
        return 1;
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 16;
        MPI_Request *r = realloc(l->r, (size_t)cap * sizeof *r);
        if (!r)
            return 1;
        l->r = r;
        l->cap = cap;
    }
    *out = &l->r[l->n++];
    return 0;
}

/* (1): this process's senders with a collector elsewhere */
static int hy_post_senders(hy_group *g, int write, int64_t piece, reqlist *rl)
{
    int nt = g->nthreads, base = g->prank * nt, err = 0;
    for (int t = 0; t < nt; t++) {
        hy_coll *c = g->team->aux[t];
        int L = base + t, cp = c->collector / nt;
        if (c->collector < 0 || c->collector == L || L < c->first || L > c->last || cp == g->prank)
            continue;
        MPI_Request *r;
        err |= req_add(rl, &r) || MPI_Isend(c->spec, 2, MPI_INT64_T, cp, hy_tag(g, HK_SPEC, t), g->comm, r);
        char *d = g->team->ptr[t];
        for (int64_t done = 0; !err && c->spec[1] > 0 && done < c->spec[1]; done += piece) {
            int n = (int)(c->spec[1] - done < piece ? c->spec[1] - done : piece);
            err |= req_add(rl, &r) || (write ? MPI_Isend(d + done, n, MPI_BYTE, cp, hy_tag(g, HK_DATA, t), g->comm, r)
                                             : MPI_Irecv(d + done, n, MPI_BYTE, cp, hy_tag(g, HK_DATA, t), g->comm, r));
        }
        c->verdict = 1;
        err |= req_add(rl, &r) || MPI_Irecv(&c->verdict, 1, MPI_INT, cp, hy_tag(g, HK_VERDICT, t), g->comm, r);
    }
    return err;
}

/* (2): one collector of this process serves its group */
static int hy_serve(hy_group *g, hy_coll *c, int write, int64_t piece, char *buf,
                    int (*pw)(const void *, sion_int64 *, int), int (*pr)(void *, sion_int64 *, int))
{
    int nt = g->nthreads, bad = 0, err = 0;
    for (int s = c->first; s <= c->last; s++) {
        int sp_proc = s / nt, st = s % nt;
        int local = sp_proc == g->prank;
        sion_int64 rspec[2] = {-1, 0}, *sp = local ? ((hy_coll *)g->team->aux[st])->spec : rspec;
        if (!local && MPI_Recv(rspec, 2, MPI_INT64_T, sp_proc, hy_tag(g, HK_SPEC, st), g->comm, MPI_STATUS_IGNORE))
            err = 1;
        char *d = g->team->ptr[st];
        for (int64_t done = 0; sp[1] > 0 && done < sp[1]; done += piece) {
            sion_int64 part[2] = {sp[0] + done, sp[1] - done < piece ? sp[1] - done : piece};
            /* without a buffer (out of memory) the messages still flow, empty: nobody waits */
            char dummy = 0, *b = local ? d + done : buf ? buf : &dummy;
            int n = local || buf ? (int)part[1] : 0;
            if (!local && write &&
                MPI_Recv(b, n, MPI_BYTE, sp_proc, hy_tag(g, HK_DATA, st), g->comm, MPI_STATUS_IGNORE))
                err = 1;
            if (!local && !buf)
                bad = 1;
            else if (!bad && (write ? pw(b, part, c->sid) : pr(b, part, c->sid)))
                bad = 1;
            if (!local && !write && MPI_Send(b, n, MPI_BYTE, sp_proc, hy_tag(g, HK_DATA, st), g->comm))
                err = 1;
        }
    }
    sion_int64 end[2] = {-1, 0}; /* end of the group: what the collector combined goes out now */
    if (write && pw(NULL, end, c->sid))
        bad = 1;
    bad |= err;
    for (int s = c->first; s <= c->last; s++) {
        if (s / nt == g->prank)
            ((hy_coll *)g->team->aux[s % nt])->verdict = bad;
        else if (MPI_Send(&bad, 1, MPI_INT, s / nt, hy_tag(g, HK_VERDICT, s % nt), g->comm))
            err = 1;
    }
    c->verdict = bad;
    return err;
}

static int hy_coll_master(hy_group *g, int write, sion_int64 fsblksize, int (*pw)(const void *, sion_int64 *, int),
                          int (*pr)(void *, sion_int64 *, int))
{
    int64_t piece = binding_coll_piece(fsblksize);
    int nt = g->nthreads, base = g->prank * nt;
    reqlist rl = {malloc(16 * sizeof(MPI_Request)), 0, 16};
    char *buf = malloc((size_t)piece);
    int err = hy_post_senders(g, write, piece, &rl); /* always: remote collectors wait for these */
    err |= !buf;
    for (int t = 0; t < nt; t++) {
        hy_coll *c = g->team->aux[t];
        if (c->collector == base + t && c->first <= c->last)
            err |= hy_serve(g, c, write, piece, buf, pw, pr);
    }
    for (int i = 0; i < rl.n; i++) /* MPI_Wait each: MPICH's MPI_Waitall prototype trips gcc's -Wstringop-overflow */
        if (MPI_Wait(&rl.r[i], MPI_STATUS_IGNORE))
            err = 1;
    free(rl.r);
    free(buf);
    return err ? MPI_ERR_OTHER : MPI_SUCCESS;
}

static int hy_exchange(int write, void *data, sion_int64 *spec, sion_int64 fsblksize, void *group, int collector,
                       int first, int last, int sid, int (*pw)(const void *, sion_int64 *, int),
                       int (*pr)(void *, sion_int64 *, int))
{
    hy_group *g = group;
    if (g->broken)
        return 1;
    int t = omp_get_thread_num();
    hy_coll me = {spec, collector, first, last, sid, 0};
    g->team->ptr[t] = data;
    g->team->aux[t] = &me;
#pragma omp barrier
#pragma omp master
    g->mpirc = hy_coll_master(g, write, fsblksize, pw, pr);
#pragma omp barrier
    int rc = me.verdict || g->mpirc != MPI_SUCCESS;
#pragma omp barrier
    return rc;
}

int hy_gather_exec(const void *indata, sion_int64 *spec, int spec_len, sion_int64 fsblksize, void *group, int collector,
                   int first, int last, int sid, int process(const void *, sion_int64 *, int))
{
    if (spec_len < 2) /* still take part: the others wait in the barriers */
        spec = NULL;
    sion_int64 none[2] = {-1, 0};
    int rc = hy_exchange(1, (void *)indata, spec ? spec : none, fsblksize, group, collector, first, last, sid, process,
                         NULL);
    return rc || !spec;
}

int hy_exec_scatter(void *outdata, sion_int64 *spec, int spec_len, sion_int64 fsblksize, void *group, int collector,
                    int first, int last, int sid, int process(void *, sion_int64 *, int))
{
    if (spec_len < 2)
        spec = NULL;
    sion_int64 none[2] = {-1, 0};
    int rc = hy_exchange(0, outdata, spec ? spec : none, fsblksize, group, collector, first, last, sid, NULL, process);
    return rc || !spec;
}
