/* dache_coll.c - DACHe's own collectives (barrier, allreduce of one int64):
 * over MPI, or in the shared-memory progress mode over a small area of rank
 * 0's slot window whose waiters sleep on a futex.
 *
 * Why: on a node with more ranks than cores, MPICH's collectives busy-poll,
 * so a barrier or an allreduce costs scheduler time slices (20-110 ms per
 * call measured at 8 ranks on 2 cores) while the ranks that already arrived
 * spin. The flush at every sync and close needs two of them and the
 * agreement on the result a third. In shared memory a rank that arrives
 * adds itself to the round's count and sleeps; the last one computes the
 * result and wakes them (one futex wake): a few microseconds of work.
 *
 * Rounds: `gen` counts them. A rank reads gen (round g), writes its value to
 * val[g & 1][rank] and counts itself in; the last arriver reduces
 * val[g & 1][0..P) into res[g & 1], sets arrived back to 0 and publishes
 * gen = g + 1 (release), then wakes the sleepers. The others wait until gen
 * differs from g and read res[g & 1]. val and res of parity g & 1 are
 * written again only in round g + 2, which no rank enters before every rank
 * has arrived in round g + 1, i.e. read round g's result. Every rank calls
 * the same sequence of these collectives with the same operation (as with
 * MPI), so the last arriver's operation is the round's. */
#define _GNU_SOURCE /* syscall() */
#include <limits.h>
#include <sched.h>
#include <stddef.h>
#include <time.h>
#include "dache_impl.h"
#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#define DC_SPIN 256         /* checks before sleeping (a round on idle cores takes about this long) */
#define DC_NAP_NS 200000    /* 200 us naps: MPI progress at least that often while waiting */

struct dc_area {
  uint32_t gen, arrived;
  int64_t shfp;   /* the handle's shared file pointer (shared.c, through mio_cache_ops.shared_word) */
  int64_t res[2];
  int64_t val[];  /* [2][P] */
};

size_t dc_bytes(int P) { return (offsetof(struct dc_area, val) + sizeof(int64_t) * 2 * (size_t)P + 63) & ~(size_t)63; }

void dc_init(void *area) {
  struct dc_area *a = area;
  a->gen = a->arrived = 0;
  a->shfp = 0;
}

int64_t *dc_shared_word(void *area) { return area ? &((struct dc_area *)area)->shfp : NULL; }

static void dc_wake(uint32_t *w) {
#if defined(__linux__) && defined(SYS_futex)
  syscall(SYS_futex, w, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
#else
  (void)w;
#endif
}

/* until *w != seen: spin, then sleep in short bounded naps; after every nap
 * that was not a wake-up, poke MPI's progress engine: a rank waiting here
 * is inside a collective MPI-IO call, and one-sided operations other ranks
 * aim at it (the shared file pointer's window over RMA, the user's own
 * windows) must complete meanwhile, as they would in an MPI collective */
static void dc_wait(dache *d, uint32_t *w, uint32_t seen) {
  for (int i = 0; i < DC_SPIN; i++) {
    if (__atomic_load_n(w, __ATOMIC_ACQUIRE) != seen) return;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
  while (__atomic_load_n(w, __ATOMIC_ACQUIRE) == seen) {
#if defined(__linux__) && defined(SYS_futex)
    struct timespec ts = {0, DC_NAP_NS};  /* woken, timed out, EAGAIN or EINTR: re-check */
    syscall(SYS_futex, w, FUTEX_WAIT, seen, &ts, NULL, 0);
#else
    sched_yield();
#endif
    if (__atomic_load_n(w, __ATOMIC_ACQUIRE) != seen) return;
    int flag = 0;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, d->comm, &flag, MPI_STATUS_IGNORE);
  }
}

static int64_t dc_reduce(const int64_t *v, int P, int op) {
  int64_t r = v[0];
  for (int i = 1; i < P; i++) r = op == DC_MIN ? (v[i] < r ? v[i] : r) : (v[i] > r ? v[i] : r);
  return r;
}

static int64_t dc_round(dache *d, struct dc_area *a, int rank, int P, int64_t v, int op) {
  uint32_t g = __atomic_load_n(&a->gen, __ATOMIC_ACQUIRE);
  int64_t *val = a->val + (size_t)(g & 1) * (size_t)P;
  __atomic_store_n(&val[rank], v, __ATOMIC_RELAXED);
  if (__atomic_add_fetch(&a->arrived, 1, __ATOMIC_ACQ_REL) == (uint32_t)P) {
    __atomic_store_n(&a->res[g & 1], dc_reduce(val, P, op), __ATOMIC_RELAXED);
    __atomic_store_n(&a->arrived, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&a->gen, g + 1, __ATOMIC_RELEASE);
    dc_wake(&a->gen);
  } else {
    dc_wait(d, &a->gen, g);
  }
  return __atomic_load_n(&a->res[g & 1], __ATOMIC_RELAXED);
}

int64_t d_allreduce(dache *d, int64_t v, int op) {
  if (d->coll) {
    __atomic_thread_fence(__ATOMIC_SEQ_CST);  /* like MPI's: what was written before is seen after */
    int64_t r = dc_round(d, d->coll, d->rank, d->P, v, op);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return r;
  }
  int64_t r = v;
  MPI_Allreduce(&v, &r, 1, MPI_INT64_T, op == DC_MIN ? MPI_MIN : MPI_MAX, d->comm);
  return r;
}

void d_barrier(dache *d) {
  if (d->coll) d_allreduce(d, 0, DC_MAX);
  else MPI_Barrier(d->comm);
}
