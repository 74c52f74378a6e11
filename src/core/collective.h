/* collective.h - the serial half of coalescing (collective) I/O: which task
 * collects for which, how chunks are packed, and a task's bookkeeping when
 * another task (its collector) moves its bytes. No communication here: the
 * parallel layer (src/par/coll.c) runs the exchange. Pure functions are
 * thread-safe; the others work on one container, like stream.c.
 *
 * Groups are runs of consecutive tasks of one physical file; the first task
 * of a group is its collector, the others its senders. Layout in write mode
 * (format 4.3): the chunks of a group are packed (each exactly the requested
 * size), the last chunk of the group is padded so the next group starts on a
 * file-system block boundary; in merge mode the collector's chunk takes the
 * whole group's size and the senders keep block-aligned chunks of their own. */
#ifndef CORE_COLLECTIVE_H
#define CORE_COLLECTIVE_H
#include "container.h"
#include <stdint.h>

/* Whether coalescing is wanted and with which group size, from the mode and
 * the environment (SION_COLLSIZE overrides the mode: > 0 tasks per collector,
 * -1 automatic, 0 off; else SION_COLLNUM = number of collectors). *collsize
 * gets > 0 (tasks per collector, clamped to ntasks) or -1 (automatic).
 * Returns 1 (on) or 0 (off). */
int core_coll_wanted(const core_mode *mode, int32_t ntasks, int *collsize);

/* Split ntasks tasks into collector groups and (write) adjust chunk sizes.
 * collsize > 0: groups of exactly collsize tasks (the last may be smaller).
 * Otherwise automatic: about one file-system block of chunk space per
 * collector, at most ceil(sum/fsblksize) collectors, capped at 32/16/8/8/8/4
 * for >= 512/256/128/64/32/16 tasks (as SIONlib). chunksizes (in: requested
 * or stored; out, write only: the layout to store). collector[t] gets the
 * index of t's collector, groupsize[t] the size of t's group, span[t] (if
 * span is not NULL) the chunk bytes of t's group in one block row (after
 * the layout). Fails only on invalid arguments (message names `name`). */
int core_coll_layout(const char *name, int32_t ntasks, int64_t *chunksizes, int32_t fsblksize, int collsize,
                     int merge, int write, int32_t *collector, int32_t *groupsize, int64_t *span);

/* Sender bookkeeping for a write of n bytes (data, for the block checksum)
 * done by the collector: like core_write without the I/O. The bytes must fit
 * in one chunk (n <= chunk size; a new block is started when the current one
 * cannot take them). *off gets the file offset where they belong. */
int core_coll_reserve(core_container *c, const void *data, int64_t n, int64_t *off);

/* Reader bookkeeping for a read of n bytes done by the collector: the bytes
 * must lie in one block, from the cursor (after moving past exhausted
 * blocks). Returns 1 and sets *off when they do, 0 when they do not (the
 * caller reads individually), < 0 on error. */
int core_coll_take(core_container *c, int64_t n, int64_t *off);
#endif
