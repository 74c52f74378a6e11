/* memcount.c - a counting malloc for the scale simulation (glibc only).
 *
 * Defining malloc, free, calloc, realloc (and the aligned variants) in the
 * executable replaces glibc's for every caller, the library included (glibc
 * supports this: "Replacing malloc" in its manual); each forwards to glibc's
 * own allocator (__libc_*) and charges malloc_usable_size() of the block to
 * sim_cur_acct: the account of the simulated task that runs (simcomm.c sets
 * it at every switch), of the layer, or nobody. One OS thread runs all tasks,
 * so no locking. A block freed by another task than the one that allocated it
 * is credited to the one that frees it (sheaf's tasks free their own). Not
 * linked in sanitizer builds (they replace malloc themselves). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <malloc.h>
#include <stddef.h>
#include <stdint.h>
#include "simcomm.h"

const int sim_mem_hooked = 1;

extern void *__libc_malloc(size_t);
extern void __libc_free(void *);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static inline void charge(void *p)
{
    sim_acct *a = sim_cur_acct;
    if (p && a) {
        a->live += (int64_t)malloc_usable_size(p);
        if (a->live > a->peak)
            a->peak = a->live;
    }
}
static inline void credit(void *p)
{
    sim_acct *a = sim_cur_acct;
    if (p && a)
        a->live -= (int64_t)malloc_usable_size(p);
}

void *malloc(size_t n)
{
    void *p = __libc_malloc(n);
    charge(p);
    return p;
}
void free(void *p)
{
    credit(p);
    __libc_free(p);
}
void *calloc(size_t n, size_t s)
{
    void *p = __libc_calloc(n, s);
    charge(p);
    return p;
}
void *realloc(void *old, size_t n)
{
    int64_t before = old && sim_cur_acct ? (int64_t)malloc_usable_size(old) : 0;
    void *p = __libc_realloc(old, n);
    if (p || !n) {
        if (sim_cur_acct)
            sim_cur_acct->live -= before;
        charge(p);
    }
    return p;
}
void *memalign(size_t al, size_t n)
{
    void *p = __libc_memalign(al, n);
    charge(p);
    return p;
}
void *aligned_alloc(size_t al, size_t n) { return memalign(al, n); }
int posix_memalign(void **out, size_t al, size_t n)
{
    void *p = memalign(al, n);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}
