/* sidops.c - what a parallel open lends the calls every sid shares
 * (src/api/common.c), through the hooks of src/sid/sid.h: src/api never calls
 * into src/par, it calls these through the table installed here. */
#include "par.h"
#include "../sid/sid.h"
#include "sion.h"

static int one_task(const core_container *c)
{
    const par_state *p = c->par;
    return !p->mapped;
}

static int flush(core_container *c) { return par_buddy_flush(c); }

/* Per copy level: the member holding this task's data (written by its
 * partners: SENDER) and the member its group collects (COLLECTOR for the task
 * writing it, NOWRITER for the others; 0 bytes of its own there). */
static int io_files(core_container *c, sid_io_file *out, int max)
{
    const par_state *p = c->par;
    if (p->mapped || !p->mode.buddy)
        return -1;
    if (!p->write)
        return 0;
    int n = 0;
    for (int l = 0; l < p->nbuddy; l++) {
        const char *sname, *cname;
        int64_t sbytes;
        int writer;
        par_buddy_info((par_state *)p, l, &sname, &sbytes, &cname, &writer);
        if (n < max)
            out[n] = (sid_io_file){sname, sbytes, SION_ROLE_SENDER};
        n++;
        if (n < max)
            out[n] = (sid_io_file){cname, 0, writer ? SION_ROLE_COLLECTOR : SION_ROLE_NOWRITER};
        n++;
    }
    return n;
}

static const sid_par_ops ops = {one_task, flush, io_files};

void par_install_sid_ops(void) { sid_set_par_ops(&ops); }
