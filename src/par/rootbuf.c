/* rootbuf.c - the receive buffer of a gather's root that could not allocate
 * its own, and the send buffer of a scatter's root (ctx.h, "Gathers whose
 * root is out of memory"). A scatter's root without its records sends
 * records whose first field (the status of every typed message that has
 * one, wire.h) is SHEAF_E_NOMEM and the others 0; the root's own failure
 * then fails the call on every task in its agreement.
 *
 * A gather callback writes (group size) x n elements into the root's
 * receive buffer; the generic API has no way to take part in a gather
 * without receiving. A root whose allocation failed used to pass a small
 * dummy buffer, which the callback would write past. Now it receives into a
 * slot of a reserve in static storage (no allocation: the memory exists
 * from load time on), throws the data away and fails the call through the
 * context; the verdict that follows tells every task. The reserve has
 * PAR_RESERVE_SLOTS slots of PAR_RESERVE_SLOT bytes, taken without waiting
 * (a root that waited for a slot could wait for a task that is itself
 * waiting in the gather of the slot's holder). When no slot is free or the
 * receive is larger than a slot, the root cannot take part: it skips the
 * call (the others wait for it; doc/parallel.md "Limits") rather than have
 * the callback write past a buffer.
 *
 * A root that needs the data it could not allocate room for (a master's
 * block counts, which give the counts of the gatherv that follows) takes its
 * buffers through par_rootmem: from the heap, else carved from one slot of
 * the same reserve, held until the step is over; the call fails all the
 * same (short_of_memory), but the exchanges stay consistent. */
#include "ctx.h"
#include "../core/error.h"
#include "sion.h"
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PAR_RESERVE_SLOTS 4
#define PAR_RESERVE_SLOT ((size_t)2 << 20) /* 2 MiB: 14 x int64 per task for 18724 tasks */

static _Alignas(16) unsigned char g_reserve[PAR_RESERVE_SLOTS][PAR_RESERVE_SLOT];
static atomic_int g_busy[PAR_RESERVE_SLOTS];
static par_alloc_fault_fn g_alloc_fault;

void par_set_alloc_fault_hook(par_alloc_fault_fn fn) { g_alloc_fault = fn; }

void *par_root_malloc(size_t bytes, const char *what)
{
    if (g_alloc_fault && g_alloc_fault(what))
        return NULL;
    return malloc(bytes ? bytes : 1);
}

static size_t type_size(int type) { return type == _SION_INT32 ? 4 : type == _SION_CHAR ? 1 : 8; }

/* A free slot of the reserve for `bytes` (-1: none). */
static int slot_take(size_t bytes)
{
    for (int s = 0; bytes <= PAR_RESERVE_SLOT && s < PAR_RESERVE_SLOTS; s++) {
        int expect = 0;
        if (atomic_compare_exchange_strong(&g_busy[s], &expect, 1))
            return s;
    }
    return -1;
}

static void *slot_mem(int s) { return g_reserve[s]; }

void par_rootmem_init(par_rootmem *m)
{
    m->slot = -1;
    m->used = 0;
    m->short_of_memory = 0;
}

static int in_slot(const par_rootmem *m, const void *p)
{
    const unsigned char *b = m->slot >= 0 ? slot_mem(m->slot) : NULL;
    return b && (const unsigned char *)p >= b && (const unsigned char *)p < b + PAR_RESERVE_SLOT;
}

void *par_rootmem_alloc(par_rootmem *m, size_t bytes, const char *what)
{
    size_t n = bytes ? bytes : 1;
    void *p = par_root_malloc(n, what);
    if (p) {
        memset(p, 0, n);
        return p;
    }
    m->short_of_memory = 1;
    size_t need = (n + 15) & ~(size_t)15;
    if (m->slot < 0 && (m->slot = slot_take(need)) < 0)
        return NULL;
    if (need > PAR_RESERVE_SLOT - m->used)
        return NULL;
    p = (unsigned char *)slot_mem(m->slot) + m->used;
    m->used += need;
    memset(p, 0, n);
    return p;
}

void par_rootmem_free(par_rootmem *m, void *p)
{
    if (p && !in_slot(m, p))
        free(p);
}

void par_rootmem_end(par_rootmem *m)
{
    if (m->slot >= 0)
        atomic_store(&g_busy[m->slot], 0);
    m->slot = -1;
    m->used = 0;
}

int par_gather_root_safe(const par_api *api, void *group, void *in, void *out, int type, int n, int root, int am_root,
                         int members, int *skipped)
{
    unsigned char dummy[64]; /* a non-root's receive buffer: not used by the callback */
    *skipped = 0;
    if (!am_root || out)
        return api->gather(in, out ? out : dummy, group, type, n, root) != 0;
    size_t bytes = (size_t)(members > 0 ? members : 1) * (size_t)(n > 0 ? n : 0) * type_size(type);
    int s = slot_take(bytes);
    if (s < 0) { /* cannot take part without a buffer (see the top) */
        *skipped = 1;
        return 1;
    }
    int rc = api->gather(in, g_reserve[s], group, type, n, root) != 0;
    atomic_store(&g_busy[s], 0);
    return rc;
}

int par_scatter_root_safe(const par_api *api, void *group, void *in, void *out, int type, int n, int root, int am_root,
                          int members, int *skipped)
{
    unsigned char dummy[64]; /* a non-root's send buffer: not used by the callback */
    *skipped = 0;
    if (!am_root || in)
        return api->scatter(in ? in : dummy, out, group, type, n, root) != 0;
    size_t per = type_size(type), count = (size_t)(members > 0 ? members : 1) * (size_t)(n > 0 ? n : 0);
    int s = slot_take(count * per);
    if (s < 0) { /* cannot take part without a buffer (see the top) */
        *skipped = 1;
        return 1;
    }
    unsigned char *b = slot_mem(s); /* each record: status SHEAF_E_NOMEM (its first field), the rest 0 */
    memset(b, 0, count * per);
    for (size_t r = 0; n > 0 && per >= 4 && r < count / (size_t)n; r++) {
        int64_t v64 = SHEAF_E_NOMEM;
        int32_t v32 = SHEAF_E_NOMEM;
        memcpy(b + r * (size_t)n * per, per == 8 ? (const void *)&v64 : (const void *)&v32, per);
    }
    int rc = api->scatter(b, out, group, type, n, root) != 0;
    atomic_store(&g_busy[s], 0);
    return rc;
}
