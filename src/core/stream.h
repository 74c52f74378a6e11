/* stream.h - the per-task logical stream (stream.c): write, read, seek,
 * end-of-file across chunk and block ends. A task's stream is the
 * concatenation of its blocks; block b lives at start + b*globalskip of the
 * task's physical file (handle.h). Works on the current task (c->cur). */
#ifndef CORE_STREAM_H
#define CORE_STREAM_H
#include "handle.h"
#include <stdint.h>

int core_sync(core_container *c);
int core_write(core_container *c, const void *buf, uint64_t n);
int core_read(core_container *c, void *buf, uint64_t n, uint64_t *got);
int core_ensure_space(core_container *c, int64_t n);
int core_seek(core_container *c, int32_t rank, int64_t blocknr, int64_t pos);
int core_eof(core_container *c); /* 1 eof, 0 not, < 0 error */
int64_t core_avail_in_block(core_container *c);
int core_position(core_container *c, int64_t *pos);
int core_flush(core_container *c);
int64_t core_task_total(const core_task *t); /* bytes held by all blocks */
/* Position the physical file at the cursor of the current task. */
int core_place(core_container *c);
#endif
