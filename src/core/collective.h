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
#include "stream.h"
#include <stdint.h>

/* Whether coalescing is wanted and with which group size, from the mode and
 * the environment (SION_COLLSIZE overrides the mode: > 0 tasks per collector,
 * -1 automatic, 0 off; else SION_COLLNUM = number of collectors). *collsize
 * gets > 0 (tasks per collector, clamped to ntasks) or -1 (automatic).
 * Returns 1 (on) or 0 (off). */
int core_coll_wanted(const core_mode *mode, int32_t ntasks, int *collsize);

/* Split ntasks tasks into collector groups and (write) adjust chunk sizes,
 * exactly as SIONlib 1.7 (_sion_calculate_startpointers_collective[_merge]):
 * the number of collectors is ceil(ntasks / collsize) for collsize > 0,
 * else automatic (at most ntasks, capped at 32/16/8/8/8/4 for >=
 * 512/256/128/64/32/16 tasks), and in both cases at most
 * ceil(sum of chunks / fsblksize); each collector takes a capacity of
 * floor(sum / collectors) rounded up to fsblksize, and groups are formed
 * greedily: a task joins the current group while the group's chunks stay
 * within the capacity (so collsize gives the number of collectors, not the
 * exact group size). chunksizes (in: requested or stored; out, write only:
 * the layout to store: the last chunk of each group padded to a block
 * boundary; merge: the collector's chunk takes the whole group rounded up,
 * the senders' chunks are rounded up). collector[t] gets the index of t's
 * collector, groupsize[t] the size of t's group, span[t] (if span is not
 * NULL) the chunk bytes of t's group in one block row (after the layout).
 * Fails only on invalid arguments (message names `name`). */
/* The capacity of one collector (bytes of chunk space) for these chunk
 * sizes, and (ncoll, may be NULL) the number of collectors it was derived
 * from; see core_coll_layout. */
int64_t core_coll_capacity(int32_t ntasks, const int64_t *chunksizes, int32_t fsblksize, int collsize, int32_t *ncoll);
int core_coll_layout(const char *name, int32_t ntasks, int64_t *chunksizes, int32_t fsblksize, int collsize, int merge,
                     int write, int32_t *collector, int32_t *groupsize, int64_t *span);
/* The same with each task's capability (get_capability callback; NULL: all
 * SION_CAPABILITY_FULL): a task that can only send
 * (SION_CAPABILITY_ONLY_SENDER) never starts a group, it joins the current
 * one whatever its size, as in SIONlib (e.g. the threads other than 0 of a
 * hybrid process). */
int core_coll_layout_cap(const char *name, int32_t ntasks, int64_t *chunksizes, const int32_t *capability,
                         int32_t fsblksize, int collsize, int merge, int write, int32_t *collector, int32_t *groupsize,
                         int64_t *span);

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
