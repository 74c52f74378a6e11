/* mcs.c - the MCS queue lock (Mellor-Crummey & Scott 1991) on MPI-3 atomics,
 * with the compare-and-swap release (SHEAF_LOCK_MCS) or the swap-only release
 * and its repair (SHEAF_LOCK_MCS_SWAP; Coloma 2007, section 6.2).
 *
 * State: the tail rank of each lock at its home (-1 = free); on every rank a
 * next[id] (its successor, -1 = none) and one grant word (the id a
 * predecessor handed over; a rank waits for one lock at a time).
 *   acquire: grant = -1; next[id] = -1; pred = swap(tail, me);
 *            pred == -1: mine.  Otherwise next[id]@pred = me (the link) and
 *            spin on my own grant until it reads id.
 *   release: succ = next[id]; if succ == -1:
 *              MCS:      CAS(tail, me -> -1) returns me: free, done; else a
 *                        successor has swapped but not linked yet: wait for
 *                        next[id] to change (the release race).
 *              MCS_SWAP: old = swap(tail, -1); old == me: free, done; else the
 *                        queue succ..old is detached: usurper = swap(tail, old)
 *                        re-submits it on behalf of its tail (old); wait for
 *                        the successor's link; if usurper == -1 the lock goes
 *                        to succ, else succ is linked behind usurper (repair).
 *            grant@succ = id.
 * Fairness: MCS hands off in the order of the tail swaps (FIFO). MCS_SWAP is
 * FIFO except after a repair, where the detached queue goes behind arrivals
 * that swapped during the race. Cost: acquire 3 operations uncontended, 4
 * contended; release 2 (3 with a race, 4-5 with a repair) plus the spin reads
 * of the own words, which grow only with the time waited. */
#include "lock.h"

static int wait_own(struct sheaf_lock_set *S, MPI_Aint off, int until_not, int until_eq, int *val)
{
    return lk_wait_own(S, off, until_not, until_eq, val);
}

int lk_mcs_acquire(struct sheaf_lock_set *S, int id)
{
    int me = S->rank, home = lk_home(S, id), pred, v;
    int rc = lk_write_own(S, LK_OFF_GRANT, LK_NIL);
    if (!rc)
        rc = lk_write_own(S, lk_next_off(id), LK_NIL);
    if (!rc)
        rc = lk_swap(S, home, lk_word_off(S, id), me, &pred);
    if (rc || pred == LK_NIL)
        return rc;
    if (pred < 0 || pred >= S->size || pred == me)
        return lk_err(SHEAF_LOCK_EPROTO,
                      "sheaf_lock_acquire: lock %d: tail at rank %d names rank %d "
                      "(src/lock/mcs.c)",
                      id, home, pred);
    S->st.contended++;
    lk_hook(S, SHEAF_LOCK_HOOK_MCS_SWAPPED, id);
    rc = lk_write(S, pred, lk_next_off(id), me);
    if (rc)
        return rc;
    lk_hook(S, SHEAF_LOCK_HOOK_ENQUEUED, id);
    return wait_own(S, LK_OFF_GRANT, 0, id, &v);
}

static int hand_to(struct sheaf_lock_set *S, int id, int succ)
{
    if (succ < 0 || succ >= S->size || succ == S->rank)
        return lk_err(SHEAF_LOCK_EPROTO,
                      "sheaf_lock_release: lock %d: successor of rank %d is %d "
                      "(src/lock/mcs.c)",
                      id, S->rank, succ);
    S->st.handoffs++;
    return lk_write(S, succ, LK_OFF_GRANT, id);
}

int lk_mcs_release(struct sheaf_lock_set *S, int id)
{
    int me = S->rank, home = lk_home(S, id), succ, old;
    MPI_Aint word = lk_word_off(S, id);
    int rc = lk_read(S, me, lk_next_off(id), &succ, 0);
    if (rc)
        return rc;
    if (succ != LK_NIL)
        return hand_to(S, id, succ);
    if (S->kind == SHEAF_LOCK_MCS) {
        rc = lk_cas(S, home, word, me, LK_NIL, &old);
        if (rc || old == me)
            return rc;
        S->st.release_races++;
        lk_hook(S, SHEAF_LOCK_HOOK_RELEASE_RACE, id);
        rc = wait_own(S, lk_next_off(id), 1, 0, &succ);
        return rc ? rc : hand_to(S, id, succ);
    }
    /* swap-only release */
    rc = lk_swap(S, home, word, LK_NIL, &old);
    if (rc || old == me)
        return rc;
    if (old < 0 || old >= S->size)
        return lk_err(SHEAF_LOCK_EPROTO,
                      "sheaf_lock_release: lock %d: tail at rank %d names rank %d "
                      "(src/lock/mcs.c)",
                      id, home, old);
    S->st.release_races++;
    lk_hook(S, SHEAF_LOCK_HOOK_RELEASE_RACE, id);
    int usurper;
    rc = lk_swap(S, home, word, old, &usurper); /* re-submit on behalf of the detached tail */
    if (rc)
        return rc;
    S->st.repairs++;
    rc = wait_own(S, lk_next_off(id), 1, 0, &succ);
    if (rc)
        return rc;
    if (usurper == LK_NIL)
        return hand_to(S, id, succ);
    if (usurper < 0 || usurper >= S->size || usurper == me)
        return lk_err(SHEAF_LOCK_EPROTO, "sheaf_lock_release: lock %d: usurper %d (src/lock/mcs.c)", id, usurper);
    return lk_write(S, usurper, lk_next_off(id), succ); /* the detached queue goes behind the usurper */
}
