/* protocol.c - libsheaf_ckpt: sheaf_ckpt_write / wait / finalize.
 *
 * Per step, in this order on every rank: the write of the strategy (every
 * rank that writes a file creates <base>/step-N.tmp itself, mkdir -p), then
 * MPI_Igather of every rank's code to rank 0 (failing ranks also MPI_Isend
 * their message to rank 0), and rank 0's MPI_Ibcast of the result (the
 * commit done, or the first failure with its message). fpp, coio, sion
 * complete all of it inside sheaf_ckpt_write. rbio: a worker's code is 0 once
 * its sends are posted (whether its data arrived is the writer's code: a
 * writer fails when a worker's data do not come), so it posts the gather and
 * returns; rank 0 (a writer) completes the step and commits before its write
 * returns; the other ranks test the result at their next write (a failure
 * known by then is returned) and wait for it at the write after, at
 * sheaf_ckpt_wait or sheaf_ckpt_finalize. Every rank takes part in every
 * step's collectives even after reporting an earlier step's failure, so the
 * sequences never diverge. Stale step-N.tmp directories are removed by rank
 * 0 at init and at a failure. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
#include "ckpt.h"
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { TAG_ERR = 7103 };

/* mkdir -p (directories the library creates: 0777 & umask) */
static int mkdir_p(const char *dir)
{
    char p[4096];
    snprintf(p, sizeof p, "%s", dir);
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = 0;
            if (mkdir(p, 0777) && errno != EEXIST)
                return errno;
            *s = '/';
        }
    return mkdir(p, 0777) && errno != EEXIST ? errno : 0;
}

/* the step's directory (and fpp's subdirectory of this rank) */
static int make_dirs(sheaf_ckpt_ctx *c, uint64_t step, char *m, size_t mn)
{
    char tmp[4096], sub[4200];
    ck_tmpdir(c, step, tmp, sizeof tmp);
    int rc = mkdir_p(tmp);
    if (!rc && c->cfg.strategy == CK_FPP) {
        snprintf(sub, sizeof sub, "%s/d%05d", tmp, c->cfg.subdirs ? c->rank % c->cfg.subdirs : 0);
        rc = mkdir_p(sub);
    }
    if (rc)
        snprintf(m, mn, "%s: %s", tmp, strerror(rc));
    return rc;
}

static int write_strategy(sheaf_ckpt_ctx *c, uint64_t step, char *m, size_t mn)
{
    char tmp[4096], path[4400];
    ck_tmpdir(c, step, tmp, sizeof tmp);
    ck_fault(c, "stall", step);
    ck_fault(c, "fsize", step);
    int drc = c->cfg.strategy == CK_RBIO && c->rb.role == SHEAF_CKPT_WORKER ? 0 : make_dirs(c, step, m, mn);
    if (c->cfg.strategy == CK_RBIO) {
        if (drc) /* a writer still receives (and drops) its workers' data */
            ck_rbio_write(c, step, NULL, 0);
        return drc ? drc : ck_rbio_write(c, step, m, mn);
    }
    if (c->cfg.strategy != CK_FPP) { /* coio, sion: collective opens follow; agree first */
        ck_ag_init(&c->ag, &c->cref.comm);
        if (ck_proto_dirs(&c->ag, drc, m))
            drc = c->ag.code, snprintf(m, mn, "%s", c->ag.msg);
    }
    if (drc)
        return drc;
    ck_part p;
    int rc = ck_part_own(c, &p);
    if (rc)
        return snprintf(m, mn, "no memory"), rc;
    if (c->cfg.strategy == CK_FPP) {
        snprintf(path, sizeof path, "%s/d%05d/rank-%08d.ckpt", tmp, c->cfg.subdirs ? c->rank % c->cfg.subdirs : 0,
                 c->rank);
        rc = ck_write_posix(c, step, path, &p, m, mn);
    } else if (c->cfg.strategy == CK_SION) {
        snprintf(path, sizeof path, "%s/ckpt.sion", tmp);
        rc = ck_write_sion(c, c->comm, step, path, c->cfg.nf, &p, m, mn);
    } else {
        int g = ck_group_of((uint64_t)c->rank, (uint64_t)c->np, (uint64_t)c->cfg.nf);
        uint64_t f0 = ck_first((uint64_t)g, (uint64_t)c->np, (uint64_t)c->cfg.nf);
        uint64_t f1 = ck_first((uint64_t)g + 1, (uint64_t)c->np, (uint64_t)c->cfg.nf);
        MPI_Comm fc;
        MPI_Comm_split(c->comm, g, c->rank, &fc);
        snprintf(path, sizeof path, "%s/coio-%05d.ckpt", tmp, g);
        rc = ck_write_shared(c, fc, step, path, &p, f0, (uint32_t)(f1 - f0), m, mn);
        MPI_Comm_free(&fc);
    }
    c->st.bytes = 0;
    for (int f = 0; f < c->nfields; f++)
        c->st.bytes += c->fields[f].count * c->fields[f].es;
    ck_part_free(&p);
    return rc;
}

/* rbio through shared windows (shm.c): only the writers exchange codes
 * (over their communicator); workers read their writer's result */
static int shm_mode(const sheaf_ckpt_ctx *c) { return c->cfg.strategy == CK_RBIO && c->rb.shm.on; }

/* This rank's part of the slot is done: post the gather (and the bcast on
 * ranks other than 0, which post it when they have the result). */
static void slot_post(sheaf_ckpt_ctx *c, ck_slot *s)
{
    if (s->posted)
        return;
    s->posted = 1;
    MPI_Comm comm = c->comm;
    if (shm_mode(c)) { /* the writers decide; a worker's result comes through its slot */
        if (c->rb.role == SHEAF_CKPT_WORKER)
            return;
        comm = c->rb.wcomm; /* its rank 0 is rank 0 */
    }
    MPI_Igather(&s->local_rc, 1, MPI_INT, c->rcs, 1, MPI_INT, 0, comm, &s->gat_req);
    if (s->local_rc && c->rank != 0)
        MPI_Isend(s->local_msg, sizeof s->local_msg, MPI_CHAR, 0, TAG_ERR, comm, &s->err_req);
    if (c->rank != 0) {
        MPI_Ibcast(&s->res, sizeof s->res, MPI_BYTE, 0, comm, &s->bc_req);
        s->bc_posted = 1;
    }
}

/* rank 0: every code, the messages of the failing ranks, then the commit */
static int root_decide(sheaf_ckpt_ctx *c, ck_slot *s)
{
    int rc = ck_waitall(c, 1, &s->gat_req, "gathering the ranks' results");
    if (rc)
        return rc;
    memset(&s->res, 0, sizeof s->res);
    int shm = shm_mode(c), n = shm ? c->cfg.ng : c->np;
    MPI_Comm comm = shm ? c->rb.wcomm : c->comm;
    for (int r = 0; r < n; r++) {
        if (!c->rcs[r])
            continue;
        char msg[256];
        if (r == 0)
            snprintf(msg, sizeof msg, "%s", s->local_msg);
        else {
            MPI_Request q;
            MPI_Irecv(msg, sizeof msg, MPI_CHAR, r, TAG_ERR, comm, &q);
            if ((rc = ck_waitall(c, 1, &q, "receiving a failing rank's message")) != 0)
                return rc;
            msg[sizeof msg - 1] = 0;
        }
        /* the lowest failing rank's code, but a timeout wins: a rank that
         * timed out returns ETIMEDOUT itself, and so must every rank */
        if (!s->res.rc || (c->rcs[r] == ETIMEDOUT && s->res.rc != ETIMEDOUT)) {
            s->res.rc = c->rcs[r];
            s->res.rank = shm ? (int)ck_first((uint64_t)r, (uint64_t)c->np, (uint64_t)c->cfg.ng) : r;
            snprintf(s->res.msg, sizeof s->res.msg, "%s", msg);
        }
    }
    if (!s->res.rc) {
        s->res.rc = ck_commit_local(c, s->step, s->res.msg, sizeof s->res.msg);
        s->res.rank = 0;
    } else {
        char tmp[4096];
        ck_tmpdir(c, s->step, tmp, sizeof tmp);
        ck_rmtree(tmp); /* a failed checkpoint is removed; it was never listed */
    }
    MPI_Ibcast(&s->res, sizeof s->res, MPI_BYTE, 0, comm, &s->bc_req);
    s->bc_posted = 1;
    return 0;
}

static int slot_result(sheaf_ckpt_ctx *c, ck_slot *s)
{
    s->active = 0;
    s->res.msg[sizeof s->res.msg - 1] = 0;
    if (shm_mode(c) && s->res.rc == ETIMEDOUT)
        c->broken = 1; /* a rank timed out: the context is unusable on every rank (and its window stays) */
    if (s->res.rc)
        return ck_fail(c, s->res.rc, "checkpoint step %" PRIu64 " failed on rank %d: %s", s->step, s->res.rank,
                       s->res.msg);
    if (!c->have_last || s->step > c->last_step)
        c->last_step = s->step;
    c->have_last = 1;
    return 0;
}

/* Complete a posted slot, blocking (bounded). */
static int slot_complete(sheaf_ckpt_ctx *c, ck_slot *s)
{
    int rc = 0;
    if (shm_mode(c) && c->rb.role == SHEAF_CKPT_WORKER) {
        rc = ck_shm_wait_result(c, s->seq, &s->res.rc, &s->res.rank, s->res.msg, sizeof s->res.msg);
        return rc ? rc : slot_result(c, s);
    }
    if (c->rank == 0 && !s->bc_posted)
        rc = root_decide(c, s);
    MPI_Request r[2] = {s->bc_req, s->err_req};
    if (!rc)
        rc = ck_waitall(c, 2, r, "the checkpoint's commit");
    s->bc_req = s->err_req = MPI_REQUEST_NULL;
    return rc ? rc : slot_result(c, s);
}

/* Non-blocking: the slot's result if it is known already (1 = done). */
static int slot_test(sheaf_ckpt_ctx *c, ck_slot *s, int *rc)
{
    int done = 0;
    if (shm_mode(c) && c->rb.role == SHEAF_CKPT_WORKER) {
        if (!ck_shm_result(c, s->seq, &s->res.rc, &s->res.rank, s->res.msg, sizeof s->res.msg))
            return 0;
        *rc = slot_result(c, s);
        return 1;
    }
    MPI_Request r[2] = {s->bc_req, s->err_req};
    if (MPI_Testall(2, r, &done, MPI_STATUSES_IGNORE) != MPI_SUCCESS || !done)
        return 0;
    s->bc_req = s->err_req = MPI_REQUEST_NULL;
    *rc = slot_result(c, s);
    return 1;
}

/* Earlier steps (rbio): the older one completed, the previous one tested.
 * The first failure is returned. */
static int settle_earlier(sheaf_ckpt_ctx *c)
{
    ck_slot *old = &c->slot[c->seq & 1], *prev = &c->slot[(c->seq + 1) & 1];
    int rc = 0, r;
    if (old->active && (r = slot_complete(c, old)) != 0)
        rc = r;
    if (!c->broken && prev->active && slot_test(c, prev, &r))
        rc = rc ? rc : r;
    return rc;
}

static int ckpt_write(sheaf_ckpt_ctx *c, uint64_t step)
{
    double t0 = ck_now();
    if (c->broken)
        return EIO;
    int err = settle_earlier(c); /* reported now, but this step still runs */
    if (c->broken)
        return err ? err : EIO;
    /* the declared fields compared at the first write; rbio through shared windows: by the
     * writers (with their workers' fingerprints in the slots), never a wait of the workers */
    int rc = c->checked || shm_mode(c) ? 0 : ck_check_fields(c, c->comm);
    if (!rc && c->have_last && step <= c->last_step)
        rc = ck_fail(c, EINVAL, "step %" PRIu64 " is not after the last one (%" PRIu64 ")", step, c->last_step);
    for (int i = 0; !rc && i < 2; i++)
        if (c->slot[i].active && step <= c->slot[i].step)
            rc = ck_fail(c, EINVAL, "step %" PRIu64 " is not after step %" PRIu64, step, c->slot[i].step);
    if (rc) { /* the same on every rank: nothing is written */
        c->st.blocked_s = ck_now() - t0;
        return rc;
    }
    ck_slot *s = &c->slot[c->seq & 1];
    memset(s, 0, sizeof *s);
    s->gat_req = s->err_req = s->bc_req = s->prep_req = MPI_REQUEST_NULL;
    s->active = 1;
    s->step = step;
    s->seq = c->seq;
    s->local_rc = write_strategy(c, step, s->local_msg, sizeof s->local_msg);
    c->seq++;
    slot_post(c, s);
    if (c->cfg.strategy == CK_RBIO)
        ck_prog_kick(c); /* send mode: the progress thread moves the step's messages */
    int shmw = shm_mode(c) && c->rb.role != SHEAF_CKPT_WORKER; /* completes, then tells its workers */
    if (c->broken && shmw && c->rank != 0)                     /* the workers get this rank's failure at once */
        ck_shm_publish(c, s->seq, s->local_rc ? s->local_rc : EIO, c->rank, s->local_rc ? s->local_msg : c->err);
    if (c->broken && c->rank != 0) { /* a wait of this rank's own part timed out (an rbio writer whose
                                       * worker's data never came): ETIMEDOUT now, the code every other
                                       * rank gets for this step (rank 0 prefers it, or times out too) */
        c->st.blocked_s = ck_now() - t0;
        return err ? err : s->local_rc ? s->local_rc : EIO;
    }
    if (c->cfg.strategy != CK_RBIO || c->rank == 0 || shmw)
        rc = slot_complete(c, s);
    if (shmw && !s->active) /* decided: the result (0, or the first failure) */
        ck_shm_publish(c, s->seq, s->res.rc, s->res.rank, s->res.msg);
    else if (shmw) /* this writer's own wait failed (timeout) */
        ck_shm_publish(c, s->seq, rc ? rc : EIO, c->rank, c->err);
    c->st.blocked_s = ck_now() - t0;
    return err ? err : rc;
}

static int ckpt_wait(sheaf_ckpt_ctx *c)
{
    if (c->broken)
        return EIO;
    double t0 = ck_now();
    int rc = 0;
    for (int k = 2; k >= 1 && !c->broken; k--) { /* older first */
        ck_slot *s = &c->slot[(c->seq - (uint64_t)k) & 1];
        if (!s->active || c->seq < (uint64_t)k)
            continue;
        slot_post(c, s);
        int r = slot_complete(c, s);
        rc = rc ? rc : r;
    }
    c->st.wait_s = ck_now() - t0;
    return c->broken && !rc ? EIO : rc;
}

static int ckpt_finalize(sheaf_ckpt_ctx **pc)
{
    sheaf_ckpt_ctx *c = pc ? *pc : NULL;
    if (!c)
        return 0;
    int rc = c->broken ? EIO : ckpt_wait(c);
    if (!c->broken) {
        ck_rbio_free(c);
        if (c->info != MPI_INFO_NULL)
            MPI_Info_free(&c->info);
        MPI_Comm_free(&c->comm);
        if (c->ccomm != MPI_COMM_NULL)
            MPI_Comm_free(&c->ccomm);
    } else { /* broken: requests may still be pending; the communicators are left to MPI_Abort */
        ck_prog_stop(c);
        ck_shm_free(c, 1); /* the window too, after a bounded exchange with its group */
    }
    free(c->fields);
    free(c->rcs);
    if (rc)
        ckf_err(rc, "%s", c->err);
    free(c);
    *pc = NULL;
    return rc;
}

/* public: 0 or a negative code (-errno) */
int sheaf_ckpt_write(sheaf_ckpt_ctx *c, uint64_t step) { return ck_pub(ckpt_write(c, step)); }
int sheaf_ckpt_wait(sheaf_ckpt_ctx *c) { return ck_pub(ckpt_wait(c)); }
int sheaf_ckpt_finalize(sheaf_ckpt_ctx **pc) { return ck_pub(ckpt_finalize(pc)); }
