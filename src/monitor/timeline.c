/* timeline.c - the reader's time segments (sheaf_monitor_data.h): when did a
 * process move its bytes? The log holds cumulative counters per snapshot, no
 * trace; between two snapshots of a record, the bytes it gained were moved
 * after its previous last-operation time and up to its new one (first_ns to
 * last_ns for its first snapshot). Bytes of untimed calls (stdio calls under
 * 4 KiB do not read the clock) wait for the snapshot's time and are placed
 * between the previous snapshot (or the log's start) and it. One segment per
 * FILE record read, so memory stays bounded by the input; past MR_SEGS_MAX a
 * process's segments merge into its last one. */
#include <stdlib.h>
#include <string.h>

#include "reader.h"

#define MR_SEGS_MAX (1u << 22)

static uint64_t gain(uint64_t now, uint64_t before) { return now > before ? now - before : 0; }

int mr_timeline_file(mr_proc *p, const mr_entry *e, const mon_filerec *f, char *err, size_t errlen)
{
    uint64_t dr = gain(f->c[MC_BYTES_READ], e->have ? e->c[MC_BYTES_READ] : 0);
    uint64_t dw = gain(f->c[MC_BYTES_WRITTEN], e->have ? e->c[MC_BYTES_WRITTEN] : 0);
    if (!dr && !dw)
        return 0;
    uint64_t t0 = e->have ? e->c[MC_LAST_NS] : f->c[MC_FIRST_NS], t1 = f->c[MC_LAST_NS];
    int timed = t1 != 0 && t0 != 0 && (e->have ? t1 > t0 : t1 >= t0);
    if (p->nsegs == MR_SEGS_MAX) { /* bounded: widen the last segment */
        sheaf_monitor_seg *s = &p->segs[p->nsegs - 1];
        s->bytes_read += dr;
        s->bytes_written += dw;
        if (timed && t1 > s->t1_ns)
            s->t1_ns = t1;
        return 0;
    }
    if (p->nsegs == p->segcap) {
        size_t cap = p->segcap ? 2 * p->segcap : 64;
        sheaf_monitor_seg *ns = realloc(p->segs, cap * sizeof *ns);
        if (!ns) {
            if (err && errlen)
                strncpy(err, "out of memory for time segments", errlen - 1), err[errlen - 1] = 0;
            return -1;
        }
        p->segs = ns;
        p->segcap = cap;
    }
    /* an untimed segment (t1 0) takes the time of the snapshot that closes it */
    p->segs[p->nsegs++] = (sheaf_monitor_seg){timed ? t0 : 0, timed ? t1 : 0, dr, dw};
    return 0;
}

void mr_timeline_snap(mr_proc *p, uint64_t time_ns)
{
    uint64_t from = p->last_snap_ns ? p->last_snap_ns : p->head.start_ns;
    if (from > time_ns)
        from = time_ns;
    for (size_t i = p->pending; i < p->nsegs; i++)
        if (p->segs[i].t1_ns == 0) {
            p->segs[i].t0_ns = from;
            p->segs[i].t1_ns = time_ns;
        }
    p->pending = p->nsegs;
    if (time_ns > p->last_snap_ns)
        p->last_snap_ns = time_ns;
}
