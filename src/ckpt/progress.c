/* progress.c - a progress thread for rbio workers that hand off with
 * MPI_Isend (their writer is on another node, or handoff=send). Only when
 * the MPI library was initialised with MPI_THREAD_MULTIPLE (MPI_Query_thread):
 * after a rank posted a step's messages, the thread calls MPI_Iprobe on the
 * context's communicator for a tag that is never sent (a probe that finds
 * nothing runs the MPI's progress engine in MPICH and Open MPI; MPICH's
 * MPI_COMM_SELF does not) with a back-off from 50 us to 5 ms, for at most
 * the timeout;
 * otherwise it sleeps. The worker's requests stay the main thread's (the
 * thread never touches them). Without MPI_THREAD_MULTIPLE there is no thread
 * and the data move when the application next enters MPI (doc/ckpt.md). */
#define _POSIX_C_SOURCE 200809L
#include "ckpt.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

enum { TAG_PROBE = 7199 }; /* never sent */

struct ck_prog {
    pthread_t th;
    MPI_Comm comm; /* the context's (probed for a tag never sent: nothing is taken) */
    atomic_int stop;
    _Atomic double until; /* probe until then (ck_now() seconds) */
    atomic_int kicked;
};

static void *prog_main(void *v)
{
    ck_prog *p = v;
    long ns = 50000;
    while (!atomic_load(&p->stop)) {
        if (atomic_exchange(&p->kicked, 0))
            ns = 50000;
        if (ck_now() < atomic_load(&p->until)) {
            int flag = 0;
            MPI_Iprobe(MPI_ANY_SOURCE, TAG_PROBE, p->comm, &flag, MPI_STATUS_IGNORE);
        } else
            ns = 10000000; /* idle */
        struct timespec t = {ns / 1000000000, ns % 1000000000};
        nanosleep(&t, NULL);
        if (ns < 5000000)
            ns *= 2;
    }
    return NULL;
}

void ck_prog_start(sheaf_ckpt_ctx *c)
{
    int level = MPI_THREAD_SINGLE;
    if (MPI_Query_thread(&level) != MPI_SUCCESS || level != MPI_THREAD_MULTIPLE)
        return;
    ck_prog *p = calloc(1, sizeof *p);
    if (!p)
        return; /* no thread: the data move at the next MPI call, as without MPI_THREAD_MULTIPLE */
    p->comm = c->comm;
    atomic_init(&p->stop, 0);
    atomic_init(&p->until, 0.0);
    atomic_init(&p->kicked, 0);
    if (pthread_create(&p->th, NULL, prog_main, p)) {
        free(p);
        return;
    }
    c->rb.prog = p;
}

void ck_prog_kick(sheaf_ckpt_ctx *c)
{
    ck_prog *p = c->rb.prog;
    if (!p)
        return;
    atomic_store(&p->until, ck_now() + c->cfg.timeout);
    atomic_store(&p->kicked, 1);
}

void ck_prog_stop(sheaf_ckpt_ctx *c)
{
    ck_prog *p = c->rb.prog;
    if (!p)
        return;
    atomic_store(&p->stop, 1);
    pthread_join(p->th, NULL);
    free(p);
    c->rb.prog = NULL;
}
