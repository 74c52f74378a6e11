/* collective.c - collector groups, packed chunks, and the bookkeeping of a
 * task whose bytes its collector moves (see collective.h). */
#define _FILE_OFFSET_BITS 64
#include "collective.h"
#include "error.h"
#include "checksum.h"
#include "sion_generic.h" /* SION_CAPABILITY_* */
#include <stdio.h>
#include <stdlib.h>

/* SIONlib 1.7.6 reads its variables with its library prefix: SION_COLLSIZE
 * is looked up as LSION_COLLSIZE (sion_const.h SION_LVERSION_PREFIX "L"), and
 * its own test scripts export LSION_COLLSIZE. sheaf takes the documented name
 * and, when that is not set, SIONlib's. */
static const char *env_sion(const char *name)
{
    const char *e = getenv(name);
    if (e && *e)
        return e;
    char lname[64];
    snprintf(lname, sizeof lname, "L%s", name);
    return getenv(lname);
}

static int env_int(const char *name, int *out)
{
    const char *e = env_sion(name);
    if (!e || !*e)
        return 0;
    char *end;
    long v = strtol(e, &end, 10);
    if (*end || v < -1 || v > INT32_MAX)
        return 0; /* not a number we can mean: ignored, as SIONlib's atoi would mostly */
    *out = (int)v;
    return 1;
}

int core_coll_wanted(const core_mode *mode, int32_t ntasks, int *collsize)
{
    int on = mode->collective, cs = mode->collsize > 0 ? mode->collsize : -1, v;
    if (env_int("SION_COLLSIZE", &v)) {
        on = v != 0;
        cs = v > 0 ? v : -1;
    } else if (env_int("SION_COLLNUM", &v) && v > 0) {
        if (v > ntasks)
            v = ntasks;
        on = 1;
        cs = (ntasks + v - 1) / v;
    }
    if (cs > ntasks)
        cs = ntasks;
    *collsize = cs;
    return on;
}

static int64_t round_up(int64_t v, int64_t bs) { return (v + bs - 1) / bs * bs; }

int64_t core_coll_capacity(int32_t ntasks, const int64_t *cs, int32_t fsblksize, int collsize, int32_t *ncoll_out)
{
    int64_t sum = 0;
    for (int32_t t = 0; t < ntasks; t++)
        sum += cs[t];
    /* at most one file-system block of chunk space per collector */
    int64_t ncoll = (sum + fsblksize - 1) / fsblksize, maxc = ncoll;
    if (collsize > 0) { /* tasks per collector, as the user asked, within that bound */
        ncoll = (ntasks + collsize - 1) / collsize;
        if (ncoll > maxc)
            ncoll = maxc;
    } else {
        if (ncoll > ntasks)
            ncoll = ntasks;
        static const int32_t lim[][2] = {{512, 32}, {256, 16}, {128, 8}, {64, 8}, {32, 8}, {16, 4}};
        for (size_t i = 0; i < sizeof lim / sizeof lim[0]; i++)
            if (ntasks >= lim[i][0]) {
                if (ncoll > lim[i][1])
                    ncoll = lim[i][1];
                break;
            }
    }
    if (ncoll < 1) /* all chunks empty (SIONlib divides by zero here): one group */
        ncoll = 1;
    if (ncoll_out)
        *ncoll_out = (int32_t)ncoll;
    return round_up(sum / ncoll, fsblksize); /* SIONlib: the quotient rounded down, then up to a block */
}

int core_coll_layout(const char *name, int32_t ntasks, int64_t *cs, int32_t fsblksize, int collsize, int merge,
                     int write, int32_t *collector, int32_t *groupsize, int64_t *span)
{
    return core_coll_layout_cap(name, ntasks, cs, NULL, fsblksize, collsize, merge, write, collector, groupsize, span);
}

int core_coll_layout_cap(const char *name, int32_t ntasks, int64_t *cs, const int32_t *capability, int32_t fsblksize,
                         int collsize, int merge, int write, int32_t *collector, int32_t *groupsize, int64_t *span)
{
    if (ntasks < 1 || fsblksize < 1)
        return core_fail(SHEAF_E_ARG, "%s: collective layout for %d tasks, block size %d", name, ntasks, fsblksize);
    int64_t sum = 0;
    for (int32_t t = 0; t < ntasks; t++) {
        if (cs[t] < 0 || cs[t] > INT64_MAX / 4 - sum)
            return core_fail(SHEAF_E_ARG, "%s: chunk sizes out of range for a collective layout", name);
        sum += cs[t];
    }
    int64_t cap = core_coll_capacity(ntasks, cs, fsblksize, collsize, NULL);
    int32_t first = 0;
    while (first < ntasks) {
        /* the group: first .. last-1; a task joins while the group's chunks
         * stay within the capacity (SIONlib's greedy grouping) */
        int32_t last = first + 1;
        int64_t gsum = cs[first];
        while (last < ntasks &&
               (gsum + cs[last] <= cap || (capability && capability[last] == SION_CAPABILITY_ONLY_SENDER)))
            gsum += cs[last++];
        for (int32_t t = first; t < last; t++) {
            collector[t] = first;
            groupsize[t] = last - first;
        }
        if (write && merge) {
            cs[first] = round_up(gsum, fsblksize);
            for (int32_t t = first + 1; t < last; t++)
                cs[t] = round_up(cs[t], fsblksize);
        } else if (write) {
            cs[last - 1] += round_up(gsum, fsblksize) - gsum;
        }
        int64_t g = 0; /* the group's chunk bytes as laid out */
        for (int32_t t = first; span && t < last; t++)
            g += cs[t];
        for (int32_t t = first; span && t < last; t++)
            span[t] = g;
        first = last;
    }
    return 0;
}

int core_coll_reserve(core_container *c, const void *data, int64_t n, int64_t *off)
{
    if (!c->mode.write)
        return core_fail(SHEAF_E_ARG, "%s: collective write on a container opened for reading", c->name);
    core_task *t = &c->tasks[c->cur];
    if (n < 0 || n > t->chunksize)
        return core_fail(SHEAF_E_ARG, "%s: %lld bytes do not fit in one chunk of task %d (%lld bytes)", c->name,
                         (long long)n, c->cur, (long long)t->chunksize);
    int rc = core_ensure_space(c, n); /* syncs, starts a new block if needed */
    if (rc)
        return rc;
    *off = core_block_offset(c, t, t->cur_block) + t->bsize[t->cur_block];
    if (data)
        core_cksum_update(t, data, n);
    t->bsize[t->cur_block] += n;
    t->cur_pos = t->bsize[t->cur_block];
    return core_place(c); /* keep the exported handle at the end of the task's data */
}

int core_coll_take(core_container *c, int64_t n, int64_t *off)
{
    if (c->mode.write)
        return core_fail(SHEAF_E_ARG, "%s: collective read on a container opened for writing", c->name);
    int e = core_eof(c); /* moves past exhausted blocks */
    if (e < 0)
        return e;
    core_task *t = &c->tasks[c->cur];
    if (e || n > t->bsize[t->cur_block] - t->cur_pos)
        return 0;
    *off = core_block_offset(c, t, t->cur_block) + t->cur_pos;
    t->cur_pos += n;
    int rc = core_place(c); /* read_sync takes the cursor from the handle's position */
    return rc ? rc : 1;
}
