/* flags.c - the MPI-2 flag-array lock (Latham, Gropp, Ross, Thakur, Toonen,
 * Cluster 2005; Coloma 2007, section 6.3).
 *
 * Each lock has one byte per rank at its home. A rank writes only its own
 * flag and reads only the others', all in one exclusive epoch, so the epochs
 * on one lock are totally ordered: of two concurrent acquirers the later
 * epoch sees the earlier flag, never both each other's.
 *   acquire: epoch{ put flag[me] = 1; get flags[0..me-1], flags[me+1..P-1] };
 *            if any other flag is set, wait for a wake message.
 *   release: epoch{ put flag[me] = 0; get the others };
 *            wake the first set flag in me+1, me+2, ..., P-1, 0, ..., me-1.
 * Fairness: the hand-off order is circular from the releaser, so a waiter
 * is woken after at most P-1 hand-offs (bounded waiting, starvation-free),
 * but not in arrival order. Cost per acquire or release: one epoch, one put,
 * one or two gets (P >= 2), plus one wake message per hand-off. */
#include "lock.h"
#include <string.h>

void lk_wake_pack(const lk_wake_msg *m, unsigned char out[LK_WAKE_BYTES])
{
    uint32_t v[2] = {(uint32_t)m->lock_id, (uint32_t)m->from};
    for (int i = 0; i < 2; i++)
        for (int b = 0; b < 4; b++)
            out[i * 4 + b] = (unsigned char)(v[i] >> (8 * b));
}

void lk_wake_unpack(const unsigned char in[LK_WAKE_BYTES], lk_wake_msg *m)
{
    uint32_t v[2] = {0, 0};
    for (int i = 0; i < 2; i++)
        for (int b = 0; b < 4; b++)
            v[i] |= (uint32_t)in[i * 4 + b] << (8 * b);
    m->lock_id = (int32_t)v[0];
    m->from = (int32_t)v[1];
}

/* one epoch: set my flag to v and fetch the others' into S->flagbuf */
static int flags_epoch(struct sheaf_lock_set *S, int id, unsigned char v)
{
    int home = lk_home(S, id), slot = lk_slot(S, id), me = S->rank, P = S->size;
    MPI_Aint base = S->off_flags + (MPI_Aint)slot * P;
    int rc = lk_epoch_begin(S, home, slot);
    if (rc)
        return rc;
    rc = lk_put_byte(S, home, base + me, v);
    if (!rc && me > 0)
        rc = lk_get_bytes(S, home, base, S->flagbuf, me);
    if (!rc && me < P - 1)
        rc = lk_get_bytes(S, home, base + me + 1, S->flagbuf + me + 1, P - 1 - me);
    int rc2 = lk_epoch_end(S, home, slot);
    return rc ? rc : rc2;
}

static int wait_wake(struct sheaf_lock_set *S, int id)
{
    unsigned char buf[LK_WAKE_BYTES];
    MPI_Request req;
    int rc = MPI_Irecv(buf, LK_WAKE_BYTES, MPI_BYTE, MPI_ANY_SOURCE, LK_TAG_WAKE, S->comm, &req);
    if (rc != MPI_SUCCESS)
        return lk_mpi_err(rc, "MPI_Irecv (wake)");
    unsigned spins = LK_SPIN; /* a wake is a message: every step progresses MPI */
    for (;;) {
        int done = 0;
        rc = MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            return lk_mpi_err(rc, "MPI_Test (wake)");
        if (done)
            break;
        lk_relax(S, &spins);
    }
    S->st.wakes_received++;
    lk_wake_msg m;
    lk_wake_unpack(buf, &m);
    if (m.lock_id != id || m.from < 0 || m.from >= S->size)
        return lk_err(SHEAF_LOCK_EPROTO,
                      "sheaf_lock_acquire: rank %d waiting for lock %d got a wake for lock %d "
                      "from rank %d (src/lock/flags.c)",
                      S->rank, id, (int)m.lock_id, (int)m.from);
    return SHEAF_LOCK_OK;
}

int lk_flags_acquire(struct sheaf_lock_set *S, int id)
{
    int rc = flags_epoch(S, id, 1);
    if (rc)
        return rc;
    for (int r = 0; r < S->size; r++) {
        if (r != S->rank && S->flagbuf[r]) {
            S->st.contended++;
            lk_hook(S, SHEAF_LOCK_HOOK_ENQUEUED, id);
            return wait_wake(S, id);
        }
    }
    return SHEAF_LOCK_OK;
}

int lk_flags_release(struct sheaf_lock_set *S, int id)
{
    int rc = flags_epoch(S, id, 0);
    if (rc)
        return rc;
    for (int k = 1; k < S->size; k++) {
        int r = (S->rank + k) % S->size;
        if (!S->flagbuf[r])
            continue;
        unsigned char buf[LK_WAKE_BYTES];
        lk_wake_msg m = {id, S->rank};
        lk_wake_pack(&m, buf);
        rc = MPI_Send(buf, LK_WAKE_BYTES, MPI_BYTE, r, LK_TAG_WAKE, S->comm);
        if (rc != MPI_SUCCESS)
            return lk_mpi_err(rc, "MPI_Send (wake)");
        S->st.wakes_sent++;
        S->st.handoffs++;
        break;
    }
    return SHEAF_LOCK_OK;
}
